// The job's text flags: --seed as torch.manual_seed takes it, --hidden as layer widths.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "engine/core/error.h"
#include "engine/runtime/job_config.h"

using namespace ringlab;

TEST_CASE("--seed takes every value torch.manual_seed takes, and nothing else") {
  CHECK(parse_seed("5") == 5u);
  CHECK(parse_seed("0") == 0u);
  CHECK(parse_seed("18446744073709551615") == std::numeric_limits<uint64_t>::max());
  // torch.manual_seed(-1) seeds with 2^64 - 1: negative seeds wrap around.
  CHECK(parse_seed("-1") == std::numeric_limits<uint64_t>::max());
  CHECK(parse_seed("-9223372036854775808") == uint64_t{1} << 63);
  for (const char* bad : {"18446744073709551616", "99999999999999999999999", "-9223372036854775809", "1.5", "",
                          "-", "5x", " 5", "0x10"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_seed(bad), InputError);
    CHECK_THROWS_WITH(parse_seed(bad), doctest::Contains("--seed must be a whole number in [-2^63, 2^64)"));
  }
}

TEST_CASE("--hidden is a list of widths") {
  CHECK(parse_hidden("48,48") == std::vector<int>{48, 48});
  CHECK(parse_hidden("") == std::vector<int>{});
  CHECK_THROWS_AS(parse_hidden("48,,48"), InputError);
  CHECK_THROWS_AS(parse_hidden("5000"), InputError);
}

TEST_CASE("the job's lists are bounded: layers, faults and uneven entries") {
  JobConfig job;
  job.world_size = 2;
  job.hidden = std::vector<int>(kMaxHiddenLayers, 8);
  CHECK_NOTHROW(job.validate());
  job.hidden.push_back(8);
  CHECK_THROWS_WITH_AS(job.validate(), "--hidden takes at most 16 layers, got 17", InputError);
  job.hidden = {8};
  job.faults = std::vector<std::string>(kMaxFaults, "delay:1:5");
  CHECK_NOTHROW(job.validate());
  job.faults.push_back("delay:1:5");
  CHECK_THROWS_WITH_AS(job.validate(), "--fault may be given at most 64 times, got 65", InputError);
  job.faults.clear();
  job.uneven = std::vector<std::string>(kMaxUneven + 1, "1:0");
  CHECK_THROWS_WITH_AS(job.validate(), "--uneven may be given at most 64 times, got 65", InputError);
}
