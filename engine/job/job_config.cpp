#include "engine/job/job_config.h"

#include <algorithm>
#include <charconv>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/job/fault_plan.h"

namespace ringlab {
namespace {

// from_json's refusal of one field. It is a JSON library error, so that every caller of
// get<JobConfig>() meets it where it meets a malformed document, and it keeps its reason apart
// for job_field_problem.
class JobFieldError : public nlohmann::json::exception {
 public:
  JobFieldError(const std::string& field, std::string reason)
      : exception(302, fmt::format("job field '{}' {}", field, reason).c_str()), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

void require(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

[[noreturn]] void wrong_type(const nlohmann::json& value, const char* key, const char* wanted) {
  throw JobFieldError(key, fmt::format("must be {}, got {}", wanted, value.dump()));
}

// One whole number of type T, exactly: nlohmann's own get<int>() would turn 2.5 into 2 and
// 1e300 into whatever the float-to-int conversion makes of it (undefined behaviour), so a job
// file's typo would silently become a different job.
template <class T>
T whole_number(const nlohmann::json& value, const char* key) {
  if (!value.is_number_integer()) wrong_type(value, key, "a whole number");
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      wrong_type(value, key, fmt::format("at most {}", std::numeric_limits<T>::max()).c_str());
  } else {
    const int64_t v = value.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (v < 0) wrong_type(value, key, "a whole number >= 0");
    } else if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
               v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      wrong_type(value, key, fmt::format("within [{}, {}]", std::numeric_limits<T>::min(),
                                         std::numeric_limits<T>::max()).c_str());
    }
  }
  return value.get<T>();
}

// Reads `key` into `field` when present, refusing any value not exactly of the field's type.
template <class T>
void take_field(const nlohmann::json& j, const char* key, T& field) {
  if (!j.contains(key)) return;
  const nlohmann::json& value = j.at(key);
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) wrong_type(value, key, "true or false");
    field = value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    field = whole_number<T>(value, key);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) wrong_type(value, key, "a number");
    field = value.get<T>();
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    if (!value.is_array()) wrong_type(value, key, "a list of whole numbers");
    T items;
    for (const auto& item : value) items.push_back(whole_number<int>(item, key));
    field = std::move(items);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    const auto is_string = [](const nlohmann::json& item) { return item.is_string(); };
    if (!value.is_array() || !std::all_of(value.begin(), value.end(), is_string))
      wrong_type(value, key, "a list of strings");
    value.get_to(field);
  } else {
    if (!value.is_string()) wrong_type(value, key, "a string");
    value.get_to(field);
  }
}

}  // namespace

