#include "engine/core/limits.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ringlab {
namespace {

// "Uid:" and "Threads:" of /proc/PID/status: whose process it is and how many threads it has.
bool read_status(const char* pid, uid_t& uid, long& threads) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/status", pid);
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  char line[256];
  bool have_uid = false, have_threads = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "Uid:", 4) == 0) have_uid = std::sscanf(line + 4, "%u", &uid) == 1;
    else if (std::strncmp(line, "Threads:", 8) == 0) have_threads = std::sscanf(line + 8, "%ld", &threads) == 1;
  }
  std::fclose(f);
  return have_uid && have_threads;
}

}  // namespace

long user_thread_count() {
  DIR* dir = ::opendir("/proc");
  if (!dir) return -1;
  const uid_t me = ::getuid();
  long total = 0;
  while (const dirent* d = ::readdir(dir)) {
    if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
    uid_t uid = 0;
    long threads = 0;
    if (read_status(d->d_name, uid, threads) && uid == me) total += threads;
  }
  ::closedir(dir);
  return total;
}

std::string nproc_limit_text() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NPROC, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return "RLIMIT_NPROC (ulimit -u) sets no limit";
  std::string text = "RLIMIT_NPROC (ulimit -u) is " + std::to_string(limit.rlim_cur) + " for this user";
  if (const long running = user_thread_count(); running >= 0)
    text += ", who runs " + std::to_string(running) + " processes and threads now";
  return text;
}

std::string nofile_limit_text() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return "RLIMIT_NOFILE (ulimit -n) sets no limit";
  std::string text = "RLIMIT_NOFILE (ulimit -n) is " + std::to_string(limit.rlim_cur);
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    long open = -1;  // the directory's own descriptor is listed too
    while (const dirent* d = ::readdir(dir))
      if (d->d_name[0] != '.') ++open;
    ::closedir(dir);
    text += ", and this process has " + std::to_string(open) + " open";
  }
  return text;
}

bool near_nproc_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NPROC, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return false;
  const long running = user_thread_count();
  return running >= 0 && static_cast<rlim_t>(running) + limit.rlim_cur / 10 + 2 >= limit.rlim_cur;
}

void throw_thread_limit(const std::string& what, const std::system_error& e) {
  throw LimitError("cannot start a thread for " + what + ": " + e.what() + "; " + nproc_limit_text());
}

}  // namespace ringlab
