#include "engine/dist/pingpong_bench.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/system_memory.h"
#include "engine/dist/allreduce_bench.h"

namespace ringlab {
namespace {

constexpr int kPingTag = 1, kPongTag = 2, kExchangeTag = 3;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// Rank 1's side: receive, send back. The receive is posted before rank 0 can send, as a
// ring's receive usually is, so the figure is the transport's best case for one message.
void bounce(ProcessGroup& group, std::span<float> buffer, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    group.recv(buffer, 0, kPingTag);
    group.send(buffer, 0, kPongTag);
  }
}

// Rank 0's side: round trip times in µs, warm-up rounds not kept.
std::vector<double> serve(ProcessGroup& group, std::span<float> buffer, int iters, int warmup) {
  std::vector<double> round_trips;
  round_trips.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < warmup + iters; ++i) {
    auto pong = group.irecv(buffer, 1, kPongTag);
    const int64_t t0 = now_ns();
    group.send(buffer, 1, kPingTag);
    pong->wait(group.timeout());
    const int64_t t1 = now_ns();
    if (i >= warmup) round_trips.push_back(static_cast<double>(t1 - t0) / 1e3);
  }
  return round_trips;
}

// Ranks 0 and 1 at once, each sending the message to the other in the ring's segments, as the
// ring moves a chunk: up to `depth` receives posted ahead, every send posted at once, each
// receive waited for in turn. Every exchange starts when the previous one has ended on both sides
// (each waits for the other's data), so the two stay in step without a barrier. Times in µs,
// warm-up exchanges not kept.
std::vector<double> exchange(ProcessGroup& group, std::span<float> out, std::span<float> in, const RingTuning& cut,
                             int iters, int warmup) {
  const int peer = 1 - group.rank();
  const size_t segment = cut.segment_elems > 0 ? std::min(cut.segment_elems, out.size()) : out.size();
  const size_t segments = (out.size() + segment - 1) / segment;
  const size_t depth = std::max<size_t>(cut.pipeline_depth, 1);
  const auto piece = [&](std::span<float> s, size_t k) { return s.subspan(k * segment, std::min(segment, s.size() - k * segment)); };
  const auto tag = [&](size_t k) { return kExchangeTag + static_cast<int>(k % 1024); };
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iters));
  std::vector<std::unique_ptr<Request>> recvs(segments), sends(segments);
  for (int i = 0; i < warmup + iters; ++i) {
    const int64_t t0 = now_ns();
    for (size_t k = 0; k < std::min(depth, segments); ++k) recvs[k] = group.irecv(piece(in, k), peer, tag(k));
    for (size_t k = 0; k < segments; ++k) sends[k] = group.isend(piece(out, k), peer, tag(k));
    for (size_t k = 0; k < segments; ++k) {
      recvs[k]->wait(group.timeout());
      recvs[k].reset();  // a request may hold its tag's transport slot until it is gone
      if (k + depth < segments) recvs[k + depth] = group.irecv(piece(in, k + depth), peer, tag(k + depth));
    }
    for (auto& s : sends) {
      s->wait(group.timeout());
      s.reset();
    }
    const int64_t t1 = now_ns();
    if (i >= warmup) times.push_back(static_cast<double>(t1 - t0) / 1e3);
  }
  return times;
}

// The sums a rank of a 2-rank all-reduce owes: half of `acc` gets the same span of `incoming`
// added, segment by segment, each segment written just before it is added (as a receive writes
// it). Only the additions are timed; µs per all-reduce, warm-up rounds not kept.
std::vector<double> half_sums(ProcessGroup& group, std::span<float> acc, std::span<float> incoming, size_t segment,
                              int iters, int warmup) {
  const size_t half = acc.size() / 2;
  segment = segment > 0 ? std::min(segment, std::max<size_t>(half, 1)) : std::max<size_t>(half, 1);
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < warmup + iters; ++i) {
    double us = 0;
    for (size_t at = 0; at < half; at += segment) {
      const size_t n = std::min(segment, half - at);
      std::fill_n(incoming.begin() + static_cast<std::ptrdiff_t>(at), n, static_cast<float>(i % 3));
      const int64_t t0 = now_ns();
      group.reduce_add(acc.subspan(at, n), incoming.subspan(at, n));
      us += static_cast<double>(now_ns() - t0) / 1e3;
    }
    if (i >= warmup) times.push_back(us);
  }
  return times;
}

// What rank `from` sends in an exchange: every element tells where it belongs and who sent it,
// so a segment landing in the wrong place, or from the wrong rank, is caught.
std::vector<float> exchange_pattern(size_t n, int from) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 4096) + 4096.0f * static_cast<float>(from);
  return v;
}

void check_exchanged(std::span<const float> got, int from, int rank) {
  const std::vector<float> want = exchange_pattern(got.size(), from);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      throw Error(fmt::format("rank {}: bench pingpong: exchange of {} B: element {} is {}, expected {} from rank {}",
                              rank, got.size() * sizeof(float), i, got[i], want[i], from));
}

}  // namespace

