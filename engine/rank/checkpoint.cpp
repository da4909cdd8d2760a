#include "engine/rank/checkpoint.h"

#include <cstdint>
#include <climits>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/input_file.h"
#include "engine/core/output_file.h"

// File layout: 8 bytes of magic "RLCKPT01", a u64 FNV-1a checksum of everything after it (the
// body), then the body: a u64 header length, the header as JSON (job, epoch, batch, steps_done,
// and the two tensor lengths), the parameters and the momentum as raw float32.
// All integers are in the host's byte order: a checkpoint resumes a run on the same machine.

namespace ringlab {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'C', 'K', 'P', 'T', '0', '1'};
constexpr size_t kPreambleBytes = sizeof kMagic + sizeof(uint64_t);
constexpr uint64_t kMaxHeaderBytes = 16 << 20;

// FNV-1a, 64 bit: cheap and enough to catch truncation and bit rot (not an adversary).
uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string encode_body(const Checkpoint& c) {
  nlohmann::json header = {{"job", c.job},
                           {"epoch", c.state.epoch},
                           {"batch", c.state.batch},
                           {"steps_done", c.state.steps_done},
                           {"parameters", c.state.parameters.size()},
                           {"momentum", c.state.momentum.size()}};
  std::string h = header.dump();
  std::string body;
  const uint64_t hlen = h.size();
  body.append(reinterpret_cast<const char*>(&hlen), sizeof hlen);
  body += h;
  body.append(reinterpret_cast<const char*>(c.state.parameters.data()), c.state.parameters.size() * sizeof(float));
  body.append(reinterpret_cast<const char*>(c.state.momentum.data()), c.state.momentum.size() * sizeof(float));
  return body;
}

// A whole number from the header, exactly: get<int>() of 1e300 would be undefined behaviour.
int64_t integer_field(const nlohmann::json& header, const char* key) {
  const nlohmann::json& v = header.at(key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX))
    throw nlohmann::json::type_error::create(302, fmt::format("'{}' must be a whole number, got {}", key, v.dump()), &v);
  return v.get<int64_t>();
}

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
  const std::string body = encode_body(checkpoint);
  if (kPreambleBytes + body.size() > kMaxCheckpointBytes)
    throw Error(fmt::format("checkpoint {}: {} bytes is more than the limit of {}", path,
                            kPreambleBytes + body.size(), kMaxCheckpointBytes));
  const uint64_t sum = fnv1a(body);
  // Each save has a temporary file of its own (O_EXCL, a random name), so two writers of the
  // same checkpoint (an old rank 0 still exiting while a restarted one saves) never write into
  // each other's file, and one planted as a symbolic link is never followed. Only the owner may
  // read the model: 0600.
  write_output_file(path, "checkpoint", [&](std::ostream& out) {
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
  }, 0600, WhenFull::Fail);  // the run's own file, in its private folder: a full disk fails the save
}

Checkpoint load_checkpoint(const std::string& path) {
  const std::string file = read_input_file(path, "checkpoint", kMaxCheckpointBytes);
  auto bad = [&](const std::string& why) { return InputError(fmt::format("checkpoint {}: {}", path, why)); };
  if (file.size() < kPreambleBytes + sizeof(uint64_t) || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    throw bad("not a ringlab checkpoint (bad magic or too short)");
  uint64_t sum = 0, hlen = 0;
  std::memcpy(&sum, file.data() + sizeof kMagic, sizeof sum);
  const std::string_view body = std::string_view(file).substr(kPreambleBytes);
  if (fnv1a(body) != sum) throw bad("checksum mismatch (the file is truncated or corrupt)");
  // The checksum only says the bytes are the ones that were written; every length below is
  // still checked before it is used, so a file forged with a matching checksum cannot make the
  // loader read past the end or allocate without bound.
  std::memcpy(&hlen, body.data(), sizeof hlen);
  if (hlen > kMaxHeaderBytes || hlen > body.size() - sizeof hlen) throw bad("header length beyond the end of the file");
  const uint64_t tensor_bytes = body.size() - sizeof hlen - hlen;
  Checkpoint c;
  int64_t epoch = 0, np_signed = 0, nm_signed = 0;
  try {
    const nlohmann::json header = nlohmann::json::parse(body.substr(sizeof hlen, hlen));
    if (!header.is_object()) throw bad("malformed header: not a JSON object");
    c.job = header.at("job").get<JobConfig>();
    epoch = integer_field(header, "epoch");
    c.state.batch = integer_field(header, "batch");
    c.state.steps_done = integer_field(header, "steps_done");
    np_signed = integer_field(header, "parameters");
    nm_signed = integer_field(header, "momentum");
  } catch (const nlohmann::json::exception& e) {
    throw bad("malformed header: " + json_error_words(e));
  }
  try {
    c.job.validate();
  } catch (const InputError& e) {
    throw bad(std::string("the job it was written for is not valid: ") + e.what());
  }
  if (epoch < 0 || epoch > c.job.epochs || c.state.batch < 0 || c.state.steps_done < 0 || np_signed < 0 ||
      nm_signed < 0)
    throw bad(fmt::format("impossible position or size (epoch {} of {}, batch {}, step {}, {} parameters, "
                          "{} momentum values)", epoch, c.job.epochs, c.state.batch, c.state.steps_done,
                          np_signed, nm_signed));
  c.state.epoch = static_cast<int>(epoch);
  const uint64_t np = static_cast<uint64_t>(np_signed), nm = static_cast<uint64_t>(nm_signed);
  // Divide instead of multiplying, so a forged count cannot overflow into a matching length.
  if (tensor_bytes % sizeof(float) != 0 || np > tensor_bytes / sizeof(float) ||
      nm != tensor_bytes / sizeof(float) - np)
    throw bad(fmt::format("tensor data has the wrong length ({} bytes for {} parameters and {} momentum values)",
                          tensor_bytes, np, nm));
  if (nm != 0 && nm != np)
    throw bad(fmt::format("{} momentum values for {} parameters (expected none or one each)", nm, np));
  const char* tensors = body.data() + sizeof hlen + hlen;
  c.state.parameters.resize(np);
  c.state.momentum.resize(nm);
  if (np) std::memcpy(c.state.parameters.data(), tensors, np * sizeof(float));
  if (nm) std::memcpy(c.state.momentum.data(), tensors + np * sizeof(float), nm * sizeof(float));
  return c;
}

}  // namespace ringlab
