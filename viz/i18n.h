#pragma once
// Every string the user sees goes through tr(): English is the key and the default; Bahasa
// Indonesia is a table. A missing translation falls back to English.
#include <fmt/core.h>

#include <cstdint>
#include <string>

#include "viz/app_state.h"

namespace ringlab::viz {

void set_language(Language language);
Language language();
const char* language_code();  // "en" | "id"

const char* tr(const char* english);

// tr() then fmt::format: trf("Reduce-scatter, step {} of {}", 2, 3).
template <class... Args>
std::string trf(const char* english, Args&&... args) {
  return fmt::format(fmt::runtime(tr(english)), std::forward<Args>(args)...);
}

// "Translated###id": the label changes with the language, the widget's identity does not.
std::string label(const char* english, const char* id);

// A whole number with its thousands grouped: 100000000 -> "100,000,000" (in Indonesian, no-break spaces).
std::string grouped(int64_t value);

}  // namespace ringlab::viz
