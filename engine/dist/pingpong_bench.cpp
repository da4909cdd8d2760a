#include "engine/dist/pingpong_bench.h"

#include <algorithm>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/dist/allreduce_bench.h"

namespace ringlab {
namespace {

constexpr int kPingTag = 1, kPongTag = 2;

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

}  // namespace

std::vector<size_t> parse_pingpong_sizes(const std::string& text, const std::string& flag) {
  std::vector<size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    sizes.push_back(std::max(parse_byte_size(item, flag) / sizeof(float), size_t{1}) * sizeof(float));
  if (sizes.empty()) throw InputError(flag + ": no sizes given");
  return sizes;
}

PingPongResult bench_pingpong_size(ProcessGroup& group, size_t bytes, int iters, int warmup) {
  if (group.size() < 2) throw InputError("bench pingpong needs at least 2 ranks");
  std::vector<float> buffer(bytes / sizeof(float), 1.0f);
  std::vector<float> figures(2, 0.0f);  // rank 0's median and fastest one-way µs, shared below
  group.barrier();
  // One message at a time: as small an exchange as a DDP step's small bucket, and measured on
  // the same path (on gloo, the synchronous pairs up to ProcessGroup::kSmallExchangeBytes).
  const ProcessGroup::SmallExchange small(group, bytes <= ProcessGroup::kSmallExchangeBytes);
  if (group.rank() == 1) bounce(group, buffer, warmup + iters);
  if (group.rank() == 0) {
    const std::vector<double> rtt = serve(group, buffer, iters, warmup);
    figures = {static_cast<float>(median_of(rtt) / 2), static_cast<float>(*std::min_element(rtt.begin(), rtt.end()) / 2)};
  }
  group.broadcast(figures, 0);
  PingPongResult r;
  r.bytes = bytes;
  r.one_way_us = figures[0];
  r.min_one_way_us = figures[1];
  r.gbps = r.one_way_us > 0 ? static_cast<double>(bytes) / (r.one_way_us * 1e3) : 0;
  return r;
}

std::string pingpong_table_header() {
  return fmt::format("#{:>12} {:>14} {:>14} {:>12}\n", "size", "one-way(us)", "fastest(us)", "GB/s");
}

std::string pingpong_table_row(const PingPongResult& r) {
  return fmt::format(" {:>12} {:>14.2f} {:>14.2f} {:>12.3f}\n", r.bytes, r.one_way_us, r.min_one_way_us, r.gbps);
}

nlohmann::json pingpong_to_json(const PingPongResult& r) {
  return {{"size", r.bytes}, {"one_way_us", r.one_way_us}, {"min_one_way_us", r.min_one_way_us}, {"gbps", r.gbps}};
}

PingPongResult pingpong_from_json(const nlohmann::json& j) {
  PingPongResult r;
  r.bytes = j.at("size").get<size_t>();
  r.one_way_us = j.at("one_way_us").get<double>();
  r.min_one_way_us = j.at("min_one_way_us").get<double>();
  r.gbps = j.at("gbps").get<double>();
  return r;
}

}  // namespace ringlab
