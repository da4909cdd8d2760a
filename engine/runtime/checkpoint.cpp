#include "engine/runtime/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"

namespace ringlab {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'C', 'K', 'P', 'T', '0', '1'};

// FNV-1a, 64 bit: cheap and enough to catch truncation and bit rot (not an adversary).
uint64_t fnv1a(const std::string& bytes) {
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
    if (n <= 0) throw Error(fmt::format("cannot write checkpoint {}: {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
  const std::string body = encode_body(checkpoint);
  const uint64_t sum = fnv1a(body);
  std::string file(kMagic, sizeof kMagic);
  file.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  file += body;

  const std::string tmp = path + ".tmp";
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
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw Error(fmt::format("cannot rename checkpoint into {}: {}", path, std::strerror(errno)));
  }
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("checkpoint {}: cannot open ({})", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  auto bad = [&](const std::string& why) { return InputError(fmt::format("checkpoint {}: {}", path, why)); };
  if (file.size() < sizeof kMagic + 16 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    throw bad("not a ringlab checkpoint (bad magic or too short)");
  uint64_t sum = 0, hlen = 0;
  std::memcpy(&sum, file.data() + sizeof kMagic, sizeof sum);
  const std::string body = file.substr(sizeof kMagic + sizeof sum);
  if (fnv1a(body) != sum) throw bad("checksum mismatch (the file is truncated or corrupt)");
  std::memcpy(&hlen, body.data(), sizeof hlen);
  if (hlen > body.size() - sizeof hlen) throw bad("header length beyond the end of the file");
  Checkpoint c;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(body.substr(sizeof hlen, hlen));
    c.job = header.at("job").get<JobConfig>();
    c.state.epoch = header.at("epoch").get<int>();
    c.state.batch = header.at("batch").get<int64_t>();
    c.state.steps_done = header.at("steps_done").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("malformed header: ") + e.what());
  }
  const size_t np = header.at("parameters").get<size_t>(), nm = header.at("momentum").get<size_t>();
  const size_t offset = sizeof hlen + hlen;
  if (body.size() - offset != (np + nm) * sizeof(float)) throw bad("tensor data has the wrong length");
  c.state.parameters.resize(np);
  c.state.momentum.resize(nm);
  std::memcpy(c.state.parameters.data(), body.data() + offset, np * sizeof(float));
  std::memcpy(c.state.momentum.data(), body.data() + offset + np * sizeof(float), nm * sizeof(float));
  return c;
}

}  // namespace ringlab
