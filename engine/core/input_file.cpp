#include "engine/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab {
namespace {

// "1 MiB", "2 GiB": the limits are whole binary units.
std::string describe_limit(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

// Reads exactly `out.size()` bytes; the size was taken from fstat a moment before.
void read_exactly(int fd, std::string& out, const std::function<InputError(const std::string&)>& bad) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw bad(fmt::format("cannot read ({})", std::strerror(errno)));
    if (n == 0) throw bad("the file shrank while it was read");
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  const auto bad = [&](const std::string& why) { return InputError(fmt::format("{} {}: {}", what, path, why)); };
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw bad(fmt::format("cannot open ({})", std::strerror(errno)));
  std::string bytes;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw bad(fmt::format("cannot stat ({})", std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) throw bad("not a regular file (a directory, device or pipe)");
    if (static_cast<uint64_t>(st.st_size) > max_bytes)
      throw bad(fmt::format("{} bytes, more than the {} a {} may have", st.st_size, describe_limit(max_bytes), what));
    bytes.resize(static_cast<size_t>(st.st_size));
    read_exactly(fd, bytes, bad);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

}  // namespace ringlab
