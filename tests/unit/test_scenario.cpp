// Scenario files: every shipped one loads and is valid; bad files name the file, field and reason.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/error.h"
#include "engine/job/scenario.h"

using namespace ringlab;
namespace fs = std::filesystem;

namespace {

struct SourceDir {
  SourceDir() { setenv("RINGLAB_SOURCE_DIR", RINGLAB_SOURCE_DIR, 1); }
};

std::string error_of(const std::string& text, const std::string& file = "bad.json") {
  const fs::path dir = fs::temp_directory_path() / ("ringlab_scenario_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / file;
  std::ofstream(path) << text;
  try {
    read_scenario_file(path);
  } catch (const InputError& e) {
    fs::remove_all(dir);
    return e.what();
  }
  fs::remove_all(dir);
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the shipped scenarios are registered and valid") {
  SourceDir source;
  const auto names = list_scenarios();
  for (const char* expected : {"seed-one-rank", "four-ranks-gloo", "set-epoch-pitfall",
                               "small-buckets-overlap", "mpi-vs-gloo", "step-through-four-ranks"}) {
    INFO(expected);
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  for (const auto& name : names) {
    INFO(name);
    const Scenario s = load_scenario(name);
    CHECK(s.name == name);
    CHECK_FALSE(s.title_en.empty());
    CHECK_FALSE(s.title_id.empty());
    CHECK_FALSE(s.description_en.empty());
    CHECK_FALSE(s.description_id.empty());
    CHECK_NOTHROW(s.job.validate());
  }
}

TEST_CASE("what the shipped scenarios promise") {
  SourceDir source;
  const Scenario seed = load_scenario("seed-one-rank");
  CHECK(seed.job.world_size == 1);
  CHECK(seed.job.samples == 256);
  CHECK(seed.job.lr == 0.03);
  CHECK(seed.job.epochs == 4);

  const Scenario four = load_scenario("four-ranks-gloo");
  CHECK(four.job.world_size == 4);
  CHECK(four.job.backend == "gloo");
  CHECK_FALSE(four.gated);

  CHECK(load_scenario("step-through-four-ranks").gated);
  CHECK_FALSE(load_scenario("set-epoch-pitfall").job.set_epoch);
  CHECK(load_scenario("small-buckets-overlap").job.bucket_cap_kb > 0);

  const Scenario both = load_scenario("mpi-vs-gloo");
  REQUIRE(both.sequence.size() == 2);
  CHECK(both.sequence[0].backend == "gloo");
  CHECK(both.sequence[1].backend == "mpi");
  CHECK(both.sequence[1].world_size == both.job.world_size);  // overrides keep the rest
}

TEST_CASE("a scenario can be loaded by path and parsed from JSON") {
  SourceDir source;
  const fs::path path = fs::path(RINGLAB_SOURCE_DIR) / "assets/scenarios/four-ranks-gloo.json";
  CHECK(load_scenario(path.string()).job.world_size == 4);

  const Scenario s = parse_scenario(nlohmann::json::parse(R"({"title": "One title", "job": {"lr": 0.1}})"),
                                    "x", "inline");
  CHECK(s.title("en") == "One title");
  CHECK(s.title("id") == "One title");
  CHECK(s.job.lr == 0.1);
  CHECK(s.job.world_size == 1);
  CHECK(s.view.focus == "ring");
}

TEST_CASE("a scenario's faults and uneven inputs are checked against its own world size") {
  const Scenario s = parse_scenario(
      nlohmann::json::parse(R"({"job": {"world_size": 4, "faults": ["kill:2@5"], "uneven": ["3:1"]},
                                "view": {"focus": "scale"}})"),
      "lab", "inline");
  CHECK(s.job.faults == std::vector<std::string>{"kill:2@5"});
  CHECK(s.job.uneven == std::vector<std::string>{"3:1"});
  CHECK(s.view.focus == "scale");

  const std::string e = error_of(R"({"job": {"world_size": 2, "faults": ["kill:2@5"]}})");
  CHECK(contains(e, "rank 2 is not below the world size 2"));
}

TEST_CASE("a scenario may place its ranks on nodes, checked against its world size") {
  const Scenario s = parse_scenario(nlohmann::json::parse(R"({"job": {"world_size": 4, "ranks_per_node": [2, 2]}})"),
                                    "two-nodes", "inline");
  CHECK(s.job.ranks_per_node == std::vector<int>{2, 2});
  CHECK(s.job.node_count() == 2);
  CHECK(contains(error_of(R"({"job": {"world_size": 4, "ranks_per_node": [2, 3]}})"), "adds up to 5 ranks"));
  CHECK(contains(error_of(R"({"job": {"world_size": 2, "ranks_per_node": [2, 0]}})"), "job.ranks_per_node"));
}

TEST_CASE("an unknown scenario name lists the known ones") {
  SourceDir source;
  try {
    load_scenario("no-such-scenario");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "no-such-scenario"));
    CHECK(contains(e.what(), "four-ranks-gloo"));
  }
  CHECK_THROWS_AS(load_scenario(""), InputError);
  CHECK_THROWS_AS(load_scenario("/nonexistent/dir/x.json"), InputError);
}

