#include "engine/sim/cost_models.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

void require_ranks(int64_t p) {
  if (p < 1) throw InputError(fmt::format("world size must be at least 1; got {}", p));
}

void require_bytes(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0)
    throw InputError(fmt::format("message size must be a finite number of bytes >= 0; got {}", bytes));
}

}  // namespace

LinkParams link_from_units(double alpha_us, double bandwidth_gb_per_s, double reduce_gb_per_s) {
  if (!(bandwidth_gb_per_s > 0) || !std::isfinite(bandwidth_gb_per_s))
    throw InputError(fmt::format("bandwidth must be > 0 GB/s; got {}", bandwidth_gb_per_s));
  if (!(alpha_us >= 0) || !std::isfinite(alpha_us))
    throw InputError(fmt::format("latency must be >= 0 us; got {}", alpha_us));
  if (!(reduce_gb_per_s >= 0) || !std::isfinite(reduce_gb_per_s))
    throw InputError(fmt::format("reduction throughput must be >= 0 GB/s (0: free); got {}",
                                 reduce_gb_per_s));
  LinkParams link;
  link.alpha_s = alpha_us * 1e-6;
  link.beta_s_per_byte = 1.0 / (bandwidth_gb_per_s * 1e9);
  link.gamma_s_per_byte = reduce_gb_per_s > 0 ? 1.0 / (reduce_gb_per_s * 1e9) : 0.0;
  return link;
}

void validate_link(const LinkParams& link) {
  auto check = [](double v, const char* what) {
    if (!std::isfinite(v) || v < 0) throw InputError(fmt::format("link {} must be finite and >= 0; got {}", what, v));
  };
  check(link.alpha_s, "alpha (latency)");
  check(link.beta_s_per_byte, "beta (seconds per byte)");
  check(link.gamma_s_per_byte, "gamma (seconds per reduced byte)");
}

const char* to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Rhd: return "rhd";
    case Algorithm::Dbt: return "dbt";
    case Algorithm::ParameterServer: return "ps";
  }
  return "unknown";
}

Algorithm parse_algorithm(const std::string& name) {
  for (Algorithm a : all_algorithms())
    if (name == to_string(a)) return a;
  throw InputError(fmt::format("unknown algorithm '{}' (expected ring, tree, rhd, dbt or ps)", name));
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = {Algorithm::Ring, Algorithm::Tree, Algorithm::Rhd,
                                             Algorithm::Dbt, Algorithm::ParameterServer};
  return all;
}

int ceil_log2(int64_t p) {
  int levels = 0;
  while ((int64_t{1} << levels) < p) ++levels;
  return levels;
}

int64_t floor_pow2(int64_t p) {
  int64_t pow = 1;
  while (pow * 2 <= p) pow *= 2;
  return pow;
}

// Ring (Patarasuk & Yuan 2009; Thakur et al. 2005, section 4):
//   T = 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
// The buffer is cut into p chunks of n/p. Reduce-scatter: p-1 steps, in each every rank sends
// one chunk to its right neighbour and adds the chunk arriving from its left one, so after p-1
// steps rank r holds the full sum of one chunk. All-gather: p-1 more steps pass the finished
// chunks around. Each step is one message of n/p bytes per link, all links busy at once: that
// is why the bandwidth term stays below 2n for any p (bandwidth-optimal), while the latency term
// grows linearly with p.
double ring_allreduce_s(const LinkParams& link, int64_t p, double bytes) {
  if (p <= 1) return 0.0;
  const double steps = static_cast<double>(p - 1);
  const double share = steps / static_cast<double>(p);
  return 2 * steps * link.alpha_s + 2 * share * bytes * link.beta_s_per_byte +
         share * bytes * link.gamma_s_per_byte;
}

// Binary tree: a binomial-tree reduce to rank 0 followed by a binomial-tree broadcast, each
// ceil(log2 p) = L rounds of the whole message (Thakur et al. 2005):
//   T = 2L (alpha + n beta) + L n gamma
// Pipelined in s segments of m = n/s bytes, a segment leaves a level as soon as it arrived, so
// each half is a pipeline of L stages fed s times:
//   T = 2(L + s - 1)(alpha + m beta) + (L + s - 1) m gamma
// (The pipelined form ignores that an interior node of a binary tree receives from two
// children over one port; the double binary tree below counts that contention.)
double tree_allreduce_s(const LinkParams& link, int64_t p, double bytes, int segments) {
  if (p <= 1) return 0.0;
  const double levels = ceil_log2(p);
  const double s = std::max(1, segments);
  const double m = bytes / s;
  const double stages = levels + s - 1;
  return 2 * stages * (link.alpha_s + m * link.beta_s_per_byte) + stages * m * link.gamma_s_per_byte;
}

