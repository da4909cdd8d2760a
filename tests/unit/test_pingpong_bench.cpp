// `ringlab bench pingpong` over ranks as threads: every rank returns rank 0's figures, a rank
// that only waits does not take part, the exchange's segments land where they belong whatever
// the cut, and a corrupted segment is named instead of timed.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/dist/local_process_group.h"
#include "engine/dist/pingpong_bench.h"
#include "on_ranks.h"

using namespace ringlab;

namespace {

// Forwards everything to a real group, but rank `liar` sends a copy of each message on tag
// `bad_tag` with one element changed: a transport that delivered wrong bytes.
class CorruptingGroup : public ProcessGroup {
 public:
  CorruptingGroup(ProcessGroup& inner, int liar, int bad_tag, size_t element)
      : inner_(inner), liar_(liar), bad_tag_(bad_tag), element_(element) {
    set_timeout(inner.timeout());
  }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string backend() const override { return inner_.backend(); }
  std::unique_ptr<Request> isend(std::span<const float> data, int dst, int tag) override {
    if (rank() != liar_ || tag != bad_tag_ || element_ >= data.size()) return inner_.isend(data, dst, tag);
    auto copy = std::make_shared<std::vector<float>>(data.begin(), data.end());
    (*copy)[element_] += 1.0f;
    return std::make_unique<KeepAlive>(inner_.isend(*copy, dst, tag), copy);
  }
  std::unique_ptr<Request> irecv(std::span<float> data, int src, int tag) override { return inner_.irecv(data, src, tag); }
  void broadcast(std::span<float> data, int root) override { inner_.broadcast(data, root); }
  void barrier() override { inner_.barrier(); }
  void allreduce_native(std::span<float> data) override { inner_.allreduce_native(data); }

 private:
  struct KeepAlive : Request {
    KeepAlive(std::unique_ptr<Request> r, std::shared_ptr<std::vector<float>> b) : req(std::move(r)), buffer(std::move(b)) {}
    void wait(std::chrono::milliseconds timeout) override { req->wait(timeout); }
    std::unique_ptr<Request> req;
    std::shared_ptr<std::vector<float>> buffer;
  };
  ProcessGroup& inner_;
  int liar_, bad_tag_;
  size_t element_;
};

}  // namespace

TEST_CASE("pingpong: every rank returns rank 0's figures, for any cut of the exchange") {
  for (const RingTuning cut : {RingTuning{0, 0}, RingTuning{256, 2}, RingTuning{100, 16}}) {
    CAPTURE(cut.segment_elems);
    LocalWorld world(3);
    std::vector<PingPongResult> got(3);
    on_ranks(3, [&](int r) { got[static_cast<size_t>(r)] = bench_pingpong_size(world.group(r), 4096, cut, 4, 1); });
    for (const PingPongResult& g : got) {
      CHECK(g.bytes == 4096);
      CHECK(g.one_way_us > 0);
      CHECK(g.min_one_way_us > 0);
      CHECK(g.min_one_way_us <= g.one_way_us);
      CHECK(g.exchange_us > 0);
      CHECK(g.gbps == doctest::Approx(4096 / (g.one_way_us * 1e3)));
      CHECK(g.exchange_gbps == doctest::Approx(4096 / (g.exchange_us * 1e3)));
      CHECK(g.sum_us >= 0);
      CHECK(g.exchange_sum_gbps == doctest::Approx(4096 / ((g.exchange_us + g.sum_us) * 1e3)));
      CHECK(g.exchange_sum_gbps <= g.exchange_gbps);
      CHECK(g.one_way_us == got[0].one_way_us);  // rank 0's, broadcast
      CHECK(g.exchange_us == got[0].exchange_us);
      CHECK(g.sum_us == got[0].sum_us);
    }
  }
}

TEST_CASE("pingpong: a row read back from its JSON is the row written, the sums among it") {
  PingPongResult r;
  r.bytes = 16 << 20;
  r.one_way_us = 5000.5;
  r.min_one_way_us = 3000.25;
  r.gbps = 3.3;
  r.exchange_us = 11000.0;
  r.exchange_gbps = 1.5;
  r.sum_us = 2000.0;
  r.exchange_sum_gbps = 1.29;
  const PingPongResult back = pingpong_from_json(pingpong_to_json(r));
  CHECK(back.bytes == r.bytes);
  CHECK(back.one_way_us == r.one_way_us);
  CHECK(back.min_one_way_us == r.min_one_way_us);
  CHECK(back.exchange_us == r.exchange_us);
  CHECK(back.sum_us == r.sum_us);
  CHECK(back.exchange_sum_gbps == r.exchange_sum_gbps);
  CHECK(pingpong_table_row(r).find("2000.00") != std::string::npos);
}

TEST_CASE("pingpong: a segment of the exchange with a wrong element is named") {
  // Rank 1 corrupts element 300 of what it sends in the exchange: with 256-float segments, element
  // 44 of the second segment, which goes on tag 4 (the exchange's tags start at 3; the
  // ping-pong's own are 1 and 2).
  LocalWorld world(2, std::chrono::milliseconds(2000));
  std::string rank0_error;
  bool rank1_failed = false;
  on_ranks(2, [&](int r) {
    CorruptingGroup group(world.group(r), 1, 4, 44);
    try {
      bench_pingpong_size(group, 1024 * sizeof(float), RingTuning{256, 2}, 2, 0);
    } catch (const std::exception& e) {
      if (r == 0) rank0_error = e.what();
      else rank1_failed = true;  // rank 0 never reaches the closing broadcast
    }
  });
  CHECK(rank0_error.find("exchange of 4096 B") != std::string::npos);
  CAPTURE(rank0_error);
  CHECK(rank0_error.find("element 300 is 4397, expected 4396 from rank 1") != std::string::npos);
  CHECK(rank1_failed);
}

TEST_CASE("pingpong sizes: 4 B to 1G, rounded down to whole floats; anything else named") {
  CHECK(parse_pingpong_sizes("4,10948,16M", "--sizes") == std::vector<size_t>{4, 10948, 16u << 20});
  CHECK(parse_pingpong_sizes("7", "--sizes") == std::vector<size_t>{4});
  CHECK(parse_pingpong_sizes("1G", "--sizes") == std::vector<size_t>{size_t{1} << 30});
  CHECK_THROWS_WITH_AS(parse_pingpong_sizes("0", "--sizes"), "--sizes: '0': expected a message of 4 B to 1G", InputError);
  CHECK_THROWS_WITH_AS(parse_pingpong_sizes("3", "--sizes"), "--sizes: '3': expected a message of 4 B to 1G", InputError);
  CHECK_THROWS_WITH_AS(parse_pingpong_sizes("4,2G", "--sizes"), "--sizes: '2G': expected a message of 4 B to 1G",
                       InputError);
  CHECK_THROWS_AS(parse_pingpong_sizes("abc", "--sizes"), InputError);
}
