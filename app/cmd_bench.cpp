// `ringlab bench allreduce`: nccl-tests' all_reduce_perf for ringlab's ring and the backend's own
// all-reduce, with real processes. The command is its own controller: it hosts a store on
// 127.0.0.1, starts `--world-size` copies of itself (through mpirun for MPI) as
// `ringlab bench allreduce --worker-of HOST:PORT ...`, and prints the rows rank 0 posts in the
// store as they arrive.
#include <sched.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/dist/allreduce_bench.h"
#include "engine/dist/backends.h"
#include "engine/dist/pingpong_bench.h"
#include "engine/net/endpoint.h"
#include "engine/net/store.h"
#include "engine/job/job_config.h"
#include "engine/control/launcher.h"
#include "engine/rank/worker_env.h"

namespace ringlab::app {
namespace {

using std::chrono::milliseconds;

size_t parse_count(const std::string& text, const std::string& flag) {
  size_t pos = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != text.size() || value < 1 || value > 4096)
    throw InputError(flag + ": expected 'auto' or a whole number from 1 to 4096, got '" + text + "'");
  return value;
}

struct BenchArgs {
  std::string min_bytes = "4";
  std::string max_bytes = "64M";
  double step_factor = 2.0;
  int iters = 20;
  int warmup_iters = 5;
  std::string backend = "gloo";
  int world_size = 2;
  std::string algorithm = "both";
  std::string json_path;
  bool check = true;
  std::string segment_bytes = "auto";
  std::string pipeline_depth = "auto";
  bool pin = false;
  double timeout_s = 60.0;
  std::string worker_of;  // set only on the ranks the controller starts

  AllreduceBenchOptions options() const {
    AllreduceBenchOptions o;
    o.min_bytes = parse_byte_size(min_bytes, "--minbytes");
    o.max_bytes = parse_byte_size(max_bytes, "--maxbytes");
    o.step_factor = step_factor;
    o.iters = iters;
    o.warmup_iters = warmup_iters;
    o.ring = algorithm == "ring" || algorithm == "both";
    o.native = algorithm == "native" || algorithm == "both";
    o.check = check;
    if (segment_bytes != "auto") o.segment_bytes = parse_byte_size(segment_bytes, "--segment-bytes");
    if (pipeline_depth != "auto") o.pipeline_depth = parse_count(pipeline_depth, "--pipeline-depth");
    o.validate();
    return o;
  }
  milliseconds timeout() const { return milliseconds(static_cast<int64_t>(timeout_s * 1000)); }
};

// How long the whole sweep may run before the controller stops it; every operation inside has
// its own (shorter) timeout, so this only bounds a run that keeps making progress.
constexpr auto kSweepLimit = std::chrono::hours(1);

std::string row_key(size_t i) { return "bench/row/" + std::to_string(i); }

std::vector<std::string> worker_arguments(const BenchArgs& a, uint16_t store_port) {
  return {"bench", "allreduce", "--worker-of", "127.0.0.1:" + std::to_string(store_port),
          "--minbytes", a.min_bytes, "--maxbytes", a.max_bytes,
          "--stepfactor", fmt::format("{}", a.step_factor), "--iters", std::to_string(a.iters),
          "--warmup_iters", std::to_string(a.warmup_iters), "--backend", a.backend,
          "--world-size", std::to_string(a.world_size), "--algorithm", a.algorithm,
          "--segment-bytes", a.segment_bytes, "--pipeline-depth", a.pipeline_depth, "--timeout", fmt::format("{}", a.timeout_s),
          a.check ? "--check" : "--no-check", a.pin ? "--pin" : "--no-pin"};
}

// Like `mpirun --bind-to core`: rank r runs on the r-th core this process may use (modulo
// their number), so two ranks never share a core while another one idles.
void pin_to_core(int local_rank) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  if (cores.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cores[static_cast<size_t>(local_rank) % cores.size()], &one);
  sched_setaffinity(0, sizeof(one), &one);
}