// Recursive halving-doubling (Rabenseifner's algorithm, Thakur et al. 2005, section 4.4).
// For p a power of two: reduce-scatter by recursive halving (log2 p rounds exchanging n/2, n/4,
// ... bytes with a partner at distance p/2, p/4, ...), then all-gather by recursive doubling:
//   T = 2 log2(p) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
// Otherwise only p' = 2^floor(log2 p) ranks can take part. The r = p - p' leftover ranks first
// send their whole buffer to a partner, which adds it in (alpha + n beta + n gamma), and get the
// finished result back at the end (alpha + n beta):
//   T = T_pow2(p') + [r > 0] (2 alpha + 2 n beta + n gamma)
// so a non-power-of-two world pays two extra full-message steps: p = 6 is slower than p = 8.
double rhd_allreduce_s(const LinkParams& link, int64_t p, double bytes) {
  if (p <= 1) return 0.0;
  const int64_t core = floor_pow2(p);
  const double rounds = ceil_log2(core);
  const double share = static_cast<double>(core - 1) / static_cast<double>(core);
  double t = 2 * rounds * link.alpha_s + 2 * share * bytes * link.beta_s_per_byte +
             share * bytes * link.gamma_s_per_byte;
  if (core != p) t += 2 * link.alpha_s + 2 * bytes * link.beta_s_per_byte + bytes * link.gamma_s_per_byte;
  return t;
}

namespace {

// Double binary tree, per pipeline step, at the busiest rank. Two binary trees each carry half
// the message in s segments (m = n / 2s bytes each); every rank is an interior node in at most
// one tree and a leaf in the other (Sanders, Speck & Träff 2009). With reduce and broadcast
// pipelined together, an interior rank in one step receives 2m from its children (reduce), m
// from its parent (broadcast) and m as a leaf of the other tree: k = 4 segments each way, and it
// adds 2m. With p = 2 each tree is a single edge: k = 2, and it adds m.
//   step = alpha + k m beta + (k/2) m gamma = alpha + C / s,  C = (k/2) n beta + (k/4) n gamma
double dbt_step_bytes_cost(const LinkParams& link, int64_t p, double bytes) {
  const double k = p == 2 ? 2.0 : 4.0;
  return (k / 2) * bytes * link.beta_s_per_byte + (k / 4) * bytes * link.gamma_s_per_byte;
}

double dbt_time_with(const LinkParams& link, int64_t p, double bytes, double s) {
  const double fill = 2.0 * ceil_log2(p) - 1;  // steps to fill and drain: up L levels and down L
  return (fill + s) * (link.alpha_s + dbt_step_bytes_cost(link, p, bytes) / s);
}

}  // namespace

// Double binary tree, pipelined (NCCL 2.4+; Sanders, Speck & Träff 2009):
//   T = (2L - 1 + s)(alpha + C/s)
// The first segment needs 2L steps to go up and back down; each further one adds one step.
// Latency grows with log p (like the tree) while for large messages and many segments the
// bandwidth term approaches C = 2 n beta + n gamma (the ring's 2(p-1)/p n beta, for large p).
// T is smallest at s* = sqrt((2L-1) C / alpha); NCCL picks its chunk size for the same reason.
double dbt_allreduce_s(const LinkParams& link, int64_t p, double bytes, int segments) {
  if (p <= 1) return 0.0;
  const double s = segments > 0 ? segments : dbt_best_segments(link, p, bytes);
  return dbt_time_with(link, p, bytes, s);
}

int dbt_best_segments(const LinkParams& link, int64_t p, double bytes) {
  if (p <= 1 || bytes <= 0) return 1;
  // Segments below 8 bytes (one float per tree) make no sense; cap there.
  const double most = std::clamp(std::floor(bytes / 8), 1.0, 1e9);
  const double fill = 2.0 * ceil_log2(p) - 1;
  const double c = dbt_step_bytes_cost(link, p, bytes);
  if (link.alpha_s <= 0) return static_cast<int>(most);
  const double best = std::clamp(std::sqrt(fill * c / link.alpha_s), 1.0, most);
  const double lo = std::floor(best), hi = std::min(most, std::ceil(best));
  return static_cast<int>(dbt_time_with(link, p, bytes, lo) <= dbt_time_with(link, p, bytes, hi) ? lo : hi);
}

