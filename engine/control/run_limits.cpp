#include "engine/control/run_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/limits.h"
#include "engine/rank/checkpoint.h"
#include "engine/events/event.h"
#include "engine/rank/trainer.h"

namespace ringlab {
namespace {

// What a process holds before the run's data: the executable, its libraries, gloo's buffers,
// the threads' stacks in use (measured: 10-12 MB resident for a seed-sized worker).
constexpr uint64_t kProcessBaseBytes = 24ull << 20;
// Descriptors of a process besides its connections: stdio, the executable's own, a margin
// (measured: a worker of 8 ranks has 13 open, 7 of them to its peers; the controller 9).
constexpr int64_t kBaseDescriptors = 16;
// The controller per rank: its store and event connections, and its spools (the run's history,
// the metrics rows and the trace each keep one temporary file per rank).
constexpr int64_t kControllerDescriptorsPerRank = 6;
// Threads (RLIMIT_NPROC counts them all, and every process): a worker's main, signal, event
// sender, DDP and gloo threads, and rank 0's stop watch (measured: 5, and 6); the controller's
// main, monitor, spawner, two accept threads and two connections of its own, plus one per
// connection of a rank (measured: 23 at 8 ranks). OpenMPI and mpirun add their own.
constexpr int64_t kWorkerThreads = 6;
// A gloo rank has two connections to every other: the pairs served by gloo's I/O thread and the
// synchronous ones that small exchanges go over (dist/gloo/gloo_process_group.h).
constexpr int64_t kGlooConnectionsPerPeer = 2;
constexpr int64_t kControllerThreads = 7;
constexpr int64_t kControllerThreadsPerRank = 2;
constexpr int64_t kMpiThreadsPerRank = 3;
constexpr int64_t kMpirunThreads = 8;

uint64_t parameter_count(const JobConfig& job) {
  std::vector<int> widths = {job.features};
  widths.insert(widths.end(), job.hidden.begin(), job.hidden.end());
  widths.push_back(1);
  uint64_t n = 0;
  for (size_t l = 0; l + 1 < widths.size(); ++l)
    n += uint64_t(widths[l]) * uint64_t(widths[l + 1]) + uint64_t(widths[l + 1]);
  return n;
}

std::optional<uint64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

// Raises the soft limit to what is needed if the hard limit allows it: true when it fits then.
bool fits_limit(int resource, uint64_t needed, rlimit& limit) {
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || needed <= limit.rlim_cur) return true;
  if (limit.rlim_max != RLIM_INFINITY && needed > limit.rlim_max) return false;
  rlimit raised = limit;
  raised.rlim_cur = limit.rlim_max;
  if (::setrlimit(resource, &raised) != 0) return false;
  limit = raised;
  return true;
}

std::string limit_value(rlim_t value) { return value == RLIM_INFINITY ? "unlimited" : std::to_string(value); }

void check_memory(const JobConfig& job, const RunShape& shape, const RunFootprint& f) {
  if (shape.checkpoints && f.checkpoint_bytes > kMaxCheckpointBytes)
    throw InputError(fmt::format("the model has {} parameters: a checkpoint of it would take {}, more than the {} "
                                 "a checkpoint may hold, and --max-restarts needs checkpoints",
                                 f.parameters, describe_bytes(f.checkpoint_bytes),
                                 describe_bytes(kMaxCheckpointBytes)));
  const std::optional<uint64_t> available = mem_available();
  if (!available || f.total_bytes <= *available) return;
  throw InputError(fmt::format(
      "this run needs about {} of memory ({} worker{} x {}: {}; the controller {}), but this machine has {} "
      "available (MemAvailable); use fewer --samples, a smaller --hidden or --batch-size, or fewer ranks",
      describe_bytes(f.total_bytes), shape.local_ranks, shape.local_ranks == 1 ? "" : "s",
      describe_bytes(f.worker_bytes), f.worker_breakdown, describe_bytes(f.controller_bytes),
      describe_bytes(*available)));
}

void check_descriptors(const RunShape& shape, const RunFootprint& f) {
  const int64_t needed = std::max(f.controller_descriptors, f.worker_descriptors);
  rlimit limit{};
  if (fits_limit(RLIMIT_NOFILE, static_cast<uint64_t>(needed), limit)) return;
  throw Error(fmt::format(
      "not enough file descriptors: this run needs about {} open files in the controller ({} ranks x {} for their "
      "connections and spools, and its own) and {} in each worker (its connections to every other rank), but "
      "RLIMIT_NOFILE (ulimit -n) allows {} (hard limit {}); raise it (ulimit -n {}) or use fewer ranks",
      f.controller_descriptors, shape.local_ranks, kControllerDescriptorsPerRank, f.worker_descriptors,
      limit_value(limit.rlim_cur), limit_value(limit.rlim_max), needed));
}

// RLIMIT_NPROC binds only users without CAP_SYS_RESOURCE or CAP_SYS_ADMIN: not root.
void check_threads(const RunShape& shape, const RunFootprint& f) {
  if (::geteuid() == 0) return;
  const long running = user_thread_count();
  if (running < 0) return;
  const int64_t needed = running + f.threads;
  rlimit limit{};
  if (fits_limit(RLIMIT_NPROC, static_cast<uint64_t>(needed), limit)) return;
  throw Error(fmt::format(
      "not enough processes and threads: this run starts about {} ({} workers x {}, the controller {}{}), but "
      "RLIMIT_NPROC (ulimit -u) allows {} for this user (hard limit {}), who runs {} already; raise it "
      "(ulimit -u {}) or use fewer ranks",
      f.threads, shape.local_ranks, kWorkerThreads, kControllerThreads + kControllerThreadsPerRank * shape.local_ranks,
      shape.mpirun ? ", mpirun's" : "", limit_value(limit.rlim_cur), limit_value(limit.rlim_max), running, needed));
}

}  // namespace

