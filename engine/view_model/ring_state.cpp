#include "engine/view_model/ring_state.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "engine/events/ring_schedule.h"

namespace ringlab::view_model {
namespace {

// One chunk moved from src to dst in one ring step, with its segments and duplicate reports
// (both ends may report the same transfer) folded together.
struct MergedTransfer {
  RingStepId step;
  int chunk = -1;
  int src = -1;
  int dst = -1;
  int segments = 0;
  int64_t bytes = 0;
  int values_segment = -2;
  std::vector<float> values;
};

auto transfer_order(const ChunkTransferRecord& t) {
  return std::make_tuple(static_cast<int>(t.phase), t.ring_step, t.chunk, t.src, t.dst, t.segment);
}

std::vector<MergedTransfer> merge_transfers(const CollectiveRecord& record) {
  std::vector<const ChunkTransferRecord*> sorted;
  sorted.reserve(record.transfers.size());
  for (const auto& t : record.transfers)
    if (t.phase != RingPhase::None && t.chunk >= 0 && t.src >= 0 && t.dst >= 0) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
    return transfer_order(*a) < transfer_order(*b);
  });

  std::vector<MergedTransfer> merged;
  const ChunkTransferRecord* previous = nullptr;
  for (const ChunkTransferRecord* t : sorted) {
    const bool same_chunk = previous && previous->phase == t->phase &&
                            previous->ring_step == t->ring_step && previous->chunk == t->chunk &&
                            previous->src == t->src && previous->dst == t->dst;
    if (!same_chunk) {
      MergedTransfer m;
      m.step = {t->phase, t->ring_step};
      m.chunk = t->chunk;
      m.src = t->src;
      m.dst = t->dst;
      merged.push_back(std::move(m));
    }
    MergedTransfer& m = merged.back();
    const bool new_segment = !same_chunk || previous->segment != t->segment;
    if (new_segment) {  // a second report of the same segment is not more traffic
      ++m.segments;
      m.bytes += t->bytes;
    }
    if (!t->values.empty() && t->segment >= m.values_segment) {
      m.values = t->values;
      m.values_segment = t->segment;
    }
    previous = t;
  }
  return merged;
}

RingSchedule schedule_of(const std::vector<MergedTransfer>& merged) {
  RingSchedule schedule;
  for (const auto& m : merged)
    if (schedule.steps.empty() || schedule.steps.back() != m.step) schedule.steps.push_back(m.step);
  for (const auto& s : schedule.steps)
    (s.phase == RingPhase::ReduceScatter ? schedule.reduce_scatter_steps : schedule.all_gather_steps)++;
  return schedule;
}

int world_size_of(const CollectiveRecord& record, const std::vector<MergedTransfer>& merged) {
  int n = std::max(record.world_size, static_cast<int>(record.ranks.size()));
  for (const auto& m : merged) n = std::max({n, m.src + 1, m.dst + 1});
  return n;
}

// Chunk boundaries: taken from the recorded chunk values when they account for the whole
// buffer (the ring's own split), otherwise the even split.
std::vector<int64_t> chunk_offsets_of(int64_t elements, int num_chunks,
                                      const std::vector<MergedTransfer>& merged) {
  std::vector<int64_t> length(num_chunks, -1);
  for (const auto& m : merged)
    if (m.values_segment >= -1 && !m.values.empty() && m.segments == 1)
      length[m.chunk] = static_cast<int64_t>(m.values.size());
  int64_t known = 0;
  for (int64_t l : length) known += std::max<int64_t>(l, 0);
  if (known != elements) return even_chunk_offsets(elements, num_chunks);
  std::vector<int64_t> offsets(num_chunks + 1, 0);
  for (int c = 0; c < num_chunks; ++c) offsets[c + 1] = offsets[c] + std::max<int64_t>(length[c], 0);
  return offsets;
}

