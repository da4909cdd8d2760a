#include "engine/cuda/device_buffer.h"

#include <utility>

#include "engine/cuda/cuda_check.h"

namespace ringlab::cuda {

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool DeviceBuffer::reserve_bytes(size_t bytes) {
  if (bytes <= bytes_ && ptr_) return false;
  release();
  // cudaMalloc(0) returns no memory; keep a real allocation so data() is never null.
  RINGLAB_CUDA_CHECK(cudaMalloc(&ptr_, bytes == 0 ? 256 : bytes));
  bytes_ = bytes;
  return true;
}

void DeviceBuffer::release() noexcept {
  if (ptr_) cudaFree(ptr_);  // errors here can only be reported by a later call
  ptr_ = nullptr;
  bytes_ = 0;
}

bool is_device_memory(const void* p) {
  if (!p) return false;
  cudaPointerAttributes attributes{};
  // Since CUDA 11 an ordinary host pointer is not an error: it reports cudaMemoryTypeUnregistered.
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace ringlab::cuda
