#include "engine/job/fault_plan.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/job/job_config.h"

namespace ringlab {
namespace {

int64_t parse_int(const std::string& text, const std::string& entry, const char* flag, const char* what) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v < 0)
    throw InputError(fmt::format("{} {}: {} must be a non-negative integer, got '{}'", flag, entry, what, text));
  return v;
}

Fault parse_fault(const std::string& entry, int world) {
  const size_t colon = entry.find(':');
  const std::string kind = entry.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : entry.substr(colon + 1);
  Fault f;
  const std::optional<FaultKind> named = fault_kind_named(kind);
  if (!named)
    throw InputError(fmt::format("--fault {}: unknown kind '{}' (kill, delay, drop, skip, extra, resize)", entry, kind));
  f.kind = *named;
  const char sep = f.kind == FaultKind::Delay ? ':' : '@';
  const size_t at = rest.find(sep);
  if (colon == std::string::npos || at == std::string::npos)
    throw InputError(fmt::format("--fault {}: expected {}:RANK{}{}", entry, kind, sep,
                                 f.kind == FaultKind::Delay ? "MS" : "STEP"));
  f.rank = static_cast<int>(parse_int(rest.substr(0, at), entry, "--fault", "the rank"));
  if (f.rank >= world)
    throw InputError(fmt::format("--fault {}: rank {} is not below the world size {}", entry, f.rank, world));
  const int64_t n = parse_int(rest.substr(at + 1), entry, "--fault", f.kind == FaultKind::Delay ? "the delay" : "the step");
  if (f.kind == FaultKind::Delay) {
    if (n > 60'000) throw InputError(fmt::format("--fault {}: the delay must be at most 60000 ms", entry));
    f.delay_ms = static_cast<double>(n);
  } else {
    f.step = n;
  }
  return f;
}

}  // namespace

std::string to_string(const Fault& f) {
  if (f.kind == FaultKind::Delay) return fmt::format("delay:{}:{}", f.rank, static_cast<int64_t>(f.delay_ms));
  return fmt::format("{}:{}@{}", to_string(f.kind), f.rank, f.step);
}

std::vector<Fault> parse_faults(const JobConfig& job) {
  std::vector<Fault> faults;
  for (const std::string& entry : job.faults) faults.push_back(parse_fault(entry, job.world_size));
  return faults;
}

std::vector<int64_t> parse_uneven(const JobConfig& job) {
  std::vector<int64_t> removed(static_cast<size_t>(job.world_size), 0);
  for (const std::string& entry : job.uneven) {
    const size_t colon = entry.find(':');
    if (colon == std::string::npos)
      throw InputError(fmt::format("--uneven {}: expected RANK:BATCHES (like 1:2)", entry));
    const int64_t rank = parse_int(entry.substr(0, colon), entry, "--uneven", "the rank");
    const int64_t k = parse_int(entry.substr(colon + 1), entry, "--uneven", "the batch count");
    if (rank >= job.world_size)
      throw InputError(fmt::format("--uneven {}: rank {} is not below the world size {}", entry, rank, job.world_size));
    removed[rank] += k;
  }
  return removed;
}

FaultPlan::FaultPlan(const JobConfig& job, int rank) : removed_(parse_uneven(job)) {
  for (const Fault& f : parse_faults(job))
    if (f.rank == rank) mine_.push_back(f);
}

const Fault* FaultPlan::at(FaultKind kind, int64_t step) const {
  for (const Fault& f : mine_)
    if (f.kind == kind && f.step == step) return &f;
  return nullptr;
}

double FaultPlan::delay_ms() const {
  for (const Fault& f : mine_)
    if (f.kind == FaultKind::Delay) return f.delay_ms;
  return 0.0;
}

int64_t FaultPlan::batches_removed(int rank) const {
  return rank >= 0 && rank < static_cast<int>(removed_.size()) ? removed_[rank] : 0;
}

bool FaultPlan::any_uneven() const {
  for (int64_t k : removed_)
    if (k > 0) return true;
  return false;
}

int FaultPlan::longest_rank() const {
  int best = 0;
  for (int r = 1; r < static_cast<int>(removed_.size()); ++r)
    if (removed_[r] < removed_[best]) best = r;
  return best;
}

bool breaks_collective_order(const JobConfig& job) {
  for (const std::string& f : job.faults) {
    const std::optional<FaultKind> kind = fault_kind_named(f.substr(0, f.find(':')));  // the kind by its one spelling
    if (kind == FaultKind::Skip || kind == FaultKind::Extra) return true;
  }
  return false;
}

bool stop_votes_fit(const JobConfig& job) { return !breaks_collective_order(job) && (job.uneven.empty() || job.join); }

}  // namespace ringlab
