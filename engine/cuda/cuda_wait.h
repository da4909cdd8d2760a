#pragma once
// Bounded waits on the GPU. cudaStreamSynchronize and cudaEventSynchronize wait forever, and a
// GPU waiting for a peer that died never finishes, so every wait here polls with a deadline.
#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>

#include "engine/core/error.h"

namespace ringlab {

// Calls `done` until it returns true (then returns true) or the timeout passes (returns false).
// Spins for the first stretch, because most GPU work here finishes within microseconds and a
// sleep would dominate the measured time; then sleeps in short steps so a long wait does not
// burn a core.
bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// True once the work before `event` has finished; throws Error when it failed.
bool cuda_event_done(cudaEvent_t event);

// Waits for `event` with a timeout: TimeoutError carrying `ctx` when it passes.
void wait_for_event(cudaEvent_t event, std::chrono::milliseconds timeout, const ErrorContext& ctx);

}  // namespace ringlab
