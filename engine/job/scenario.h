#pragma once
// Scenarios are presets stored as data (assets/scenarios/*.json) and shared by the app, the
// tests and the benchmarks: a job, whether the ring is gated for step-through, what the views
// should show first, and optionally a sequence of runs to compare.
//
//   {
//     "title": {"en": "Four ranks on gloo", "id": "Empat rank di gloo"},
//     "description": {"en": "...", "id": "..."},
//     "job": {"world_size": 4, "backend": "gloo"},      // any JobConfig field; others default
//     "gated": false,
//     "view": {"focus": "ring", "speed": 1.0},
//     "sequence": [{"backend": "gloo"}, {"backend": "mpi"}]  // optional: job overrides, run in turn
//   }
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/job/job_config.h"

namespace ringlab {

// The views a scenario (and `ringlab gui --focus`) may put in the big pane, by name; the app's
// view registry (viz/layout.cpp) holds one view for each.
inline constexpr const char* kViewNames[] = {"ring", "training", "sampler", "timeline", "scale"};

struct ScenarioView {
  std::string focus = "ring";  // one of kViewNames
  double speed = 1.0;          // ring steps per second in replay
};

struct Scenario {
  std::string name;  // file name without .json
  std::string path;  // where it was read from ("" for built-in)
  std::string title_en, title_id;
  std::string description_en, description_id;
  JobConfig job;
  bool gated = false;
  ScenarioView view;
  std::vector<JobConfig> sequence;  // runs to make one after another; empty: just `job`

  const std::string& title(const std::string& lang) const;
  const std::string& description(const std::string& lang) const;
};

// Parses a scenario; `source` names the file in error messages. Throws InputError naming the
// source, the field and the reason.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& name, const std::string& source);
// Reads a scenario file. Throws InputError for a missing file, bad JSON or a bad field.
Scenario read_scenario_file(const std::filesystem::path& path);
// `name_or_path`: a registered name ("four-ranks-gloo") or a path to a .json file.
Scenario load_scenario(const std::string& name_or_path);

// Where registered scenarios live, searched in this order (a name found in an earlier folder
// hides the same name in a later one): $RINGLAB_SCENARIO_DIR, then assets/scenarios under
// $RINGLAB_SOURCE_DIR, then next to the executable (../assets/scenarios, ../../assets/...,
// ../share/ringlab/scenarios), then any folder added with add_scenario_search_dir.
void add_scenario_search_dir(const std::filesystem::path& dir);
std::vector<std::filesystem::path> scenario_search_dirs();
std::vector<std::filesystem::path> scenario_folders();  // those that exist, each once, in that order
std::vector<std::string> list_scenarios();  // the names in all of them, sorted, each once

}  // namespace ringlab