// One rank: join the group, run the sweep with a barrier before each size, and (rank 0) post
// every row in the store for the controller.
void run_worker(const BenchArgs& args) {
  const AllreduceBenchOptions options = args.options();
  const WorkerEnv env = read_worker_env();
  if (args.pin) pin_to_core(env.local_rank);
  const net::Endpoint store_at = net::parse_endpoint(args.worker_of, "--worker-of");
  StoreClient store(store_at.host, store_at.port, env.token, args.timeout());
  std::unique_ptr<ProcessGroup> group = make_process_group(args.backend, env.rank, env.world_size, &store, args.timeout());
  if (group->size() != args.world_size)
    throw Error({group->rank(), "bench", -1}, fmt::format("expected {} ranks, the group has {}", args.world_size, group->size()));
  const std::vector<size_t> sizes = bench_sizes(options);
  for (size_t i = 0; i < sizes.size(); ++i) {
    group->barrier();
    const AllreduceBenchRow row = bench_allreduce_size(*group, sizes[i], options);
    if (group->rank() == 0) {
      const std::string text = bench_row_to_json(row).dump();
      store.set(row_key(i), std::vector<uint8_t>(text.begin(), text.end()));
    }
  }
  group->barrier();
}

void write_json(const std::string& path, const BenchArgs& args, const AllreduceBenchOptions& options,
                const std::vector<AllreduceBenchRow>& rows) {
  const RingAllreduceOptions ring = bench_ring_options(options, args.backend);
  nlohmann::json j = {{"benchmark", "allreduce"}, {"backend", args.backend}, {"world_size", args.world_size},
                      {"algorithm", args.algorithm}, {"iters", options.iters},
                      {"warmup_iters", options.warmup_iters}, {"check", options.check},
                      {"segment_bytes", ring.segment_elems * sizeof(float)},
                      {"pipeline_depth", ring.pipeline_depth},
                      {"rows", nlohmann::json::array()}};
  for (const auto& row : rows) j["rows"].push_back(bench_row_to_json(row));
  if (!options.ring) {
    j.erase("segment_bytes");
    j.erase("pipeline_depth");
  }
  write_output_file(path, "--json", [&](std::ostream& out) { out << j.dump(2) << "\n"; });
}

void print_summary(const std::vector<AllreduceBenchRow>& rows, const AllreduceBenchOptions& options) {
  int64_t wrong = 0;
  double ring_bw = 0, native_bw = 0;
  for (const auto& row : rows) {
    if (row.ring) {
      ring_bw += row.ring->busbw_gbps;
      wrong += std::max<int64_t>(row.ring->wrong, 0);
    }
    if (row.native) {
      native_bw += row.native->busbw_gbps;
      wrong += std::max<int64_t>(row.native->wrong, 0);
    }
  }
  const double n = rows.empty() ? 1.0 : static_cast<double>(rows.size());
  if (options.check)
    fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  else
    fmt::print("# Out of bounds values : not checked (--no-check)\n");
  if (options.ring) fmt::print("# Avg bus bandwidth (ring)   : {:.3f}\n", ring_bw / n);
  if (options.native) fmt::print("# Avg bus bandwidth (native) : {:.3f}\n", native_bw / n);
  for (const std::string& note : bench_spread_notes(rows)) fmt::print("{}\n", note);
  if (wrong != 0) set_exit_code(1);
}

// Hosts the store, starts `world_size` ranks with the arguments `worker_args(store port)` and
// hands `on_row` every row rank 0 posts under row_key(0), row_key(1), ... as it arrives, until
// `rows` have come. Throws when a rank fails or ends early.
void launch_and_stream(const std::string& backend, int world_size, milliseconds timeout, size_t rows,
                       const std::function<std::vector<std::string>(uint16_t)>& worker_args,
                       const std::function<void(const nlohmann::json&)>& on_row) {
  const std::string token = net::random_token();
  StoreServer server("127.0.0.1", 0, token);
  // The controller only polls its own store; a very short --timeout is meant for the ranks.
  StoreClient store("127.0.0.1", server.port(), token, std::max(timeout, milliseconds(30000)));

  LaunchSpec spec;
  spec.world_size = spec.local_world_size = world_size;
  spec.use_mpirun = backend == "mpi";
  spec.worker_args = worker_args(server.port());
  spec.env["RINGLAB_TOKEN"] = token;
  spec.master_addr = "127.0.0.1";
  spec.master_port = server.port();

  size_t taken = 0;
  const auto take_rows = [&] {
    while (taken < rows && store.check({row_key(taken)})) {
      const std::vector<uint8_t> value = store.get(row_key(taken++));
      on_row(nlohmann::json::parse(value.begin(), value.end()));
      std::fflush(stdout);
    }
    return false;
  };
  Launcher launcher(spec);
  launcher.start();
  const std::vector<RankExit> exits = launcher.wait(kSweepLimit, take_rows);
  take_rows();
  for (const RankExit& e : exits)
    if (!e.ok())
      throw Error(e.rank >= 0 ? fmt::format("rank {} failed: {}", e.rank, e.describe())
                              : fmt::format("mpirun failed: {}", e.describe()));
  if (taken != rows) throw Error(fmt::format("the ranks ended after {} of {} sizes", taken, rows));
}

