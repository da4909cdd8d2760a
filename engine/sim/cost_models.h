#pragma once
// Analytical cost models of all-reduce: how long p ranks take to sum an n-byte buffer, given a
// link described by three numbers (the Hockney model, extended with a reduction cost):
//
//   sending m bytes from one rank to another takes  alpha + m * beta
//   adding m received bytes into a local buffer takes          m * gamma
//
// Each algorithm below is a different schedule of such messages; its formula says how many
// latency terms (alpha) it pays and how many bytes cross the busiest link (beta) or get reduced
// (gamma). All functions return seconds, are exact to the formula (no noise, no contention
// beyond what the formula states) and are cheap enough to evaluate thousands of times per frame.
//
// References (formulas restated in cost_models.cpp next to each model):
//   Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
//     Computing 20(3), 1994: the alpha + m beta cost of one message.
//   Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in
//     MPICH", IJHPCA 19(1), 2005: ring, binomial tree, recursive halving-doubling.
//   Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations",
//     JPDC 69(2), 2009: the ring is bandwidth-optimal.
//   Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and
//     scan", Parallel Computing 35(12), 2009: the double binary tree.
//   NVIDIA, "Massively Scale Your Deep Learning Training with NCCL 2.4" (2019) and the NCCL
//     docs: pipelined double binary trees for all-reduce.
//   Li et al., "Scaling Distributed Machine Learning with the Parameter Server", OSDI 2014;
//     Sergeev & Del Balso, "Horovod", arXiv:1802.05799, 2018 (why rings replaced servers).
#include <cstdint>
#include <string>
#include <vector>

namespace ringlab::sim {

// One link, as the models see it. Every rank has one such link in each direction (full duplex,
// single port: one message in and one out at a time).
struct LinkParams {
  double alpha_s = 0.0;           // latency of one message, seconds
  double beta_s_per_byte = 0.0;   // seconds per byte on the wire: 1 / bandwidth
  double gamma_s_per_byte = 0.0;  // seconds per byte added into a buffer: 1 / reduction throughput
};

// Builds a link from the units people quote: microseconds, GB/s (1e9 bytes per second, the unit
// nccl-tests prints). A reduction throughput of 0 means "free" (gamma = 0).
LinkParams link_from_units(double alpha_us, double bandwidth_gb_per_s, double reduce_gb_per_s);
// Throws InputError when a field is negative, infinite or not a number.
void validate_link(const LinkParams& link);

enum class Algorithm { Ring, Tree, Rhd, Dbt, ParameterServer };

const char* to_string(Algorithm algorithm);          // "ring", "tree", "rhd", "dbt", "ps"
Algorithm parse_algorithm(const std::string& name);  // throws InputError naming the value
const std::vector<Algorithm>& all_algorithms();

struct AlgorithmOptions {
  int tree_segments = 1;  // binary tree: pieces the message is pipelined in (1: no pipelining)
  int dbt_segments = 0;   // double binary tree: pipeline segments; 0 picks the fastest count
  int ps_shards = 1;      // parameter server: number of server shards k
};

// ceil(log2 p) for p >= 1: the depth of a binomial or balanced binary tree over p ranks.
int ceil_log2(int64_t p);
// The largest power of two not above p (p >= 1).
int64_t floor_pow2(int64_t p);

// The models. p >= 1 ranks, bytes >= 0; a single rank has nothing to exchange and takes 0 s.
double ring_allreduce_s(const LinkParams& link, int64_t p, double bytes);
double tree_allreduce_s(const LinkParams& link, int64_t p, double bytes, int segments = 1);
double rhd_allreduce_s(const LinkParams& link, int64_t p, double bytes);
double dbt_allreduce_s(const LinkParams& link, int64_t p, double bytes, int segments = 0);
double ps_allreduce_s(const LinkParams& link, int64_t p, double bytes, int shards = 1);
// The segment count dbt_allreduce_s uses when asked for 0 (the minimiser of its formula).
int dbt_best_segments(const LinkParams& link, int64_t p, double bytes);

// One entry point for all of them; throws InputError for p < 1, negative or non-finite bytes,
// or options out of range (segments < 0, shards < 1).
double predict_allreduce(Algorithm algorithm, int64_t p, double bytes, const LinkParams& link,
                         const AlgorithmOptions& options = {});

// nccl-tests' bandwidth conventions for all-reduce (NVIDIA nccl-tests, doc/PERFORMANCE.md):
// algbw = bytes / time; busbw = algbw * 2(p-1)/p, which makes a bandwidth-optimal algorithm's
// busbw equal the link's bandwidth whatever p is. Both in bytes per second; 0 when time is 0.
double algbw(double bytes, double seconds);
double busbw(double bytes, double seconds, int64_t p);

// A time-vs-size curve for the Scale view and for tables: sizes from min_bytes to max_bytes,
// multiplied by factor (> 1) each point.
struct CurvePoint {
  double bytes = 0;
  double seconds = 0;
  double algbw = 0;  // bytes/s
  double busbw = 0;  // bytes/s
};
std::vector<CurvePoint> allreduce_curve(Algorithm algorithm, int64_t p, const LinkParams& link,
                                        const AlgorithmOptions& options, double min_bytes,
                                        double max_bytes, double factor = 2.0);
// The sizes of such a curve (throws InputError for a bad range or factor), and one point of it:
// `seconds` for `bytes` at p ranks, with its algbw and busbw.
std::vector<double> curve_sizes(double min_bytes, double max_bytes, double factor);
CurvePoint curve_point(double bytes, double seconds, int64_t p);

}  // namespace ringlab::sim