uint64_t all_ranks_mask(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

void initial_state(RingFrame& frame, const CollectiveRecord& record) {
  const int n = frame.world_size;
  frame.chunks.assign(n, std::vector<ChunkState>(frame.num_chunks));
  for (int r = 0; r < n; ++r) {
    const std::vector<float>* input =
        r < static_cast<int>(record.ranks.size()) ? &record.ranks[r].input : nullptr;
    const bool known = input && static_cast<int64_t>(input->size()) == frame.elements;
    for (int c = 0; c < frame.num_chunks; ++c) {
      ChunkState& chunk = frame.chunks[r][c];
      chunk.contributors = uint64_t{1} << (r % 64);
      chunk.fully_reduced = n == 1;
      if (known) {
        chunk.has_values = true;
        chunk.values.assign(input->begin() + frame.chunk_offsets[c],
                            input->begin() + frame.chunk_offsets[c + 1]);
      }
    }
  }
}

// Applies one ring step. All transfers of a step happen at once, so they read the state from
// before the step: in reduce-scatter the receiver adds the sender's partial sum to its own, in
// all-gather the receiver's stale copy is replaced by the sender's finished chunk.
void apply_step(RingFrame& frame, const std::vector<const MergedTransfer*>& transfers) {
  const auto before = frame.chunks;
  for (auto& rank : frame.chunks)
    for (auto& chunk : rank) chunk.updated = false;
  const uint64_t everyone = all_ranks_mask(frame.world_size);
  for (const MergedTransfer* t : transfers) {
    if (t->dst >= frame.world_size || t->src >= frame.world_size || t->chunk >= frame.num_chunks)
      continue;
    const ChunkState& sent = before[t->src][t->chunk];
    ChunkState& received = frame.chunks[t->dst][t->chunk];
    if (t->step.phase == RingPhase::ReduceScatter)
      received.contributors = before[t->dst][t->chunk].contributors | sent.contributors;
    else
      received.contributors = sent.contributors;
    received.fully_reduced = received.contributors == everyone;
    received.updated = true;
    const int64_t length = frame.chunk_offsets[t->chunk + 1] - frame.chunk_offsets[t->chunk];
    received.has_values = !t->values.empty() || length == 0;
    received.values = t->values;
  }
}

void check_final_values(RingFrame& frame, const CollectiveRecord& record) {
  const int n = frame.world_size;
  frame.has_inputs = n > 0 && static_cast<int>(record.ranks.size()) >= n;
  for (int r = 0; frame.has_inputs && r < n; ++r)
    frame.has_inputs = static_cast<int64_t>(record.ranks[r].input.size()) == frame.elements;
  if (!frame.has_inputs) return;

  // The serial sum adds the ranks in rank order; the ring adds them in ring order, so float
  // rounding may differ in the last bits. The tolerance scales with the magnitudes summed.
  frame.serial_sum.assign(frame.elements, 0.0f);
  std::vector<double> magnitude(frame.elements, 0.0);
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < frame.elements; ++i) {
      frame.serial_sum[i] += record.ranks[r].input[i];
      magnitude[i] += std::fabs(record.ranks[r].input[i]);
    }
  if (!frame.done) return;

  frame.final_checked = true;
  frame.final_matches = true;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < frame.num_chunks; ++c) {
      const ChunkState& chunk = frame.chunks[r][c];
      const int64_t begin = frame.chunk_offsets[c];
      const int64_t length = frame.chunk_offsets[c + 1] - begin;
      if (length == 0) continue;
      if (!chunk.has_values || static_cast<int64_t>(chunk.values.size()) != length) {
        frame.final_checked = false;
        frame.final_matches = false;
        return;
      }
      for (int64_t i = 0; i < length; ++i) {
        const double error = std::fabs(double(chunk.values[i]) - frame.serial_sum[begin + i]);
        frame.max_abs_error = std::max(frame.max_abs_error, error);
        if (error > 1e-5 * magnitude[begin + i] + 1e-6) frame.final_matches = false;
      }
    }
}

void measure_traffic(RingFrame& frame, const CollectiveRecord& record,
                     const std::vector<MergedTransfer>& merged) {
  std::map<std::pair<int, int>, LinkTraffic> links;
  for (const auto& m : merged) {
    LinkTraffic& link = links[{m.src, m.dst}];
    link.src = m.src;
    link.dst = m.dst;
    link.bytes += m.bytes;
    link.transfers += m.segments;
  }
  for (const auto& [key, link] : links) frame.links.push_back(link);

  // Time held at the step-through gate is the class thinking, not the ring working.
  int64_t slowest_ns = 0;
  for (const auto& span : record.ranks)
    if (span.began && span.ended)
      slowest_ns = std::max(slowest_ns, span.t_end_ns - span.t_begin_ns - span.gate_wait_ns);
  if (slowest_ns <= 0 || record.bytes <= 0) return;
  frame.duration_s = slowest_ns * 1e-9;
  frame.algbw_gbs = record.bytes / frame.duration_s / 1e9;
  const int n = frame.world_size;
  frame.busbw_gbs = n > 1 ? frame.algbw_gbs * 2.0 * (n - 1) / n : 0.0;
}

