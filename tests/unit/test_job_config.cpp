// The job's text flags: --seed as torch.manual_seed takes it, --hidden as layer widths.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "engine/core/error.h"
#include "engine/control/controller.h"
#include "engine/job/epoch_shape.h"
#include "engine/job/job_config.h"

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

TEST_CASE("values a flag cannot take: an explicit bucket cap of -1, a timeout under a second") {
  CHECK_NOTHROW(check_bucket_cap_kb(1));
  CHECK_NOTHROW(check_bucket_cap_kb(1'048'576));
  CHECK_THROWS_WITH_AS(check_bucket_cap_kb(-1), doctest::Contains("--bucket-cap-kb must be between 1 and 1048576, got -1"),
                       InputError);
  JobConfig job;
  job.bucket_cap_kb = -1;  // a stored job's "PyTorch's defaults"
  CHECK_NOTHROW(job.validate());
  job.bucket_cap_kb = -2;
  CHECK_THROWS_AS(job.validate(), InputError);

  CHECK_NOTHROW(check_timeout_seconds(1));
  CHECK_NOTHROW(check_timeout_seconds(86400));
  for (double bad : {1e-9, 0.999, 0.0, -1.0, 86401.0}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(check_timeout_seconds(bad), doctest::Contains("--timeout must be between 1 and 86400 seconds"),
                         InputError);
  }
}

TEST_CASE("a run over several nodes needs a port every node can be told") {
  ControllerOptions o;
  o.job.world_size = 4;
  CHECK_NOTHROW(o.validate());
  o.nnodes = 2;
  o.node_rank = 1;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("--nnodes 2 needs --master-port (1 to 65535)"), InputError);
  o.node_rank = 0;  // node 0 would pick a port nobody else knows
  CHECK_THROWS_AS(o.validate(), InputError);
  o.master_port = 29500;
  CHECK_NOTHROW(o.validate());
  o.node_rank = 2;
  CHECK_THROWS_WITH_AS(o.validate(), "--node-rank must be in [0, --nnodes=2), got 2", InputError);
}

TEST_CASE("epoch_shape: a rank's share and steps, as DistributedSampler and DataLoader give them") {
  ringlab::JobConfig job;  // the seed's: 256 samples, batch 32
  CHECK(ringlab::epoch_shape(job, 4).samples_per_rank == 64);
  CHECK(ringlab::epoch_shape(job, 4).steps == 2);
  CHECK(ringlab::epoch_shape(job, 3).samples_per_rank == 86);  // padded: 258 indices, 2 repeated
  CHECK(ringlab::epoch_shape(job, 3).steps == 3);              // 32 + 32 + 22
  job.drop_last = true;
  CHECK(ringlab::epoch_shape(job, 3).samples_per_rank == 85);  // cut: 255 indices
  job.world_size = 1;
  CHECK(ringlab::epoch_shape(job).samples_per_rank == 256);
  CHECK(ringlab::epoch_shape(job).steps == 8);
  job.samples = 10;
  job.batch_size = 3;
  CHECK(ringlab::epoch_shape(job, 4).samples_per_rank == 2);
  CHECK(ringlab::epoch_shape(job, 4).steps == 1);
  CHECK(ringlab::epoch_shape(job, 0).samples_per_rank == 10);  // taken as one rank
}

TEST_CASE("a new world keeps its nodes where its ranks divide evenly over them") {
  CHECK(even_node_split({2, 2}, 8) == std::vector<int>{4, 4});
  CHECK(even_node_split({2, 2}, 2) == std::vector<int>{1, 1});
  CHECK(even_node_split({3, 1}, 6) == std::vector<int>{3, 3});  // an uneven split becomes an even one
  CHECK(even_node_split({2, 2, 2}, 9) == std::vector<int>{3, 3, 3});
  CHECK(even_node_split({2, 2}, 5).empty());  // one node
  CHECK(even_node_split({2, 2}, 1).empty());
  CHECK(even_node_split({2, 2, 2}, 2).empty());  // fewer ranks than nodes
  CHECK(even_node_split({}, 8).empty());
  CHECK(even_node_split({4}, 8).empty());
}
