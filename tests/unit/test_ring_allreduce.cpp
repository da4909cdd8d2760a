// The ring all-reduce against a serial sum, over ranks as threads: the local world and gloo's
// real TCP transport (rendezvous through gloo's in-memory HashStore). gloo's test grid: world
// sizes 1..8, element counts 0, 1, 3, 7, 1000 and 2^20 + 3 (fewer elements than ranks, and
// counts not divisible by the world size), whole chunks and segmented chunks.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/dist/allreduce_bench.h"
#include "engine/dist/backends.h"
#include "engine/dist/local_process_group.h"
#include "engine/dist/ring_allreduce.h"
#include "engine/events/event.h"

#ifdef RINGLAB_HAVE_GLOO
#include <gloo/rendezvous/hash_store.h>

#include "engine/dist/gloo/gloo_process_group.h"
#endif

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

const std::vector<size_t> kCounts = {0, 1, 3, 7, 1000, (size_t{1} << 20) + 3};

// Small integers, different on every rank and element: every partial sum is exact in float32,
// so results can be compared with ==, whatever order the ring adds in.
float value_of(int rank, size_t i) { return static_cast<float>(static_cast<int>((i * 7 + rank * 13) % 31) - 15); }

std::vector<float> rank_data(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = value_of(rank, i);
  return v;
}

std::vector<float> serial_sum(int world, size_t count) {
  std::vector<float> sum(count, 0.0f);
  for (int r = 0; r < world; ++r)
    for (size_t i = 0; i < count; ++i) sum[i] += value_of(r, i);
  return sum;
}

// Runs fn(rank) on one thread per rank; rethrows the first failure after all threads ended.
void run_ranks(int world, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

struct CollectingSink : EventSink {
  std::vector<Event> events;
  void emit(Event e) override { events.push_back(std::move(e)); }
};

// N groups that talk to each other, one per rank.
struct World {
  std::function<ProcessGroup&(int)> group;
  std::shared_ptr<void> owner;
};

World local_world(int n) {
  auto world = std::make_shared<LocalWorld>(n, 20000ms);
  return {[world](int r) -> ProcessGroup& { return world->group(r); }, world};
}

#ifdef RINGLAB_HAVE_GLOO
World gloo_world(int n, std::chrono::milliseconds timeout = 20000ms,
                 GlooMessages messages = GlooMessages::CallerThread) {
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  auto groups = std::make_shared<std::vector<std::unique_ptr<GlooProcessGroup>>>(static_cast<size_t>(n));
  run_ranks(n, [&](int r) {
    (*groups)[static_cast<size_t>(r)] = std::make_unique<GlooProcessGroup>(r, n, *store, timeout, "127.0.0.1", messages);
  });
  auto owner = std::make_shared<std::pair<decltype(store), decltype(groups)>>(store, groups);
  return {[groups](int r) -> ProcessGroup& { return *(*groups)[static_cast<size_t>(r)]; }, owner};
}
#endif

void check_grid(const std::function<World(int)>& make_world) {
  for (int n = 1; n <= 8; ++n) {
    World world = make_world(n);
    for (size_t count : kCounts) {
      // Whole chunks, segments pipelined across steps, a window deep enough to post every
      // receive at once (the tuned gloo setting), and segments step by step (gated).
      for (const char* mode : {"whole", "segmented", "deep", "gated"}) {
        CAPTURE(n);
        CAPTURE(count);
        CAPTURE(mode);
        std::vector<std::vector<float>> data(static_cast<size_t>(n));
        run_ranks(n, [&](int r) {
          data[static_cast<size_t>(r)] = rank_data(r, count);
          RingAllreduceOptions opt;
          // About three segments per chunk, so pipelining and ragged last segments are exercised.
          if (mode != std::string("whole")) opt.segment_elems = std::max<size_t>(1, count / (3 * static_cast<size_t>(n)));
          if (mode == std::string("deep")) opt.pipeline_depth = 64;
          if (mode == std::string("gated")) opt.before_step = [](RingPhase, int) {};
          ring_allreduce(world.group(r), data[static_cast<size_t>(r)], opt);
        });
        const std::vector<float> expected = serial_sum(n, count);
        for (int r = 0; r < n; ++r) CHECK(data[static_cast<size_t>(r)] == expected);
      }
    }
  }
}

}  // namespace

