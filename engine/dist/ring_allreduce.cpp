#include "engine/dist/ring_allreduce.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/clock.h"
#include "engine/core/error.h"

// How the ring works, for N ranks holding a tensor cut into N chunks.
//
// Reduce-scatter. At step s, rank r sends chunk (r - s) mod N to its right neighbour and receives
// chunk (r - s - 1) mod N from its left neighbour, adding what arrives into its own copy. Why
// those chunks: at step 0 every rank starts the chunk named after itself, and each step passes
// every partial sum one place to the right. The partial sum of chunk c therefore starts at rank c
// and after s steps sits at rank c + s holding s + 1 ranks' contributions; what rank r receives
// at step s is the partial sum that started s + 1 ranks to its left, which is chunk r - s - 1, and
// what it forwards is the one it received (and added to) at step s - 1, chunk r - s.
// After N - 1 steps the partial sum of chunk c has visited every rank once: it sits, complete,
// at rank c + N - 1 = c - 1. So rank r owns the fully reduced chunk (r + 1) mod N.
//
// All-gather. Now each complete chunk travels once more around the ring, overwriting instead of
// adding: at step s rank r sends chunk (r + 1 - s) mod N (at s = 0 the one it owns, later the one
// it just received) and receives chunk (r - s) mod N. After N - 1 more steps every rank holds
// every complete chunk.
//
// Cost. Each phase sends N - 1 chunks of 1/N of the buffer per rank, so each rank sends (and
// receives) 2(N - 1)/N of the buffer in total, whatever N is: the ring is bandwidth-optimal, which
// is why nccl-tests report "bus bandwidth" as algbw * 2(N - 1)/N.

