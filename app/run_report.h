#pragma once
// What `ringlab run` prints (the seed script's report, in English) and writes with --report.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/control/controller.h"
#include "engine/rank/seed_report.h"

namespace ringlab::app {

std::string format_seed_report(const RunResult& r);
void write_report_json(const RunResult& r, const std::string& path);

}  // namespace ringlab::app
