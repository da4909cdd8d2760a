#pragma once
// The all-reduce measurement behind `ringlab bench allreduce`, in the manner of nccl-tests'
// all_reduce_perf: a sweep of sizes, warm-up then timed iterations, algorithm bandwidth
// (bytes / time) and bus bandwidth (algbw * 2(n-1)/n), and a check of every result against the
// serial sum. Every rank of the group calls the same functions with the same options.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/dist/process_group.h"
#include "engine/dist/ring_allreduce.h"

namespace ringlab {

struct AllreduceBenchOptions {
  size_t min_bytes = 4;
  size_t max_bytes = size_t{64} << 20;
  double step_factor = 2.0;
  int iters = 20;
  int warmup_iters = 5;
  bool ring = true;     // ringlab's ring over the group's point-to-point
  bool native = true;   // the backend's own all-reduce
  bool check = true;    // verify every timed iteration against the serial sum
  // The ring's segment size (0: whole chunks) and receives in flight; unset: ring_tuning_for().
  std::optional<size_t> segment_bytes;
  std::optional<size_t> pipeline_depth;

  // Throws InputError naming the flag (nccl-tests' spelling) that is out of range.
  void validate() const;
};

// One algorithm at one size, over all ranks.
struct AllreduceBenchResult {
  double time_us = 0;      // the slowest rank's median over the timed iterations
  double min_time_us = 0;  // the slowest rank's fastest iteration: the undisturbed cost on a busy machine
  double algbw_gbps = 0;   // bytes / time, GB = 1e9 bytes as nccl-tests counts
  double busbw_gbps = 0;   // algbw * 2(n-1)/n: what each link carried; 0 for one rank
  int64_t wrong = 0;       // wrong elements, summed over ranks (-1: not checked)
};

struct AllreduceBenchRow {
  size_t bytes = 0;
  size_t count = 0;
  std::optional<AllreduceBenchResult> ring;
  std::optional<AllreduceBenchResult> native;
  // ring busbw / native busbw, when both ran and native's is not zero.
  std::optional<double> ratio() const;
};

// "4", "4K", "64M", "1G" (powers of 1024, as nccl-tests reads them); InputError naming `flag`.
size_t parse_byte_size(const std::string& text, const std::string& flag);
// "4", "1K", "64M": the shortest exact spelling, for tables.
std::string format_byte_size(size_t bytes);

// The sizes of the sweep: min, min*f, ... up to max, each rounded down to whole floats.
std::vector<size_t> bench_sizes(const AllreduceBenchOptions& options);

// nccl-tests' bus bandwidth factor for all-reduce: 2(n-1)/n.
double allreduce_bus_factor(int world_size);

// The ring's options for this benchmark on `backend`: the user's choice, else the tuned ones.
RingAllreduceOptions bench_ring_options(const AllreduceBenchOptions& options, const std::string& backend);

// What each rank allocates for the sweep's largest size: its input, the buffer it reduces in and
// the expected sum (three buffers of that size), and the ring's reduce-scatter scratch.
uint64_t bench_bytes_per_rank(const AllreduceBenchOptions& options, int world_size, const std::string& backend);
// Refuses (InputError, with the sizes) a sweep whose `world_size` ranks would need more memory
// than this machine has available, before any rank starts allocating it.
void check_bench_memory(const AllreduceBenchOptions& options, int world_size, const std::string& backend);

// Measures one size on every rank (a collective call: all ranks, same arguments).
AllreduceBenchRow bench_allreduce_size(ProcessGroup& group, size_t bytes, const AllreduceBenchOptions& options);

// The table, nccl-tests style: column groups per algorithm, then ring/native when both ran.
std::string bench_table_header(const AllreduceBenchOptions& options);
std::string bench_table_row(const AllreduceBenchRow& row, const AllreduceBenchOptions& options);

// A median this many times its fastest iteration or more says the timings spread: the median
// alone then hides how much (an 88 ms row on a machine whose neighbours held its cores).
constexpr double kWideSpread = 3.0;
// Lines for under the table, one per algorithm whose rows spread so ("" lines left out): which
// sizes, by how much at most, and where the fastest iterations are.
std::vector<std::string> bench_spread_notes(const std::vector<AllreduceBenchRow>& rows);

nlohmann::json bench_row_to_json(const AllreduceBenchRow& row);
AllreduceBenchRow bench_row_from_json(const nlohmann::json& j);

}  // namespace ringlab
