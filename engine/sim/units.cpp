#include "engine/sim/units.h"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"

namespace ringlab::sim {

int64_t parse_byte_size(const std::string& text, const std::string& what) {
  auto bad = [&](const char* why) {
    return InputError(fmt::format("{} '{}' {} (expected a number of bytes > 0 with an optional "
                                  "K, M or G suffix, e.g. 4096, 64K, 16M)", what, text, why));
  };
  if (text.empty()) throw bad("is empty");
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin) throw bad("is not a number");
  std::string suffix(end);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() >= 2 && suffix.compare(suffix.size() - 2, 2, "IB") == 0) suffix.resize(suffix.size() - 2);
  else if (suffix.size() >= 2 && suffix.back() == 'B') suffix.pop_back();
  else if (suffix == "B") suffix.clear();
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty()) throw bad("has an unknown suffix");
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes <= 0) throw bad("is not > 0");
  if (bytes > 9.0e18) throw bad("is too large");
  if (bytes != std::floor(bytes)) throw bad("is not a whole number of bytes");
  return static_cast<int64_t>(bytes);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.3g} {}", bytes, units[unit]);
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6) return fmt::format("{:.3g} ns", seconds * 1e9);
  if (a < 1e-3) return fmt::format("{:.3g} us", seconds * 1e6);
  if (a < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} s", seconds);
}

}  // namespace ringlab::sim