TEST_CASE("chunks cover the tensor and differ in size by at most one") {
  for (int n = 1; n <= 9; ++n) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{8}, size_t{1001}}) {
      size_t next = 0, smallest = count, largest = 0;
      for (int c = 0; c < n; ++c) {
        const RingChunk chunk = ring_chunk(count, n, c);
        CHECK(chunk.offset == next);
        next += chunk.count;
        smallest = std::min(smallest, chunk.count);
        largest = std::max(largest, chunk.count);
      }
      CHECK(next == count);
      CHECK(largest - smallest <= 1);
    }
  }
}

TEST_CASE("after reduce-scatter rank r owns chunk r + 1; all-gather starts from it") {
  for (int n = 2; n <= 8; ++n)
    for (int r = 0; r < n; ++r) {
      CHECK(ring_recv_chunk(RingPhase::ReduceScatter, r, n - 2, n) == (r + 1) % n);
      CHECK(ring_send_chunk(RingPhase::AllGather, r, 0, n) == (r + 1) % n);
      // What a rank forwards is what it received the step before.
      for (int s = 1; s < n - 1; ++s) {
        CHECK(ring_send_chunk(RingPhase::ReduceScatter, r, s, n) ==
              ring_recv_chunk(RingPhase::ReduceScatter, r, s - 1, n));
        CHECK(ring_send_chunk(RingPhase::AllGather, r, s, n) == ring_recv_chunk(RingPhase::AllGather, r, s - 1, n));
      }
    }
}

TEST_CASE("ring all-reduce equals the serial sum: local world") { check_grid(local_world); }

#ifdef RINGLAB_HAVE_GLOO
TEST_CASE("ring all-reduce equals the serial sum: gloo over TCP, ranks as threads") {
  // Every count, 1 to 2^20 + 3, over gloo's direct pairs (read by the waiting thread).
  check_grid([](int n) { return gloo_world(n); });
}

TEST_CASE("ring all-reduce equals the serial sum: gloo with every message on its I/O thread") {
  check_grid([](int n) { return gloo_world(n, 20000ms, GlooMessages::IoThread); });
}

TEST_CASE("gloo: small and large all-reduces in turn on the direct pairs") {
  // A small all-reduce's messages fit in the sockets; a large one's segments do not, and part of
  // each is written by gloo's I/O thread while the receiver reads: back to back, in both
  // orders, the sums stay exact.
  for (int n : {2, 3, 4}) {
    CAPTURE(n);
    World world = gloo_world(n);
    run_ranks(n, [&](int r) {
      for (size_t count : {size_t{4000}, size_t{300000}, size_t{4000}, size_t{7}, size_t{300000}}) {
        std::vector<float> data = rank_data(r, count);
        RingAllreduceOptions opt;
        opt.segment_elems = ring_tuning_for("gloo").segment_elems;
        ring_allreduce(world.group(r), data, opt);
        if (data != serial_sum(n, count)) throw Error("rank " + std::to_string(r) + ": wrong sum at count " + std::to_string(count));
      }
    });
  }
}

TEST_CASE("gloo: two ranks send each other 8 MiB messages at once, neither waits on the other's read") {
  // Whole chunks, one message each way per step: far more than a socket holds. Were both ends of
  // a direct pair writing from the calling thread, each rank would block in its write, waiting
  // for the other to read; the sending end hands the rest to gloo's I/O thread instead.
  for (int n : {2, 3}) {
    CAPTURE(n);
    World world = gloo_world(n);
    const size_t count = size_t{4} << 20;  // 16 MiB: 8 MiB chunks at 2 ranks
    run_ranks(n, [&](int r) {
      std::vector<float> data = rank_data(r, count);
      ring_allreduce(world.group(r), data, RingAllreduceOptions{});
      if (data != serial_sum(n, count)) throw Error("rank " + std::to_string(r) + ": wrong sum of 16 MiB");
    });
  }
}

