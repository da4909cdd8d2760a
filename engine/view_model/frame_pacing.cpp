#include "engine/view_model/frame_pacing.h"

#include <algorithm>

namespace ringlab::view_model {

void FramePacer::frame_drawn(int64_t began_ns, double cpu_ms, const FrameCause& cause) {
  last_began_ns_ = began_ns;
  // Smoothed: a slower frame moves the estimate an eighth of the way (one slow frame, a font
  // rebuilt or a pane opened, should not hold the next ones back for long), a quicker one half
  // the way, so that the first frames' start-up work (fonts, shaders) is forgotten within a few.
  if (cpu_ms_ == 0.0) cpu_ms_ = cpu_ms;
  else cpu_ms_ += (cpu_ms - cpu_ms_) / (cpu_ms > cpu_ms_ ? 8.0 : 2.0);
  if (cause.input) settle_left_ = kSettleFrames;
  else if (settle_left_ > 0) --settle_left_;
}

int64_t FramePacer::next_frame_ns(const FrameCause& now) const {
  const auto min_gap = static_cast<int64_t>(1e9 / kMaxFramesPerSecond);
  if (now.input || settle_left_ > 0) return last_began_ns_ + min_gap;
  if (!now.new_events && !now.animating) return last_began_ns_ + kIdleFrameNs;
  if (!now.workers_computing) return last_began_ns_ + min_gap;
  const auto within_share = static_cast<int64_t>(cpu_ms_ * 1e6 / kWorkerShare);
  const auto worker_gap = static_cast<int64_t>(1e9 / kWorkerFramesPerSecond);
  return last_began_ns_ + std::max(worker_gap, within_share);
}

bool FramePacer::side_panes_reusable(const FrameCause& now) const {
  return now.workers_computing && !now.input && settle_left_ == 0;
}

bool FramePacer::side_pane_due(int64_t now_ns, int64_t drawn_ns, bool moved) {
  return moved || drawn_ns == 0 || now_ns - drawn_ns >= kSidePaneNs;
}

int FramePacer::side_pane_to_refresh(int64_t now_ns, std::span<const int64_t> drawn_ns) {
  int oldest = -1;
  for (size_t i = 0; i < drawn_ns.size(); ++i) {
    const bool due = drawn_ns[i] != 0 && side_pane_due(now_ns, drawn_ns[i], false);
    if (due && (oldest < 0 || drawn_ns[i] < drawn_ns[static_cast<size_t>(oldest)])) oldest = static_cast<int>(i);
  }
  return oldest;
}

}  // namespace ringlab::view_model
