#include "engine/sim/scale_curves.h"

#include <algorithm>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/sim/model_presets.h"

namespace ringlab::sim {

bool operator==(const ScaleQuery& a, const ScaleQuery& b) {
  return a.world_size == b.world_size && a.model == b.model && a.link.alpha_s == b.link.alpha_s &&
         a.link.beta_s_per_byte == b.link.beta_s_per_byte && a.link.gamma_s_per_byte == b.link.gamma_s_per_byte &&
         a.step_algorithm == b.step_algorithm && a.min_bytes == b.min_bytes && a.max_bytes == b.max_bytes &&
         a.reference_world_size == b.reference_world_size && a.nodes == b.nodes &&
         a.inter_link.alpha_s == b.inter_link.alpha_s && a.inter_link.beta_s_per_byte == b.inter_link.beta_s_per_byte &&
         a.inter_link.gamma_s_per_byte == b.inter_link.gamma_s_per_byte &&
         a.node_step_algorithm == b.node_step_algorithm;
}

Cluster cluster_of(const ScaleQuery& query) {
  if (query.nodes < 1 || query.world_size < 1 || query.world_size % query.nodes != 0)
    throw InputError(fmt::format("{} ranks do not split into {} nodes of equal size", query.world_size, query.nodes));
  return Cluster{query.nodes, query.world_size / query.nodes, query.link, query.inter_link};
}

namespace {

// Why hidden = comm - exposed holds: the last bucket to be ready holds the first-registered
// parameter, whose gradient comes last, at the very end of backward. From then on every bucket
// is ready, so the link works without a gap until the last all-reduce ends; the time it works
// after backward is exactly the time the step waits (exposed), and every other second of
// communication happened under backward (hidden).
DdpStepPrediction predict_step(const ModelShape& model, const ScaleQuery& query) {
  if (query.nodes == 1)
    return predict_ddp_step(model, query.world_size, query.link, BucketPolicy{}, model.compute, query.step_algorithm);
  const Cluster cluster = cluster_of(query);
  validate_cluster(cluster);
  return predict_ddp_step(model, query.world_size, BucketPolicy{}, model.compute, [&](double bytes) {
    return predict_node_allreduce(query.node_step_algorithm, cluster, bytes);
  });
}

StepBar step_bar(const ModelShape& model, const ScaleQuery& query) {
  const DdpStepPrediction prediction = predict_step(model, query);
  StepBar bar;
  bar.compute = prediction.compute;
  bar.compute_s = prediction.compute_s;
  bar.comm_s = prediction.comm_s;
  bar.exposed_comm_s = std::max(0.0, prediction.exposed_comm_s);
  bar.hidden_comm_s = std::max(0.0, prediction.comm_s - bar.exposed_comm_s);
  bar.step_s = prediction.step_s;
  bar.efficiency = prediction.efficiency;
  bar.gradient_bytes = model.total_bytes();
  for (const BucketTiming& b : prediction.buckets) bar.largest_bucket_bytes = std::max(bar.largest_bucket_bytes, b.bytes);
  bar.buckets = prediction.buckets;
  return bar;
}

}  // namespace

ScaleData compute_scale_data(const ScaleQuery& query) {
  const ModelShape model = model_preset(query.model);
  ScaleData data;
  data.step = step_bar(model, query);
  if (query.nodes == 1) {
    for (Algorithm algorithm : all_algorithms())
      data.curves.push_back({algorithm, allreduce_curve(algorithm, query.world_size, query.link, {}, query.min_bytes,
                                                        query.max_bytes, 2.0)});
  } else {
    for (NodeAlgorithm algorithm : all_node_algorithms())
      data.node_curves.push_back({algorithm, node_allreduce_curve(algorithm, cluster_of(query), query.min_bytes,
                                                                  query.max_bytes, 2.0)});
  }
  if (query.reference_world_size > 1)
    data.reference = allreduce_curve(Algorithm::Ring, query.reference_world_size, query.link, {}, query.min_bytes,
                                     query.max_bytes, 2.0);
  return data;
}

}  // namespace ringlab::sim
