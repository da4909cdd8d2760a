#pragma once
// The ring all-reduce, written once over any ProcessGroup's point-to-point (gloo, MPI, NCCL,
// threads): a reduce-scatter of N-1 steps followed by an all-gather of N-1 steps, summing.
// Every chunk a rank receives can be reported as a ChunkTransfer event, and a hook can hold the
// ring before each step, so what the app shows is where the processes really are.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "engine/dist/process_group.h"
#include "engine/events/event.h"
#include "engine/events/ring_schedule.h"

namespace ringlab {

inline constexpr size_t kRingDefaultPipelineDepth = 2;

struct RingAllreduceOptions {
  // How long any one transfer may take to complete (0: the group's timeout). Time spent in
  // `before_step` does not count, so a gated ring can wait for the user as long as it likes.
  std::chrono::milliseconds timeout{0};
  // 0: send each chunk as one message. Otherwise chunks are cut into segments of at most this
  // many elements, and the receive of segment k+1 is in flight while segment k is being added.
  size_t segment_elems = 0;
  // How many segment receives are posted ahead of the one being consumed (0: the default,
  // kRingDefaultPipelineDepth). Reduce-scatter needs that many segments of scratch.
  size_t pipeline_depth = 0;
  // Where ChunkTransfer events go (only when events->wants_chunks()), and the labels they carry.
  EventSink* events = nullptr;
  int64_t collective_id = -1;
  int64_t step = -1;  // training step
  int bucket = -1;
  // Called before each ring step (phase, step within the phase, 0..N-2); may block (step-through)
  // and reports its own waiting as a GateWait event.
  std::function<void(RingPhase, int ring_step)> before_step;
  // A header that rides on the ring's first message (the collective check's fingerprint, so
  // that the check costs no message of its own). Every rank sends its header to its right
  // neighbour and hands its left neighbour's to `check_header` before any value of this
  // all-reduce is added or any other receive is posted; check_header throws to stop the ring.
  // Host memory only: the first message is assembled by the CPU.
  std::span<const float> header;
  std::function<void(std::span<const float> left_header)> check_header;
};

// The ring's first message when a header rides on it, and any message that must pair with it
// (the collective check's own exchange, ddp/collective_check.h): the header, then room for
// kRingCarriedElems floats, on one reserved tag. Its size never depends on the tensor, so two
// ranks at different collectives still pair these messages whole and can compare headers,
// where data messages of different sizes would fail in the transport instead.
inline constexpr int kRingFirstMessageTag = 32767;
inline constexpr size_t kRingCarriedElems = 1536;
constexpr size_t ring_first_message_elems(size_t header_elems) { return header_elems + kRingCarriedElems; }

// Sums `data` across all ranks of `pg`, in place. Throws TimeoutError / Error naming the rank,
// "ring_allreduce" and the ring step when a transfer fails. World size 1 returns at once.
void ring_allreduce(ProcessGroup& pg, std::span<float> data, const RingAllreduceOptions& options = {});

// The segment size and pipeline depth that measured fastest on each backend, for callers that
// want speed rather than one message per chunk (the benchmark, DDP). See ring_allreduce.cpp.
struct RingTuning {
  size_t segment_elems = 0;  // 0: whole chunks
  size_t pipeline_depth = 0;
};
RingTuning ring_tuning_for(const std::string& backend);

// The ring's arithmetic, shared with the simulator and the views.
struct RingChunk {
  size_t offset = 0;
  size_t count = 0;
};
// Chunk c of a `count`-element tensor cut into `world` chunks: sizes differ by at most one
// (the first count % world chunks get the extra element); some are empty when count < world.
RingChunk ring_chunk(size_t count, int world, int chunk);
// How a `count`-element all-reduce over `world` ranks is cut with these options: elements per
// segment, receives in flight, and the reduce-scatter's scratch (elements each rank allocates).
struct RingSegments {
  size_t segment = 1;
  size_t depth = kRingDefaultPipelineDepth;
  size_t scratch = 0;
};
RingSegments ring_segments(size_t count, int world, const RingAllreduceOptions& options);

}  // namespace ringlab