// The controller: check, launch, stream rows, report.
void run_controller(const BenchArgs& args) {
  const AllreduceBenchOptions options = args.options();
  if (args.world_size < 1 || args.world_size > kMaxWorldSize)
    throw InputError(fmt::format("--world-size must be between 1 and {}, got {}", kMaxWorldSize, args.world_size));
  require_backend(args.backend);
  check_output_paths({{args.json_path, "--json"}});
  check_bench_memory(options, args.world_size, args.backend);
  const std::vector<size_t> sizes = bench_sizes(options);

  fmt::print("# ringlab bench allreduce: backend {}, {} rank{}, {} iterations after {} warm-up, median time\n",
             args.backend, args.world_size, args.world_size == 1 ? "" : "s", options.iters, options.warmup_iters);
  if (options.ring) {
    const RingAllreduceOptions ring = bench_ring_options(options, args.backend);
    const size_t depth = ring.pipeline_depth ? ring.pipeline_depth : kRingDefaultPipelineDepth;
    if (ring.segment_elems)
      fmt::print("# ring: {} byte segments, {} receives in flight\n", format_byte_size(ring.segment_elems * sizeof(float)), depth);
    else
      fmt::print("# ring: whole chunks, {} receives in flight\n", depth);
  }
  if (options.ring && options.native)
    fmt::print("# ring/native: the ring's bus bandwidth over the native all-reduce's (above 1: the ring is faster)\n");
  fmt::print("#\n{}", bench_table_header(options));
  std::fflush(stdout);

  std::vector<AllreduceBenchRow> rows;
  launch_and_stream(
      args.backend, args.world_size, args.timeout(), sizes.size(),
      [&](uint16_t port) { return worker_arguments(args, port); },
      [&](const nlohmann::json& j) {
        rows.push_back(bench_row_from_json(j));
        fmt::print("{}", bench_table_row(rows.back(), options));
      });
  print_summary(rows, options);
  if (!args.json_path.empty()) write_json(args.json_path, args, options, rows);
}

// `ringlab bench pingpong`: the transport's one-way latency and bandwidth between ranks 0 and 1.
struct PingPongArgs {
  std::string sizes = "4,10948,16M";
  int iters = 200;
  int warmup_iters = 20;
  std::string backend = "gloo";
  int world_size = 2;
  std::string json_path;
  double timeout_s = 60.0;
  std::string worker_of;
  std::string exchange_segment_bytes = "auto";

  // How the exchange cuts its message: the ring's tuning for the backend, or as given (0: whole).
  RingTuning exchange_cut() const {
    RingTuning cut = ring_tuning_for(backend);
    if (exchange_segment_bytes != "auto")
      cut.segment_elems = parse_byte_size(exchange_segment_bytes, "--exchange-segment-bytes") / sizeof(float);
    return cut;
  }
  milliseconds timeout() const { return milliseconds(static_cast<int64_t>(timeout_s * 1000)); }
  void validate() const {
    if (iters < 1) throw InputError("--iters must be at least 1");
    if (warmup_iters < 0) throw InputError("--warmup_iters must not be negative");
    if (world_size < 2 || world_size > kMaxWorldSize)
      throw InputError(fmt::format("--world-size must be between 2 and {}, got {}", kMaxWorldSize, world_size));
    exchange_cut();  // refuses a bad --exchange-segment-bytes before any rank starts
  }
};

