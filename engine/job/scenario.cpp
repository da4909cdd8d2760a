#include "engine/job/scenario.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mutex>
#include <numeric>
#include <nlohmann/json.hpp>
#include <set>
#include <type_traits>

#include "engine/core/error.h"
#include "engine/core/input_file.h"

namespace ringlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::mutex g_dirs_mutex;
std::vector<fs::path> g_extra_dirs;

[[noreturn]] void fail(const std::string& source, const std::string& field, const std::string& reason) {
  throw InputError(fmt::format("scenario {}: field '{}': {}", source, field, reason));
}

const char* type_name(const json& j) { return j.type_name(); }

// "must be a number, got \"fast\"", in the words the job's own fields use (job_field_problem).
template <class T>
std::string wrong_type(const json& given) {
  const char* wanted = std::is_same_v<T, bool> ? "true or false" : std::is_arithmetic_v<T> ? "a number" : "a string";
  std::string got = given.is_array() ? "a list" : given.is_object() ? "an object" : given.dump();
  if (got.size() > 40) got = got.substr(0, 37) + "...";
  return fmt::format("must be {}, got {}", wanted, got);
}

void require_keys(const json& object, const std::set<std::string>& allowed, const std::string& source,
                  const std::string& prefix) {
  for (const auto& [key, value] : object.items())
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(source, prefix + key, "unknown field (known: " + list + ")");
    }
}

template <class T>
T take(const json& object, const char* key, T fallback, const std::string& source, const std::string& prefix) {
  if (!object.contains(key)) return fallback;
  try {
    return object.at(key).get<T>();
  } catch (const json::exception&) {
    fail(source, prefix + key, wrong_type<T>(object.at(key)));
  }
}

// "en"/"id" text, or one string for both languages.
void take_text(const json& doc, const char* key, std::string& en, std::string& id, const std::string& source) {
  if (!doc.contains(key)) return;
  const json& v = doc.at(key);
  if (v.is_string()) {
    en = id = v.get<std::string>();
    return;
  }
  if (!v.is_object()) fail(source, key, std::string("must be a string or {\"en\": ..., \"id\": ...}, got ") + type_name(v));
  require_keys(v, {"en", "id"}, source, std::string(key) + ".");
  en = take<std::string>(v, "en", "", source, std::string(key) + ".");
  id = take<std::string>(v, "id", en, source, std::string(key) + ".");
}

const std::set<std::string>& job_fields() {
  static const std::set<std::string> fields = [] {
    json j = JobConfig{};
    std::set<std::string> s;
    for (const auto& [key, value] : j.items()) s.insert(key);
    s.insert("ranks_per_node");  // written only when set, so a default job's JSON lacks it
    return s;
  }();
  return fields;
}

// Applies `overrides` on top of `base`, naming the field that is wrong when one is. Each field
// is checked on its own against the defaults first, so the error points at the culprit.
JobConfig job_from(const json& overrides, const JobConfig& base, const std::string& source,
                   const std::string& prefix) {
  if (!overrides.is_object()) fail(source, prefix, std::string("must be an object, got ") + type_name(overrides));
  require_keys(overrides, job_fields(), source, prefix + ".");
  for (const auto& [key, value] : overrides.items()) {
    JobConfig alone;
    // Faults and uneven inputs name ranks: checked alone they would meet the default single
    // rank, so they are checked against the largest world here and against the real one below.
    if (key == "faults" || key == "uneven") alone.world_size = kMaxWorldSize;
    try {
      from_json(json{{key, value}}, alone);
    } catch (const json::exception& e) {
      fail(source, prefix + "." + key, job_field_problem(e));
    }
    // A node split is checked alone against the world it adds up to, and against the real one below.
    if (key == "ranks_per_node")
      alone.world_size = static_cast<int>(std::clamp<int64_t>(
          std::accumulate(alone.ranks_per_node.begin(), alone.ranks_per_node.end(), int64_t{0}), 0, kMaxWorldSize + 1));
    try {
      alone.validate();
    } catch (const InputError& e) {
      fail(source, prefix + "." + key, e.what());
    }
  }
  json merged = base;
  for (const auto& [key, value] : overrides.items()) merged[key] = value;
  JobConfig job = merged.get<JobConfig>();
  try {
    job.validate();
  } catch (const InputError& e) {
    fail(source, prefix, e.what());
  }
  return job;
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

const std::string& Scenario::title(const std::string& lang) const {
  return lang == "id" && !title_id.empty() ? title_id : title_en;
}

const std::string& Scenario::description(const std::string& lang) const {
  return lang == "id" && !description_id.empty() ? description_id : description_en;
}

Scenario parse_scenario(const json& doc, const std::string& name, const std::string& source) {
  if (!doc.is_object()) fail(source, "(top level)", std::string("must be a JSON object, got ") + type_name(doc));
  require_keys(doc, {"title", "description", "job", "gated", "view", "sequence"}, source, "");
  Scenario s;
  s.name = name;
  s.title_en = s.title_id = name;
  take_text(doc, "title", s.title_en, s.title_id, source);
  take_text(doc, "description", s.description_en, s.description_id, source);
  if (doc.contains("job")) s.job = job_from(doc.at("job"), JobConfig{}, source, "job");
  s.gated = take<bool>(doc, "gated", false, source, "");

  if (doc.contains("view")) {
    const json& v = doc.at("view");
    if (!v.is_object()) fail(source, "view", std::string("must be an object, got ") + type_name(v));
    require_keys(v, {"focus", "speed"}, source, "view.");
    s.view.focus = take<std::string>(v, "focus", s.view.focus, source, "view.");
    if (std::find(std::begin(kViewNames), std::end(kViewNames), s.view.focus) == std::end(kViewNames))
      fail(source, "view.focus", "must be ring, sampler, training, timeline or scale; got '" + s.view.focus + "'");
    s.view.speed = take<double>(v, "speed", s.view.speed, source, "view.");
    if (!(s.view.speed > 0 && s.view.speed <= 100))
      fail(source, "view.speed", fmt::format("must be in (0, 100] ring steps per second, got {}", s.view.speed));
  }

  if (doc.contains("sequence")) {
    const json& seq = doc.at("sequence");
    if (!seq.is_array() || seq.empty() || seq.size() > 16)
      fail(source, "sequence", "must be a list of 1 to 16 job overrides");
    for (size_t i = 0; i < seq.size(); ++i)
      s.sequence.push_back(job_from(seq[i], s.job, source, fmt::format("sequence[{}]", i)));
  }
  return s;
}

Scenario read_scenario_file(const fs::path& path) {
  const std::string source = path.string();
  constexpr uint64_t kMaxScenarioBytes = 1 << 20;
  const std::string text = read_input_file(source, "scenario", kMaxScenarioBytes);
  const json doc = parse_json_input(text, "scenario " + source);
  Scenario s = parse_scenario(doc, path.stem().string(), source);
  s.path = source;
  return s;
}

void add_scenario_search_dir(const fs::path& dir) {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  g_extra_dirs.push_back(dir);
}

std::vector<fs::path> scenario_search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* d = std::getenv("RINGLAB_SCENARIO_DIR"); d && *d) dirs.emplace_back(d);
  if (const char* d = std::getenv("RINGLAB_SOURCE_DIR"); d && *d) dirs.push_back(fs::path(d) / "assets/scenarios");
  if (fs::path exe = executable_dir(); !exe.empty()) {
    dirs.push_back(exe / "../assets/scenarios");
    dirs.push_back(exe / "../../assets/scenarios");
    dirs.push_back(exe / "../share/ringlab/scenarios");
  }
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  dirs.insert(dirs.end(), g_extra_dirs.begin(), g_extra_dirs.end());
  return dirs;
}

