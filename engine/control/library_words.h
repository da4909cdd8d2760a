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

// A PyTorch script's failure that names a rank missing from a collective: the script's own
// collectives outside DDP (a dist.all_reduce or barrier of its own) are not reported, and the
// missing rank may be inside one. The note to add, or "" when the failure names none missing.
std::string script_collectives_note(const std::string& failure);

}  // namespace ringlab