TEST_CASE("invalid files name the file, the field and the reason") {
  std::string e = error_of(R"({"job": {"world_size": 0}})", "zero.json");
  CHECK(contains(e, "zero.json"));
  CHECK(contains(e, "job.world_size"));
  CHECK(contains(e, "between 1 and"));

  e = error_of(R"({"job": {"lr": "fast"}})");
  CHECK(contains(e, "field 'job.lr': must be a number, got \"fast\""));

  e = error_of(R"({"job": {"world_size": 2.5}})");
  CHECK(contains(e, "field 'job.world_size': must be a whole number, got 2.5"));

  e = error_of(R"({"job": {"faults": [{"rank": 1}]}})");
  CHECK(contains(e, "field 'job.faults': must be a list of strings, got [{\"rank\":1}]"));

  e = error_of(R"({"view": {"speed": "fast"}})");
  CHECK(contains(e, "field 'view.speed': must be a number, got \"fast\""));

  e = error_of(R"({"gated": [true]})");
  CHECK(contains(e, "field 'gated': must be true or false, got a list"));

  e = error_of(R"({"job": {"wrold_size": 4}})");
  CHECK(contains(e, "job.wrold_size"));
  CHECK(contains(e, "unknown field"));

  e = error_of(R"({"gated": "yes"})");
  CHECK(contains(e, "'gated'"));

  e = error_of(R"({"view": {"focus": "everything"}})");
  CHECK(contains(e, "view.focus"));

  e = error_of(R"({"view": {"speed": -1}})");
  CHECK(contains(e, "view.speed"));

  e = error_of(R"({"sequence": [{"backend": "carrier-pigeon"}]})");
  CHECK(contains(e, "sequence[0].backend"));

  e = error_of(R"({"sequence": []})");
  CHECK(contains(e, "'sequence'"));

  e = error_of(R"({"title": 5})");
  CHECK(contains(e, "'title'"));

  e = error_of(R"({"job": {"world_size": 4,}})", "comma.json");
  CHECK(contains(e, "comma.json"));
  CHECK(contains(e, "not valid JSON"));

  e = error_of(R"([1, 2])");
  CHECK(contains(e, "must be a JSON object"));
}

TEST_CASE("a scenario with a key given twice, bytes after its JSON, or an endless list is refused") {
  // nlohmann alone keeps the last of two equal keys: this was a 64-rank run.
  std::string e = error_of(R"({"job": {"world_size": 2, "world_size": 64}})", "twice.json");
  CHECK(contains(e, "twice.json: field 'job.world_size' is given twice"));

  e = error_of(std::string("{\"job\": {\"world_size\": 2}}\0{\"job\": {}}", 38), "nul.json");
  CHECK(contains(e, "nul.json: 12 unexpected bytes after the JSON value, from offset 26"));
  e = error_of(R"({"job": {}} trailing)", "text.json");
  CHECK(contains(e, "from offset 12"));

  const auto many = [](const std::string& key, const std::string& item) {
    std::string list;
    for (int i = 0; i < 60'000; ++i) list += (i ? "," : "") + item;
    return R"({"job": {"world_size": 2, ")" + key + R"(": [)" + list + "]}}";
  };
  e = error_of(many("hidden", "4"));
  CHECK(contains(e, "field 'job.hidden': --hidden takes at most 16 layers, got 60000"));
  e = error_of(many("faults", R"("delay:0:1")"));
  CHECK(contains(e, "field 'job.faults': --fault may be given at most 64 times, got 60000"));
  e = error_of(many("uneven", R"("0:1")"));
  CHECK(contains(e, "field 'job.uneven': --uneven may be given at most 64 times, got 60000"));
}