std::vector<fs::path> scenario_folders() {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (const fs::path& d : scenario_search_dirs()) {
    if (!fs::is_directory(d, ec)) continue;
    const fs::path folder = fs::weakly_canonical(d, ec);
    if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
  }
  return folders;
}

std::vector<std::string> list_scenarios() {
  std::set<std::string> names;
  std::error_code ec;
  for (const fs::path& folder : scenario_folders())
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.path().extension() == ".json") names.insert(entry.path().stem().string());
  return {names.begin(), names.end()};
}

namespace {

// A typo in RINGLAB_SCENARIO_DIR would otherwise pass unseen: the other folders still answer.
void check_scenario_dir_variable(const std::string& name) {
  const char* d = std::getenv("RINGLAB_SCENARIO_DIR");
  if (!d || !*d) return;
  std::error_code ec;
  if (!fs::exists(d, ec))
    throw InputError(fmt::format("--scenario {}: RINGLAB_SCENARIO_DIR={} does not exist", name, d));
  if (!fs::is_directory(d, ec))
    throw InputError(fmt::format("--scenario {}: RINGLAB_SCENARIO_DIR={} is not a folder", name, d));
}

}  // namespace

Scenario load_scenario(const std::string& name_or_path) {
  if (name_or_path.empty()) throw InputError("--scenario: empty name");
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               fs::path(name_or_path).extension() == ".json";
  std::error_code ec;
  // "four-ranks-gloo.json" where no such file is here: the name it holds is probably meant.
  if (looks_like_path && !fs::exists(name_or_path, ec) && name_or_path.find('/') == std::string::npos) {
    const std::string stem = fs::path(name_or_path).stem().string();
    const std::vector<std::string> known = list_scenarios();
    if (std::find(known.begin(), known.end(), stem) != known.end())
      throw InputError(fmt::format("--scenario {}: no such file here; the scenario named '{}' is given without "
                                   "\".json\": --scenario {}", name_or_path, stem, stem));
  }
  if (looks_like_path) return read_scenario_file(name_or_path);
  check_scenario_dir_variable(name_or_path);
  // The first folder that holds it: RINGLAB_SCENARIO_DIR's own scenarios before ringlab's.
  const std::vector<fs::path> folders = scenario_folders();
  for (const fs::path& folder : folders)
    if (fs::exists(folder / (name_or_path + ".json"), ec)) return read_scenario_file(folder / (name_or_path + ".json"));
  const std::vector<std::string> known = list_scenarios();
  std::vector<std::string> searched;
  for (const fs::path& folder : folders) searched.push_back(folder.string());
  const std::string where =
      folders.empty() ? std::string("no scenario folder found: set RINGLAB_SCENARIO_DIR to a folder of scenario .json "
                                    "files, or give --scenario a file's path")
      : known.empty() ? fmt::format("no scenario .json files in {}", fmt::join(searched, ", "))
                      : fmt::format("known: {}; in {}", fmt::join(known, ", "), fmt::join(searched, ", "));
  throw InputError(fmt::format("--scenario: no scenario named '{}' ({})", name_or_path, where));
}

}  // namespace ringlab
