#include "engine/control/library_words.h"

#include <fmt/core.h>

#include <regex>

namespace ringlab {

std::string library_words_explained(const std::string& last_words) {
  // gloo's transport checks that a message fits the buffer the receiver posted for it.
  static const std::regex too_large(R"(op\.preamble\.length <= op\.nbytes\. (\d+) vs (\d+))");
  std::smatch m;
  if (std::regex_search(last_words, m, too_large))
    return fmt::format(" (gloo: a message of {} bytes came for a buffer of {}: the ranks were in different "
                       "collectives, one calling a collective the other did not, or the same one with another "
                       "tensor size)",
                       m[1].str(), m[2].str());
  return "";
}

std::string script_collectives_note(const std::string& failure) {
  if (failure.find("never joined collective") == std::string::npos && failure.find("missing ranks: {") == std::string::npos)
    return "";
  return "\nthe script's own collectives outside DDP (a dist.all_reduce or barrier of its own) are not reported to "
         "ringlab: a rank named missing may be waiting inside one";
}

}  // namespace ringlab