// Describes the step whose packets move next: a recorded one, or (while the collective is still
// running, e.g. waiting at the gate) the one the ring will take next.
void describe_active_step(RingFrame& frame, const RingSchedule& schedule) {
  const int per_phase = frame.world_size - 1;
  const int recorded = static_cast<int>(schedule.steps.size());
  frame.done = frame.position >= std::max(recorded, frame.expected_steps);
  frame.on_screen = ring_on_screen(frame.position, std::max(recorded, frame.expected_steps), frame.world_size,
                                   frame.done);
  if (frame.done) return;
  if (frame.position < recorded) {
    const RingStepId id = schedule.steps[frame.position];
    frame.active_phase = id.phase;
    int index = 0;  // 1-based index of this step within its phase
    for (int i = 0; i <= frame.position; ++i)
      if (schedule.steps[i].phase == id.phase) ++index;
    frame.active_step_in_phase = index;
    const int observed = id.phase == RingPhase::ReduceScatter ? schedule.reduce_scatter_steps
                                                              : schedule.all_gather_steps;
    frame.steps_in_phase = std::max(per_phase, observed);
  } else {
    const bool scatter = frame.position < per_phase;
    frame.active_phase = scatter ? RingPhase::ReduceScatter : RingPhase::AllGather;
    frame.active_step_in_phase = scatter ? frame.position + 1 : frame.position - per_phase + 1;
    frame.steps_in_phase = per_phase;
  }
  frame.banner = ring_banner(frame.active_phase, frame.active_step_in_phase, frame.steps_in_phase, false);
}

// Held at the gate before a step no rank has taken, the screen still says which chunks that step
// brings where: from the ring's own schedule, as the workers will send them. Stepping forward
// showed no dotted chunk there, and Previous back to the same place showed them (from the record).
void predict_next_receives(RingFrame& frame, const CollectiveRecord& record) {
  const int n = frame.world_size;
  const bool ring = record.algorithm == "ring" || record.algorithm == "demo";  // the demo all-reduce goes round the ring too
  if (frame.done || frame.position < frame.total_steps || !ring || n < 2 || frame.num_chunks != n)
    return;
  const bool scatter = frame.position < n - 1;
  const RingPhase phase = scatter ? RingPhase::ReduceScatter : RingPhase::AllGather;
  const int step = scatter ? frame.position : frame.position - (n - 1);
  for (int r = 0; r < n; ++r) frame.next_receives.emplace_back(r, ring_recv_chunk(phase, r, step, n));
}

}  // namespace

int ChunkState::contributor_count() const { return std::popcount(contributors); }

std::vector<int64_t> even_chunk_offsets(int64_t elements, int chunks) {
  std::vector<int64_t> offsets(std::max(chunks, 0) + 1, 0);
  if (chunks <= 0) return offsets;
  const int64_t base = elements / chunks, extra = elements % chunks;
  for (int c = 0; c < chunks; ++c) offsets[c + 1] = offsets[c] + base + (c < extra ? 1 : 0);
  return offsets;
}

std::string ring_banner(RingPhase phase, int step_in_phase, int steps_in_phase, bool done) {
  if (done) return "All-reduce done: every rank holds the sum";
  const char* name = phase == RingPhase::ReduceScatter ? "Reduce-scatter" : "All-gather";
  return fmt::format("{}, step {} of {}", name, step_in_phase, steps_in_phase);
}

int expected_ring_steps(const CollectiveRecord& record) {
  int n = std::max(record.world_size, static_cast<int>(record.ranks.size()));
  for (const auto& t : record.transfers) n = std::max({n, t.src + 1, t.dst + 1});
  if (n <= 1) return 0;
  // A ring's 2(N-1) steps are known before the first is taken: the workers may be held at the
  // gate with nothing recorded yet. A finished all-reduce that recorded no chunk (the backend's
  // own, a broadcast, or a ring traced at step level) has nothing to step through.
  const bool ring = record.algorithm == "ring" || record.algorithm == "demo";
  return !record.transfers.empty() || (ring && !record.complete()) ? 2 * (n - 1) : 0;
}

RingPlace ring_place(int position, int world_size) {
  const int per_phase = std::max(world_size - 1, 1);
  if (position <= 0) return {RingPhase::None, 0, per_phase};
  if (position <= per_phase) return {RingPhase::ReduceScatter, position, per_phase};
  return {RingPhase::AllGather, std::min(position - per_phase, per_phase), per_phase};
}