TEST_CASE("gloo: a chunk of 1,026 segments, each receive registered under a tag of its own") {
  // 3 ranks, 4-element segments, 4 receives ahead: step 0's last segments and step 1's first are
  // registered on the same direct pair at once, and their tags must differ (gloo refuses a
  // second buffer under a tag that has one).
  const int n = 3;
  World world = gloo_world(n);
  const size_t count = size_t{3} * 1026 * 4;
  run_ranks(n, [&](int r) {
    std::vector<float> data = rank_data(r, count);
    RingAllreduceOptions opt;
    opt.segment_elems = 4;
    opt.pipeline_depth = 4;
    ring_allreduce(world.group(r), data, opt);
    if (data != serial_sum(n, count)) throw Error("rank " + std::to_string(r) + ": wrong sum over 1,026 segments");
  });
}

TEST_CASE("gloo: the messages setting is read from the environment, and a typo is named") {
  unsetenv("RINGLAB_GLOO_MESSAGES");
  CHECK(gloo_messages_from_env() == GlooMessages::CallerThread);
  setenv("RINGLAB_GLOO_MESSAGES", "io-thread", 1);
  CHECK(gloo_messages_from_env() == GlooMessages::IoThread);
  setenv("RINGLAB_GLOO_MESSAGES", "caller-thread", 1);
  CHECK(gloo_messages_from_env() == GlooMessages::CallerThread);
  setenv("RINGLAB_GLOO_MESSAGES", "iothread", 1);
  CHECK_THROWS_WITH_AS(gloo_messages_from_env(),
                       doctest::Contains("RINGLAB_GLOO_MESSAGES='iothread'"), InputError);
  unsetenv("RINGLAB_GLOO_MESSAGES");
  setenv("RINGLAB_GLOO_SMALL_MESSAGES", "io-thread", 1);  // the earlier name: refused, the new one named
  CHECK_THROWS_WITH_AS(gloo_messages_from_env(), doctest::Contains("now RINGLAB_GLOO_MESSAGES"), InputError);
  unsetenv("RINGLAB_GLOO_SMALL_MESSAGES");
}

TEST_CASE("gloo native all-reduce, broadcast and barrier") {
  for (int n : {1, 2, 3, 5}) {
    World world = gloo_world(n);
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
      CAPTURE(n);
      CAPTURE(count);
      std::vector<std::vector<float>> data(static_cast<size_t>(n)), bcast(static_cast<size_t>(n));
      run_ranks(n, [&](int r) {
        ProcessGroup& pg = world.group(r);
        data[static_cast<size_t>(r)] = rank_data(r, count);
        pg.allreduce_native(data[static_cast<size_t>(r)]);
        pg.barrier();
        bcast[static_cast<size_t>(r)] = rank_data(r, count);
        pg.broadcast(bcast[static_cast<size_t>(r)], n - 1);
      });
      for (int r = 0; r < n; ++r) {
        CHECK(data[static_cast<size_t>(r)] == serial_sum(n, count));
        CHECK(bcast[static_cast<size_t>(r)] == rank_data(n - 1, count));
      }
    }
  }
}
#endif

TEST_CASE("local world native all-reduce, broadcast and barrier") {
  for (int n : {1, 2, 3, 5}) {
    LocalWorld world(n, 20000ms);
    std::vector<std::vector<float>> data(static_cast<size_t>(n)), bcast(static_cast<size_t>(n));
    run_ranks(n, [&](int r) {
      data[static_cast<size_t>(r)] = rank_data(r, 1000);
      world.group(r).allreduce_native(data[static_cast<size_t>(r)]);
      world.group(r).barrier();
      bcast[static_cast<size_t>(r)] = rank_data(r, 1000);
      world.group(r).broadcast(bcast[static_cast<size_t>(r)], 0);
    });
    for (int r = 0; r < n; ++r) {
      CHECK(data[static_cast<size_t>(r)] == serial_sum(n, 1000));
      CHECK(bcast[static_cast<size_t>(r)] == rank_data(0, 1000));
    }
  }
}

