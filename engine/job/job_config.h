#pragma once
// One training job, as `ringlab run` flags, scenario files and the app's controls describe it.
// Defaults are the seed's ddp_cpu.py: 256 samples, 6 features, seed 5, batch 32, lr 0.03, 4 epochs.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/bucket_assignment.h"

namespace ringlab {

inline constexpr int kMaxWorldSize = 64;
// The most ranks the app draws (its World size slider's range): past 16 a rank's card in the
// ring has no room for its chunks. `ringlab run` trains up to kMaxWorldSize.
inline constexpr int kMaxAppWorldSize = 16;
// How long the job's lists may be: a scenario file of 60,000 faults is a mistake, not a lesson.
inline constexpr size_t kMaxHiddenLayers = 16;
inline constexpr size_t kMaxFaults = 64;
inline constexpr size_t kMaxUneven = kMaxWorldSize;  // one entry per rank is all it takes

struct JobConfig {
  int world_size = 1;
  std::string backend = "gloo";      // gloo | mpi | nccl
  std::string algorithm = "ring";    // ring | native
  int64_t samples = 256;
  int features = 6;
  std::vector<int> hidden = {48, 48};
  int64_t batch_size = 32;           // per rank
  double lr = 0.03;
  double momentum = 0.0;
  double weight_decay = 0.0;
  uint64_t seed = 5;
  int epochs = 4;
  bool drop_last = false;            // the sampler's drop_last
  bool shuffle = true;
  bool set_epoch = true;             // false: the "forgot set_epoch" pitfall
  int64_t bucket_cap_kb = -1;        // -1: PyTorch's bucket_cap_mb=25
  int64_t first_bucket_kb = -1;      // -1: PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB
  int grad_accum = 1;
  double timeout_s = 60.0;
  std::string trace_level = "chunks";  // none | steps | chunks
  // Failure labs. Faults: "kill:R@S" (rank R dies by SIGKILL at step S), "delay:R:MS" (rank R
  // sleeps MS ms every step: a straggler), "drop:R@S" (rank R closes its connections at step
  // S), "skip:R@S" / "extra:R@S" / "resize:R@S" (rank R skips, adds, or changes the size of
  // its gradient all-reduce at step S: mismatched collectives).
  std::vector<std::string> faults;
  // Uneven inputs: "R:K" takes K batches per epoch away from rank R.
  std::vector<std::string> uneven;
  bool join = false;               // PyTorch's Join: ranks out of data shadow the others
  bool check_collectives = true;   // compare collective fingerprints with the ring neighbour
  // Where the ranks run: how many ranks each node (host) holds, in node order, the ranks of node 0
  // first (torchrun's RANK = node_rank * nproc_per_node + local_rank; mpirun's hosts in order).
  // Empty: every rank on one node. The views draw node boundaries from it; training ignores it.
  std::vector<int> ranks_per_node;

  // Throws InputError naming the field and the accepted range.
  void validate() const;
  void validate_ranks_per_node() const;
  std::string describe() const;  // "4 ranks, gloo, lr 0.03"
  BucketLimits bucket_limits() const;  // PyTorch's where a field is -1
  int node_count() const;              // 1 when ranks_per_node is empty
  int node_of_rank(int rank) const;    // 0 when ranks_per_node is empty
};

// The node split for a new world of `world_size` ranks on one machine (a live change, or another
// World size before Start): as many nodes as `nodes` had, each with the same share, where the
// ranks divide evenly over them (two nodes of 2 become two nodes of 4 at 8 ranks); else one node
// (empty). A run over several real machines cannot change its world live.
std::vector<int> even_node_split(const std::vector<int>& nodes, int world_size);

void to_json(nlohmann::json& j, const JobConfig& c);
void from_json(const nlohmann::json& j, JobConfig& c);
// What is wrong with one field that from_json refused ("must be a whole number, got 2.5"), for
// callers that name the field their own way; another error's own words.
std::string job_field_problem(const std::exception& e);

// The fields of its training a PyTorch script reports through watch() (from its model, sampler,
// optimizer, loader and arguments) that `reported`, the job it announced, lacks: a JobConfig read
// from it holds ringlab's defaults there, which are not the script's. Empty for ringlab's own
// workers, which announce every field.
std::vector<std::string> unreported_training_fields(const nlohmann::json& reported);

// A bucket cap asked for (the flag, the app's field): 1..1048576 KiB. The -1 of a stored job means
// PyTorch's defaults; as a value given on the command line it is an error like any other.
void check_bucket_cap_kb(int64_t kb);
void check_first_bucket_kb(int64_t kb);  // the same, for --first-bucket-kb
// Any blocking wait's timeout: 1 s to a day. Below a second a loaded machine fails a healthy run
// ("no message ... before the deadline") instead of saying that the value was wrong.
void check_timeout_seconds(double seconds);

// Parses "48,48" into {48, 48}; throws InputError on anything else.
std::vector<int> parse_hidden(const std::string& text);
// "--seed": a whole number in [-2^63, 2^64). A negative seed wraps to 2^64 + seed, as
// torch.manual_seed(-1) does; anything larger, fractional or not a number is refused.
uint64_t parse_seed(const std::string& text);

}  // namespace ringlab
