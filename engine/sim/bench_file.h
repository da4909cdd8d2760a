#pragma once
// Reading what `ringlab bench allreduce --json PATH` writes, in either of two layouts:
//   {"backend": "gloo", "world_size": 4, "algorithm": "both", ...,
//    "rows": [{"size": 4096, "count": 1024, "type": "float", "redop": "sum",
//              "ring": {"time_us": 812.5, "algbw_gbps": ..., "busbw_gbps": ..., "wrong": 0},
//              "native": {"time_us": ..., ...}}, ...]}
// (the bench's own layout: one row per size, one result per algorithm measured), or
//   {"backend": "gloo", "world_size": 4, "algorithm": "ring",
//    "results": [{"bytes": 4096, "time_us": 812.5, "algbw": 0.005, "busbw": 0.0075}, ...]}
// where a result may carry its own "algorithm". Only sizes and times are used; the bandwidths
// follow from them.
#include <cstdint>
#include <string>
#include <vector>

namespace ringlab::sim {

struct BenchPoint {
  double bytes = 0;
  double seconds = 0;
  std::string algorithm;  // the result's own, or the file's
};

struct BenchFile {
  std::string backend;
  int64_t world_size = 0;
  std::string algorithm;
  std::vector<BenchPoint> points;
};

// Both throw InputError naming the origin (file name) and what is wrong with it.
BenchFile parse_bench_json(const std::string& text, const std::string& origin);
BenchFile load_bench_file(const std::string& path);

}  // namespace ringlab::sim
