#pragma once
// One clock for every process on the machine: CLOCK_MONOTONIC (steady_clock on Linux) is
// system-wide, so timestamps from different ranks line up on one timeline.
#include <chrono>
#include <cstdint>

namespace ringlab {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The wall clock, for ordering what different machines saw (their steady clocks do not agree).
inline int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ringlab
