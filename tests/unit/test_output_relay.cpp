// The ranks' output relay: what two ranks write at once comes out on whole lines, a last line
// without a newline gets one, and each rank's last stderr lines are kept for its failure.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/control/output_relay.h"
#include "engine/events/rank_exit.h"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

// A pipe standing in for the terminal, read all along (as a terminal is: a pipe left unread
// fills, and the relay would wait on it), its text taken once the relay is done with it.
struct Terminal {
  int fds[2] = {-1, -1};
  std::string text;
  std::thread reader;
  Terminal() {
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    reader = std::thread([this] {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;) text.append(buffer, static_cast<size_t>(n));
    });
  }
  ~Terminal() {
    if (fds[1] >= 0) ::close(fds[1]);
    if (reader.joinable()) reader.join();
    ::close(fds[0]);
  }
  std::string take() {
    ::close(fds[1]);
    fds[1] = -1;
    reader.join();
    return text;
  }
};

void write_text(int fd, const std::string& text) { REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("two ranks printing at once, each print a text and then its newline: every line comes out whole") {
  Terminal out, err;
  constexpr int kLines = 2000;
  {
    OutputRelay relay(out.fds[1], err.fds[1]);
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < 2; ++rank) {
      const OutputRelay::ChildEnds ends = relay.add(rank);
      ::close(ends.err);
      // As an unbuffered Python's print() writes: the text, then "\n", in two writes.
      ranks.emplace_back([fd = ends.out, rank] {
        for (int i = 0; i < kLines; ++i) {
          write_text(fd, "[rank " + std::to_string(rank) + "] line " + std::to_string(i));
          write_text(fd, "\n");
        }
        ::close(fd);
      });
    }
    for (std::thread& t : ranks) t.join();
    CHECK(relay.drain(10s));
  }
  const std::vector<std::string> lines = lines_of(out.take());
  REQUIRE(lines.size() == 2 * kLines);
  std::set<std::string> seen;
  for (const std::string& line : lines) {
    const bool whole = line.rfind("[rank ", 0) == 0 && line.find("[rank ", 1) == std::string::npos;
    if (!whole) FAIL_CHECK("a line made of two ranks' text: " << line);
    seen.insert(line);
  }
  CHECK(seen.size() == 2 * kLines);  // none lost, none twice
  CHECK(err.take().empty());
}

TEST_CASE("a last line without a newline gets one when its rank's pipe closes, and stderr's last lines are kept") {
  Terminal out, err;
  OutputRelay relay(out.fds[1], err.fds[1]);
  const OutputRelay::ChildEnds zero = relay.add(0), one = relay.add(1);
  write_text(zero.out, "rank 0 no newline at the end");
  write_text(one.out, "rank 1 no newline at the end");
  write_text(one.err, "Traceback (most recent call last):\n  File \"x.py\", line 2\nRuntimeError: a failure on purpose\n");
  write_text(one.err, "[W ProcessGroupGloo.cpp] a warning on the way out");
  for (int fd : {zero.out, zero.err, one.out, one.err}) ::close(fd);
  REQUIRE(relay.drain(10s));
  const std::vector<std::string> lines = lines_of(out.take());
  CHECK(lines.size() == 2);
  CHECK(std::set<std::string>(lines.begin(), lines.end()) ==
        std::set<std::string>{"rank 0 no newline at the end", "rank 1 no newline at the end"});
  const std::vector<std::string> tail = relay.stderr_tail(1);
  REQUIRE(tail.size() == 4);
  CHECK(tail.back() == "[W ProcessGroupGloo.cpp] a warning on the way out");
  CHECK(relay.stderr_tail(0).empty());
  // The exception, not the warning printed after it, is what the rank's failure says.
  CHECK(last_words_of(tail) == "RuntimeError: a failure on purpose");
  CHECK(err.take() == "Traceback (most recent call last):\n  File \"x.py\", line 2\nRuntimeError: a failure on purpose\n"
                      "[W ProcessGroupGloo.cpp] a warning on the way out\n");
}

TEST_CASE("the stderr tail is bounded, and drain says when a pipe is still held open") {
  Terminal out, err;
  OutputRelay relay(out.fds[1], err.fds[1]);
  const OutputRelay::ChildEnds ends = relay.add(3);
  for (int i = 0; i < 100; ++i) write_text(ends.err, "warning " + std::to_string(i) + "\n");
  ::close(ends.out);
  CHECK_FALSE(relay.drain(200ms));  // stderr still open: a child the rank left running holds it
  ::close(ends.err);
  CHECK(relay.drain(10s));
  const std::vector<std::string> tail = relay.stderr_tail(3);
  REQUIRE(tail.size() == OutputRelay::kTailLines);
  CHECK(tail.front() == "warning 80");
  CHECK(last_words_of(tail) == "warning 99");  // no exception named: the last line that is not blank
  CHECK(last_words_of({"KeyboardInterrupt", "   "}) == "KeyboardInterrupt");
  CHECK(last_words_of({"torch.distributed.DistBackendError: NCCL error", "done"}) ==
        "torch.distributed.DistBackendError: NCCL error");
  CHECK(last_words_of({"  ", ""}).empty());
}

// Two ranks' tracebacks come out a line at a time, in turn: labelled, each line says whose it is.
// stdout is the script's own, unlabelled, and the kept tail is the rank's words as written. A
// line longer than kMaxLine is written in pieces, and only its first piece carries the label.
TEST_CASE("labelled stderr: each line a rank writes there starts with its rank, once") {
  {
    Terminal out, err;
    OutputRelay relay(out.fds[1], err.fds[1], true);
    const OutputRelay::ChildEnds zero = relay.add(0), one = relay.add(1);
    write_text(zero.out, "epoch 1 done\n");
    write_text(one.err, "Traceback (most recent call last):\nValueError: bad batch\n");
    write_text(zero.err, "a warning\n");
    for (int fd : {zero.out, zero.err, one.out, one.err}) ::close(fd);
    REQUIRE(relay.drain(10s));
    CHECK(out.take() == "epoch 1 done\n");
    const std::vector<std::string> lines = lines_of(err.take());
    CHECK(std::set<std::string>(lines.begin(), lines.end()) ==
          std::set<std::string>{"[rank 1] Traceback (most recent call last):", "[rank 1] ValueError: bad batch",
                                "[rank 0] a warning"});
    CHECK(relay.stderr_tail(1).back() == "ValueError: bad batch");
  }
  Terminal out, err;
  OutputRelay relay(out.fds[1], err.fds[1], true);
  const OutputRelay::ChildEnds two = relay.add(2);
  const std::string long_line(OutputRelay::kMaxLine + 10, 'x');
  write_text(two.err, long_line + "\nshort\n");
  for (int fd : {two.out, two.err}) ::close(fd);
  REQUIRE(relay.drain(10s));
  CHECK(err.take() == "[rank 2] " + long_line + "\n[rank 2] short\n");
  out.take();
}
