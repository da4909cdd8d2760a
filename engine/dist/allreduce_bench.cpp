#include "engine/dist/allreduce_bench.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/core/system_memory.h"

namespace ringlab {
namespace {

constexpr size_t kMaxBenchBytes = size_t{4} << 30;

// The value rank r puts at element i: small integers, so every partial sum is exact in float32
// and a correct all-reduce matches the serial sum bit for bit, whatever order it adds in.
float pattern(int rank, size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(rank) * 13) % 31) - 15);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// The buffers of one size: what this rank starts with, what it works on, what it should get.
struct BenchBuffers {
  std::vector<float> input, work, expected;
  BenchBuffers(int rank, int world, size_t count) : input(count), work(count), expected(count, 0.0f) {
    for (size_t i = 0; i < count; ++i) input[i] = pattern(rank, i);
    for (int r = 0; r < world; ++r)
      for (size_t i = 0; i < count; ++i) expected[i] += pattern(r, i);
  }
  int64_t wrong() const {
    int64_t n = 0;
    for (size_t i = 0; i < work.size(); ++i) n += work[i] != expected[i];
    return n;
  }
};

// Every rank's numbers, gathered through the backend's own all-reduce: rank r fills slot r of
// each of the zeroed sections, so the sum lists everyone's values.
std::vector<float> gather(ProcessGroup& group, const std::vector<float>& mine) {
  const size_t n = static_cast<size_t>(group.size()), r = static_cast<size_t>(group.rank());
  std::vector<float> v(mine.size() * n, 0.0f);
  for (size_t i = 0; i < mine.size(); ++i) v[i * n + r] = mine[i];
  group.allreduce_native(v);
  return v;
}

using AllreduceFn = std::function<void(std::span<float>)>;

// Turns every rank's median time and wrong count into the row's numbers: the slowest rank's
// time (the collective is done when the last rank is), wrong elements summed over ranks.
AllreduceBenchResult summarize(ProcessGroup& group, const std::vector<double>& times_us, int64_t wrong,
                               size_t bytes, bool checked) {
  const double fastest = times_us.empty() ? 0.0 : *std::min_element(times_us.begin(), times_us.end());
  const std::vector<float> all =
      gather(group, {static_cast<float>(median(times_us)), static_cast<float>(fastest), static_cast<float>(wrong)});
  const size_t n = static_cast<size_t>(group.size());
  AllreduceBenchResult result;
  for (size_t r = 0; r < n; ++r) {
    result.time_us = std::max(result.time_us, static_cast<double>(all[r]));
    result.min_time_us = std::max(result.min_time_us, static_cast<double>(all[n + r]));
    result.wrong += static_cast<int64_t>(all[2 * n + r]);
  }
  if (!checked) result.wrong = -1;
  result.algbw_gbps = result.time_us > 0 ? static_cast<double>(bytes) / (result.time_us * 1e-6) / 1e9 : 0;
  result.busbw_gbps = result.algbw_gbps * allreduce_bus_factor(group.size());
  return result;
}

// Runs the algorithms in turns, one iteration of each per round (in alternating order), so a
// shared, noisy machine slows them alike and their ratio stays meaningful. Each iteration starts
// from the same input, after a barrier; only the all-reduce itself is timed.
std::vector<AllreduceBenchResult> measure(ProcessGroup& group, BenchBuffers& buffers,
                                          const AllreduceBenchOptions& options,
                                          const std::vector<AllreduceFn>& algorithms) {
  const size_t k = algorithms.size();
  std::vector<std::vector<double>> times_us(k);
  std::vector<int64_t> worst_wrong(k, 0);
  for (int it = 0; it < options.warmup_iters + options.iters; ++it) {
    for (size_t turn = 0; turn < k; ++turn) {
      const size_t a = it % 2 ? k - 1 - turn : turn;
      std::memcpy(buffers.work.data(), buffers.input.data(), buffers.input.size() * sizeof(float));
      group.barrier();
      const int64_t t0 = now_ns();
      algorithms[a](buffers.work);
      const int64_t t1 = now_ns();
      if (it < options.warmup_iters) continue;
      times_us[a].push_back(static_cast<double>(t1 - t0) / 1e3);
      if (options.check) worst_wrong[a] = std::max(worst_wrong[a], buffers.wrong());
    }
  }
  std::vector<AllreduceBenchResult> results;
  for (size_t a = 0; a < k; ++a)
    results.push_back(summarize(group, times_us[a], worst_wrong[a], buffers.input.size() * sizeof(float), options.check));
  return results;
}