TEST_CASE("chunk events: 2(N-1) receives per rank carrying 2(N-1)/N of the buffer") {
  for (int n = 2; n <= 6; ++n) {
    for (size_t count : {size_t{7}, size_t{1000}}) {
      if (count < static_cast<size_t>(n)) continue;
      CAPTURE(n);
      CAPTURE(count);
      LocalWorld world(n, 20000ms);
      std::vector<CollectingSink> sinks(static_cast<size_t>(n));
      std::vector<std::vector<float>> data(static_cast<size_t>(n));
      run_ranks(n, [&](int r) {
        data[static_cast<size_t>(r)] = rank_data(r, count);
        RingAllreduceOptions opt;
        opt.events = &sinks[static_cast<size_t>(r)];
        opt.collective_id = 42;
        opt.step = 9;
        opt.bucket = 1;
        ring_allreduce(world.group(r), data[static_cast<size_t>(r)], opt);
      });
      for (int r = 0; r < n; ++r) {
        const auto& events = sinks[static_cast<size_t>(r)].events;
        REQUIRE(events.size() == static_cast<size_t>(2 * (n - 1)));
        int64_t received = 0;
        for (const Event& e : events) {
          CHECK(e.kind == EventKind::ChunkTransfer);
          CHECK(e.dst == r);
          CHECK(e.src == (r + n - 1) % n);
          CHECK(e.collective_id == 42);
          CHECK(e.step == 9);
          CHECK(e.bucket == 1);
          CHECK(e.t_end_ns >= e.t_begin_ns);
          CHECK(e.bytes == static_cast<int64_t>(ring_chunk(count, n, e.chunk).count * sizeof(float)));
          CHECK(e.chunk == ring_recv_chunk(static_cast<RingPhase>(e.phase), r, e.ring_step, n));
          received += e.bytes;
        }
        // Every chunk but r (reduce-scatter) and r + 1 (all-gather) arrives once per phase.
        const int64_t expected = static_cast<int64_t>(
            (2 * count - ring_chunk(count, n, r).count - ring_chunk(count, n, (r + 1) % n).count) * sizeof(float));
        CHECK(received == expected);
        const double ideal = 2.0 * (n - 1) / n * static_cast<double>(count);
        CHECK(std::abs(static_cast<double>(received) / sizeof(float) - ideal) <= 2.0);
      }
    }
  }
}

TEST_CASE("small tensors: each chunk event records the receiver's chunk after the step") {
  const int n = 4;
  const size_t count = 10;
  LocalWorld world(n, 20000ms);
  std::vector<CollectingSink> sinks(n);
  run_ranks(n, [&](int r) {
    std::vector<float> data = rank_data(r, count);
    RingAllreduceOptions opt;
    opt.events = &sinks[static_cast<size_t>(r)];
    ring_allreduce(world.group(r), data, opt);
  });
  const std::vector<float> total = serial_sum(n, count);
  for (int r = 0; r < n; ++r) {
    for (const Event& e : sinks[static_cast<size_t>(r)].events) {
      const RingChunk chunk = ring_chunk(count, n, e.chunk);
      REQUIRE(e.values.size() == chunk.count);
      for (size_t i = 0; i < chunk.count; ++i) {
        float want = total[chunk.offset + i];
        if (e.phase == static_cast<int8_t>(RingPhase::ReduceScatter)) {
          // After reduce-scatter step s, chunk c holds the contributions of ranks c .. r, the
          // s + 2 ranks its partial sum has visited.
          want = 0;
          for (int j = 0; j <= e.ring_step + 1; ++j) want += value_of((e.chunk + j) % n, chunk.offset + i);
        }
        CHECK(e.values[i] == want);
      }
    }
  }
}

