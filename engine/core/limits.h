#pragma once
// The per-process limits a run can hit, named in errors with their values.
//
// Starting a thread can fail: RLIMIT_NPROC (`ulimit -u`) counts every thread of every process
// the user runs, and at the limit std::thread's constructor throws std::system_error
// ("Resource temporarily unavailable"), which says nothing of the limit and, thrown where
// nobody catches it (a server's accept loop), aborts the program. start_thread throws an
// Error that names what the thread was for and the limit with its value instead.
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "engine/core/error.h"

namespace ringlab {

// The process or its user is at a limit (descriptors, threads): not a fault of the input or of
// a peer, and the same will happen again until the limit is raised.
class LimitError : public Error {
 public:
  using Error::Error;
};

// "RLIMIT_NPROC (ulimit -u) is 24 for this user, who runs 23 processes and threads now";
// "no limit" when unlimited.
std::string nproc_limit_text();
// Processes and threads owned by this process's real user, counted from /proc.
long user_thread_count();

[[noreturn]] void throw_thread_limit(const std::string& what, const std::system_error& e);
// The user runs (nearly) as many processes and threads as RLIMIT_NPROC allows: an EAGAIN from a
// library that starts threads of its own (gloo, OpenMPI) is then most likely that limit.
bool near_nproc_limit();

// "RLIMIT_NOFILE (ulimit -n) is 64, and this process has 64 open"; "... sets no limit".
std::string nofile_limit_text();

template <class F>
std::thread start_thread(const std::string& what, F&& body) {
  try {
    return std::thread(std::forward<F>(body));
  } catch (const std::system_error& e) {
    throw_thread_limit(what, e);
  }
}

}  // namespace ringlab
