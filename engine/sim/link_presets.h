#pragma once
// Named links to compare against: this machine as measured, and three interconnects from their
// vendors' figures. Every preset says where its numbers come from.
#include <string>
#include <vector>

#include "engine/sim/cost_models.h"

namespace ringlab::sim {

struct LinkPreset {
  std::string name;         // what --preset takes
  std::string description;  // one line for tables and help
  LinkParams link;
  std::string source;       // where alpha, beta and gamma come from
};

const std::vector<LinkPreset>& link_presets();
// Throws InputError naming the value and listing the known names.
const LinkPreset& find_link_preset(const std::string& name);
// The preset measured on this machine for a backend's own transport (gloo: loopback TCP, mpi:
// shared memory), or "" where none was (nccl).
std::string own_link_preset(const std::string& backend);

}  // namespace ringlab::sim
