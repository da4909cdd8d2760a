#pragma once
// Names the calling thread as `top -H`, `perf`, gdb and /proc/PID/task/TID/comm show it. The
// kernel keeps 15 bytes; a longer name is cut there. Naming is for people reading a process,
// so a failure to name is not an error.
#include <pthread.h>

#include <string>

namespace ringlab {

inline void name_this_thread(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace ringlab