std::vector<size_t> parse_pingpong_sizes(const std::string& text, const std::string& flag) {
  std::vector<size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t bytes = parse_byte_size(item, flag);
    if (bytes < sizeof(float) || bytes > kMaxPingPongBytes)
      throw InputError(fmt::format("{}: '{}': expected a message of 4 B to 1G", flag, item));
    sizes.push_back(bytes / sizeof(float) * sizeof(float));
  }
  if (sizes.empty()) throw InputError(flag + ": no sizes given");
  return sizes;
}

void check_pingpong_memory(const std::vector<size_t>& sizes, int world_size) {
  const std::optional<uint64_t> available = available_memory_bytes();
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t needed = 3 * largest * 2;  // ranks 0 and 1: the message, and the exchange's two
  if (!available || needed <= *available) return;
  const auto gib = [](uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30)); };
  throw InputError(fmt::format("--sizes {}: ranks 0 and 1 need about {} of memory (3 buffers of the message each), "
                               "but only {} is available (MemAvailable in /proc/meminfo; {} ranks in all)",
                               format_byte_size(largest), gib(needed), gib(*available), world_size));
}

PingPongResult bench_pingpong_size(ProcessGroup& group, size_t bytes, const RingTuning& exchange_cut, int iters,
                                   int warmup) {
  if (group.size() < 2) throw InputError("bench pingpong needs at least 2 ranks");
  std::vector<float> buffer(bytes / sizeof(float), 1.0f);
  std::vector<float> figures(4, 0.0f);  // rank 0's median and fastest one-way µs, its exchange µs, its sums' µs
  group.barrier();
  // Measured on the path a ring's messages take (on gloo, the direct pairs).
  if (group.rank() == 1) bounce(group, buffer, warmup + iters);
  if (group.rank() == 0) {
    const std::vector<double> rtt = serve(group, buffer, iters, warmup);
    figures[0] = static_cast<float>(median_of(rtt) / 2);
    figures[1] = static_cast<float>(*std::min_element(rtt.begin(), rtt.end()) / 2);
  }
  if (group.rank() <= 1) {
    std::vector<float> outgoing = exchange_pattern(buffer.size(), group.rank()), incoming(buffer.size(), 0.0f);
    const std::vector<double> times = exchange(group, outgoing, incoming, exchange_cut, iters, warmup);
    check_exchanged(incoming, 1 - group.rank(), group.rank());
    if (group.rank() == 0) {
      figures[2] = static_cast<float>(median_of(times));
      figures[3] = static_cast<float>(median_of(half_sums(group, outgoing, incoming, exchange_cut.segment_elems, iters, warmup)));
    }
  }
  group.broadcast(figures, 0);
  PingPongResult r;
  r.bytes = bytes;
  r.one_way_us = figures[0];
  r.min_one_way_us = figures[1];
  r.gbps = r.one_way_us > 0 ? static_cast<double>(bytes) / (r.one_way_us * 1e3) : 0;
  r.exchange_us = figures[2];
  r.exchange_gbps = r.exchange_us > 0 ? static_cast<double>(bytes) / (r.exchange_us * 1e3) : 0;
  r.sum_us = figures[3];
  r.exchange_sum_gbps = r.exchange_us > 0 ? static_cast<double>(bytes) / ((r.exchange_us + r.sum_us) * 1e3) : 0;
  return r;
}

std::string pingpong_table_header() {
  return fmt::format("#{:>12} {:>14} {:>14} {:>12} {:>14} {:>14} {:>12} {:>16}\n", "size", "one-way(us)",
                     "fastest(us)", "GB/s", "exchange(us)", "exch GB/s", "sums(us)", "exch+sums GB/s");
}

// GB/s to six decimals: a 4 B message moves well under 0.001 GB/s.
std::string pingpong_table_row(const PingPongResult& r) {
  return fmt::format(" {:>12} {:>14.2f} {:>14.2f} {:>12.6f} {:>14.2f} {:>14.6f} {:>12.2f} {:>16.6f}\n", r.bytes,
                     r.one_way_us, r.min_one_way_us, r.gbps, r.exchange_us, r.exchange_gbps, r.sum_us,
                     r.exchange_sum_gbps);
}

nlohmann::json pingpong_to_json(const PingPongResult& r) {
  return {{"size", r.bytes}, {"one_way_us", r.one_way_us}, {"min_one_way_us", r.min_one_way_us}, {"gbps", r.gbps},
          {"exchange_us", r.exchange_us}, {"exchange_gbps", r.exchange_gbps},
          {"sum_us", r.sum_us}, {"exchange_sum_gbps", r.exchange_sum_gbps}};
}

PingPongResult pingpong_from_json(const nlohmann::json& j) {
  PingPongResult r;
  r.bytes = j.at("size").get<size_t>();
  r.one_way_us = j.at("one_way_us").get<double>();
  r.min_one_way_us = j.at("min_one_way_us").get<double>();
  r.gbps = j.at("gbps").get<double>();
  r.exchange_us = j.at("exchange_us").get<double>();
  r.exchange_gbps = j.at("exchange_gbps").get<double>();
  r.sum_us = j.at("sum_us").get<double>();
  r.exchange_sum_gbps = j.at("exchange_sum_gbps").get<double>();
  return r;
}

}  // namespace ringlab
