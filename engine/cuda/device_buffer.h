#pragma once
// A device allocation that frees itself. It only grows; growing discards the old contents, so
// callers make sure no queued kernel still reads it (they wait for their stream first).
#include <cstddef>

namespace ringlab::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Makes room for at least `bytes`; returns true when it had to reallocate.
  bool reserve_bytes(size_t bytes);
  void* data() const { return ptr_; }
  float* floats() const { return static_cast<float*>(ptr_); }
  size_t capacity_bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// True when `p` points into GPU memory (device or managed), false for host memory. For the
// NCCL group, which is handed device buffers by the GPU trainer and host vectors by code that
// serves every backend (a vote, a benchmark's bookkeeping).
bool is_device_memory(const void* p);

}  // namespace ringlab::cuda
