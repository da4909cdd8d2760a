// How fast the simulator answers, against the budget that lets the Scale view follow a slider:
// a 1,024-rank DDP step prediction for GPT-2 small (124 M parameters) in under 10 ms.
// Prints the median of many calls for each question, and its ratio to the budget.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/sim/cost_models.h"
#include "engine/sim/ddp_step_model.h"
#include "engine/sim/link_presets.h"
#include "engine/sim/model_presets.h"

namespace {

using namespace ringlab::sim;

// Median seconds per call over `rounds` rounds of `calls` calls each.
double median_seconds(const std::function<double()>& work, int rounds, int calls) {
  std::vector<double> per_call;
  double sink = 0;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) sink += work();
    const auto t1 = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double>(t1 - t0).count() / calls);
  }
  std::nth_element(per_call.begin(), per_call.begin() + rounds / 2, per_call.end());
  if (sink == -1) fmt::print("unreachable\n");  // keeps the work from being optimised away
  return per_call[rounds / 2];
}

void report(const std::string& what, double seconds, double budget_s) {
  fmt::print("{:<68} {:>10.2f} us   {:>8.5f} of the budget\n", what, seconds * 1e6, seconds / budget_s);
}

}  // namespace

int main() {
  constexpr double kBudget = 10e-3;
  const ModelShape gpt2 = gpt2_small_124m();
  const LinkParams link = find_link_preset("ib-ndr").link;
  const BucketPolicy policy;

  fmt::print("budget: {:.0f} ms per answer (the Scale view redraws while its slider moves)\n\n", kBudget * 1e3);
  report("DDP step, 124M, 1,024 ranks, ring", median_seconds([&] {
           return predict_ddp_step(gpt2, 1024, link, policy, gpt2.compute).step_s;
         }, 101, 200), kBudget);
  report("DDP step, 124M, 1,024 ranks, all five algorithms", median_seconds([&] {
           double t = 0;
           for (Algorithm a : all_algorithms()) t += predict_ddp_step(gpt2, 1024, link, policy, gpt2.compute, a).step_s;
           return t;
         }, 101, 50), kBudget);
  report("DDP step, 124M, world sizes 1..1,024 (slider sweep, 1,024 answers)", median_seconds([&] {
           double t = 0;
           for (int64_t p = 1; p <= 1024; ++p) t += predict_ddp_step(gpt2, p, link, policy, gpt2.compute).step_s;
           return t;
         }, 21, 1), kBudget);
  report("all-reduce curves, 5 algorithms x 4 B..1 GiB (x2), 1,024 ranks", median_seconds([&] {
           double t = 0;
           for (Algorithm a : all_algorithms()) t += allreduce_curve(a, 1024, link, {}, 4, 1 << 30).back().seconds;
           return t;
         }, 101, 50), kBudget);
  return 0;
}
