// The alternative for `ringlab bench allreduce`: a plain program that calls a library's own
// all-reduce in a loop, nothing of ringlab in between, timed the way ringlab's bench times
// (same input copied in before each iteration, a barrier, only the all-reduce timed, the median
// of the slowest rank).
//
//   mpirun -np 2 bare_allreduce mpi BYTES ITERS WARMUP [COMPUTE_US]
//   RANK=r WORLD_SIZE=n STORE_DIR=dir bare_allreduce gloo BYTES ITERS WARMUP [COMPUTE_US]   (one per rank)
//
// Rank 0 prints one line: {"library": ..., "bytes": ..., "time_us": ..., "busbw_gbps": ...}.
//
// With COMPUTE_US it times a training step's shape instead: each iteration burns COMPUTE_US of
// the thread's own CPU time over 64 KB of memory (what a rank's forward, backward and update cost
// it, over about what they touch), then all-reduces
// BYTES, with no barrier between iterations; time_us is rank 0's mean per iteration, as ringlab
// reports its step. With more ranks than cores this is the floor the step's work and the library's
// own all-reduce reach on those cores: the ranks take turns on them, and the CPU time is counted
// only while a rank runs.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#ifdef RINGLAB_HAVE_MPI
#include <mpi.h>
#endif
#ifdef RINGLAB_HAVE_GLOO
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#endif