std::vector<std::string> pingpong_worker_arguments(const PingPongArgs& a, uint16_t store_port) {
  return {"bench", "pingpong", "--worker-of", "127.0.0.1:" + std::to_string(store_port), "--sizes", a.sizes,
          "--iters", std::to_string(a.iters), "--warmup_iters", std::to_string(a.warmup_iters),
          "--backend", a.backend, "--world-size", std::to_string(a.world_size),
          "--timeout", fmt::format("{}", a.timeout_s), "--exchange-segment-bytes", a.exchange_segment_bytes};
}

void run_pingpong_worker(const PingPongArgs& args) {
  const std::vector<size_t> sizes = parse_pingpong_sizes(args.sizes, "--sizes");
  const WorkerEnv env = read_worker_env();
  const net::Endpoint store_at = net::parse_endpoint(args.worker_of, "--worker-of");
  StoreClient store(store_at.host, store_at.port, env.token, args.timeout());
  std::unique_ptr<ProcessGroup> group = make_process_group(args.backend, env.rank, env.world_size, &store, args.timeout());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const PingPongResult r = bench_pingpong_size(*group, sizes[i], args.exchange_cut(), args.iters, args.warmup_iters);
    if (group->rank() == 0) {
      const std::string text = pingpong_to_json(r).dump();
      store.set(row_key(i), std::vector<uint8_t>(text.begin(), text.end()));
    }
  }
  group->barrier();
}

void run_pingpong_controller(const PingPongArgs& args) {
  args.validate();
  const std::vector<size_t> sizes = parse_pingpong_sizes(args.sizes, "--sizes");
  require_backend(args.backend);
  check_output_paths({{args.json_path, "--json"}});
  check_pingpong_memory(sizes, args.world_size);
  const RingTuning cut = args.exchange_cut();
  fmt::print("# ringlab bench pingpong: backend {}, rank 0 <-> rank 1 of {}, {} round trip{} and as many exchanges, "
             "after {} warm-up;\n"
             "# one-way = median round trip / 2; fastest = the quickest round trip / 2 (the undisturbed cost on a busy "
             "machine);\n"
             "# GB/s = size / one-way;\n"
             "# exchange = ranks 0 and 1 each send `size` to the other at once, cut into segments of {}{} "
             "({} receives ahead),\n"
             "#   as a 2-rank ring step does: the median time until both have arrived. Both directions share the "
             "cores and the\n"
             "#   copies, so it takes longer than one-way; exch GB/s = size / exchange, each direction\n"
             "# sums = the median time rank 0 takes to add half of `size` (what each rank of a 2-rank all-reduce "
             "adds), on its own;\n"
             "#   exch+sums GB/s = size / (exchange + sums)\n#\n{}",
             args.backend, args.world_size, args.iters, args.iters == 1 ? "" : "s", args.warmup_iters,
             cut.segment_elems > 0 ? format_byte_size(cut.segment_elems * sizeof(float)) : std::string("whole messages"),
             args.exchange_segment_bytes == "auto" ? ", the ring's" : "",
             std::max<size_t>(cut.pipeline_depth, 1), pingpong_table_header());
  std::fflush(stdout);
  nlohmann::json rows = nlohmann::json::array();
  launch_and_stream(
      args.backend, args.world_size, args.timeout(), sizes.size(),
      [&](uint16_t port) { return pingpong_worker_arguments(args, port); },
      [&](const nlohmann::json& j) {
        rows.push_back(j);
        fmt::print("{}", pingpong_table_row(pingpong_from_json(j)));
      });
  if (args.json_path.empty()) return;
  const nlohmann::json out = {{"benchmark", "pingpong"}, {"backend", args.backend}, {"world_size", args.world_size},
                              {"iters", args.iters}, {"warmup_iters", args.warmup_iters}, {"rows", rows}};
  write_output_file(args.json_path, "--json", [&](std::ostream& o) { o << out.dump(2) << "\n"; });
}

