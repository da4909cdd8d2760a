// The collective check riding on the ring's first message: the sums are unchanged, every rank
// sees its left neighbour's header before it adds anything, a mismatch stops the ring with this
// rank's values untouched, and the ring's first message pairs with the check's own exchange.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/on_ranks.h"
#include "engine/ddp/collective_check.h"
#include "engine/ddp/collective_runner.h"
#include "engine/dist/local_process_group.h"
#include "engine/dist/ring_allreduce.h"

#ifdef RINGLAB_HAVE_GLOO
#include <gloo/rendezvous/hash_store.h>

#include "engine/dist/gloo/gloo_process_group.h"
#endif

using namespace ringlab;

namespace {

constexpr std::chrono::milliseconds kTimeout(20000);

std::vector<float> values_of(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((static_cast<int>(i) * 3 + rank * 5) % 17) - 8.0f;
  return v;
}

// The worlds these run on: ranks as threads talking through memory, and gloo's TCP pairs,
// where the first message always travels on the synchronous pairs and a large tensor's data on
// the I/O thread's: the first messages of two collectives must pair whatever their tensors.
struct World {
  std::string name;
  std::function<ProcessGroup&(int)> group;
  std::shared_ptr<void> owner;
};

World local_world(int n) {
  auto w = std::make_shared<LocalWorld>(n, kTimeout);
  return {"local", [w](int r) -> ProcessGroup& { return w->group(r); }, w};
}

std::vector<std::function<World(int)>> worlds() {
  std::vector<std::function<World(int)>> makers = {local_world};
#ifdef RINGLAB_HAVE_GLOO
  makers.push_back([](int n) {
    auto store = std::make_shared<gloo::rendezvous::HashStore>();
    auto groups = std::make_shared<std::vector<std::unique_ptr<GlooProcessGroup>>>(n);
    on_ranks(n, [&](int r) { (*groups)[r] = std::make_unique<GlooProcessGroup>(r, n, *store, kTimeout); });
    auto owner = std::make_shared<std::pair<decltype(store), decltype(groups)>>(store, groups);
    return World{"gloo", [groups](int r) -> ProcessGroup& { return *(*groups)[r]; }, owner};
  });
#endif
  return makers;
}

}  // namespace

TEST_CASE("a header on the ring's first message: same sums, the left neighbour's header seen") {
  // 2737: the seed's bucket, carried in the first message; 40000: a first segment too large to
  // carry, sent after the header; 1: some ranks have nothing to send at step 0.
  for (const auto& make : worlds()) {
    for (const size_t count : {size_t{2737}, size_t{40000}, size_t{1}}) {
      for (const int world : {2, 3, 4}) {
        World world_group = make(world);
        CAPTURE(world_group.name);
        std::vector<std::vector<float>> plain(world), riding(world);
        std::vector<float> seen(world, -1.0f);
        on_ranks(world, [&](int r) {
          ProcessGroup& g = world_group.group(r);
          plain[r] = values_of(r, count);
          ring_allreduce(g, plain[r]);
          riding[r] = values_of(r, count);
          const float header[3] = {static_cast<float>(r), 7.0f, 9.0f};
          RingAllreduceOptions opt;
          opt.header = header;
          opt.check_header = [&, r](std::span<const float> left) { seen[r] = left[0]; };
          ring_allreduce(g, riding[r], opt);
        });
        for (int r = 0; r < world; ++r) {
          CHECK(riding[r] == plain[r]);
          CHECK(seen[r] == static_cast<float>((r + world - 1) % world));
        }
      }
    }
  }
}

TEST_CASE("a mismatched header stops the ring before any value is added") {
  for (const auto& make : worlds()) {
    for (const size_t count : {size_t{2737}, size_t{40000}}) {
      World world_group = make(2);
      CAPTURE(world_group.name);
      std::vector<std::vector<float>> data(2);
      std::vector<int> stopped(2, 0);
      on_ranks(2, [&](int r) {
        data[r] = values_of(r, count);
        const float header[1] = {static_cast<float>(r)};  // never equal to the neighbour's
        RingAllreduceOptions opt;
        opt.header = header;
        opt.check_header = [](std::span<const float>) { throw Error("mismatch"); };
        try {
          ring_allreduce(world_group.group(r), data[r], opt);
        } catch (const Error&) {
          stopped[r] = 1;
        }
      });
      for (int r = 0; r < 2; ++r) {
        CHECK(stopped[r] == 1);
        CHECK(data[r] == values_of(r, count));
      }
    }
  }
}

TEST_CASE("an all-reduce whose check rides on the ring meets a rank at a stop vote") {
  // 2737: the seed's bucket, a small exchange on gloo; 300000: a tensor whose data goes
  // through gloo's I/O thread while its first message still pairs with the vote's.
  for (const auto& make : worlds()) {
    for (const size_t count : {size_t{2737}, size_t{300000}}) {
      World world_group = make(2);
      CAPTURE(world_group.name);
      CAPTURE(count);
      std::vector<std::string> errors(2);
      on_ranks(2, [&](int r) {
        ProcessGroup& g = world_group.group(r);
        try {
          if (r == 0) {
            ddp::DdpOptions options;
            ddp::CollectiveRunner runner(g, options);
            runner.set_step(4);
            std::vector<float> grads = values_of(r, count);
            runner.allreduce_bucket(grads, 0);
          } else {
            ddp::check_collective(g, ddp::stop_vote_fingerprint(4));
          }
        } catch (const ddp::CollectiveMismatchError& e) {
          errors[r] = e.what();
        }
      });
      for (int r = 0; r < 2; ++r)
        CHECK_MESSAGE(errors[r].find("mismatched collectives: this rank is at ") != std::string::npos, r, errors[r]);
    }
  }
}