TEST_CASE("segmented chunks: one event per segment, same bytes in total") {
  const int n = 3;
  const size_t count = 1000, segment = 64;
  LocalWorld world(n, 20000ms);
  std::vector<CollectingSink> sinks(n);
  run_ranks(n, [&](int r) {
    std::vector<float> data = rank_data(r, count);
    RingAllreduceOptions opt;
    opt.events = &sinks[static_cast<size_t>(r)];
    opt.segment_elems = segment;
    ring_allreduce(world.group(r), data, opt);
    CHECK(data == serial_sum(n, count));
  });
  for (int r = 0; r < n; ++r) {
    int64_t bytes = 0;
    size_t expected_events = 0;
    for (RingPhase phase : {RingPhase::ReduceScatter, RingPhase::AllGather})
      for (int s = 0; s < n - 1; ++s)
        expected_events += (ring_chunk(count, n, ring_recv_chunk(phase, r, s, n)).count + segment - 1) / segment;
    for (const Event& e : sinks[static_cast<size_t>(r)].events) {
      CHECK(e.bytes <= static_cast<int64_t>(segment * sizeof(float)));
      CHECK(e.values.empty());  // more than 64 elements: no values
      bytes += e.bytes;
    }
    CHECK(sinks[static_cast<size_t>(r)].events.size() == expected_events);
    CHECK(bytes == static_cast<int64_t>((2 * count - ring_chunk(count, n, r).count -
                                         ring_chunk(count, n, (r + 1) % n).count) * sizeof(float)));
  }
}

TEST_CASE("no chunk events when the sink does not want them") {
  LocalWorld world(2, 20000ms);
  NullEventSink sink;
  run_ranks(2, [&](int r) {
    std::vector<float> data = rank_data(r, 8);
    RingAllreduceOptions opt;
    opt.events = &sink;
    ring_allreduce(world.group(r), data, opt);
    CHECK(data == serial_sum(2, 8));
  });
}

TEST_CASE("the before-step hook runs before every ring step, in order") {
  const int n = 3;
  LocalWorld world(n, 20000ms);
  std::vector<std::vector<std::pair<RingPhase, int>>> calls(n);
  run_ranks(n, [&](int r) {
    std::vector<float> data = rank_data(r, 12);
    RingAllreduceOptions opt;
    opt.before_step = [&, r](RingPhase phase, int s) { calls[static_cast<size_t>(r)].push_back({phase, s}); };
    ring_allreduce(world.group(r), data, opt);
    CHECK(data == serial_sum(n, 12));
  });
  const std::vector<std::pair<RingPhase, int>> expected = {
      {RingPhase::ReduceScatter, 0}, {RingPhase::ReduceScatter, 1}, {RingPhase::AllGather, 0}, {RingPhase::AllGather, 1}};
  for (int r = 0; r < n; ++r) CHECK(calls[static_cast<size_t>(r)] == expected);
}

TEST_CASE("world size 1 returns at once and leaves the data alone") {
  LocalWorld world(1);
  std::vector<float> data = rank_data(0, 5);
  CollectingSink sink;
  RingAllreduceOptions opt;
  opt.events = &sink;
  ring_allreduce(world.group(0), data, opt);
  CHECK(data == rank_data(0, 5));
  CHECK(sink.events.empty());
}

// A rank that never joins: the others must fail with an error naming the ring, not hang. The
// bound below only catches a hang; it is not a speed test.
void check_missing_peer(World world, bool every_rank_times_out) {
  const int n = 3;
  std::vector<std::string> messages(2);
  std::vector<char> timed_out(2, 0);  // not vector<bool>: its bits share words across threads
  std::vector<char> lost_peer(2, 0);
  const auto t0 = std::chrono::steady_clock::now();
  run_ranks(2, [&](int r) {
    std::vector<float> data = rank_data(r, 300);
    RingAllreduceOptions opt;
    opt.timeout = 300ms;
    try {
      ring_allreduce(world.group(r), data, opt);
    } catch (const TimeoutError& e) {
      timed_out[static_cast<size_t>(r)] = 1;
      messages[static_cast<size_t>(r)] = e.what();
    } catch (const PeerClosedError& e) {
      lost_peer[static_cast<size_t>(r)] = 1;
      messages[static_cast<size_t>(r)] = e.what();
    } catch (const Error& e) {
      messages[static_cast<size_t>(r)] = e.what();
    }
  });
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  // Rank 0's left neighbour is the missing rank 2: it waits at step 1. Rank 1 gets rank 0's
  // step 1 and then waits for step 2, or, where its own send to rank 2 is only complete once
  // rank 2 reads it (gloo's I/O-thread pairs), it is still at step 1.
  for (int r = 0; r < 2; ++r) {
    CAPTURE(messages[static_cast<size_t>(r)]);
    // The ring step in progress, counted from 1 within its phase of 2 steps (3 ranks).
    // (Rank 1's send to the missing rank may be the wait that times out, named by the step that
    // waits for it, of either phase.)
    const std::string ring = "rank " + std::to_string(r) + ": ring_allreduce: ";
    const std::string& m = messages[static_cast<size_t>(r)];
    CHECK(m.find(ring) == 0);
    if (r == 0) CHECK(m.find(ring + "reduce-scatter step 1 of 2: ") == 0);
    if (r == 1)
      CHECK(((m.find(ring + "reduce-scatter step ") == 0 || m.find(ring + "all-gather step ") == 0) &&
             m.find(" of 2: ") != std::string::npos));
    if (every_rank_times_out) CHECK(timed_out[static_cast<size_t>(r)]);
    // Either way it is a lost peer's error, never one that reads as the rank's own (ErrorCode
    // Other): the ring's step words are added without losing the type.
    CHECK((timed_out[static_cast<size_t>(r)] || lost_peer[static_cast<size_t>(r)]));
  }
  CHECK((timed_out[0] || timed_out[1]));
  (void)n;
}

