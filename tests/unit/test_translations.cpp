// Every string the app shows through tr() has a Bahasa Indonesia translation in
// assets/i18n/id.json (terms the course keeps in English are listed as themselves), and no
// translation uses a format argument its English does not pass (fmt would throw at run time, in
// front of a class). The app's sources are read as text:
// the literals handed to tr, trf and label, and to the helpers that call tr on a parameter.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A C++ string literal starting at text[i] == '"': its value (\n, \", \\ and \t undone), with
// i left after the closing quote.
std::string literal_at(const std::string& text, size_t& i) {
  std::string value;
  for (++i; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] != '\\') {
      value += text[i];
      continue;
    }
    const char c = text[++i];
    value += c == 'n' ? '\n' : c == 't' ? '\t' : c;
  }
  ++i;
  return value;
}

// The arguments of the call whose '(' is at text[open]: for each, the strings it spells with
// literals (adjacent literals joined, as the compiler does; "a" : "b" gives two).
std::vector<std::vector<std::string>> call_arguments(const std::string& text, size_t open) {
  std::vector<std::vector<std::string>> args(1);
  int depth = 0;
  bool joining = false;
  for (size_t i = open + 1; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::string value = literal_at(text, i);
      if (depth == 0) {
        if (joining && !args.back().empty()) args.back().back() += value;
        else args.back().push_back(value);
        joining = true;
      }
      continue;
    }
    if (c == '\'') {  // a char literal: skip it whole ('"' must not open a string)
      i += text[i + 1] == '\\' ? 4 : 3;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) joining = false;
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) args.emplace_back();
    ++i;
  }
  return args;
}

// Which arguments of which function are English the app translates.
const std::map<std::string, std::vector<size_t>> kTranslated = {
    {"tr", {0}}, {"trf", {0}}, {"label", {0}}, {"view_button", {0}}, {"job_int_field", {1, 6}},
    {"two_answers", {1, 3}}};

// The arguments a format string uses: "{}" numbered in order, "{2:.0f}" by its index, "{rank}"
// by name. A translation may reorder them or leave one out (Indonesian has no plural "s", so
// "{} rank{}" becomes "{0} rank"), never use one the English does not pass.
std::set<std::string> arguments_used(const std::string& s) {
  static const std::regex brace(R"(\{([^{}:]*)(:[^{}]*)?\})");
  std::set<std::string> used;
  int next = 0;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), brace); it != std::sregex_iterator(); ++it)
    used.insert((*it)[1].length() ? (*it)[1].str() : std::to_string(next++));
  return used;
}

}  // namespace

TEST_CASE("every translatable string has its translation, with the same placeholders") {
  const fs::path root = RINGLAB_SOURCE_DIR;
  const nlohmann::json table = nlohmann::json::parse(read(root / "assets/i18n/id.json"));
  REQUIRE(table.is_object());

  std::set<std::string> used;
  const std::regex call(R"(\b(tr|trf|label|view_button|job_int_field|two_answers)\s*\()");
  for (const char* folder : {"viz", "app"}) {
    for (const auto& entry : fs::directory_iterator(root / folder)) {
      const std::string text = read(entry.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
        const auto args = call_arguments(text, static_cast<size_t>(it->position() + it->length() - 1));
        for (size_t index : kTranslated.at((*it)[1].str()))
          if (index < args.size())
            for (const std::string& english : args[index]) used.insert(english);
      }
    }
  }
  CHECK(used.size() > 250);  // the scan found the app's strings (about 300 today)

  std::vector<std::string> missing;
  for (const std::string& english : used)
    if (!table.contains(english)) missing.push_back(english);
  std::string listed;
  for (const std::string& m : missing) listed += "\n  \"" + m + "\"";
  CHECK_MESSAGE(missing.empty(), "no translation in assets/i18n/id.json for:" << listed);

  for (const auto& [english, translated] : table.items()) {
    CAPTURE(english);
    REQUIRE(translated.is_string());
    CHECK(!translated.get<std::string>().empty());
    const std::set<std::string> theirs = arguments_used(translated.get<std::string>()), ours = arguments_used(english);
    CHECK(std::includes(ours.begin(), ours.end(), theirs.begin(), theirs.end()));
  }
}