std::string describe_bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.0f} MB", b / 1e6);
  return fmt::format("{:.0f} kB", b / 1e3);
}

RunFootprint estimate_footprint(const JobConfig& job, const RunShape& shape) {
  RunFootprint f;
  f.parameters = parameter_count(job);
  const uint64_t world = static_cast<uint64_t>(job.world_size);
  const uint64_t samples = static_cast<uint64_t>(job.samples);
  const uint64_t per_rank = (samples + world - 1) / world;
  const uint64_t padded = per_rank * world;
  uint64_t widths = static_cast<uint64_t>(job.features) + 1, widest = static_cast<uint64_t>(job.features);
  for (int h : job.hidden) {
    widths += static_cast<uint64_t>(h);
    widest = std::max<uint64_t>(widest, static_cast<uint64_t>(h));
  }
  const bool momentum = job.momentum != 0.0;
  // The data: features and target of every sample, in float.
  const uint64_t dataset = samples * (static_cast<uint64_t>(job.features) + 1) * 4;
  // The sampler draws a permutation of the whole dataset (which may double once while padded)
  // and keeps this rank's shard of it.
  const uint64_t sampler = (2 * padded + per_rank) * 8;
  // Parameters, gradients, momentum, the ring's scratch, the copies taken at the end.
  const uint64_t model = f.parameters * 4 * (momentum ? 5 : 4);
  // Every layer's activations for a batch (or an evaluation block), and the backward's scratch.
  const uint64_t rows = std::max<uint64_t>(static_cast<uint64_t>(job.batch_size),
                                           std::min<uint64_t>(samples, eval_block_rows(job)));
  const uint64_t activations = rows * (widths + 3 * widest) * 4;
  const bool on_gpu = job.backend == "nccl";  // the model and its activations live on the GPU
  f.worker_bytes = kProcessBaseBytes + dataset + sampler + (on_gpu ? 0 : model + activations);
  f.worker_breakdown = fmt::format("the dataset {}, the sampler's permutation {}", describe_bytes(dataset),
                                   describe_bytes(sampler));
  if (!on_gpu)
    f.worker_breakdown += fmt::format(", the model's {} parameters {}, activations {}", f.parameters,
                                      describe_bytes(model), describe_bytes(activations));
  // The controller takes rank 0's parameters in (and copies them into the result), and reads
  // each rank's events through a buffer that holds a piece of a shard at most.
  f.controller_bytes = kProcessBaseBytes + f.parameters * 4 * 3 +
                       static_cast<uint64_t>(shape.local_ranks) * 2 * kPieceElements * sizeof(int64_t);
  f.total_bytes = static_cast<uint64_t>(shape.local_ranks) * f.worker_bytes + f.controller_bytes;
  f.checkpoint_bytes = f.parameters * 4 * (momentum ? 2 : 1) + (64u << 10);
  f.controller_descriptors = kBaseDescriptors + shape.local_ranks * kControllerDescriptorsPerRank;
  f.worker_descriptors = kBaseDescriptors + (job.world_size - 1) * (job.backend == "gloo" ? kGlooConnectionsPerPeer : 1);
  f.threads = kControllerThreads + (kControllerThreadsPerRank + kWorkerThreads) * shape.local_ranks +
              (shape.mpirun ? kMpirunThreads + kMpiThreadsPerRank * shape.local_ranks : 0);
  return f;
}

void check_run_fits(const JobConfig& job, const RunShape& shape) {
  const RunFootprint f = estimate_footprint(job, shape);
  check_memory(job, shape, f);
  const char* skip = std::getenv("RINGLAB_SKIP_LIMIT_CHECK");
  if (skip && std::string(skip) == "1") return;
  check_descriptors(shape, f);
  check_threads(shape, f);
}

}  // namespace ringlab