void add_pingpong_options(CLI::App& cmd, PingPongArgs& a) {
  cmd.add_option("--sizes", a.sizes, "message sizes in bytes, comma-separated (K, M, G suffixes)")->capture_default_str();
  cmd.add_option("-n,--iters", a.iters,
                 "timed round trips per size, the median reported (nccl-tests' -n; the ranks are --world-size)")
      ->capture_default_str();
  cmd.add_option("-w,--warmup_iters", a.warmup_iters, "untimed round trips first")->capture_default_str();
  cmd.add_option("--backend", a.backend, "gloo | mpi")->capture_default_str();
  cmd.add_option("--world-size", a.world_size, "ranks, one process each (ranks 0 and 1 take part)")->capture_default_str();
  cmd.add_option("--json", a.json_path, "also write the results to this file as JSON");
  cmd.add_option("--timeout", a.timeout_s, "seconds any one operation may take")->capture_default_str();
  cmd.add_option("--exchange-segment-bytes", a.exchange_segment_bytes,
                 "the exchange's segment size, 0: whole messages, auto: the ring's, tuned per backend")
      ->capture_default_str();
  cmd.add_option("--worker-of", a.worker_of, "(internal) run as a rank of the controller at HOST:PORT")->group("");
}

void add_allreduce_options(CLI::App& cmd, BenchArgs& a) {
  cmd.add_option("-b,--minbytes", a.min_bytes, "smallest size in bytes (K, M, G suffixes)")->capture_default_str();
  cmd.add_option("-e,--maxbytes", a.max_bytes, "largest size in bytes")->capture_default_str();
  cmd.add_option("-f,--stepfactor", a.step_factor, "multiply the size by this between rows")->capture_default_str();
  cmd.add_option("-n,--iters", a.iters,
                 "timed iterations per size, the median reported (nccl-tests' -n; the ranks are --world-size)")
      ->capture_default_str();
  cmd.add_option("-w,--warmup_iters", a.warmup_iters, "untimed iterations first")->capture_default_str();
  cmd.add_option("--backend", a.backend, "gloo | mpi")->capture_default_str();
  cmd.add_option("--world-size", a.world_size, "ranks, one process each")->capture_default_str();
  cmd.add_option("--algorithm", a.algorithm, "ring | native | both")
      ->check(CLI::IsMember({"ring", "native", "both"}))
      ->capture_default_str();
  cmd.add_option("--json", a.json_path, "also write the results to this file as JSON");
  cmd.add_flag("--check", a.check, "verify every result against the serial sum (on by default)");
  cmd.add_flag_callback("--no-check", [&a] { a.check = false; }, "do not verify the results");
  cmd.add_option("--segment-bytes", a.segment_bytes, "the ring's segment size, 0: whole chunks, auto: tuned per backend")
      ->capture_default_str();
  cmd.add_option("--pipeline-depth", a.pipeline_depth, "the ring's segment receives in flight, auto: tuned per backend")
      ->capture_default_str();
  cmd.add_flag("--pin", a.pin, "pin each rank to its own core, like mpirun --bind-to core");
  cmd.add_flag_callback("--no-pin", [&a] { a.pin = false; }, "leave the ranks where the kernel puts them (the default)");
  cmd.add_option("--timeout", a.timeout_s, "seconds any one operation may take")->capture_default_str();
  cmd.add_option("--worker-of", a.worker_of, "(internal) run as a rank of the controller at HOST:PORT")
      ->group("");
}

}  // namespace

void add_bench_command(CLI::App& root) {
  auto* bench = root.add_subcommand("bench", "measurements: `ringlab bench allreduce` (nccl-tests style), `ringlab bench pingpong`");
  bench->require_subcommand(1);
  auto* allreduce = bench->add_subcommand(
      "allreduce", "all-reduce bandwidth of the ring and the backend's own all-reduce, over real processes");
  auto args = std::make_shared<BenchArgs>();
  add_allreduce_options(*allreduce, *args);
  allreduce->callback([args] {
    check_timeout_seconds(args->timeout_s);
    if (args->worker_of.empty())
      run_controller(*args);
    else
      run_worker(*args);
  });
  auto* pingpong = bench->add_subcommand(
      "pingpong", "one-way latency and bandwidth of the backend's point-to-point, and both ways at once, rank 0 <-> rank 1");
  auto pp = std::make_shared<PingPongArgs>();
  add_pingpong_options(*pingpong, *pp);
  pingpong->callback([pp] {
    check_timeout_seconds(pp->timeout_s);
    if (pp->worker_of.empty())
      run_pingpong_controller(*pp);
    else
      run_pingpong_worker(*pp);
  });
}

}  // namespace ringlab::app
