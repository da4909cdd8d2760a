#pragma once
// The GPU path lives in a plugin, libringlab_cuda.so, next to the ringlab executable, loaded
// only when the NCCL backend is asked about. cuBLAS, cuBLASLt and NCCL are over 800 MB of shared
// libraries; linked into every process they cost each worker about 200 MB of memory and half a
// second of start-up, GPU or not.
//
// The plugin has one entry point per layer that uses it: the NCCL process group here (dist), the
// GPU rank loop in rank/gpu_trainer.h. Each layer declares only the half it needs.
#include <chrono>
#include <memory>
#include <string>

#include "engine/dist/process_group.h"

namespace ringlab {

class StoreClient;

inline constexpr int kGpuPluginVersion = 2;

struct GpuBackendApi {
  int version = kGpuPluginVersion;
  BackendInfo (*nccl_backend_info)(int world_size) = nullptr;
  std::unique_ptr<ProcessGroup> (*make_nccl_group)(StoreClient& store, int rank, int size,
                                                   std::chrono::milliseconds timeout) = nullptr;
};
inline constexpr const char* kGpuBackendEntry = "ringlab_gpu_backend";

// The entry point `name` of the plugin, loaded on first use; nullptr when it cannot be loaded,
// with the reason in `why` ("built without CUDA", "no CUDA device (no NVIDIA driver is
// installed: libcuda.so.1 not found)" without the driver's library, or the loader's message).
const void* gpu_plugin_entry(const char* name, std::string* why = nullptr);

// An entry point's table of functions, when it is of this build's version (nullptr and `why`
// as above otherwise).
template <class Api>
const Api* gpu_plugin_api(const char* entry, std::string* why) {
  const auto* api = static_cast<const Api*>(gpu_plugin_entry(entry, why));
  if (api && api->version != kGpuPluginVersion) {
    if (why) *why = "the GPU plugin is from another ringlab version";
    return nullptr;
  }
  return api;
}

// The NCCL half of the plugin (nullptr and `why` as above).
inline const GpuBackendApi* gpu_backend(std::string* why = nullptr) {
  return gpu_plugin_api<GpuBackendApi>(kGpuBackendEntry, why);
}

}  // namespace ringlab
