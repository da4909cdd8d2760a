#include "app/job_flags.h"

#include <CLI/CLI.hpp>

namespace ringlab::app {

void add_job_flags(CLI::App& cmd, JobFlags& f) {
  JobConfig& j = f.job;
  cmd.add_option("-n,--world-size,--nproc-per-node,--nproc_per_node", j.world_size,
                 "number of ranks (processes)")->capture_default_str();
  cmd.add_option("--backend", j.backend, "gloo | mpi | nccl")->capture_default_str();
  cmd.add_option("--algorithm", j.algorithm, "ring (ringlab's instrumented ring) | native (the backend's own)")
      ->capture_default_str();
  cmd.add_option("--samples", j.samples, "dataset size")->capture_default_str();
  cmd.add_option("--hidden", f.hidden, "hidden layer widths, comma-separated")->capture_default_str();
  cmd.add_option("--batch-size", j.batch_size, "batch size per rank")->capture_default_str();
  cmd.add_option("--lr", j.lr, "SGD learning rate")->capture_default_str();
  cmd.add_option("--momentum", j.momentum, "SGD momentum")->capture_default_str();
  cmd.add_option("--weight-decay", j.weight_decay, "SGD weight decay")->capture_default_str();
  cmd.add_option("--seed", j.seed, "torch.manual_seed and the sampler's seed")->capture_default_str();
  cmd.add_option("--epochs", j.epochs, "epochs")->capture_default_str();
  cmd.add_flag("--drop-last", j.drop_last, "the sampler drops the tail instead of padding");
  cmd.add_flag("!--no-shuffle", j.shuffle, "the sampler keeps dataset order");
  cmd.add_flag("!--forget-set-epoch", j.set_epoch, "the classic bug: never call sampler.set_epoch");
  cmd.add_option("--bucket-cap-kb", j.bucket_cap_kb, "DDP bucket cap in KiB (default: PyTorch's 1 MiB + 25 MiB)");
  cmd.add_option("--grad-accum", j.grad_accum, "micro-steps per optimizer step (no_sync on the others)")
      ->capture_default_str();
  cmd.add_option("--timeout", j.timeout_s, "seconds any blocking wait may take")->capture_default_str();
  cmd.add_option("--trace-level", j.trace_level, "none | steps | chunks")->capture_default_str();
}

JobConfig JobFlags::resolve() {
  job.hidden = parse_hidden(hidden);
  job.validate();
  return job;
}

}  // namespace ringlab::app
