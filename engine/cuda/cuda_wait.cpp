#include "engine/cuda/cuda_wait.h"

#include <thread>

#include <fmt/core.h>

#include "engine/cuda/cuda_check.h"

namespace ringlab {

bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline = start + timeout;
  const auto spin_until = start + std::chrono::milliseconds(2);
  for (;;) {
    if (done()) return true;
    const auto now = clock::now();
    if (now >= deadline) return false;
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

bool cuda_event_done(cudaEvent_t event) {
  const cudaError_t status = cudaEventQuery(event);
  if (status == cudaErrorNotReady) return false;
  RINGLAB_CUDA_CHECK(status);
  return true;
}

void wait_for_event(cudaEvent_t event, std::chrono::milliseconds timeout, const ErrorContext& ctx) {
  if (!poll_until([event] { return cuda_event_done(event); }, timeout))
    throw TimeoutError(ctx, fmt::format("GPU work did not finish within {} ms", timeout.count()));
}

}  // namespace ringlab