namespace ringlab {

RingChunk ring_chunk(size_t count, int world, int chunk) {
  const size_t n = static_cast<size_t>(world);
  const size_t c = static_cast<size_t>(chunk);
  const size_t base = count / n, extra = count % n;
  return {c * base + std::min(c, extra), base + (c < extra ? 1 : 0)};
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

int ring_send_chunk(RingPhase phase, int rank, int ring_step, int world) {
  return phase == RingPhase::ReduceScatter ? mod(rank - ring_step, world)
                                           : mod(rank + 1 - ring_step, world);
}

int ring_recv_chunk(RingPhase phase, int rank, int ring_step, int world) {
  return phase == RingPhase::ReduceScatter ? mod(rank - ring_step - 1, world)
                                           : mod(rank - ring_step, world);
}

namespace {

// Tags only need to tell apart the messages in flight between one pair at one time; both sides
// post in the same order and transports match equal tags first-in first-out, so wrapping is
// harmless. 32767 is the smallest tag bound MPI promises.
constexpr int kTagSpace = 32768;
constexpr size_t kMaxRecordedValues = 64;

const char* phase_name(RingPhase phase) {
  return phase == RingPhase::ReduceScatter ? "reduce-scatter" : "all-gather";
}

// One all-reduce in progress: the buffers, the neighbours and the reporting.
class RingRun {
 public:
  RingRun(ProcessGroup& pg, std::span<float> data, const RingAllreduceOptions& opt)
      : pg_(pg), data_(data), opt_(opt), n_(pg.size()), rank_(pg.rank()),
        left_(mod(rank_ - 1, n_)), right_(mod(rank_ + 1, n_)),
        timeout_(opt.timeout.count() > 0 ? opt.timeout : pg.timeout()),
        trace_(opt.events && opt.events->wants_chunks()) {
    const size_t largest = ring_chunk(data.size(), n_, 0).count;
    segment_ = opt.segment_elems > 0 ? opt.segment_elems : std::max<size_t>(largest, 1);
    // Reduce-scatter receives into scratch and adds from there; all-gather receives in place.
    scratch_ = pg.scratch(largest);
  }

  void run() {
    for (RingPhase phase : {RingPhase::ReduceScatter, RingPhase::AllGather}) {
      for (int s = 0; s < n_ - 1; ++s) {
        gate(phase, s);
        try {
          step(phase, s);
        } catch (const TimeoutError& e) {
          throw TimeoutError(context(s), where(phase, e));
        } catch (const Error& e) {
          throw Error(context(s), where(phase, e));
        }
      }
    }
  }

 private:
  ErrorContext context(int s) const { return {rank_, "ring_allreduce", s}; }
  // "reduce-scatter: " + the transport's message without its own "rank r: " prefix, which the
  // rethrown error's context puts back in front.
  std::string where(RingPhase phase, const Error& e) const {
    std::string what = e.what();
    const std::string own = "rank " + std::to_string(rank_) + ": ";
    if (what.rfind(own, 0) == 0) what.erase(0, own.size());
    return std::string(phase_name(phase)) + ": " + what;
  }
  int tag(RingPhase phase, int s, size_t segment) const {
    const size_t global_step = static_cast<size_t>(phase == RingPhase::AllGather ? n_ - 1 + s : s);
    return static_cast<int>((global_step * 1024 + segment) % kTagSpace);
  }
  size_t segments_of(const RingChunk& c) const { return (c.count + segment_ - 1) / segment_; }
  RingChunk segment_of(const RingChunk& c, size_t k) const {
    const size_t begin = k * segment_;
    return {c.offset + begin, std::min(segment_, c.count - begin)};
  }

  // Step-through: the hook may block until the controller releases this rank. The hook reports
  // its own waiting (GateWait), since only it knows whether it waited for anyone.
  void gate(RingPhase phase, int s) {
    if (opt_.before_step) opt_.before_step(phase, s);
  }

  Event label(EventKind kind, RingPhase phase, int s) const {
    Event e;
    e.kind = kind;
    e.rank = rank_;
    e.step = opt_.step;
    e.collective_id = opt_.collective_id;
    e.bucket = opt_.bucket;
    e.phase = static_cast<int8_t>(phase);
    e.ring_step = s;
    return e;
  }

  // One ring step: every segment's receive and send is posted up front, then segments are
  // consumed in order, so the transport moves segment k+1 while this rank adds segment k.
  void step(RingPhase phase, int s) {
    const RingChunk out = ring_chunk(data_.size(), n_, ring_send_chunk(phase, rank_, s, n_));
    const int in_index = ring_recv_chunk(phase, rank_, s, n_);
    const RingChunk in = ring_chunk(data_.size(), n_, in_index);
    const bool reduce = phase == RingPhase::ReduceScatter;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;

    const size_t n_in = segments_of(in), n_out = segments_of(out);
    std::vector<std::unique_ptr<Request>> recvs(n_in), sends(n_out);
    std::vector<int64_t> posted(std::max(n_in, n_out), 0);
    for (size_t k = 0; k < std::max(n_in, n_out); ++k) {
      if (k < n_in) {
        const RingChunk seg = segment_of(in, k);
        std::span<float> into = reduce ? scratch_.subspan(seg.offset - in.offset, seg.count)
                                       : data_.subspan(seg.offset, seg.count);
        recvs[k] = pg_.irecv(into, left_, tag(phase, s, k));
      }
      if (k < n_out) {
        const RingChunk seg = segment_of(out, k);
        sends[k] = pg_.isend(data_.subspan(seg.offset, seg.count), right_, tag(phase, s, k));
      }
      posted[k] = now_ns();
    }
    for (size_t k = 0; k < n_in; ++k) {
      const RingChunk seg = segment_of(in, k);
      recvs[k]->wait(remaining(deadline));
      if (reduce)
        pg_.reduce_add(data_.subspan(seg.offset, seg.count),
                       scratch_.subspan(seg.offset - in.offset, seg.count));
      if (trace_) report(phase, s, in_index, in, k, seg, posted[k]);
    }
    // The next step may receive into the region just sent (all-gather after reduce-scatter
    // with N = 2), so every send must be complete before the step ends.
    for (auto& req : sends) req->wait(remaining(deadline));
  }

  std::chrono::milliseconds remaining(std::chrono::steady_clock::time_point deadline) const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds(1));
  }

  void report(RingPhase phase, int s, int chunk, const RingChunk& whole, size_t k,
              const RingChunk& seg, int64_t posted) {
    Event e = label(EventKind::ChunkTransfer, phase, s);
    e.t_begin_ns = posted;
    e.t_end_ns = now_ns();
    e.chunk = chunk;
    e.segment = static_cast<int32_t>(k);
    e.src = left_;
    e.dst = rank_;
    e.bytes = static_cast<int64_t>(seg.count * sizeof(float));
    if (data_.size() <= kMaxRecordedValues) {
      e.values.resize(whole.count);
      pg_.copy_to_host(data_.subspan(whole.offset, whole.count), e.values.data());
    }
    opt_.events->emit(std::move(e));
  }

  ProcessGroup& pg_;
  std::span<float> data_;
  const RingAllreduceOptions& opt_;
  const int n_, rank_, left_, right_;
  const std::chrono::milliseconds timeout_;
  const bool trace_;
  size_t segment_ = 1;
  std::span<float> scratch_;
};

}  // namespace

void ring_allreduce(ProcessGroup& pg, std::span<float> data, const RingAllreduceOptions& options) {
  if (pg.size() <= 1) return;
  RingRun(pg, data, options).run();
}

}  // namespace ringlab