nlohmann::json result_to_json(const AllreduceBenchResult& r) {
  return {{"time_us", r.time_us}, {"min_time_us", r.min_time_us}, {"algbw_gbps", r.algbw_gbps},
          {"busbw_gbps", r.busbw_gbps}, {"wrong", r.wrong}};
}

AllreduceBenchResult result_from_json(const nlohmann::json& j) {
  AllreduceBenchResult r;
  r.time_us = j.at("time_us").get<double>();
  r.min_time_us = j.value("min_time_us", 0.0);
  r.algbw_gbps = j.at("algbw_gbps").get<double>();
  r.busbw_gbps = j.at("busbw_gbps").get<double>();
  r.wrong = j.at("wrong").get<int64_t>();
  return r;
}

std::string result_columns(const std::optional<AllreduceBenchResult>& r) {
  if (!r) return fmt::format("  {:>9} {:>11} {:>11} {:>6}", "-", "-", "-", "-");
  const std::string wrong = r->wrong < 0 ? "N/A" : std::to_string(r->wrong);
  return fmt::format("  {:>9.1f} {:>11.3f} {:>11.3f} {:>6}", r->time_us, r->algbw_gbps, r->busbw_gbps, wrong);
}

}  // namespace

void AllreduceBenchOptions::validate() const {
  if (min_bytes < sizeof(float)) throw InputError("--minbytes must be at least 4 (one float)");
  if (max_bytes < min_bytes) throw InputError("--maxbytes must not be below --minbytes");
  if (max_bytes > kMaxBenchBytes) throw InputError("--maxbytes must be at most 4G");
  if (!(step_factor > 1.0)) throw InputError("--stepfactor must be greater than 1");
  if (iters < 1) throw InputError("--iters must be at least 1");
  if (warmup_iters < 0) throw InputError("--warmup_iters must not be negative");
  if (!ring && !native) throw InputError("--algorithm: nothing to measure");
}

std::optional<double> AllreduceBenchRow::ratio() const {
  if (!ring || !native || native->busbw_gbps <= 0) return std::nullopt;
  return ring->busbw_gbps / native->busbw_gbps;
}

size_t parse_byte_size(const std::string& text, const std::string& flag) {
  const auto bad = [&] {
    return InputError(flag + ": '" + text + "' is not a size (a whole number of bytes, optionally with K, M or G)");
  };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw bad();
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  const std::string suffix = text.substr(pos);
  unsigned long long unit = 1;
  if (suffix == "K" || suffix == "k") unit = 1ull << 10;
  else if (suffix == "M" || suffix == "m") unit = 1ull << 20;
  else if (suffix == "G" || suffix == "g") unit = 1ull << 30;
  else if (!suffix.empty()) throw bad();
  if (value > (kMaxBenchBytes * 16) / unit) throw InputError(flag + ": '" + text + "' is too large");
  return static_cast<size_t>(value * unit);
}

std::string format_byte_size(size_t bytes) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return std::to_string(bytes >> 30) + "G";
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::vector<size_t> bench_sizes(const AllreduceBenchOptions& options) {
  std::vector<size_t> sizes;
  for (double size = static_cast<double>(options.min_bytes); size <= static_cast<double>(options.max_bytes);
       size *= options.step_factor) {
    const size_t bytes = static_cast<size_t>(size) / sizeof(float) * sizeof(float);
    if (sizes.empty() || sizes.back() != bytes) sizes.push_back(bytes);
  }
  return sizes;
}

double allreduce_bus_factor(int world_size) {
  return world_size > 1 ? 2.0 * (world_size - 1) / world_size : 0.0;
}

RingAllreduceOptions bench_ring_options(const AllreduceBenchOptions& options, const std::string& backend) {
  const RingTuning tuned = ring_tuning_for(backend);
  RingAllreduceOptions ring;
  ring.segment_elems = options.segment_bytes ? *options.segment_bytes / sizeof(float) : tuned.segment_elems;
  ring.pipeline_depth = options.pipeline_depth ? *options.pipeline_depth : tuned.pipeline_depth;
  return ring;
}

uint64_t bench_bytes_per_rank(const AllreduceBenchOptions& options, int world_size, const std::string& backend) {
  const std::vector<size_t> sizes = bench_sizes(options);
  const size_t largest = sizes.empty() ? 0 : sizes.back();
  const size_t scratch = options.ring && world_size > 1
                             ? ring_segments(largest / sizeof(float), world_size, bench_ring_options(options, backend)).scratch
                             : 0;
  return 3 * uint64_t{largest} + uint64_t{scratch} * sizeof(float);
}