void JobConfig::validate() const {
  require(world_size >= 1 && world_size <= kMaxWorldSize,
          fmt::format("--world-size must be between 1 and {}, got {}", kMaxWorldSize, world_size));
  require(backend == "gloo" || backend == "mpi" || backend == "nccl",
          fmt::format("--backend must be one of gloo, mpi, nccl; got '{}'", backend));
  require(algorithm == "ring" || algorithm == "native",
          fmt::format("--algorithm must be ring or native, got '{}'", algorithm));
  require(samples >= 1 && samples <= 100'000'000,
          fmt::format("--samples must be between 1 and 100000000, got {}", samples));
  require(features >= 1 && features <= 4096,
          fmt::format("features must be between 1 and 4096, got {}", features));
  require(hidden.size() <= kMaxHiddenLayers,
          fmt::format("--hidden takes at most {} layers, got {}", kMaxHiddenLayers, hidden.size()));
  for (int h : hidden)
    require(h >= 1 && h <= 4096, fmt::format("--hidden sizes must be between 1 and 4096, got {}", h));
  require(batch_size >= 1 && batch_size <= 1'000'000,
          fmt::format("--batch-size must be between 1 and 1000000, got {}", batch_size));
  require(std::isfinite(lr) && lr > 0, fmt::format("--lr must be a finite number > 0, got {}", lr));
  require(std::isfinite(momentum) && momentum >= 0 && momentum < 1,
          fmt::format("--momentum must be in [0, 1), got {}", momentum));
  require(std::isfinite(weight_decay) && weight_decay >= 0,
          fmt::format("--weight-decay must be a finite number >= 0, got {}", weight_decay));
  require(epochs >= 0 && epochs <= 1'000'000,
          fmt::format("--epochs must be between 0 and 1000000, got {}", epochs));
  if (bucket_cap_kb != -1) check_bucket_cap_kb(bucket_cap_kb);
  if (first_bucket_kb != -1) check_first_bucket_kb(first_bucket_kb);
  require(grad_accum >= 1 && grad_accum <= 1024,
          fmt::format("--grad-accum must be between 1 and 1024, got {}", grad_accum));
  check_timeout_seconds(timeout_s);
  require(trace_level == "none" || trace_level == "steps" || trace_level == "chunks",
          fmt::format("--trace-level must be none, steps or chunks; got '{}'", trace_level));
  require(faults.size() <= kMaxFaults, fmt::format("--fault may be given at most {} times, got {}", kMaxFaults, faults.size()));
  require(uneven.size() <= kMaxUneven, fmt::format("--uneven may be given at most {} times, got {}", kMaxUneven, uneven.size()));
  parse_faults(*this);
  parse_uneven(*this);
  validate_ranks_per_node();
}

void JobConfig::validate_ranks_per_node() const {
  if (ranks_per_node.empty()) return;
  int64_t total = 0;
  for (int n : ranks_per_node) {
    require(n >= 1, fmt::format("ranks_per_node: every node holds at least one rank, got {}", n));
    total += n;
  }
  require(total == world_size, fmt::format("ranks_per_node adds up to {} ranks but the world size is {}",
                                           total, world_size));
}

std::vector<int> even_node_split(const std::vector<int>& nodes, int world_size) {
  const int n = static_cast<int>(nodes.size());
  if (n < 2 || world_size < n || world_size % n != 0) return {};
  return std::vector<int>(static_cast<size_t>(n), world_size / n);
}

int JobConfig::node_count() const { return ranks_per_node.empty() ? 1 : static_cast<int>(ranks_per_node.size()); }

int JobConfig::node_of_rank(int rank) const {
  int first = 0;
  for (size_t node = 0; node < ranks_per_node.size(); ++node) {
    first += ranks_per_node[node];
    if (rank < first) return static_cast<int>(node);
  }
  return 0;
}

namespace {
void check_bucket_kb(const char* flag, int64_t kb, const char* default_text) {
  require(kb >= 1 && kb <= 1'048'576,
          fmt::format("{} must be between 1 and 1048576, got {} (leave it out for PyTorch's {})", flag, kb, default_text));
}
}  // namespace

void check_bucket_cap_kb(int64_t kb) { check_bucket_kb("--bucket-cap-kb", kb, "25 MiB buckets"); }
void check_first_bucket_kb(int64_t kb) { check_bucket_kb("--first-bucket-kb", kb, "1 MiB first bucket"); }

BucketLimits JobConfig::bucket_limits() const {
  BucketLimits limits;
  if (first_bucket_kb > 0) limits.first_bytes = first_bucket_kb * 1024;
  if (bucket_cap_kb > 0) limits.cap_bytes = bucket_cap_kb * 1024;
  return limits;
}

void check_timeout_seconds(double seconds) {
  require(std::isfinite(seconds) && seconds >= 1 && seconds <= 86400,
          fmt::format("--timeout must be between 1 and 86400 seconds, got {}", seconds));
}

std::string JobConfig::describe() const {
  return fmt::format("{} rank{}, {}, {}, lr {}", world_size, world_size == 1 ? "" : "s", backend,
                     algorithm, lr);
}

