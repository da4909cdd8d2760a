#pragma once
// Fitting a link (alpha, beta, gamma) to measured all-reduce times.
//
// For a fixed algorithm and world size p, every non-pipelined model is a straight line in the
// message size n:
//   t(n) = a + b n,   a = c_alpha(p) alpha,   b = c_beta(p) beta + c_gamma(p) gamma
// (ring: c_alpha = 2(p-1), c_beta = 2(p-1)/p, c_gamma = (p-1)/p). A least-squares line through
// (bytes, seconds) points gives a and b, hence alpha = a / c_alpha.
//
// What the data cannot tell apart: beta and gamma. Both multiply n, and in the ring, the tree and
// recursive halving-doubling they do so in the same 2:1 ratio at every p, so no all-reduce sweep
// (at one or at several world sizes) separates them. The fit therefore reports an effective beta
// with the reduction folded in (gamma = 0), unless gamma is known from elsewhere (a measured
// local add throughput), in which case beta = (b - c_gamma gamma) / c_beta. At p = 1 nothing is
// communicated and nothing can be fitted.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sim/bench_file.h"
#include "engine/sim/cost_models.h"

namespace ringlab::sim {

// t = latency * alpha + n (per_byte_beta * beta + per_byte_gamma * gamma)
struct ModelCoefficients {
  double latency = 0;
  double per_byte_beta = 0;
  double per_byte_gamma = 0;
};
// Throws InputError for the double binary tree (pipelined: not a line in n) and for p < 2.
ModelCoefficients model_coefficients(Algorithm algorithm, int64_t p, const AlgorithmOptions& options = {});

struct LineFit {
  double intercept_s = 0;       // a
  double slope_s_per_byte = 0;  // b
  double rms_relative_error = 0;
  int points = 0;
};

// Weighted least squares minimising the relative residuals (a + b n - t) / t: small messages
// (microseconds) and large ones (seconds) count alike, so the latency is not drowned by the
// biggest sizes. Negative a or b is not physical: the other is refitted with it pinned at 0.
// Throws InputError for fewer than two distinct sizes or a time <= 0.
LineFit fit_line(const std::vector<BenchPoint>& points);

struct Calibration {
  LinkParams link;
  LineFit fit;
  Algorithm algorithm = Algorithm::Ring;
  int64_t world_size = 0;
  bool gamma_separated = false;  // false: beta is effective (gamma folded in, gamma = 0)
  std::string source_algorithm;  // calibrate_bench_file: the bench's algorithm whose points were used
};

// known_gamma_s_per_byte < 0: unknown (fold it into beta).
Calibration calibrate(const std::vector<BenchPoint>& points, Algorithm algorithm, int64_t world_size,
                      double known_gamma_s_per_byte = -1, const AlgorithmOptions& options = {});

// A bench file's points for one algorithm. The bench's "native" (the backend's own all-reduce,
// whose schedule the file does not name) is modelled as a ring; "ring" is ringlab's ring.
// `which` empty: the file's algorithm, or "ring" when the file holds several.
Calibration calibrate_bench_file(const BenchFile& file, double known_gamma_s_per_byte = -1,
                                 const std::string& which = "");

}  // namespace ringlab::sim
