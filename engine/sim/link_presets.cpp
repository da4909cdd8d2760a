#include "engine/sim/link_presets.h"

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::sim {

namespace {

LinkPreset make(std::string name, std::string description, double alpha_us, double gb_per_s,
                double reduce_gb_per_s, std::string source) {
  return LinkPreset{std::move(name), std::move(description),
                    link_from_units(alpha_us, gb_per_s, reduce_gb_per_s), std::move(source)};
}

std::vector<LinkPreset> build_presets() {
  // Reduction cost on GPUs: a float sum reads two buffers and writes one, so it moves 3 bytes of
  // memory per byte reduced; H100 SXM's HBM3 gives 3.35 TB/s (NVIDIA H100 Tensor Core GPU
  // datasheet), about 1.1 TB/s of reduction. Used for the three GPU interconnects below.
  constexpr double kGpuReduceGBps = 3350.0 / 3.0;
  return {
      make("this-machine", "loopback TCP between processes (gloo point-to-point), as measured here",
           50.0, 2.5, 17.0 / 1.5,
           "docs/reference-measurements.md: gloo UnboundBuffer round trip ~100 us for small "
           "messages (alpha = half of it), ~2.5 GB/s one way for 4 MiB; one core copies ~17 GB/s, "
           "a sum moves 1.5x a copy's bytes, so ~11 GB/s of reduction"),
      make("this-machine-shm", "shared memory between processes (OpenMPI 4.1 vader), as measured here",
           4.0, 5.6, 17.0 / 1.5,
           "docs/reference-measurements.md: MPI_Allreduce of 2,737 floats at 2 ranks ~10 us "
           "(2 alpha + n beta with n beta ~2 us gives alpha ~4 us), busbw ~5.6 GB/s at 16 MiB; "
           "reduction as for this-machine"),
      make("100gbe", "100 Gigabit Ethernet (RoCE v2 or TCP with offload), one NIC per rank",
           5.0, 12.5, kGpuReduceGBps,
           "IEEE 802.3ba 100 Gb/s line rate = 12.5 GB/s per direction; alpha ~5 us is an assumed "
           "typical end-to-end small-message latency through one switch (NIC + switch + software), "
           "not measured here; GPU reduction from H100 HBM3 bandwidth"),
      make("ib-ndr", "InfiniBand NDR, 400 Gb/s per port, one HCA per GPU",
           1.5, 50.0, kGpuReduceGBps,
           "NVIDIA ConnectX-7 / Quantum-2 NDR: 400 Gb/s = 50 GB/s per direction per port; "
           "alpha ~1-2 us typical MPI/RDMA small-message latency on NDR fabrics (1.5 us used); "
           "GPU reduction from H100 HBM3 bandwidth"),
      make("nvlink4", "NVLink 4 between H100 SXM GPUs in one node (through NVSwitch)",
           2.0, 450.0, kGpuReduceGBps,
           "NVIDIA H100 Tensor Core GPU datasheet: NVLink 900 GB/s bidirectional aggregate per "
           "GPU = 450 GB/s per direction; alpha ~2 us is an assumed per-step cost of a GPU "
           "collective (kernel-side synchronisation), not a datasheet figure; GPU reduction from "
           "H100 HBM3 3.35 TB/s"),
  };
}

}  // namespace

const std::vector<LinkPreset>& link_presets() {
  static const std::vector<LinkPreset> presets = build_presets();
  return presets;
}

const LinkPreset& find_link_preset(const std::string& name) {
  std::string known;
  for (const LinkPreset& preset : link_presets()) {
    if (preset.name == name) return preset;
    known += (known.empty() ? "" : ", ") + preset.name;
  }
  throw InputError(fmt::format("unknown link preset '{}' (known: {})", name, known));
}

std::string own_link_preset(const std::string& backend) {
  if (backend == "gloo") return "this-machine";
  if (backend == "mpi") return "this-machine-shm";
  return "";
}

}  // namespace ringlab::sim