std::vector<int> parse_hidden(const std::string& text) {
  std::vector<int> sizes;
  if (text.empty()) return sizes;  // no hidden layer: a linear model
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || value < 1 || value > 4096)
      throw InputError(fmt::format(
          "--hidden must be a comma-separated list of layer widths between 1 and 4096 (like 48,48); "
          "got '{}'", text));
    sizes.push_back(value);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return sizes;
}

uint64_t parse_seed(const std::string& text) {
  const char* first = text.data();
  const char* last = first + text.size();
  const auto refuse = [&] {
    throw InputError(fmt::format("--seed must be a whole number in [-2^63, 2^64), got '{}'", text));
  };
  if (text.starts_with('-')) {
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last) refuse();
    return static_cast<uint64_t>(value);  // two's complement: -1 becomes 2^64 - 1
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || ptr != last) refuse();
  return value;
}

void to_json(nlohmann::json& j, const JobConfig& c) {
  j = nlohmann::json{{"world_size", c.world_size}, {"backend", c.backend},
                     {"algorithm", c.algorithm}, {"samples", c.samples},
                     {"features", c.features}, {"hidden", c.hidden},
                     {"batch_size", c.batch_size}, {"lr", c.lr},
                     {"momentum", c.momentum}, {"weight_decay", c.weight_decay},
                     {"seed", c.seed}, {"epochs", c.epochs},
                     {"drop_last", c.drop_last}, {"shuffle", c.shuffle},
                     {"set_epoch", c.set_epoch}, {"bucket_cap_kb", c.bucket_cap_kb}, {"first_bucket_kb", c.first_bucket_kb},
                     {"grad_accum", c.grad_accum}, {"timeout_s", c.timeout_s},
                     {"trace_level", c.trace_level}, {"faults", c.faults},
                     {"uneven", c.uneven}, {"join", c.join},
                     {"check_collectives", c.check_collectives}};
  if (!c.ranks_per_node.empty()) j["ranks_per_node"] = c.ranks_per_node;
}

std::vector<std::string> unreported_training_fields(const nlohmann::json& reported) {
  std::vector<std::string> missing;
  for (const char* key : {"samples", "features", "hidden", "batch_size", "lr", "momentum", "weight_decay", "seed",
                          "epochs", "shuffle", "drop_last"})
    if (!reported.contains(key)) missing.push_back(key);
  // Whether the script calls set_epoch shows in its shards, not in its job: without a sampler
  // (no shuffle reported) there is nothing it could have called it on.
  if (!reported.contains("set_epoch") && !reported.contains("shuffle")) missing.push_back("set_epoch");
  return missing;
}

std::string job_field_problem(const std::exception& e) {
  const auto* field = dynamic_cast<const JobFieldError*>(&e);
  return field ? field->reason() : json_error_words(e);
}

void from_json(const nlohmann::json& j, JobConfig& c) {
  if (!j.is_object()) wrong_type(j, "(the job)", "an object");
  auto take = [&](const char* key, auto& field) { take_field(j, key, field); };
  take("world_size", c.world_size);
  take("backend", c.backend);
  take("algorithm", c.algorithm);
  take("samples", c.samples);
  take("features", c.features);
  take("hidden", c.hidden);
  take("batch_size", c.batch_size);
  take("lr", c.lr);
  take("momentum", c.momentum);
  take("weight_decay", c.weight_decay);
  take("seed", c.seed);
  take("epochs", c.epochs);
  take("drop_last", c.drop_last);
  take("shuffle", c.shuffle);
  take("set_epoch", c.set_epoch);
  take("bucket_cap_kb", c.bucket_cap_kb);
  take("first_bucket_kb", c.first_bucket_kb);
  take("grad_accum", c.grad_accum);
  take("timeout_s", c.timeout_s);
  take("trace_level", c.trace_level);
  take("faults", c.faults);
  take("uneven", c.uneven);
  take("join", c.join);
  take("check_collectives", c.check_collectives);
  take("ranks_per_node", c.ranks_per_node);
}

}  // namespace ringlab
