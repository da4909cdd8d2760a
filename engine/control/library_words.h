#pragma once
// What a communication library's own words mean for the run, where they are cryptic. A rank
// that called a collective its peer did not (an extra all_reduce in a PyTorch script) dies of
// gloo's "[enforce fail at .../pair.cc:446] op.preamble.length <= op.nbytes. 2740 vs 4": a
// message arrived larger than the buffer the rank had posted for it, because the two ranks were
// in different collectives.
#include <string>

namespace ringlab {

// " (gloo: ...)" to follow a rank's last stderr line, or "" when it says nothing ringlab reads.
std::string library_words_explained(const std::string& last_words);

}  // namespace ringlab
