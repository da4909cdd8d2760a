#include "app/app_scenario.h"

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::app {

Scenario load_app_scenario(const std::string& name_or_path, bool job_world_given) {
  Scenario s = load_scenario(name_or_path);
  const std::string file = s.path.empty() ? s.name : s.path;
  const auto refuse = [&](const std::string& field, int world, const std::string& hint) {
    throw InputError(fmt::format("scenario {}: field '{}': the app draws 1 to {} ranks, got {}{}", file, field,
                                 kMaxAppWorldSize, world, hint));
  };
  const int job_world = s.job.world_size;
  if (!job_world_given && job_world > kMaxAppWorldSize)
    refuse("job.world_size", job_world, fmt::format(" (`ringlab run --scenario {}` trains it)", file));
  // An entry runs at its own world where it differs from the job's, else at the controls' (-n).
  for (size_t i = 0; i < s.sequence.size(); ++i) {
    const int world = s.sequence[i].world_size;
    if (world > kMaxAppWorldSize && (world != job_world || !job_world_given))
      refuse(fmt::format("sequence[{}].world_size", i), world, "");
  }
  return s;
}

}  // namespace ringlab::app
