#pragma once
// The models the simulator knows: what DDP sees of a model is only its list of parameter
// tensors (their sizes, in registration order) and how long one step of compute takes.
#include <cstdint>
#include <string>
#include <vector>

namespace ringlab::sim {

// One rank's compute per training step, seconds.
struct ComputeTimes {
  double forward_s = 0.0;
  double backward_s = 0.0;
  double optimizer_s = 0.0;
  double total_s() const { return forward_s + backward_s + optimizer_s; }
};

// A total split the usual way: backward costs about twice the forward (for every matrix product
// of the forward pass it computes two: the gradient for the input and for the weight). The
// optimizer's time is left at 0: a measured total already contains it.
ComputeTimes compute_from_total(double total_s);

struct ModelShape {
  std::string name;         // what --model takes
  std::string description;
  std::vector<int64_t> param_elements;  // element count of each parameter, registration order
  int bytes_per_element = 4;            // float32 gradients, DDP's default
  ComputeTimes compute;                 // default compute per step on one rank
  std::string compute_source;           // where that compute time comes from

  int64_t total_elements() const;
  int64_t total_bytes() const { return total_elements() * bytes_per_element; }
};

// An MLP of Linear layers: features -> hidden[0] -> ... -> outputs, each a weight then a bias
// (the activations have no parameters). Compute times are left at 0. Throws InputError for a
// width < 1.
ModelShape mlp_model(int features, const std::vector<int>& hidden, int outputs);

ModelShape seed_mlp();          // "seed": 6 -> 48 -> 48 -> 1, Tanh; 2,737 parameters
ModelShape mlp_25m();           // "25M": 24 x Linear(1024, 1024); 25,190,400 parameters
ModelShape gpt2_small_124m();   // "124M": GPT-2 small, tied embeddings; 124,439,808 parameters

const std::vector<std::string>& model_preset_names();
// Throws InputError naming the value and listing the known names.
ModelShape model_preset(const std::string& name);

}  // namespace ringlab::sim
