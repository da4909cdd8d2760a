#pragma once
// Scenarios as the app takes them: read, and checked against the worlds the app draws.
#include <string>

#include "engine/job/scenario.h"

namespace ringlab::app {

// load_scenario(), then refused (InputError naming the file and the field) where a world is more
// than the app draws (kMaxAppWorldSize): `ringlab run` trains up to kMaxWorldSize ranks, the app's
// ring and World size slider hold 16. With -n (`job_world_given`) the job's own world is not
// drawn, nor that of a sequence entry that keeps it.
Scenario load_app_scenario(const std::string& name_or_path, bool job_world_given = false);

}  // namespace ringlab::app
