#include "engine/sim/bench_file.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/input_file.h"

namespace ringlab::sim {

namespace {

using nlohmann::json;

std::string optional_string(const json& object, const char* key, const std::string& origin) {
  if (!object.contains(key)) return "";
  if (!object[key].is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string", origin, key));
  return object[key].get<std::string>();
}

double finite_number(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key)) throw InputError(fmt::format("{}: \"{}\" is missing", where, key));
  const json& v = object[key];
  if (!v.is_number()) throw InputError(fmt::format("{}: \"{}\" must be a number, got {}", where, key, v.dump()));
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw InputError(fmt::format("{}: \"{}\" is not finite", where, key));
  return d;
}

BenchPoint parse_point(const json& item, size_t index, const BenchFile& file, const std::string& origin) {
  const std::string where = fmt::format("{}: results[{}]", origin, index);
  if (!item.is_object()) throw InputError(fmt::format("{} must be an object", where));
  BenchPoint point;
  point.bytes = finite_number(item, "bytes", where);
  point.seconds = finite_number(item, "time_us", where) * 1e-6;
  if (point.bytes < 0) throw InputError(fmt::format("{}: \"bytes\" must be >= 0, got {}", where, point.bytes));
  if (point.seconds <= 0) throw InputError(fmt::format("{}: \"time_us\" must be > 0, got {}", where, point.seconds * 1e6));
  point.algorithm = optional_string(item, "algorithm", where);
  if (point.algorithm.empty()) point.algorithm = file.algorithm;
  return point;
}

// One row of the bench's own layout: a size, and a result for each algorithm it measured.
void parse_row(const json& row, size_t index, BenchFile& file, const std::string& origin) {
  const std::string where = fmt::format("{}: rows[{}]", origin, index);
  if (!row.is_object()) throw InputError(fmt::format("{} must be an object", where));
  const double bytes = finite_number(row, "size", where);
  if (bytes < 0) throw InputError(fmt::format("{}: \"size\" must be >= 0, got {}", where, bytes));
  bool any = false;
  for (const char* algorithm : {"ring", "native"}) {
    if (!row.contains(algorithm)) continue;
    const std::string at = fmt::format("{}.{}", where, algorithm);
    if (!row[algorithm].is_object()) throw InputError(fmt::format("{} must be an object", at));
    const double seconds = finite_number(row[algorithm], "time_us", at) * 1e-6;
    if (seconds <= 0) throw InputError(fmt::format("{}: \"time_us\" must be > 0, got {}", at, seconds * 1e6));
    file.points.push_back({bytes, seconds, algorithm});
    any = true;
  }
  if (!any) throw InputError(fmt::format("{} has neither a \"ring\" nor a \"native\" result", where));
}

}  // namespace

BenchFile parse_bench_json(const std::string& text, const std::string& origin) {
  json doc = parse_json_input(text, origin);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object with \"results\"", origin));
  BenchFile file;
  file.backend = optional_string(doc, "backend", origin);
  file.algorithm = optional_string(doc, "algorithm", origin);
  const double world = finite_number(doc, "world_size", origin);
  if (world < 1 || world != std::floor(world) || world > 1e9)
    throw InputError(fmt::format("{}: \"world_size\" must be a whole number >= 1, got {}", origin, world));
  file.world_size = static_cast<int64_t>(world);
  if (doc.contains("rows")) {
    if (!doc["rows"].is_array()) throw InputError(fmt::format("{}: \"rows\" must be an array", origin));
    for (size_t i = 0; i < doc["rows"].size(); ++i) parse_row(doc["rows"][i], i, file, origin);
    return file;
  }
  if (!doc.contains("results") || !doc["results"].is_array())
    throw InputError(fmt::format("{}: expected \"rows\" (ringlab bench allreduce --json) or a \"results\" array of "
                                 "{{bytes, time_us}} objects", origin));
  const json& results = doc["results"];
  for (size_t i = 0; i < results.size(); ++i) file.points.push_back(parse_point(results[i], i, file, origin));
  return file;
}

BenchFile load_bench_file(const std::string& path) {
  // A sweep of every size from 4 bytes to 4 GiB is a few KiB of JSON.
  constexpr uint64_t kMaxBenchFileBytes = uint64_t{16} << 20;
  return parse_bench_json(read_input_file(path, "bench file", kMaxBenchFileBytes), path);
}

}  // namespace ringlab::sim
