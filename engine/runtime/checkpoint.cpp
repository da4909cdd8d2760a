#include "engine/runtime/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"

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

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("cannot write checkpoint {}: {}", path, std::strerror(errno)));
    if (n == 0) throw Error(fmt::format("cannot write checkpoint {}: the device took no more bytes", path));
    done += static_cast<size_t>(n);
  }
}

// After the rename, flush the directory too: otherwise a power cut can forget the new name
// (the old file would come back, which is safe, but the save would silently be lost).
void flush_directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the file itself is complete and renamed; nothing better to do
  ::fsync(fd);
  ::close(fd);
}

// Reads a whole checkpoint file, refusing anything that is not a regular file of a sane size:
// a FIFO would block open() forever and /dev/zero would never end.
std::string read_checkpoint_file(const std::string& path) {
  auto bad = [&](const std::string& why) { return InputError(fmt::format("checkpoint {}: {}", path, why)); };
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw bad(fmt::format("cannot open ({})", std::strerror(errno)));
  std::string bytes;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw bad(fmt::format("cannot stat ({})", std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) throw bad("not a regular file (a directory, device or pipe)");
    if (static_cast<uint64_t>(st.st_size) > kMaxCheckpointBytes)
      throw bad(fmt::format("{} bytes is more than the limit of {}", st.st_size, kMaxCheckpointBytes));
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw bad(fmt::format("cannot read ({})", std::strerror(errno)));
      if (n == 0) throw bad("the file shrank while it was read");
      done += static_cast<size_t>(n);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
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
  std::string file(kMagic, sizeof kMagic);
  file.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  file += body;

  // The temporary name carries the process id, so two writers of the same checkpoint (an old
  // rank 0 still exiting while a restarted one saves) never write into each other's file.
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot create checkpoint {}: {}", tmp, std::strerror(errno)));
  try {
    write_all(fd, file, tmp);
    if (::fsync(fd) != 0) throw Error(fmt::format("cannot flush checkpoint {}: {}", tmp, std::strerror(errno)));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot close checkpoint {}: {}", tmp, std::strerror(errno)));
  }
  // rename() replaces the target in one step: a reader sees the old file or the new one, never
  // a mix, and a save that failed above has not touched the old one.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot rename checkpoint into {}: {}", path, std::strerror(err)));
  }
  flush_directory_of(path);
}

Checkpoint load_checkpoint(const std::string& path) {
  const std::string file = read_checkpoint_file(path);
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
    throw bad(std::string("malformed header: ") + e.what());
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
