#include "engine/dist/ring_allreduce.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/events/ring_step_words.h"

// How the ring works (which chunk goes to which rank at each step, and why): engine/events/ring_schedule.h.

namespace ringlab {

RingChunk ring_chunk(size_t count, int world, int chunk) {
  const size_t n = static_cast<size_t>(world);
  const size_t c = static_cast<size_t>(chunk);
  const size_t base = count / n, extra = count % n;
  return {c * base + std::min(c, extra), base + (c < extra ? 1 : 0)};
}

RingSegments ring_segments(size_t count, int world, const RingAllreduceOptions& options) {
  RingSegments cut;
  const size_t largest = ring_chunk(count, world, 0).count;
  cut.segment = options.segment_elems > 0 ? std::min(options.segment_elems, std::max<size_t>(largest, 1))
                                          : std::max<size_t>(largest, 1);
  cut.depth = options.pipeline_depth > 0 ? options.pipeline_depth : kRingDefaultPipelineDepth;
  // Reduce-scatter receives into `depth` rotating scratch segments and adds from there, so a
  // segment is added while it is still in cache; all-gather receives in place.
  const size_t rs_segments = static_cast<size_t>(world - 1) * ((largest + cut.segment - 1) / cut.segment);
  cut.scratch = std::min(cut.depth, rs_segments) * cut.segment;
  return cut;
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

namespace {

// Tags tell apart the messages in flight between one pair at one time. A message's tag is its
// place in the ring's order of messages (step by step, each step given the segments of the
// largest chunk), wrapped at 32767, the smallest tag bound MPI promises and kRingFirstMessageTag's:
// the receives registered at once (a few ahead) never share a tag, which gloo's direct pairs,
// finding a message's buffer by its tag, need; MPI matches equal tags in order anyway.
constexpr int kTagSpace = kRingFirstMessageTag;
constexpr size_t kMaxRecordedValues = 64;

// The first message's two buffers, one per thread (a process runs one ring at a time per thread),
// sized once: a step allocates nothing for them.
std::span<float> first_message_buffer(int which, size_t n) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& b = buffers[which];
  if (b.size() < n) b.resize(n, 0.0f);
  return {b.data(), n};
}

// One all-reduce in progress. The 2(N-1) ring steps are numbered t = 0 .. 2N-3 (reduce-scatter
// first); step t receives chunk R(t) and sends chunk S(t), and S(t+1) = R(t): every rank forwards
// what it just received (and, in reduce-scatter, added to). That lets the ring run as a
// pipeline: segment k of step t+1 leaves as soon as segment k of step t has arrived, without
// waiting for the rest of step t. A gated ring (before_step set) runs step by step instead, so
// that "waiting before step t" means that nothing of step t has been posted yet.
//
// A header (options.header) rides on the first message. Step 0's first segment goes with it
// when it fits (kRingCarriedElems), so the header adds no message to the ring. The header can
// still be checked before any value is added, because the first thing every rank adds is
// exactly what came in that message: its left neighbour's segment 0 of step 0. Every other
// receive is posted only after the check has passed, and a data message is read only into a
// posted receive, so a neighbour at another collective (another size, another bucket) never
// delivers data here: this rank stops at the mismatch. (The neighbour's step-0 segments, sent
// before its own check, may sit unread in the transport: either rank stops there, and the run
// with it.)
class RingRun {
 public:
  RingRun(ProcessGroup& pg, std::span<float> data, const RingAllreduceOptions& opt)
      : pg_(pg), data_(data), opt_(opt), n_(pg.size()), rank_(pg.rank()),
        left_(mod(rank_ - 1, n_)), right_(mod(rank_ + 1, n_)), steps_(2 * (n_ - 1)),
        timeout_(opt.timeout.count() > 0 ? opt.timeout : pg.timeout()),
        trace_(opt.events && opt.events->wants_chunks()), sends_(static_cast<size_t>(steps_)),
        send_posted_(static_cast<size_t>(steps_)), riding_(!opt.header.empty()) {
    const RingSegments cut = ring_segments(data.size(), n_, opt);
    segment_ = cut.segment;
    depth_ = cut.depth;
    step_tags_ = std::max<size_t>(1, segments_of(ring_chunk(data.size(), n_, 0)));
    scratch_ = pg.scratch(cut.scratch);
    if (!riding_) return;
    const size_t n = ring_first_message_elems(opt.header.size());
    first_out_ = first_message_buffer(0, n);
    first_in_ = first_message_buffer(1, n);
    carried_send_ = fits(first_segment(send_chunk(0)));
    carried_recv_ = fits(first_segment(recv_chunk(0)));
  }

  void run() {
    if (!opt_.before_step) {
      run_steps(0, steps_);
      return;
    }
    for (int t = 0; t < steps_; ++t) {
      opt_.before_step(phase_of(t), step_in_phase(t));
      run_steps(t, t + 1);
    }
  }

 private:
  struct Item {  // segment k of the chunk received at step t
    int t;
    size_t k;
  };

  RingPhase phase_of(int t) const { return t < n_ - 1 ? RingPhase::ReduceScatter : RingPhase::AllGather; }
  int step_in_phase(int t) const { return t < n_ - 1 ? t : t - (n_ - 1); }
  RingChunk recv_chunk(int t) const {
    return ring_chunk(data_.size(), n_, ring_recv_chunk(phase_of(t), rank_, step_in_phase(t), n_));
  }
  RingChunk send_chunk(int t) const {
    return ring_chunk(data_.size(), n_, ring_send_chunk(phase_of(t), rank_, step_in_phase(t), n_));
  }
  size_t segments_of(const RingChunk& c) const { return (c.count + segment_ - 1) / segment_; }
  RingChunk segment_of(const RingChunk& c, size_t k) const {
    const size_t begin = k * segment_;
    return {c.offset + begin, std::min(segment_, c.count - begin)};
  }
  int tag(int t, size_t k) const { return static_cast<int>((static_cast<size_t>(t) * step_tags_ + k) % kTagSpace); }
  RingChunk first_segment(const RingChunk& c) const { return {c.offset, std::min(segment_, c.count)}; }
  static bool fits(const RingChunk& seg) { return seg.count > 0 && seg.count <= kRingCarriedElems; }
  bool is_carried(const Item& it) const { return riding_ && carried_recv_ && it.t == 0 && it.k == 0; }

  // Steps [t0, t1) as one pipeline: every receive is posted up to `depth_` segments ahead of the
  // one being consumed, and a segment is forwarded the moment it has been consumed.
  void run_steps(int t0, int t1) {
    std::vector<Item> items;
    for (int t = t0; t < t1; ++t)
      for (size_t k = 0; k < segments_of(recv_chunk(t)); ++k) items.push_back({t, k});
    recvs_.clear();
    recvs_.resize(items.size());
    recv_posted_.assign(items.size(), 0);

    if (riding_ && t0 == 0) guarded(0, [&] { post_first_message(); });
    for (size_t k = 0; k < segments_of(send_chunk(t0)); ++k) guarded(t0, [&] { post_send(t0, k); });
    if (riding_ && t0 == 0) check_first_message();
    size_t next = 0;  // the next receive to post
    // Receives up to `limit`, item `current` being the next to consume.
    const auto post_recvs_until = [&](size_t limit, size_t current) {
      for (; next < std::min(limit, items.size()) && may_post_recv(items[next], next, current); ++next)
        guarded(items[next].t, [&] { post_recv(items, next); });
    };
    post_recvs_until(depth_, 0);
    for (size_t i = 0; i < items.size(); ++i) {
      const Item it = items[i];
      post_recvs_until(i + depth_, i);  // item i itself at the latest
      guarded(it.t, [&] { consume(items, i); });
      if (it.t + 1 < t1) guarded(it.t + 1, [&] { post_send(it.t + 1, it.k); });
      post_recvs_until(i + 1 + depth_, i + 1);
    }
    for (int t = t0; t < t1; ++t)
      for (auto& req : sends_[static_cast<size_t>(t)]) guarded(t, [&] { finish_send(req); });
    if (riding_ && t0 == 0) guarded(0, [&] { finish_send(first_send_); });
  }

  // The header, then step 0's first segment when it fits; the receive of the left neighbour's
  // is posted first, so its send finds it waiting.
  void post_first_message() {
    const size_t h = opt_.header.size();
    std::copy(opt_.header.begin(), opt_.header.end(), first_out_.begin());
    if (carried_send_) {
      const RingChunk seg = first_segment(send_chunk(0));
      std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(seg.offset), seg.count, first_out_.begin() + static_cast<std::ptrdiff_t>(h));
    }
    first_recv_ = pg_.irecv(first_in_, left_, kRingFirstMessageTag);
    first_recv_posted_ = now_ns();
    first_send_ = pg_.isend(first_out_, right_, kRingFirstMessageTag);
  }

  // Waits for the left neighbour's first message and checks its header. Outside `guarded`, so
  // that the check's own error reaches the caller as it was thrown.
  void check_first_message() {
    guarded(0, [&] {
      first_recv_->wait(timeout_);
      first_recv_.reset();
    });
    opt_.check_header(std::span<const float>(first_in_).first(opt_.header.size()));
  }

  void post_send(int t, size_t k) {
    auto& sends = sends_[static_cast<size_t>(t)];
    auto& posted = send_posted_[static_cast<size_t>(t)];
    if (sends.size() <= k) {
      sends.resize(k + 1);
      posted.resize(k + 1, 0);
    }
    if (riding_ && carried_send_ && t == 0 && k == 0) {  // left with the first message, already copied
      posted[k] = now_ns();
      return;
    }
    const RingChunk seg = segment_of(send_chunk(t), k);
    sends[k] = pg_.isend(data_.subspan(seg.offset, seg.count), right_, tag(t, k));
    posted[k] = now_ns();
  }

  // All-gather step s overwrites chunk r - s, which this rank sends at reduce-scatter step s: its
  // receive waits until that send has been posted (and, in post_recv, completed). The data could
  // not arrive earlier anyway (it has to go round the whole ring first), but a transport may
  // not be handed a receive into a buffer that a send still has to read.
  // Where data is read only when waited for (gloo's direct pairs), that completion may need the
  // right neighbour to read, which it does only after this rank has read what came before: such
  // a receive is posted when its turn to be consumed has come, never ahead, or the two would
  // wait on each other (posting ahead gains nothing there: the socket holds what arrives).
  bool may_post_recv(const Item& it, size_t index, size_t current) const {
    if (phase_of(it.t) == RingPhase::ReduceScatter) return true;
    if (index > current && pg_.reads_when_waited()) return false;
    const auto& posted = send_posted_[static_cast<size_t>(it.t - (n_ - 1))];
    return it.k < posted.size() && posted[it.k] != 0;
  }

  void post_recv(const std::vector<Item>& items, size_t i) {
    const Item it = items[i];
    if (is_carried(it)) {  // arrived with the first message
      recv_posted_[i] = first_recv_posted_;
      return;
    }
    const RingChunk seg = segment_of(recv_chunk(it.t), it.k);
    std::span<float> into;
    if (phase_of(it.t) == RingPhase::ReduceScatter) {
      into = scratch_.subspan((i % depth_) * segment_, seg.count);
    } else {
      finish_send(sends_[static_cast<size_t>(it.t - (n_ - 1))][it.k]);
      into = data_.subspan(seg.offset, seg.count);
    }
    recvs_[i] = pg_.irecv(into, left_, tag(it.t, it.k));
    recv_posted_[i] = now_ns();
  }

  void consume(const std::vector<Item>& items, size_t i) {
    const Item it = items[i];
    const RingChunk chunk = recv_chunk(it.t);
    const RingChunk seg = segment_of(chunk, it.k);
    std::span<const float> incoming;
    if (is_carried(it)) {
      incoming = std::span<const float>(first_in_).subspan(opt_.header.size(), seg.count);
    } else {
      recvs_[i]->wait(timeout_);
      recvs_[i].reset();
      incoming = scratch_.subspan((i % depth_) * segment_, seg.count);
    }
    if (phase_of(it.t) == RingPhase::ReduceScatter) pg_.reduce_add(data_.subspan(seg.offset, seg.count), incoming);
    if (trace_) report(it, chunk, seg, recv_posted_[i]);
  }

  void finish_send(std::unique_ptr<Request>& req) {
    if (!req) return;
    req->wait(timeout_);
    req.reset();
  }

  // Runs fn and names the ring step in whatever it throws.
  template <typename Fn>
  void guarded(int t, Fn&& fn) {
    try {
      fn();
    } catch (const TimeoutError& e) {
      throw TimeoutError(context(), where(t, e));
    } catch (const PeerClosedError& e) {  // kept a lost peer's: the failure views tell it from an error of the rank's own
      throw PeerClosedError(context(), where(t, e));
    } catch (const Error& e) {
      throw Error(context(), where(t, e));
    }
  }

  // The training step, as every other error of the step names it ("rank 3: ring_allreduce: step 3:
  // ..."); the ring step follows in words (where()).
  ErrorContext context() const { return {rank_, "ring_allreduce", opt_.step}; }
  // "reduce-scatter step 1 of 3: " (ring_step_words) + the transport's message without its own
  // "rank r: " prefix, which the rethrown error's context puts back in front.
  std::string where(int t, const Error& e) const {
    std::string what = e.what();
    const std::string own = "rank " + std::to_string(rank_) + ": ";
    if (what.rfind(own, 0) == 0) what.erase(0, own.size());
    return ring_step_words(phase_of(t) == RingPhase::ReduceScatter ? 0 : 1, step_in_phase(t), n_) + ": " + what;
  }

  // t_begin: when this rank had posted both its receive of the segment and its own send of the
  // same segment of the step (its neighbour posts the matching send at about the same moment).
  void report(const Item& it, const RingChunk& chunk, const RingChunk& seg, int64_t recv_posted) {
    Event e;
    e.kind = EventKind::ChunkTransfer;
    e.rank = rank_;
    e.step = opt_.step;
    e.collective_id = opt_.collective_id;
    e.bucket = opt_.bucket;
    e.phase = static_cast<int8_t>(phase_of(it.t));
    e.ring_step = step_in_phase(it.t);
    const auto& sent = send_posted_[static_cast<size_t>(it.t)];
    e.t_begin_ns = std::max(recv_posted, it.k < sent.size() ? sent[it.k] : 0);
    e.t_end_ns = now_ns();
    e.chunk = ring_recv_chunk(phase_of(it.t), rank_, step_in_phase(it.t), n_);
    e.segment = static_cast<int32_t>(it.k);
    e.src = left_;
    e.dst = rank_;
    e.bytes = static_cast<int64_t>(seg.count * sizeof(float));
    if (data_.size() <= kMaxRecordedValues) {
      e.values.resize(chunk.count);
      pg_.copy_to_host(data_.subspan(chunk.offset, chunk.count), e.values.data());
    }
    opt_.events->emit(std::move(e));
  }

  ProcessGroup& pg_;
  std::span<float> data_;
  const RingAllreduceOptions& opt_;
  const int n_, rank_, left_, right_, steps_;
  const std::chrono::milliseconds timeout_;
  const bool trace_;
  size_t segment_ = 1;
  size_t depth_ = kRingDefaultPipelineDepth;
  size_t step_tags_ = 1;  // tags a step takes: the largest chunk's segments
  std::span<float> scratch_;
  std::vector<std::vector<std::unique_ptr<Request>>> sends_;  // [step][segment]
  std::vector<std::vector<int64_t>> send_posted_;             // [step][segment]
  std::vector<std::unique_ptr<Request>> recvs_;               // [item] of the running steps
  std::vector<int64_t> recv_posted_;
  // The first message, when a header rides on it.
  const bool riding_;
  bool carried_send_ = false, carried_recv_ = false;  // step 0's first segment travels in it
  std::span<float> first_out_, first_in_;
  std::unique_ptr<Request> first_send_, first_recv_;
  int64_t first_recv_posted_ = 0;
};

}  // namespace