// Parameter server with k shards (Li et al. 2014). Every worker pushes its gradient, cut into k
// pieces of n/k bytes, one to each server; each server adds the p pieces it receives and sends
// the sum back (pull). A link carries one message at a time, so a server's link handles p
// messages of n/k bytes and a worker's link k messages of n/k bytes, each way:
//   T = 2 max(p alpha + (p/k) n beta,  k alpha + n beta) + (p-1)/k n gamma
// With k < p the servers' links are the bottleneck and time grows with p; only k = p shards
// (every worker also a server) recover the ring's 2 n beta, which is why Horovod moved to rings.
double ps_allreduce_s(const LinkParams& link, int64_t p, double bytes, int shards) {
  if (p <= 1) return 0.0;
  const double k = std::max(1, shards);
  const double pd = static_cast<double>(p);
  const double server_link = pd * link.alpha_s + (pd / k) * bytes * link.beta_s_per_byte;
  const double worker_link = k * link.alpha_s + bytes * link.beta_s_per_byte;
  return 2 * std::max(server_link, worker_link) + (pd - 1) / k * bytes * link.gamma_s_per_byte;
}

double predict_allreduce(Algorithm algorithm, int64_t p, double bytes, const LinkParams& link,
                         const AlgorithmOptions& options) {
  require_ranks(p);
  require_bytes(bytes);
  validate_link(link);
  if (options.tree_segments < 1)
    throw InputError(fmt::format("tree segments must be >= 1; got {}", options.tree_segments));
  if (options.dbt_segments < 0)
    throw InputError(fmt::format("double binary tree segments must be >= 0 (0: best); got {}", options.dbt_segments));
  if (options.ps_shards < 1)
    throw InputError(fmt::format("parameter-server shards must be >= 1; got {}", options.ps_shards));
  switch (algorithm) {
    case Algorithm::Ring: return ring_allreduce_s(link, p, bytes);
    case Algorithm::Tree: return tree_allreduce_s(link, p, bytes, options.tree_segments);
    case Algorithm::Rhd: return rhd_allreduce_s(link, p, bytes);
    case Algorithm::Dbt: return dbt_allreduce_s(link, p, bytes, options.dbt_segments);
    case Algorithm::ParameterServer: return ps_allreduce_s(link, p, bytes, options.ps_shards);
  }
  throw InputError("unknown algorithm");
}

double algbw(double bytes, double seconds) { return seconds > 0 ? bytes / seconds : 0.0; }

double busbw(double bytes, double seconds, int64_t p) {
  if (p <= 1) return 0.0;
  return algbw(bytes, seconds) * 2.0 * static_cast<double>(p - 1) / static_cast<double>(p);
}

std::vector<double> curve_sizes(double min_bytes, double max_bytes, double factor) {
  require_bytes(min_bytes);
  require_bytes(max_bytes);
  if (!(factor > 1) || !std::isfinite(factor))
    throw InputError(fmt::format("size step factor must be > 1; got {}", factor));
  if (min_bytes <= 0) throw InputError("the smallest size of a curve must be > 0 bytes");
  std::vector<double> sizes;
  for (double n = min_bytes; n <= max_bytes * (1 + 1e-12); n *= factor) sizes.push_back(n);
  return sizes;
}

CurvePoint curve_point(double bytes, double seconds, int64_t p) {
  return CurvePoint{bytes, seconds, algbw(bytes, seconds), busbw(bytes, seconds, p)};
}

std::vector<CurvePoint> allreduce_curve(Algorithm algorithm, int64_t p, const LinkParams& link,
                                        const AlgorithmOptions& options, double min_bytes,
                                        double max_bytes, double factor) {
  std::vector<CurvePoint> curve;
  for (double n : curve_sizes(min_bytes, max_bytes, factor))
    curve.push_back(curve_point(n, predict_allreduce(algorithm, p, n, link, options), p));
  return curve;
}

}  // namespace ringlab::sim
