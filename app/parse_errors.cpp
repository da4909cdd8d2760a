#include "app/parse_errors.h"

#include <regex>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

namespace ringlab::app {
namespace {

// The deepest subcommand the command line reached.
const CLI::App& used_app(const CLI::App& root) {
  const CLI::App* at = &root;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

std::string command_words(const CLI::App& root) {
  std::string words = root.get_name();
  for (const CLI::App* at = &root; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    words += " " + at->get_name();
  }
  return words;
}

// What the option takes, from its type name ("INT", "FLOAT", "INT:INT in [1 - 16]").
std::string kind_taken(const CLI::App& app, const std::string& name) {
  const CLI::Option* option = nullptr;
  try {
    option = app.get_option(name);
  } catch (const CLI::OptionNotFound&) {
    return "a value it takes";
  }
  const std::string type = option->get_type_name();
  if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) return "a whole number";
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  return "a value it takes";
}

// CLI11 prints a range's ends with std::to_string: 0.500000 reads as 0.5.
std::string plain_number(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string plain_parse_error(const CLI::App& root, const CLI::ParseError& error) {
  const std::string what = error.what();
  std::smatch m;
  static const std::regex conversion(R"(^Could not convert: (\S+) = (.*)$)");
  if (std::regex_match(what, m, conversion))
    return fmt::format("{} '{}': not {}", m[1].str(), m[2].str(), kind_taken(used_app(root), m[1].str()));
  static const std::regex range(R"(^(\S+): Value (.*) not in range (.*) to (.*)$)");
  if (std::regex_match(what, m, range)) {
    const std::string kind = kind_taken(used_app(root), m[1].str()), value = m[2].str();
    // CLI11's range check says "not in range" of a value that is no number at all.
    static const std::regex number(R"(^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$)");
    static const std::regex whole(R"(^\s*[-+]?\d+\s*$)");
    if (!std::regex_match(value, kind == "a whole number" ? whole : number))
      return fmt::format("{} '{}': not {} (give one from {} to {})", m[1].str(), value, kind, plain_number(m[3].str()),
                         plain_number(m[4].str()));
    return fmt::format("{} {}: out of range: give {} from {} to {}", m[1].str(), value, kind, plain_number(m[3].str()),
                       plain_number(m[4].str()));
  }
  static const std::regex repeated(R"(^(\S+): At Most 1 required but received (\d+)$)");
  if (std::regex_match(what, m, repeated))
    return fmt::format("{} given {} times: give it once", m[1].str(), m[2].str());
  if (what == "A subcommand is required") {
    const CLI::App& app = used_app(root);
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    const std::vector<std::string> extra = app.remaining();
    return fmt::format("{} needs one of {}{}", command_words(root), fmt::join(names, ", "),
                       extra.empty() ? "" : fmt::format(" (got '{}')", extra.front()));
  }
  return what;
}

}  // namespace ringlab::app