TEST_CASE("a missing peer is a TimeoutError, not a hang: local world") {
  check_missing_peer(local_world(3), true);
}

#ifdef RINGLAB_HAVE_GLOO
TEST_CASE("a missing peer is a TimeoutError, not a hang: gloo") {
  // After its own timeout gloo closes every connection, so the rank that times out second may
  // see the closed connection first: it fails with a PeerClosedError, still naming the ring step.
  // The small tensor here moves over gloo's synchronous pairs, whose sockets carry the group's
  // timeout: the group is made with a short one, as a job's group and ring share theirs.
  check_missing_peer(gloo_world(3, 2000ms), false);
}
#endif

TEST_CASE("backends: the list names all three, unknown names are input errors") {
  const std::vector<BackendInfo> backends = list_backends();
  REQUIRE(backends.size() == 3);
  CHECK(backends[0].name == "gloo");
  CHECK(backends[1].name == "mpi");
  CHECK(backends[2].name == "nccl");
  for (const BackendInfo& b : backends) CHECK((b.available || !b.reason.empty()));
  CHECK_THROWS_AS(require_backend("carrier-pigeon"), InputError);
  CHECK_THROWS_AS(make_process_group("carrier-pigeon", 0, 1, nullptr, 1000ms), InputError);
  try {
    require_backend("carrier-pigeon");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("available:") != std::string::npos);
  }
}

TEST_CASE("bench arithmetic: sizes, bus bandwidth factor, size parsing") {
  CHECK(allreduce_bus_factor(1) == 0.0);
  CHECK(allreduce_bus_factor(2) == 1.0);
  CHECK(allreduce_bus_factor(4) == 1.5);
  CHECK(parse_byte_size("4", "-b") == 4);
  CHECK(parse_byte_size("64M", "-e") == (size_t{64} << 20));
  CHECK(parse_byte_size("1k", "-b") == 1024);
  CHECK(parse_byte_size("2G", "-e") == (size_t{2} << 30));
  CHECK_THROWS_AS(parse_byte_size("", "-b"), InputError);
  CHECK_THROWS_AS(parse_byte_size("12Q", "-b"), InputError);
  CHECK_THROWS_AS(parse_byte_size("-4", "-b"), InputError);
  CHECK(format_byte_size(16 << 20) == "16M");
  CHECK(format_byte_size(1536) == "1536");
  AllreduceBenchOptions o;
  o.min_bytes = 4;
  o.max_bytes = 64;
  CHECK(bench_sizes(o) == std::vector<size_t>{4, 8, 16, 32, 64});
  o.min_bytes = 6;  // rounded down to whole floats
  o.max_bytes = 30;
  o.step_factor = 2.5;
  CHECK(bench_sizes(o) == std::vector<size_t>{4, 12});  // 6 -> 4, 15 -> 12, 37.5 is past 30
  o.step_factor = 1.0;
  CHECK_THROWS_AS(o.validate(), InputError);
}