void check_bench_memory(const AllreduceBenchOptions& options, int world_size, const std::string& backend) {
  const std::optional<uint64_t> available = available_memory_bytes();
  const uint64_t per_rank = bench_bytes_per_rank(options, world_size, backend);
  const uint64_t needed = per_rank * static_cast<uint64_t>(world_size);
  if (!available || needed <= *available) return;
  const auto gib = [](uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30)); };
  throw InputError(fmt::format(
      "--maxbytes {}: the sweep needs about {} of memory ({} rank{} x {}: the input, the result and the expected sum "
      "at the largest size, and the ring's scratch), but only {} is available (MemAvailable in /proc/meminfo)",
      format_byte_size(options.max_bytes), gib(needed), world_size, world_size == 1 ? "" : "s", gib(per_rank),
      gib(*available)));
}

AllreduceBenchRow bench_allreduce_size(ProcessGroup& group, size_t bytes, const AllreduceBenchOptions& options) {
  AllreduceBenchRow row;
  row.bytes = bytes;
  row.count = bytes / sizeof(float);
  BenchBuffers buffers(group.rank(), group.size(), row.count);
  const RingAllreduceOptions ring = bench_ring_options(options, group.backend());
  std::vector<AllreduceFn> algorithms;
  if (options.ring) algorithms.push_back([&](std::span<float> d) { ring_allreduce(group, d, ring); });
  if (options.native) algorithms.push_back([&](std::span<float> d) { group.allreduce_native(d); });
  const std::vector<AllreduceBenchResult> results = measure(group, buffers, options, algorithms);
  if (options.ring) row.ring = results.front();
  if (options.native) row.native = results.back();
  return row;
}

std::string bench_table_header(const AllreduceBenchOptions& options) {
  const std::string group_line = fmt::format("  {:>9} {:>11} {:>11} {:>6}", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  std::string title = fmt::format("#{:>45}", "");
  std::string columns = fmt::format("#{:>12} {:>12} {:>6} {:>6}", "size", "count", "type", "redop");
  if (options.ring) {
    title += fmt::format("  {:^40}", "ring");
    columns += group_line;
  }
  if (options.native) {
    title += fmt::format("  {:^40}", "native");
    columns += group_line;
  }
  if (options.ring && options.native) columns += fmt::format("  {:>11}", "ring/native");
  return title + "\n" + columns + "\n";
}

std::string bench_table_row(const AllreduceBenchRow& row, const AllreduceBenchOptions& options) {
  std::string line = fmt::format(" {:>12} {:>12} {:>6} {:>6}", row.bytes, row.count, "float", "sum");
  if (options.ring) line += result_columns(row.ring);
  if (options.native) line += result_columns(row.native);
  if (options.ring && options.native) {
    const auto ratio = row.ratio();
    line += ratio ? fmt::format("  {:>11.2f}", *ratio) : fmt::format("  {:>11}", "n/a");
  }
  return line + "\n";
}

std::vector<std::string> bench_spread_notes(const std::vector<AllreduceBenchRow>& rows) {
  std::vector<std::string> notes;
  for (const bool ring : {true, false}) {
    std::vector<std::string> sizes;
    double widest = 0;
    for (const AllreduceBenchRow& row : rows) {
      const std::optional<AllreduceBenchResult>& result = ring ? row.ring : row.native;
      if (!result || result->min_time_us <= 0) continue;
      const double spread = result->time_us / result->min_time_us;
      if (spread < kWideSpread) continue;
      sizes.push_back(format_byte_size(row.bytes));
      widest = std::max(widest, spread);
    }
    if (sizes.empty()) continue;
    notes.push_back(fmt::format(
        "# spread: the {} all-reduce's median was {:g}x its fastest iteration or more at {} bytes ({:.1f}x at most): a "
        "busy machine, or waits inside the library; --json has each row's fastest (min_time_us)",
        ring ? "ring" : "native", kWideSpread, fmt::join(sizes, ", "), widest));
  }
  return notes;
}

nlohmann::json bench_row_to_json(const AllreduceBenchRow& row) {
  nlohmann::json j = {{"size", row.bytes}, {"count", row.count}, {"type", "float"}, {"redop", "sum"}};
  if (row.ring) j["ring"] = result_to_json(*row.ring);
  if (row.native) j["native"] = result_to_json(*row.native);
  if (const auto ratio = row.ratio()) j["ring_over_native_busbw"] = *ratio;
  return j;
}

AllreduceBenchRow bench_row_from_json(const nlohmann::json& j) {
  AllreduceBenchRow row;
  row.bytes = j.at("size").get<size_t>();
  row.count = j.at("count").get<size_t>();
  if (j.contains("ring")) row.ring = result_from_json(j.at("ring"));
  if (j.contains("native")) row.native = result_from_json(j.at("native"));
  return row;
}

}  // namespace ringlab
