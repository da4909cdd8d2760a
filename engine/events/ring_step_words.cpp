#include "engine/events/ring_step_words.h"

#include <fmt/core.h>

namespace ringlab {

std::string ring_step_words(int phase, int step_in_phase, int world_size) {
  return fmt::format("{} step {} of {}", phase == 0 ? "reduce-scatter" : "all-gather", step_in_phase + 1,
                     world_size - 1);
}

std::string ring_step_words(int ring_step, int world_size) {
  const int per_phase = world_size - 1;
  if (ring_step < 0 || per_phase < 1 || ring_step >= 2 * per_phase) return "-";
  return ring_step < per_phase ? ring_step_words(0, ring_step, world_size)
                               : ring_step_words(1, ring_step - per_phase, world_size);
}

}  // namespace ringlab
