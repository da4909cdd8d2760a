#pragma once
// The command-line parser's own messages in the words of ringlab's other errors: "Could not
// convert: --world-size = abc" becomes "--world-size 'abc': not a whole number".
#include <string>

#include <CLI/CLI.hpp>

namespace ringlab::app {

// What to print after "ringlab: error: " for a parse error of `root`'s command line.
std::string plain_parse_error(const CLI::App& root, const CLI::ParseError& error);

}  // namespace ringlab::app