// Measured with `ringlab bench allreduce -b 16M -e 16M --world-size 2 --segment-bytes S
// --pipeline-depth D` on a 2-core machine, settings in turns, several rounds (docs/speed.md).
// gloo: 512 KiB segments, 4 ahead. The ring's messages go over the direct pairs, read by the
// waiting thread straight from the socket, so a segment's receive being posted early gains
// nothing (the socket holds what arrives); what the size sets is how many writes and reads a
// segment costs against how long the neighbour waits for the first one. 384-768 KiB measured
// alike (2.0-2.3 GB/s), 256 KiB and 1-2 MiB slower (1.5-1.7, 1.7-2.0); a few rotating scratch
// segments are added while still in cache.
// MPI: 256 KiB segments, 4 ahead. Shared-memory MPI copies data only inside MPI calls, so a few
// segments in flight are enough; small rotating scratch segments are added while still in cache
// (whole chunks and deeper windows measured slower).
RingTuning ring_tuning_for(const std::string& backend) {
  if (backend == "gloo") return {(size_t{512} << 10) / sizeof(float), 4};
  if (backend == "mpi") return {(size_t{256} << 10) / sizeof(float), 4};
  return {};
}

void ring_allreduce(ProcessGroup& pg, std::span<float> data, const RingAllreduceOptions& options) {
  if (pg.size() <= 1) return;
  // Every rank receives in the order its left neighbour sends (the first message, then step by
  // step, segment by segment), as point-to-point requires (process_group.h).
  RingRun(pg, data, options).run();
}

}  // namespace ringlab
