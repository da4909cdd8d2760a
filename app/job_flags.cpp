#include "app/job_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::app {

void add_job_flags(CLI::App& cmd, JobFlags& f) {
  f.cmd = &cmd;
  JobConfig& j = f.job;
  cmd.add_option("-n,--world-size", j.world_size, "number of ranks (processes) in all")->capture_default_str();
  cmd.add_option("--nproc-per-node,--nproc_per_node", f.nproc_per_node,
                 "ranks on each node, as torchrun's: the world size is --nnodes x --nproc-per-node");
  cmd.add_option("--backend", j.backend, "gloo | mpi | nccl")->capture_default_str();
  cmd.add_option("--algorithm", j.algorithm, "ring (ringlab's instrumented ring) | native (the backend's own)")
      ->capture_default_str();
  cmd.add_option("--samples", j.samples, "dataset size")->capture_default_str();
  cmd.add_option("--hidden", f.hidden, "hidden layer widths, comma-separated (\"\": none, a linear model)")->capture_default_str();
  cmd.add_option("--batch-size", j.batch_size, "batch size per rank")->capture_default_str();
  cmd.add_option("--lr", j.lr, "SGD learning rate")->capture_default_str();
  cmd.add_option("--momentum", j.momentum, "SGD momentum")->capture_default_str();
  cmd.add_option("--weight-decay", j.weight_decay, "SGD weight decay")->capture_default_str();
  cmd.add_option("--seed", f.seed, "torch.manual_seed and the sampler's seed, in [-2^63, 2^64)")->capture_default_str();
  cmd.add_option("--epochs", j.epochs, "epochs")->capture_default_str();
  cmd.add_flag("--drop-last", j.drop_last, "the sampler drops the tail instead of padding");
  // Callbacks, not CLI11's "!" flags, whose help reads "--no-shuffle{false}".
  cmd.add_flag_callback("--no-shuffle", [&j] { j.shuffle = false; }, "the sampler keeps dataset order");
  cmd.add_flag_callback("--forget-set-epoch", [&j] { j.set_epoch = false; }, "the classic bug: never call sampler.set_epoch");
  cmd.add_option("--bucket-cap-kb", j.bucket_cap_kb, "DDP's bucket_cap_mb, in KiB (default: PyTorch's 25 MiB)");
  cmd.add_option("--first-bucket-kb", j.first_bucket_kb,
                 "DDP's first bucket, in KiB: PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES (default 1 MiB)");
  cmd.add_option("--grad-accum", j.grad_accum, "micro-steps per optimizer step (no_sync on the others)")
      ->capture_default_str();
  cmd.add_option("--timeout", j.timeout_s, "seconds any blocking wait may take (the controller ends a run with no progress for this + 15 s)")->capture_default_str();
  cmd.add_option("--trace-level", j.trace_level,
                 "chunks (every ring chunk) | steps (each step's spans and all-reduces) | none (the same events as "
                 "steps, for a run that writes no trace)")
      ->capture_default_str();
  cmd.add_option("--fault", j.faults,
                 "inject a fault (repeatable): kill:R@STEP, delay:R:MS, drop:R@STEP, skip:R@STEP, "
                 "extra:R@STEP, resize:R@STEP");
  cmd.add_option("--uneven", j.uneven, "uneven inputs (repeatable; two for one rank add up): R:K gives rank R K batches an epoch fewer than the others");
  cmd.add_flag("--join", j.join, "PyTorch's Join: ranks out of data shadow the others' all-reduces");
  cmd.add_flag("!--no-collective-check", j.check_collectives,
               "do not compare collective fingerprints between ring neighbours");
}

void add_node_count_flag(CLI::App& cmd, JobFlags& f) {
  cmd.add_option("--nnodes", f.nnodes, "number of nodes (hosts) the run spans")->capture_default_str();
}

