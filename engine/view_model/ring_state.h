#pragma once
// What the ring view draws for one collective at one moment, computed from the events alone.
//
// A ring all-reduce over N ranks splits the buffer into N chunks and runs 2(N-1) steps. In each
// reduce-scatter step every rank sends one chunk to its right neighbour, which adds it to its own
// copy; after N-1 steps each rank holds one chunk summed over all ranks. In each all-gather step
// the finished chunks travel on around the ring and overwrite the stale copies, so after N-1 more
// steps every rank holds the whole sum. This model does not assume that schedule: it replays the
// transfers the workers reported, so whatever the ring really did is what is shown.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/view_model/collective_log.h"

namespace ringlab::view_model {

struct RingStepId {
  RingPhase phase = RingPhase::None;
  int ring_step = -1;  // as the workers numbered it
  auto operator<=>(const RingStepId&) const = default;
};

// The ring steps of one collective in execution order: reduce-scatter steps, then all-gather.
struct RingSchedule {
  std::vector<RingStepId> steps;
  int reduce_scatter_steps = 0;
  int all_gather_steps = 0;
};
RingSchedule ring_schedule(const CollectiveRecord& record);

// A cursor is a position in [0, steps.size()]: how many ring steps have completed.
// position_after(schedule, id) is the position once step `id` has completed; -1 if unknown.
int position_after(const RingSchedule& schedule, RingStepId id);

struct ChunkState {
  uint64_t contributors = 0;   // bit r set: rank r's gradient is summed into this chunk
  bool fully_reduced = false;  // every rank's contribution is in it
  bool updated = false;        // it was written by the step that completed last
  bool has_values = false;
  std::vector<float> values;   // the chunk's real values, when the workers recorded them
  int contributor_count() const;
};

struct PacketInFlight {
  int src = -1;
  int dst = -1;
  int chunk = -1;
  int segments = 0;
  int64_t bytes = 0;
  uint64_t contributors = 0;  // what the packet carries: the sender's chunk before the step
  RingPhase phase = RingPhase::None;
};

struct LinkTraffic {
  int src = -1;
  int dst = -1;
  int64_t bytes = 0;
  int transfers = 0;
};

struct RingFrame {
  int world_size = 0;
  int num_chunks = 0;
  int64_t elements = 0;
  std::string algorithm;
  int position = 0;     // ring steps completed
  int total_steps = 0;  // ring steps recorded so far
  // 2(N-1) for a ring all-reduce of N ranks, known before its first step is recorded (the
  // workers may be waiting at the step-through gate); 0 for one without chunk detail.
  int expected_steps = 0;
  // The step whose packets are moving (position + 1), or None once the all-reduce is done.
  RingPhase active_phase = RingPhase::None;
  int active_step_in_phase = 0;  // 1-based
  int steps_in_phase = 0;
  bool done = false;
  // What the screen shows: "Before ring step 1: each rank holds its own input", "After ring step 2 of
  // 6 (reduce-scatter 2 of 3)", "All-reduce done: every rank holds the sum".
  std::string on_screen;
  // The step that moves next (what Next does): "Reduce-scatter, step 3 of 3"; empty once done.
  std::string banner;

  std::vector<std::vector<ChunkState>> chunks;  // chunks[rank][chunk]
  std::vector<int64_t> chunk_offsets;           // first element of each chunk, plus the end
  std::vector<PacketInFlight> packets;          // the active step's transfers
  // The step nobody has taken yet (the workers held at the gate before it): which chunk each rank
  // receives in it, (receiver, chunk), from the ring's schedule. Empty where the step is recorded
  // (its packets say it) or the collective is not ringlab's ring of one chunk per rank.
  std::vector<std::pair<int, int>> next_receives;

  // Values check: the serial sum of every rank's input against what each rank ended with.
  bool has_inputs = false;
  std::vector<float> serial_sum;
  bool final_checked = false;   // every rank's final values and every input were recorded
  bool final_matches = false;
  double max_abs_error = 0.0;

  // Traffic of the whole collective, and of the steps completed on screen.
  std::vector<LinkTraffic> links;
  std::vector<LinkTraffic> links_so_far;
  double duration_s = 0.0;  // the slowest rank's begin..end, less its waits at the gate
  double algbw_gbs = 0.0;   // bytes / duration
  double busbw_gbs = 0.0;   // algbw * 2(N-1)/N, as nccl-tests reports it
};

// Builds the frame for `position` (clamped to [0, total_steps]).
RingFrame ring_frame(const CollectiveRecord& record, int position);

// "Reduce-scatter, step 2 of 3", "All-gather, step 1 of 3", "All-reduce done: ...".
std::string ring_banner(RingPhase phase, int step_in_phase, int steps_in_phase, bool done);

// 2(N-1) for a ring all-reduce of N ranks, known before its first step is recorded; 0 for a
// collective with nothing to step through.
int expected_ring_steps(const CollectiveRecord& record);

// Where a position (ring steps completed) stands in a ring of `world_size` ranks: the phase of
// the last completed step and its 1-based index in that phase (None, 0 at position 0).
struct RingPlace {
  RingPhase phase = RingPhase::None;
  int step_in_phase = 0;
  int steps_in_phase = 0;
};
RingPlace ring_place(int position, int world_size);

// The frame's on_screen text for `position` of `expected_steps`.
std::string ring_on_screen(int position, int expected_steps, int world_size, bool done);

// The frame as JSON (what the ring view decided to draw), for tests and tools.
std::string ring_frame_to_json(const RingFrame& frame);

// Where the chunks of an `elements`-long buffer split over `chunks` chunks: the first
// elements % chunks chunks get one element more. Returns chunks + 1 offsets.
std::vector<int64_t> even_chunk_offsets(int64_t elements, int chunks);

}  // namespace ringlab::view_model
