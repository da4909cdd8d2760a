#include "engine/core/abort_removal.h"

#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>

namespace ringlab::abort_removal {
namespace {

// A slot is Free, being Filled by add(), or Held (its path complete, for remove_all to read).
enum State : int { Free = 0, Filling = 1, Held = 2 };
constexpr int kSlots = 64;
struct Slot {
  std::atomic<int> state{Free};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];

}  // namespace

int add(const std::string& path) {
  if (path.empty() || path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = Free;
    if (!g_slots[i].state.compare_exchange_strong(expected, Filling)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(Held);  // published only once the path is complete
    return i;
  }
  return -1;
}

void drop(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(Free);
}

void remove_all() {
  for (Slot& s : g_slots)
    if (s.state.load() == Held) ::unlink(s.path);
  for (int i = kSlots; i-- > 0;)
    if (g_slots[i].state.load() == Held) ::rmdir(g_slots[i].path);
}

}  // namespace ringlab::abort_removal