JobConfig JobFlags::parsed() {
  resolve_world_size();
  job.hidden = parse_hidden(hidden);
  job.seed = parse_seed(seed);
  // -1 is the job's "unset", which a flag given explicitly cannot mean.
  if (cmd && cmd->count("--bucket-cap-kb") > 0) check_bucket_cap_kb(job.bucket_cap_kb);
  if (cmd && cmd->count("--first-bucket-kb") > 0) check_first_bucket_kb(job.first_bucket_kb);
  return job;
}

// torchrun's arithmetic: `--nnodes 2 --nproc-per-node 2` is a world of 4. `-n` is the total and,
// given as well, must agree.
void JobFlags::resolve_world_size() {
  const bool nproc_given = cmd && cmd->count("--nproc-per-node") > 0;
  if (!nproc_given) return;
  if (nnodes < 1 || nnodes > kMaxWorldSize)
    throw InputError(fmt::format("--nnodes must be between 1 and {}, got {}", kMaxWorldSize, nnodes));
  if (nproc_per_node < 1 || nproc_per_node > kMaxWorldSize)
    throw InputError(fmt::format("--nproc-per-node must be between 1 and {}, got {}", kMaxWorldSize, nproc_per_node));
  const int64_t total = int64_t{nproc_per_node} * nnodes;
  if (cmd->count("--world-size") > 0 && job.world_size != total)
    throw InputError(fmt::format("--world-size {} disagrees with --nnodes {} x --nproc-per-node {} = {} (give one or "
                                 "the other)", job.world_size, nnodes, nproc_per_node, total));
  if (total > kMaxWorldSize)
    throw InputError(fmt::format("--nnodes {} x --nproc-per-node {} = {} ranks, more than the {} a run may have",
                                 nnodes, nproc_per_node, total, kMaxWorldSize));
  job.world_size = static_cast<int>(total);
}

JobConfig JobFlags::resolve() {
  parsed().validate();
  return job;
}

// Validated only once merged: a flag such as --fault kill:3@5 is right or wrong depending on
// the scenario's world size, not on the default one.
JobConfig JobFlags::resolve_onto(JobConfig base) {
  const JobConfig given = parsed();
  auto set = [&](const char* flag) { return cmd && cmd->count(flag) > 0; };
  if (set("--world-size") || set("--nproc-per-node")) {
    // A scenario's node split was for its own world size; another world runs on this machine.
    if (given.world_size != base.world_size) base.ranks_per_node.clear();
    base.world_size = given.world_size;
  }
  if (set("--backend")) base.backend = given.backend;
  if (set("--algorithm")) base.algorithm = given.algorithm;
  if (set("--samples")) base.samples = given.samples;
  if (set("--hidden")) base.hidden = given.hidden;
  if (set("--batch-size")) base.batch_size = given.batch_size;
  if (set("--lr")) base.lr = given.lr;
  if (set("--momentum")) base.momentum = given.momentum;
  if (set("--weight-decay")) base.weight_decay = given.weight_decay;
  if (set("--seed")) base.seed = given.seed;
  if (set("--epochs")) base.epochs = given.epochs;
  if (set("--drop-last")) base.drop_last = given.drop_last;
  if (set("--no-shuffle")) base.shuffle = given.shuffle;
  if (set("--forget-set-epoch")) base.set_epoch = given.set_epoch;
  if (set("--bucket-cap-kb")) base.bucket_cap_kb = given.bucket_cap_kb;
  if (set("--first-bucket-kb")) base.first_bucket_kb = given.first_bucket_kb;
  if (set("--grad-accum")) base.grad_accum = given.grad_accum;
  if (set("--timeout")) base.timeout_s = given.timeout_s;
  if (set("--trace-level")) base.trace_level = given.trace_level;
  if (set("--fault")) base.faults = given.faults;
  if (set("--uneven")) base.uneven = given.uneven;
  if (set("--join")) base.join = given.join;
  if (set("--no-collective-check")) base.check_collectives = given.check_collectives;
  base.validate();
  return base;
}

}  // namespace ringlab::app
