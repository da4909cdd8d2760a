#include "viz/i18n.h"

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "viz/i18n_tables.h"

namespace ringlab::viz {
namespace {

Language g_language = Language::English;

// English -> Bahasa Indonesia, from assets/i18n/id.json (built into the binary, see
// viz/CMakeLists.txt). Technical terms the course keeps in English (all-reduce, reduce-scatter,
// all-gather, rank, bucket, backend, set_epoch) stay as they are.
// Looked up by the caller's const char* as a string_view (C++20 heterogeneous lookup): tr() runs
// hundreds of times a frame and builds no string to ask.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Table = std::unordered_map<std::string, std::string, TextHash, std::equal_to<>>;

const Table& indonesian() {
  static const Table table = [] {
    Table t;
    try {
      const nlohmann::json parsed = nlohmann::json::parse(kIndonesianJson);  // outlives the loop below
      for (const auto& [english, translated] : parsed.items()) t.emplace(english, translated.get<std::string>());
    } catch (const nlohmann::json::exception& e) {  // a broken asset: the app stays in English
      std::fprintf(stderr, "ringlab: assets/i18n/id.json cannot be read (%s); the app stays in English\n", e.what());
    }
    return t;
  }();
  return table;
}

}  // namespace

void set_language(Language language) { g_language = language; }
Language language() { return g_language; }
const char* language_code() { return g_language == Language::Indonesian ? "id" : "en"; }

const char* tr(const char* english) {
  if (g_language == Language::English) return english;
  const auto& table = indonesian();
  auto it = table.find(std::string_view(english));
  return it == table.end() ? english : it->second.c_str();
}

std::string label(const char* english, const char* id) { return std::string(tr(english)) + "###" + id; }

std::string grouped(int64_t value) {
  // English groups with commas. Indonesian writes 12.429 for twelve thousand, but the app's
  // decimals keep the point (0.030, 1.50 steps/s): a point between thousands would read as one.
  // A no-break space groups unambiguously in both (as SI writes numbers), and never wraps.
  const char* separator = g_language == Language::Indonesian ? "\u00a0" : ",";
  const std::string digits = std::to_string(value < 0 ? -static_cast<uint64_t>(value) : static_cast<uint64_t>(value));
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += separator;
    out += digits[i];
  }
  return out;
}

}  // namespace ringlab::viz
