// DistributedSampler against PyTorch's semantics over a grid of world sizes and dataset sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "engine/data/data_loader.h"
#include "engine/data/distributed_sampler.h"

using ringlab::data::DistributedSampler;
using ringlab::data::SamplerOptions;

namespace {

std::vector<std::vector<int64_t>> shards(int64_t n, int world, bool shuffle, bool drop_last, int64_t epoch) {
  std::vector<std::vector<int64_t>> out;
  for (int r = 0; r < world; ++r) {
    DistributedSampler s({n, world, r, shuffle, 5, drop_last});
    s.set_epoch(epoch);
    out.push_back(s.indices());
  }
  return out;
}

}  // namespace

TEST_CASE("the seed's first 8 indices of epoch 0") {
  DistributedSampler s({256, 1, 0, true, 5, false});
  auto idx = s.indices();
  REQUIRE(idx.size() == 256);
  const std::vector<int64_t> expected = {99, 70, 55, 138, 66, 19, 48, 54};
  CHECK(std::vector<int64_t>(idx.begin(), idx.begin() + 8) == expected);
}

TEST_CASE("sampler grid: sizes, padding, disjointness, coverage") {
  for (int world = 1; world <= 8; ++world) {
    for (int64_t n : {0, 1, 7, 250, 256}) {
      for (bool shuffle : {false, true}) {
        for (bool drop_last : {false, true}) {
          CAPTURE(world);
          CAPTURE(n);
          CAPTURE(shuffle);
          CAPTURE(drop_last);
          const auto all = shards(n, world, shuffle, drop_last, 0);
          // PyTorch's num_samples.
          int64_t expected_per_rank = (drop_last && n % world != 0)
                                          ? std::max<int64_t>(0, (n - world + world - 1) / world)
                                          : (n + world - 1) / world;
          if (drop_last && n % world != 0 && n < world) expected_per_rank = 0;
          std::map<int64_t, int> count;
          for (const auto& s : all) {
            CHECK(static_cast<int64_t>(s.size()) == expected_per_rank);
            for (int64_t i : s) {
              CHECK(i >= 0);
              CHECK(i < n);
              ++count[i];
            }
          }
          const int64_t total = expected_per_rank * world;
          if (!drop_last) {
            // Every index appears; padding repeats the front of the order.
            CHECK(static_cast<int64_t>(count.size()) == n);
            CHECK(total - n == [&] { int64_t extra = 0; for (auto& [i, c] : count) extra += c - 1; return extra; }());
          } else {
            // Nothing repeats: shards are disjoint.
            for (auto& [i, c] : count) CHECK(c == 1);
            CHECK(static_cast<int64_t>(count.size()) == total);
          }
          // Rank r takes order[r::world].
          DistributedSampler s0({n, world, 0, shuffle, 5, drop_last});
          const auto order = s0.global_order();
          CHECK(static_cast<int64_t>(order.size()) == total);
          for (int r = 0; r < world; ++r)
            for (size_t k = 0; k < all[r].size(); ++k) CHECK(all[r][k] == order[r + k * world]);
        }
      }
    }
  }
}

TEST_CASE("padding repeats from the start even when it exceeds the dataset") {
  // 2 samples over 8 ranks: the order is repeated 4 times.
  DistributedSampler s({2, 8, 0, false, 0, false});
  const auto order = s.global_order();
  CHECK(order == std::vector<int64_t>{0, 1, 0, 1, 0, 1, 0, 1});
}

TEST_CASE("set_epoch changes the order; forgetting it repeats the order") {
  DistributedSampler s({256, 4, 1, true, 5, false});
  s.set_epoch(0);
  const auto e0 = s.indices();
  s.set_epoch(1);
  const auto e1 = s.indices();
  CHECK(e0 != e1);
  // Same multiset is not required per rank, but the union over ranks is all indices.
  DistributedSampler forgot({256, 4, 1, true, 5, false});
  CHECK(forgot.indices() == e0);
  CHECK(forgot.indices() == forgot.indices());
}

TEST_CASE("no shuffle is 0..n-1 split round-robin") {
  DistributedSampler s({10, 3, 2, false, 5, false});
  CHECK(s.indices() == std::vector<int64_t>{2, 5, 8, 1});  // padded with 0, 1 -> ranks 0..1 then 2 gets index 1
}

TEST_CASE("DataLoader batches and len(loader)") {
  ringlab::data::DataLoader loader({1, 2, 3, 4, 5, 6, 7}, 3);
  CHECK(loader.num_batches() == 3);
  CHECK(loader.batch(2).size() == 1);
  CHECK(loader.batch(2)[0] == 7);
  ringlab::data::DataLoader dropping({1, 2, 3, 4, 5, 6, 7}, 3, true);
  CHECK(dropping.num_batches() == 2);
  CHECK(ringlab::data::batches_per_epoch(256, 32) == 8);
  CHECK(ringlab::data::batches_per_epoch(0, 32) == 0);
}
