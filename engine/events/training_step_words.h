#pragma once
// A training step in words, for reports that place a rank or a collective in time. Collectives
// before the first step (the seed's [1, 2, 3] all-reduce, DDP's broadcast of the weights) carry
// step -1; "at step -1" reads as a bug to whoever meets it, so they are said to come before it.
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace ringlab {

// "at step 5", or "before the first step".
inline std::string at_training_step(int64_t step) {
  return step < 0 ? std::string("before the first step") : fmt::format("at step {}", step);
}

// For a table's step column: the step, or "-" before the first one.
inline std::string training_step_cell(int64_t step) { return step < 0 ? std::string("-") : std::to_string(step); }

}  // namespace ringlab