namespace {

struct Loop {
  int rank = 0;
  int size = 1;
  std::function<void(std::vector<float>&)> allreduce;
  std::function<void()> barrier;
  std::function<double(double)> slowest;  // the maximum over ranks
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Result {
  int rank = 0;
  int size = 1;
  double time_us = 0;  // the median of the slowest rank
};

void fill_input(std::vector<float>& input, int rank) {
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>((i * 7 + rank * 13) % 31) - 15.0f;
}

void check_sum(const std::vector<float>& work, int size, int rank, const char* library) {
  for (size_t i = 0; i < work.size(); ++i) {
    float want = 0.0f;
    for (int r = 0; r < size; ++r) want += static_cast<float>((i * 7 + r * 13) % 31) - 15.0f;
    if (work[i] != want) {
      std::fprintf(stderr, "bare_allreduce %s: rank %d: element %zu is %g, the sum is %g\n", library, rank, i,
                   work[i], want);
      std::exit(1);
    }
  }
}

// Times the loop and checks the last result against the serial sum.
Result run(const Loop& loop, size_t count, int iters, int warmup, const char* library) {
  std::vector<float> input(count), work(count);
  fill_input(input, loop.rank);
  std::vector<double> times;
  for (int it = 0; it < warmup + iters; ++it) {
    std::memcpy(work.data(), input.data(), count * sizeof(float));
    loop.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    loop.allreduce(work);
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= warmup) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  check_sum(work, loop.size, loop.rank, library);
  return {loop.rank, loop.size, loop.slowest(median(times))};
}

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// Work that costs `us` of this thread's CPU time however often the scheduler takes the core away,
// sweeping `memory` as a step sweeps its weights, gradients and activations (the seed model's
// step touches about 50 KB): ranks that share a core also share its caches, and each turn on the
// core starts with the other rank's data in them.
// The clock is read every 4 KB, so a step overshoots by well under a microsecond; the compiler
// barrier keeps the sweep from being optimised away (nothing reads the memory afterwards).
void burn_cpu(double us, std::vector<float>& memory) {
  constexpr size_t kChunk = 1024;
  const double until = thread_cpu_us() + us;
  for (size_t at = 0; thread_cpu_us() < until; at = (at + kChunk) % memory.size()) {
    for (size_t i = at; i < at + kChunk && i < memory.size(); ++i) memory[i] = memory[i] * 0.999f + 1.0f;
    asm volatile("" : : "r"(memory.data()) : "memory");
  }
}

// The step's shape: compute, then the all-reduce, back to back as a training loop runs them.
Result run_steps(const Loop& loop, size_t count, int iters, int warmup, double compute_us, const char* library) {
  std::vector<float> input(count), work(count), step_memory(16 * 1024, 1.0f);
  fill_input(input, loop.rank);
  auto step = [&] {
    burn_cpu(compute_us, step_memory);
    std::memcpy(work.data(), input.data(), count * sizeof(float));
    loop.allreduce(work);
  };
  for (int it = 0; it < warmup; ++it) step();
  loop.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iters; ++it) step();
  const double mean_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
  check_sum(work, loop.size, loop.rank, library);
  loop.barrier();  // every rank finishes together; rank 0's own mean is the figure
  return {loop.rank, loop.size, mean_us};
}

Result run_loop(const Loop& loop, size_t count, int iters, int warmup, double compute_us, const char* library) {
  return compute_us > 0 ? run_steps(loop, count, iters, warmup, compute_us, library)
                        : run(loop, count, iters, warmup, library);
}

#ifdef RINGLAB_HAVE_MPI
Result run_mpi(size_t count, int iters, int warmup, double compute_us) {
  MPI_Init(nullptr, nullptr);
  Loop loop;
  MPI_Comm_rank(MPI_COMM_WORLD, &loop.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &loop.size);
  loop.allreduce = [](std::vector<float>& d) {
    MPI_Allreduce(MPI_IN_PLACE, d.data(), static_cast<int>(d.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  loop.barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
  loop.slowest = [](double mine) {
    double worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
  };
  const Result result = run_loop(loop, count, iters, warmup, compute_us, "mpi");
  MPI_Finalize();
  return result;
}
#endif

#ifdef RINGLAB_HAVE_GLOO
Result run_gloo(size_t count, int iters, int warmup, double compute_us) {
  const char* rank_text = std::getenv("RANK");
  const char* size_text = std::getenv("WORLD_SIZE");
  const char* dir = std::getenv("STORE_DIR");
  if (!rank_text || !size_text || !dir) {
    std::fprintf(stderr, "bare_allreduce gloo: set RANK, WORLD_SIZE and STORE_DIR\n");
    std::exit(2);
  }
  Loop loop;
  loop.rank = std::atoi(rank_text);
  loop.size = std::atoi(size_text);
  gloo::rendezvous::FileStore store(dir);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(loop.rank, loop.size);
  context->setTimeout(std::chrono::seconds(60));
  context->connectFullMesh(store, device);
  loop.allreduce = [context](std::vector<float>& d) {
    gloo::AllreduceOptions opts(context);
    opts.setOutput(d.data(), d.size());
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    gloo::allreduce(opts);
  };
  loop.barrier = [context] {
    gloo::BarrierOptions opts(context);
    gloo::barrier(opts);
  };
  loop.slowest = [context](double mine) {
    std::vector<double> all(static_cast<size_t>(context->size), 0.0);
    all[static_cast<size_t>(context->rank)] = mine;
    gloo::AllreduceOptions opts(context);
    opts.setOutput(all.data(), all.size());
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<double>));
    gloo::allreduce(opts);
    return *std::max_element(all.begin(), all.end());
  };
  return run_loop(loop, count, iters, warmup, compute_us, "gloo");
}
#endif

// A whole number written in full (digits only), or -1.
long long whole_number(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text, &end, 10);
  return (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0) ? n : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: bare_allreduce mpi|gloo BYTES ITERS WARMUP [COMPUTE_US]\n");
    return 2;
  }
  const std::string library = argv[1];
  const long long bytes = whole_number(argv[2]), iters = whole_number(argv[3]), warmup = whole_number(argv[4]);
  if (bytes < 4 || bytes > (1ll << 30) || bytes % 4 != 0 || iters < 1 || iters > 10'000'000 || warmup < 0 ||
      warmup > 10'000'000) {
    std::fprintf(stderr,
                 "bare_allreduce: BYTES must be a whole number of floats from 4 to 2^30 bytes, ITERS 1 to 10^7, "
                 "WARMUP 0 to 10^7 (got '%s', '%s', '%s')\n",
                 argv[2], argv[3], argv[4]);
    return 2;
  }
  double compute_us = 0;
  if (argc == 6) {
    char* compute_end = nullptr;
    compute_us = std::strtod(argv[5], &compute_end);
    if (compute_end == argv[5] || *compute_end != '\0' || !(compute_us > 0 && compute_us < 1e7)) {
      std::fprintf(stderr, "bare_allreduce: COMPUTE_US '%s' must be a number of microseconds above 0 and below 10 s\n", argv[5]);
      return 2;
    }
  }
  const size_t count = static_cast<size_t>(bytes) / sizeof(float);
  const int iter_count = static_cast<int>(iters), warmup_count = static_cast<int>(warmup);
  Result result;
  bool known = false;
#ifdef RINGLAB_HAVE_MPI
  if (library == "mpi") result = run_mpi(count, iter_count, warmup_count, compute_us), known = true;
#endif
#ifdef RINGLAB_HAVE_GLOO
  if (library == "gloo") result = run_gloo(count, iter_count, warmup_count, compute_us), known = true;
#endif
  if (!known) {
    std::fprintf(stderr, "bare_allreduce: library '%s' is not in this build (mpi or gloo)\n", library.c_str());
    return 2;
  }
  if (result.rank != 0) return 0;
  if (compute_us > 0) {  // a step's time, compute in it: no bandwidth to speak of
    std::printf("{\"library\": \"%s\", \"bytes\": %zu, \"compute_us\": %.3f, \"time_us\": %.3f, \"busbw_gbps\": null}\n",
                library.c_str(), count * sizeof(float), compute_us, result.time_us);
    return 0;
  }
  const double algbw = static_cast<double>(count * sizeof(float)) / (result.time_us * 1e-6) / 1e9;
  std::printf("{\"library\": \"%s\", \"bytes\": %zu, \"time_us\": %.3f, \"busbw_gbps\": %.6g}\n", library.c_str(),
              count * sizeof(float), result.time_us, algbw * 2.0 * (result.size - 1) / result.size);
  return 0;
}