TEST_CASE("bench: the memory a rank needs is three buffers of the largest size and the ring's scratch") {
  AllreduceBenchOptions o;
  o.min_bytes = 4;
  o.max_bytes = size_t{64} << 20;
  o.segment_bytes = size_t{1} << 20;  // 262,144 floats
  o.pipeline_depth = 4;
  // 4 ranks: chunks of 16 MiB, 16 segments each; reduce-scatter keeps 4 segments in flight.
  CHECK(bench_bytes_per_rank(o, 4, "gloo") == (uint64_t{192} << 20) + (uint64_t{4} << 20));
  o.segment_bytes = 0;  // whole chunks: 3 steps of reduce-scatter, each a 16 MiB chunk
  CHECK(bench_bytes_per_rank(o, 4, "gloo") == (uint64_t{192} << 20) + (uint64_t{48} << 20));
  CHECK(bench_bytes_per_rank(o, 1, "gloo") == uint64_t{192} << 20);  // one rank: no ring
  o.ring = false;
  CHECK(bench_bytes_per_rank(o, 4, "gloo") == uint64_t{192} << 20);
  // 64 ranks of 4 GiB sweeps fit on no machine this test runs on.
  o.max_bytes = size_t{4} << 30;
  CHECK_THROWS_WITH_AS(check_bench_memory(o, 64, "gloo"), doctest::Contains("--maxbytes 4G: the sweep needs about 768.0 GiB"),
                       InputError);
}

// An 88 ms row on a busy machine was printed as any other: the median alone hid the spread.
TEST_CASE("bench: rows whose median is 3x their fastest iteration or more are named under the table") {
  const auto row = [](size_t bytes, double ring_median, double ring_fastest, double native_median, double native_fastest) {
    AllreduceBenchRow r;
    r.bytes = bytes;
    r.ring = AllreduceBenchResult{ring_median, ring_fastest, 0, 0, 0};
    r.native = AllreduceBenchResult{native_median, native_fastest, 0, 0, 0};
    return r;
  };
  CHECK(bench_spread_notes({row(4, 40, 30, 80, 70), row(1024, 60, 30, 100, 90)}).empty());
  const std::vector<std::string> notes =
      bench_spread_notes({row(4, 40, 30, 80, 70), row(1024, 88000, 30, 100, 90), row(65536, 90, 30, 3500, 220)});
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == "# spread: the ring all-reduce's median was 3x its fastest iteration or more at 1K, 64K bytes "
                    "(2933.3x at most): a busy machine, or waits inside the library; --json has each row's fastest "
                    "(min_time_us)");
  CHECK(notes[1].rfind("# spread: the native all-reduce's median was 3x its fastest iteration or more at 64K bytes (15.9x", 0) == 0);
}

TEST_CASE("bench: a row measured over the thread world is correct and survives JSON") {
  const int n = 3;
  LocalWorld world(n, 20000ms);
  AllreduceBenchOptions o;
  o.iters = 3;
  o.warmup_iters = 1;
  std::vector<AllreduceBenchRow> rows(n);
  run_ranks(n, [&](int r) { rows[static_cast<size_t>(r)] = bench_allreduce_size(world.group(r), 4000, o); });
  const AllreduceBenchRow& row = rows[0];
  CHECK(row.count == 1000);
  REQUIRE(row.ring);
  REQUIRE(row.native);
  CHECK(row.ring->wrong == 0);
  CHECK(row.native->wrong == 0);
  CHECK(row.ring->time_us > 0);
  CHECK(row.ring->busbw_gbps == doctest::Approx(row.ring->algbw_gbps * 4.0 / 3.0));
  const AllreduceBenchRow back = bench_row_from_json(bench_row_to_json(row));
  CHECK(back.bytes == row.bytes);
  CHECK(back.ring->time_us == row.ring->time_us);
  CHECK(back.native->wrong == 0);
  const std::string line = bench_table_row(row, o);
  CHECK(line.find("float") != std::string::npos);
  CHECK(bench_table_header(o).find("busbw(GB/s)") != std::string::npos);
}