std::string ring_on_screen(int position, int expected_steps, int world_size, bool done) {
  if (done) return "All-reduce done: every rank holds the sum";
  if (position <= 0) return "Before ring step 1: each rank holds its own input";
  const RingPlace place = ring_place(position, world_size);
  const char* phase = place.phase == RingPhase::ReduceScatter ? "reduce-scatter" : "all-gather";
  return fmt::format("After ring step {} of {} ({} {} of {})", position, expected_steps, phase, place.step_in_phase,
                     place.steps_in_phase);
}

RingSchedule ring_schedule(const CollectiveRecord& record) { return schedule_of(merge_transfers(record)); }

int position_after(const RingSchedule& schedule, RingStepId id) {
  auto it = std::find(schedule.steps.begin(), schedule.steps.end(), id);
  return it == schedule.steps.end() ? -1 : static_cast<int>(it - schedule.steps.begin()) + 1;
}

RingFrame ring_frame(const CollectiveRecord& record, int position) {
  const std::vector<MergedTransfer> merged = merge_transfers(record);
  const RingSchedule schedule = schedule_of(merged);

  RingFrame frame;
  frame.algorithm = record.algorithm;
  frame.world_size = world_size_of(record, merged);
  frame.elements = std::max<int64_t>(record.elements(), 0);
  int highest_chunk = -1;
  for (const auto& m : merged) highest_chunk = std::max(highest_chunk, m.chunk);
  frame.num_chunks = std::max(frame.world_size, highest_chunk + 1);
  frame.chunk_offsets = chunk_offsets_of(frame.elements, frame.num_chunks, merged);
  frame.total_steps = static_cast<int>(schedule.steps.size());
  frame.expected_steps = expected_ring_steps(record);
  frame.position = std::clamp(position, 0, frame.total_steps);

  initial_state(frame, record);
  std::map<std::pair<int, int>, LinkTraffic> so_far;
  for (int s = 0; s < frame.position; ++s) {
    std::vector<const MergedTransfer*> in_step;
    for (const auto& m : merged)
      if (m.step == schedule.steps[s]) in_step.push_back(&m);
    apply_step(frame, in_step);
    for (const MergedTransfer* m : in_step) {
      LinkTraffic& link = so_far[{m->src, m->dst}];
      link = {m->src, m->dst, link.bytes + m->bytes, link.transfers + m->segments};
    }
  }
  for (const auto& [key, link] : so_far) frame.links_so_far.push_back(link);
  describe_active_step(frame, schedule);
  if (frame.position < frame.total_steps) {
    for (const auto& m : merged) {
      if (m.step != schedule.steps[frame.position] || m.src >= frame.world_size ||
          m.chunk >= frame.num_chunks)
        continue;
      frame.packets.push_back({m.src, m.dst, m.chunk, m.segments, m.bytes,
                               frame.chunks[m.src][m.chunk].contributors, m.step.phase});
    }
  }
  predict_next_receives(frame, record);
  check_final_values(frame, record);
  measure_traffic(frame, record, merged);
  return frame;
}

std::string ring_frame_to_json(const RingFrame& f) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rank : f.chunks) {
    nlohmann::json chunks = nlohmann::json::array();
    for (const auto& c : rank) {
      nlohmann::json contributors = nlohmann::json::array();
      for (int r = 0; r < 64; ++r)
        if ((c.contributors >> r) & 1) contributors.push_back(r);
      nlohmann::json chunk = {{"contributors", contributors}, {"fully_reduced", c.fully_reduced}};
      if (c.has_values) chunk["values"] = c.values;
      chunks.push_back(chunk);
    }
    ranks.push_back(chunks);
  }
  nlohmann::json packets = nlohmann::json::array();
  for (const auto& p : f.packets)
    packets.push_back({{"src", p.src}, {"dst", p.dst}, {"chunk", p.chunk}, {"bytes", p.bytes}});
  nlohmann::json j = {{"world_size", f.world_size},   {"num_chunks", f.num_chunks},
                      {"elements", f.elements},       {"algorithm", f.algorithm},
                      {"position", f.position},       {"total_steps", f.total_steps},
                      {"expected_steps", f.expected_steps}, {"on_screen", f.on_screen},
                      {"done", f.done},               {"banner", f.banner},
                      {"chunks", ranks},              {"packets", packets},
                      {"has_inputs", f.has_inputs},   {"serial_sum", f.serial_sum},
                      {"final_checked", f.final_checked}, {"final_matches", f.final_matches},
                      {"max_abs_error", f.max_abs_error}, {"busbw_gbs", f.busbw_gbs}};
  return j.dump(1);
}

}  // namespace ringlab::view_model
