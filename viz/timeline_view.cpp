// Timeline: one lane per rank. Top row: forward, backward, optimizer step. Bottom row: each
// bucket's all-reduce with its chunk transfers underneath, waits at the step-through gate,
// and a tick where each bucket became ready. Collectives that have not ended are hatched
// (waiting); after a failure the rank that broke the run gets a red band from its last progress
// on. A run over several nodes groups the lanes by node (a tinted band and a label each), and
// the chunk transfers that cross the network between nodes are framed in the network's colour.
// Wheel zooms, dragging pans, double-click follows.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>
#include <fmt/core.h>

#include "engine/core/clock.h"
#include "engine/view_model/node_layout.h"
#include "viz/fault_explanations.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/plot.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using view_model::NodeLayout;
using view_model::SpanKind;
using view_model::TimelineSpan;

uint32_t color_of(const TimelineSpan& s) {
  const Palette& p = palette();
  switch (s.kind) {
    case SpanKind::Forward: return p.forward;
    case SpanKind::Backward: return p.backward;
    case SpanKind::Optimizer: return p.optimizer;
    case SpanKind::Collective: return s.algorithm == 1 ? p.native : p.collective;
    case SpanKind::Transfer: return s.phase == 0 ? p.reduce_scatter : p.all_gather;
    case SpanKind::GateWait: return p.gate;
    case SpanKind::BucketReady: return p.text;
    case SpanKind::Evaluation: return p.mse;
    case SpanKind::StepVote: return with_alpha(p.text_dim, 0.8f);
    case SpanKind::Delay: return p.bad;
    case SpanKind::LeftOut: return with_alpha(p.text_dim, 0.3f);
  }
  return p.text;
}

const char* name_of(SpanKind kind) {
  switch (kind) {
    case SpanKind::Forward: return tr("forward");
    case SpanKind::Backward: return tr("backward");
    case SpanKind::Optimizer: return tr("optimizer step");
    case SpanKind::Collective: return tr("all-reduce");
    case SpanKind::Transfer: return tr("chunk transfer");
    case SpanKind::GateWait: return tr("waiting at the gate");
    case SpanKind::BucketReady: return tr("bucket ready");
    case SpanKind::Evaluation: return tr("evaluation");
    case SpanKind::StepVote: return tr("step vote");
    case SpanKind::Delay: return tr("injected delay");
    case SpanKind::LeftOut: return tr("details left out");
  }
  return "";
}

// A chunk transfer from a rank of one node to a rank of another: its bytes crossed the network.
bool crosses_nodes(const TimelineSpan& s, const NodeLayout& nodes) {
  return nodes.multi_node() && nodes.node_of(s.src) != nodes.node_of(s.dst);
}

std::string describe(const TimelineSpan& s, int rank, const NodeLayout& nodes) {
  std::string text = fmt::format("{} · {}", name_of(s.kind), trf("rank {}", rank));
  if (s.step >= 0) text.append("\n").append(trf("training step {}", grouped(s.step)));
  if (s.kind != SpanKind::BucketReady)
    text.append("\n").append(trf("{}, from {}", format_duration(static_cast<double>(s.t_end_ns - s.t_begin_ns)),
                                format_duration(static_cast<double>(s.t_begin_ns))));
  if (s.bucket >= 0) text.append("\n").append(trf("bucket {}", s.bucket));
  if (s.bytes > 0) text.append("\n").append(trf("{} bytes", s.bytes));
  if (s.kind == SpanKind::Collective)
    text.append("\n").append(s.algorithm == 1 ? tr("the backend's own all-reduce") : tr("ring all-reduce"));
  if (s.kind == SpanKind::Transfer)
    text.append("\n").append(trf("{}, step {} · chunk {} · rank {} → rank {}",
                                  s.phase == 0 ? tr("reduce-scatter") : tr("all-gather"), s.ring_step + 1, s.chunk,
                                  s.src, s.dst));
  if (s.kind == SpanKind::GateWait)
    text.append("\n").append(trf(s.phase == 0 ? "before reduce-scatter step {}" : "before all-gather step {}", s.ring_step + 1));
  if (s.kind == SpanKind::Transfer && crosses_nodes(s, nodes))
    text.append("\n").append(trf("over the network: node {} → node {}", nodes.node_of(s.src), nodes.node_of(s.dst)));
  if (s.kind == SpanKind::Evaluation)
    text.append("\n").append(tr("rank 0 computes the MSE over the whole dataset; the others go on and wait for it in the next all-reduce"));
  if (s.kind == SpanKind::StepVote)
    text.append("\n").append(tr("the ranks agree whether to stop or hold here: ringlab's own control, not part of DDP"));
  if (s.kind == SpanKind::Delay)
    text.append("\n").append(tr("the Straggler lab's sleep, before this rank's forward pass: the others wait for it in "
                                  "the step's all-reduce, which is why their bars grow"));
  if (s.kind == SpanKind::LeftOut)
    text.append("\n").append(tr("this step ran, but its forward, backward and all-reduce were left out of the window "
                                  "to keep up with a fast run: not idle time (the status says how many events were left out)"));
  return text;
}

// Diagonal stripes over a rectangle: what never finished, or a rank that is gone.
// Only the part on screen is drawn: a rank left waiting for an hour, zoomed in to microseconds,
// spans millions of pixels, and a stripe for each would fill memory (and a float x stepped by a
// few pixels stops moving at all far from 0). The stripes keep their places as the view moves.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, uint32_t color, float spacing) {
  const float h = b.y - a.y;
  const double from = std::max<double>(a.x, dl->GetClipRectMin().x - h), to = std::min<double>(b.x, dl->GetClipRectMax().x);
  if (to <= from || b.y <= a.y || spacing <= 0) return;
  dl->PushClipRect(ImVec2(static_cast<float>(from), a.y), ImVec2(static_cast<float>(to), b.y), true);
  const double first = a.x - h + spacing * std::floor((from - a.x) / spacing);
  for (double x = first; x < to; x += spacing)
    dl->AddLine(ImVec2(static_cast<float>(x), b.y), ImVec2(static_cast<float>(x + h), a.y), color, 1.5f);
  dl->PopClipRect();
}

// A label inside a bar, written only where all of it fits in the part of the bar on screen (left
// of `limit`: the plot's edge, or a failure note at the lane's end). Never cut, never over a neighbour.
void bar_label(ImDrawList* dl, float x0, float x1, float y0, float y1, float left, float limit, uint32_t color,
               const char* text) {
  const float pad = 3.0f;
  const float a = std::max(x0, left) + pad, b = std::min(x1, limit) - pad;
  const ImVec2 ts = ImGui::CalcTextSize(text);
  if (b - a < ts.x || y1 - y0 < ts.y * 0.8f) return;  // too short, or too thin: it would spill onto the next row
  dl->AddText(ImVec2(a, y0 + (y1 - y0 - ts.y) / 2), color, text);
}

// Why a rank's open collective is open: waiting for a peer, or held at the gate (for the
// teacher's Next in step-through, or by Pause, which closes the same gate).
enum class OpenBecause { Peer, Gate, Pause };

const char* open_label(OpenBecause why) {
  switch (why) {
    case OpenBecause::Gate: return tr("at the gate");
    case OpenBecause::Pause: return tr("paused");
    case OpenBecause::Peer: break;
  }
  return tr("waiting");
}

// What the mouse finds over an open collective: why it is open, and for how long.
std::string open_read_out(OpenBecause why, int rank, const TimelineSpan& s, double open_ns) {
  const char* what = why == OpenBecause::Pause ? "paused: held at the gate in all-reduce #{} · rank {} · {}"
                     : why == OpenBecause::Gate ? "at the gate: held in all-reduce #{} for the next Next · rank {} · {}"
                                                : "waiting in all-reduce #{} for the ranks not in it yet · rank {} · {}";
  return trf(what, s.collective_id, rank, format_duration(open_ns));
}

// Why the run's open collectives are open now.
OpenBecause open_because(bool failed, const AppState& state) {
  // Stopped while paused (or stepping through), the ranks ended held where the gate held them,
  // whichever mode the step-through pane is in afterwards.
  const bool stopped = state.run.phase == RunPhase::Stopped;
  const bool paused = state.run.phase == RunPhase::Paused || (stopped && state.run.paused_at_stop);
  const bool gated = stopped ? state.run.gated_at_stop : state.step.mode == RingMode::Gated;
  return failed   ? OpenBecause::Peer
         : paused ? OpenBecause::Pause
         : gated  ? OpenBecause::Gate
                  : OpenBecause::Peer;
}

// A collective its rank is still in (or was in when its group failed).
void draw_unfinished(ImDrawList* dl, float x0, float x1, float y0, float y1, float left, float limit, OpenBecause why) {
  const Palette& p = palette();
  if (x1 - x0 < 1.0f) x1 = x0 + 1.0f;
  const uint32_t color = why == OpenBecause::Peer ? p.reduced : p.gate;
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), with_alpha(color, 0.35f));
  hatch(dl, ImVec2(x0, y0), ImVec2(x1, y1), color, ImGui::GetFontSize() * 0.45f);
  bar_label(dl, x0, x1, y0, y1, left, limit, p.text, open_label(why));
}

// The failure lab's note at a lane's right end: its words, font and size (no text: no note).
// Measured once per lane and frame: the bar labels under it stop where it begins.
struct LaneNote {
  std::string text;
  ImFont* font = nullptr;
  ImVec2 size;
  float left(float lane_right) const {
    return text.empty() ? lane_right : lane_right - size.x - ImGui::GetFontSize() * 0.6f - 4;
  }
};

LaneNote lane_note(const view_model::FailureDiagnosis& f, int rank) {
  const view_model::RankDiagnosis* d = f.failed ? f.rank(rank) : nullptr;
  if (!d) return {};
  LaneNote note{RankFailureLabel(*d, f), f.is_culprit(rank) ? fonts().bold : fonts().regular, {}};
  if (!note.text.empty()) note.size = note.font->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0, note.text.c_str());
  return note;
}

// A lane's note at its right end, on a backing so the bars under it do not cross its words.
void draw_lane_note(ImDrawList* dl, const LaneNote& note, ImVec2 lane_min, ImVec2 lane_max, uint32_t color) {
  const float fs = ImGui::GetFontSize();
  const ImVec2 ts = note.size;
  // Lanes thinner than a line get no note (the failure lab's table says it), and so no bar labels cut short by it.
  if (note.text.empty() || ts.y > lane_max.y - lane_min.y) return;
  const ImVec2 at(std::max(lane_min.x + 2, lane_max.x - ts.x - fs * 0.6f), lane_min.y + (lane_max.y - lane_min.y - ts.y) / 2);
  dl->AddRectFilled(ImVec2(at.x - 4, at.y - 1), ImVec2(at.x + ts.x + 4, at.y + ts.y + 1), with_alpha(palette().canvas, 0.9f), 4);
  dl->AddText(note.font, fs, at, color, note.text.c_str());
}

// A run gone quiet that has not failed: each rank says, at its lane's end, what it was last seen
// doing, and for how long now: waiting in an all-reduce (for the ranks not in it yet), or nothing
// heard from it at all (the rank the others wait for: asleep, stuck, or still starting).
LaneNote quiet_lane_note(const view_model::TimelineModel& tl, int rank, int64_t now_rel_ns) {
  int64_t open_since = INT64_MAX, open_id = -1;
  tl.for_each_open_collective(rank, [&](const TimelineSpan& s) {
    if (s.t_begin_ns < open_since) open_since = s.t_begin_ns, open_id = s.collective_id;
  });
  const int64_t heard = tl.heard_ns(rank);
  LaneNote note;
  if (open_id >= 0)
    note.text = trf("in all-reduce #{} for {}", grouped(open_id), format_duration(static_cast<double>(now_rel_ns - open_since)));
  else if (heard == view_model::TimelineModel::kNeverHeard)
    note.text = tr("nothing heard from it yet");
  else
    note.text = trf("silent for {}", format_duration(static_cast<double>(now_rel_ns - heard)));
  note.font = open_id >= 0 ? fonts().regular : fonts().bold;
  note.size = note.font->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0, note.text.c_str());
  return note;
}

// The failure lab's marks on a failed run: the rank that broke it gets a red band from its last
// progress on; every rank with something to say gets it written at the lane's right end.
void draw_failure_lane(ImDrawList* dl, const view_model::FailureDiagnosis& f, int rank, const LaneNote& note, float x_last,
                       ImVec2 lane_min, ImVec2 lane_max) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  if (!f.rank(rank)) return;
  const bool culprit = f.is_culprit(rank);
  if (culprit) {
    const ImVec2 a(std::max(x_last, lane_min.x), lane_min.y + 1), b(lane_max.x, lane_max.y - 1);
    dl->AddRectFilled(a, b, with_alpha(p.bad, 0.16f));
    hatch(dl, a, b, with_alpha(p.bad, 0.55f), fs * 0.6f);
    dl->AddLine(ImVec2(a.x, a.y), ImVec2(a.x, b.y), p.bad, 3.0f);
  }
  draw_lane_note(dl, note, lane_min, lane_max, culprit ? p.bad : p.text);
}

// One entry of the legend: a swatch drawn by `swatch` (given its top-left corner) and its words.
// A narrow pane wraps the legend rather than cutting it off.
template <class Swatch>
void legend_entry(const char* text, Swatch&& swatch) {
  const float fs = ImGui::GetFontSize();
  const float width = fs * 1.1f + ImGui::CalcTextSize(text).x;
  if (ImGui::GetCursorScreenPos().x + width > ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::NewLine();
  swatch(ImGui::GetCursorScreenPos());
  ImGui::Dummy(ImVec2(fs * 0.9f, fs));
  ImGui::SameLine(0, fs * 0.2f);
  ImGui::TextUnformatted(text);
  ImGui::SameLine(0, fs * 0.8f);
}

// A swatch of `color`, striped in `stripes` where the plot stripes what it stands for.
void legend_item(const char* text, uint32_t color, uint32_t stripes = 0) {
  legend_entry(text, [&](ImVec2 at) {
    const float fs = ImGui::GetFontSize();
    const ImVec2 a(at.x, at.y + fs * 0.2f), b(at.x + fs * 0.8f, at.y + fs);
    ImGui::GetWindowDrawList()->AddRectFilled(a, b, color, stripes ? 0.0f : 2.0f);
    if (stripes) hatch(ImGui::GetWindowDrawList(), a, b, stripes, fs * 0.3f);
  });
}

// The bucket-ready mark as the lanes draw it, a small triangle: a class asked what the black
// triangles were.
void legend_bucket_mark() {
  legend_entry(tr("bucket ready"), [](ImVec2 at) {
    const float fs = ImGui::GetFontSize(), cx = at.x + fs * 0.4f;
    ImGui::GetWindowDrawList()->AddTriangleFilled(ImVec2(cx, at.y + fs * 0.3f), ImVec2(cx - fs * 0.3f, at.y + fs * 0.8f),
                                                  ImVec2(cx + fs * 0.3f, at.y + fs * 0.8f), palette().text);
  });
}

// Lanes grouped by node: every other node's lanes tinted, a line in the network's colour between
// two nodes, and "node K" in the column left of the rank labels where its lanes are a line tall.
// Drawn before the labels and the spans, which go over the tint.
void draw_node_groups(ImDrawList* dl, const NodeLayout& nodes, int lanes, float lane_h, ImVec2 column, ImVec2 plot_min,
                      ImVec2 plot_max) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  for (const auto& node : nodes.nodes) {
    if (node.first_rank >= lanes) break;
    const float top = plot_min.y + node.first_rank * lane_h;
    const float bottom = plot_min.y + std::min(node.last_rank() + 1, lanes) * lane_h;
    if (node.node % 2 == 1) dl->AddRectFilled(ImVec2(column.x, top), ImVec2(plot_max.x, bottom), mix(p.canvas, p.network, 0.07f));
    if (node.first_rank > 0) dl->AddLine(ImVec2(column.x, top), ImVec2(plot_max.x, top), p.network, 2.0f);
    const std::string text = trf("node {}", node.node);
    if (bottom - top < fs * 1.1f) continue;  // a node of thin lanes: the tint and the line say it
    dl->AddText(fonts().bold, fs, ImVec2(column.x + fs * 0.3f, (top + bottom - fs) / 2), node.node % 2 == 1 ? p.network : p.text_dim,
                text.c_str());
  }
}

// Where a rank's spans were let go (TimelineModel::let_go), the lanes are veiled, and each such
// stretch wide enough says why, so a window over a long run's past does not read as ranks that
// did nothing.
void draw_let_go(ImDrawList* dl, float x0, float x1, ImVec2 plot_min, ImVec2 plot_max, size_t kept_per_rank,
                 bool following) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  x0 = std::max(x0, plot_min.x);
  x1 = std::min(x1, plot_max.x);
  if (x1 <= x0) return;
  dl->AddRectFilled(ImVec2(x0, plot_min.y), ImVec2(x1, plot_max.y), with_alpha(p.canvas, 0.75f));
  for (float x : {x0, x1})
    if (x > plot_min.x && x < plot_max.x) dl->AddLine(ImVec2(x, plot_min.y), ImVec2(x, plot_max.y), p.text_dim, 1.0f);
  const float room = x1 - x0 - fs;
  if (room < fs * 8) return;
  std::string text = trf("The spans here were let go: the timeline keeps each rank's newest {}, and what a view held still shows.",
                         grouped(static_cast<int64_t>(kept_per_rank)));
  if (!following) text += std::string(" ") + tr("Tick Follow, or double-click, to come back to now.");
  const ImVec2 at(x0 + fs * 0.5f, plot_min.y + fs * 0.5f);
  const ImVec2 extent = ImGui::CalcTextSize(text.c_str(), nullptr, false, room);
  dl->AddRectFilled(ImVec2(at.x - fs * 0.25f, at.y - fs * 0.15f), ImVec2(at.x + extent.x + fs * 0.25f, at.y + extent.y + fs * 0.15f),
                    p.canvas);
  dl->AddText(ImGui::GetFont(), fs, at, p.text, text.c_str(), nullptr, room);
}

// The spans of one row that fall within one pixel column, by colour, and the longest of them
// (whose read-out the pixel gives). A few colours share a row; it is filled and emptied once per
// pixel column of every lane each frame, so it holds them in place, without allocating.
struct PixelColumn {
  float x = -1e9f, y0 = 0, y1 = 0;
  std::array<std::pair<uint32_t, int64_t>, 8> time_by_color{};
  int colors = 0;
  const TimelineSpan* longest = nullptr;
  void add(uint32_t color, const TimelineSpan* s) {
    const int64_t ns = std::max<int64_t>(s->t_end_ns - s->t_begin_ns, 1);
    int i = 0;
    while (i < colors && time_by_color[i].first != color) ++i;
    if (i == colors && colors < static_cast<int>(time_by_color.size())) time_by_color[colors++] = {color, 0};
    if (i < colors) time_by_color[i].second += ns;
    if (!longest || ns > longest->t_end_ns - longest->t_begin_ns) longest = s;
  }
};

// A live rank silent for longer than this is shown as it is (stuck, or gone), not waited for.
constexpr int64_t kMaxEventLagNs = 100'000'000;

// The run's last event, after the run: a dashed line with its words beside it where they fit.
void draw_run_end(ImDrawList* dl, float x, ImVec2 plot_min, ImVec2 plot_max) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  dashed_line(dl, ImVec2(x, plot_min.y), ImVec2(x, plot_max.y), p.text_dim, 1.5f, fs * 0.35f);
  const char* text = tr("run ended");
  const ImVec2 ts = ImGui::CalcTextSize(text);
  if (x + fs * 0.3f + ts.x > plot_max.x) return;
  dl->AddRectFilled(ImVec2(x + fs * 0.2f, plot_min.y + 1), ImVec2(x + fs * 0.4f + ts.x, plot_min.y + 1 + ts.y),
                    with_alpha(p.canvas, 0.85f), 3);
  dl->AddText(ImVec2(x + fs * 0.3f, plot_min.y + 1), p.text_dim, text);
}

// The Follow box and the key to the colours, on one line over the plot.
void draw_legend(TimelineViewState& v, const NodeLayout& nodes, bool delays, bool left_out, bool failed, bool held_open, bool live) {
  const Palette& p = palette();
  if (ImGui::Checkbox(label("Follow", "timeline_follow").c_str(), &v.follow)) {
    v.window_ms = v.follow ? 0 : v.drawn_window_ms;  // unticked: the view stays where it was, still
    v.end_ms = v.drawn_end_ms;
  }
  ImGui::SameLine(0, ImGui::GetFontSize());
  legend_item(tr("forward"), p.forward);
  legend_item(tr("backward"), p.backward);
  legend_item(tr("optimizer step"), p.optimizer);
  legend_item(tr("all-reduce"), p.collective);
  legend_item(tr("reduce-scatter"), p.reduce_scatter);
  legend_item(tr("all-gather"), p.all_gather);
  legend_item(tr("gate"), p.gate);
  // A wait at the gate not over yet (paused, or for the class's Next) is striped in the gate's grey.
  if (held_open)
    legend_item(tr(live ? "held at the gate now" : "held at the gate when it ended"), with_alpha(p.gate, 0.35f), p.gate);
  // Stripes in the waiting colour: over an all-reduce's purple where it waited for the last rank,
  // over their own pale fill where a collective never finished.
  legend_item(tr("waiting"), with_alpha(p.reduced, 0.35f), p.reduced);
  legend_bucket_mark();
  legend_item(tr("evaluation"), p.mse);
  legend_item(tr("step vote"), with_alpha(p.text_dim, 0.8f));
  if (nodes.multi_node()) legend_item(tr("transfer between nodes (network)"), p.network);
  if (delays) legend_item(tr("injected delay"), with_alpha(p.bad, 0.35f), p.bad);
  if (left_out) legend_item(tr("details left out"), with_alpha(p.text_dim, 0.3f), with_alpha(p.text_dim, 0.55f));
  if (failed) legend_item(tr("broke the run, from its last progress"), with_alpha(p.bad, 0.16f), with_alpha(p.bad, 0.55f));
  ImGui::NewLine();
}

// The plot's place on screen and the stretch of the run it shows, in ms since the run began.
struct TimeAxis {
  ImVec2 origin, plot_min, plot_max;
  float node_w = 0, width = 1;
  double begin = 0, end = 0, window = 1;
  float x_of(double ms) const { return plot_min.x + static_cast<float>((ms - begin) / window) * width; }
};

// How long the window goes on with the clock: held at the gate or paused, from the last span; a
// run that hangs, once it has been quiet for kRunQuietNs; else 0.
int64_t quiet_for_ns(const view_model::TimelineModel& tl, const AppState& state) {
  // Stopped in a hang: the window ends where the Stop came, not at the last span before it.
  if (state.run.phase == RunPhase::Stopped && state.run.hung_for_ns_at_stop > 0)
    return std::max<int64_t>(state.run.hung_until_rel_ns - tl.latest_ns(), 0);
  const bool held = state.gated || state.run.phase == RunPhase::Paused;
  return held || RunHangs(state) ? RunSilentNs(state) : 0;
}

// "Now" for a hang's lane notes, on the timeline's clock: the clock while it hangs, the Stop's
// moment once stopped in it (the teardown's own reports come after it, and are not the hang's).
int64_t hang_now_rel_ns(const view_model::TimelineModel& tl, const AppState& state) {
  if (state.run.phase == RunPhase::Stopped && state.run.hung_for_ns_at_stop > 0) return state.run.hung_until_rel_ns;
  return tl.latest_ns() + quiet_for_ns(tl, state);
}

// Where the live window ends: following a live run, where every rank has been heard from (the
// ranks' events arrive a few milliseconds apart, and past that point the ones heard from last would
// look idle, or waiting in an all-reduce long since done). Held at the gate (step-through, or
// Pause) the ranks report nothing until the next release, and a run that hangs reports nothing at
// all (a PyTorch script says its all-reduce only once it ends): the window goes on with the clock,
// so the wait shows as it happens, not only once it ends (`held_until_ms`, 0 when neither).
double latest_ms_of(const view_model::TimelineModel& tl, const AppState& state, double& held_until_ms) {
  const bool live = state.run.live();
  const int64_t quiet = quiet_for_ns(tl, state);
  held_until_ms = quiet > 0 ? (tl.latest_ns() + quiet) / 1e6 : 0.0;
  return std::max(held_until_ms, (live ? tl.reported_ns(kMaxEventLagNs) : tl.latest_ns()) / 1e6);
}

// The wheel zooms about the mouse (the time under the cursor stays put), a drag pans, a
// double-click follows again; held still, the window stays within the run.
void move_by_hand(TimelineViewState& v, TimeAxis& a, double latest_ms, bool hovered, bool dragging) {
  const ImGuiIO& io = ImGui::GetIO();
  if (hovered && io.MouseWheel != 0) {
    const double at = a.end - a.window + (io.MousePos.x - a.plot_min.x) / a.width * a.window;
    const double factor = std::pow(0.8, io.MouseWheel);
    // Zoomed all the way out, the window is the whole run: no time before it began.
    const double new_window = std::clamp(a.window * factor, 0.001, std::max(latest_ms, 1.0));
    a.end = at + (a.end - at) * (new_window / a.window);
    a.window = new_window;
    v.window_ms = a.window;
    if (!v.follow || a.end < latest_ms - 1e-9) {
      v.follow = false;
      v.end_ms = a.end;
    }
  }
  if (dragging) {
    v.follow = false;
    a.end -= io.MouseDelta.x / a.width * a.window;
    v.end_ms = a.end;
    v.window_ms = a.window;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    v.follow = true;
    v.window_ms = 0;
  }
  // Held still: a drag stops at the run's start, a zoom at its latest event (not in time that
  // has not happened).
  if (!v.follow && (a.end < a.window || a.end > std::max(latest_ms, a.window))) {
    a.end = std::clamp(a.end, a.window, std::max(latest_ms, a.window));
    v.end_ms = a.end;
  }
}

// The plot's geometry and its window of time this frame, after what the mouse did to it.
TimeAxis place_time_axis(const view_model::TimelineModel& tl, TimelineViewState& v, const NodeLayout& nodes,
                         int all_lanes, bool ended, double latest_ms, bool hovered, bool dragging) {
  const float fs = ImGui::GetFontSize();
  TimeAxis a;
  a.origin = ImGui::GetItemRectMin();
  const ImVec2 size = ImGui::GetItemRectSize();
  a.window = v.window_ms;
  if (a.window <= 0) {
    const double begin = tl.recent_steps_begin(3, static_cast<int64_t>(latest_ms * 1e6)) / 1e6;
    a.window = std::max(latest_ms - begin, 0.05) * 1.05;
  }
  a.end = v.follow ? latest_ms : v.end_ms;
  // The rank labels' column is as wide as the widest of them (DrawRankLabel: 1.3 em and its
  // text); bars start a little after it (flush with it, a bucket's mark at a lane's start sat on
  // the label's last digit). Over several nodes, a column of node names comes first.
  a.node_w = nodes.multi_node()
                 ? fs * 0.9f + fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, trf("node {}", nodes.nodes.size() - 1).c_str()).x
                 : 0.0f;
  const float gutter = a.node_w + fs * 1.8f + fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, trf("rank {}", all_lanes - 1).c_str()).x;
  a.plot_min = ImVec2(a.origin.x + gutter, a.origin.y + fs * 1.5f);
  a.plot_max = ImVec2(a.origin.x + size.x, a.origin.y + size.y);
  a.width = std::max(a.plot_max.x - a.plot_min.x, 1.0f);
  // After a run, its last event gets a mark and a little room after it: the rank whose last
  // all-reduce ended last (on a busy machine, a millisecond or more after the others, waiting for
  // a core) would otherwise run its bar into the pane's edge, as if it were still going.
  if (v.follow && ended)
    a.end += a.window * std::min(0.25, static_cast<double>((ImGui::CalcTextSize(tr("run ended")).x + fs) / a.width));
  move_by_hand(v, a, latest_ms, hovered, dragging);
  a.begin = a.end - a.window;
  v.drawn_end_ms = a.end;
  v.drawn_window_ms = a.window;
  return a;
}

// Ticks in ms, or in s once the run is older than 10 s, with the decimals the spacing needs.
void draw_time_ticks(ImDrawList* dl, const TimeAxis& a) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  const bool seconds = a.end >= 10'000;
  const double unit = seconds ? 1000.0 : 1.0;
  const std::vector<double> ticks = nice_ticks(a.begin / unit, a.end / unit, std::max(2, static_cast<int>(a.width / (fs * 8))));
  const double tick_step = ticks.size() > 1 ? ticks[1] - ticks[0] : a.window / unit;
  for (double t : ticks) {
    const float x = a.x_of(t * unit);
    dl->AddLine(ImVec2(x, a.plot_min.y), ImVec2(x, a.plot_max.y), p.grid);
    const std::string s = format_tick(t, tick_step) + (seconds ? " s" : " ms");
    const float w = ImGui::CalcTextSize(s.c_str()).x;
    // A tick near either end keeps its line; its number is written only if all of it fits.
    if (x - w / 2 < a.origin.x || x + w / 2 > a.plot_max.x - 2) continue;
    dl->AddText(ImVec2(x - w / 2, a.origin.y + fs * 0.2f), p.text_dim, s.c_str());
  }
}

// A rank's lane: its compute on top (forward, backward, optimizer step, evaluation), then its
// collectives, waits at the gate and step votes, and under those their chunk transfers.
struct LaneRows {
  float top = 0, lane_h = 0, row_h = 0;
  float compute_top() const { return top + lane_h * 0.06f; }
  float collective_top() const { return compute_top() + row_h + lane_h * 0.04f; }
  static int row_of(SpanKind kind) {
    switch (kind) {
      case SpanKind::Collective:
      case SpanKind::GateWait:
      case SpanKind::StepVote: return 1;
      case SpanKind::Transfer: return 2;
      default: return 0;
    }
  }
  std::pair<float, float> band(int row) const {
    if (row == 0) return {compute_top(), compute_top() + row_h};
    if (row == 1) return {collective_top(), collective_top() + row_h * 0.62f};
    const float y0 = collective_top() + row_h * 0.66f;
    return {y0, y0 + row_h * 0.34f};
  }
};

// What the mouse is over: the span whose read-out the tooltip gives, and its rank.
struct SpanHit {
  const TimelineSpan* span = nullptr;
  int rank = -1;
};

bool mouse_in(float x0, float y0, float x1, float y1) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  return m.x >= x0 && m.x <= x1 && m.y >= y0 && m.y <= y1;
}

// Draws one rank's spans in the window, a span at a time (TimelineModel::for_each_visible).
class LanePainter {
 public:
  LanePainter(ImDrawList* dl, const view_model::TimelineModel& tl, const TimeAxis& a, const NodeLayout& nodes,
              LaneRows rows, int rank, float label_limit, bool hovered, SpanHit& hit)
      : dl_(dl), tl_(tl), a_(a), nodes_(nodes), rows_(rows), rank_(rank), label_limit_(label_limit),
        hovered_(hovered), hit_(hit) {}

  void span(const TimelineSpan& s) {
    const float x0 = a_.x_of(s.t_begin_ns / 1e6), x1 = a_.x_of(s.t_end_ns / 1e6);
    if (s.kind == SpanKind::BucketReady) return bucket_mark(s, x0);
    const int row = LaneRows::row_of(s.kind);
    const auto [y0, y1] = rows_.band(row);
    if (x1 - x0 < 1.0f && !s.unfinished) {
      // A step left out is the whole lane's: in each row its pixel weighs against what was seen.
      const uint32_t color = s.kind == SpanKind::GateWait ? with_alpha(color_of(s), 0.6f) : color_of(s);
      for (int r = row; r <= (s.kind == SpanKind::LeftOut ? 2 : row); ++r) gather(r, std::floor(x0), color, s);
      return;
    }
    flush(columns_[row]);
    if (s.unfinished) return draw_unfinished(dl_, x0, x1, y0, y1, a_.plot_min.x, label_limit_, OpenBecause::Peer);
    bar(s, x0, x1, y0, y1);
  }

  // The pixel columns still gathering, and the waits at the gate over the compute they held.
  void finish() {
    for (PixelColumn& c : columns_) flush(c);
    // Held at the gate, a rank computes nothing: over the forward or backward bar it waited
    // inside (a bucket's all-reduce runs in backward) the gate shows, not a minute of "backward".
    const Palette& p = palette();
    const float row0 = rows_.compute_top();
    for (const auto& [span, x] : held_) {
      dl_->AddRectFilled(ImVec2(x.first, row0), ImVec2(x.second, row0 + rows_.row_h), p.canvas);
      dl_->AddRectFilled(ImVec2(x.first, row0), ImVec2(x.second, row0 + rows_.row_h), with_alpha(p.gate, 0.6f));
      // Outside any forward or backward bar (the [1, 2, 3] demo's gates) the band is the wait's own.
      if (!hit_.span && hovered_ && mouse_in(x.first, row0, x.second, row0 + rows_.row_h)) hit_ = {span, rank_};
    }
  }

 private:
  void bar(const TimelineSpan& s, float x0, float x1, float y0, float y1) {
    const Palette& p = palette();
    const float fs = ImGui::GetFontSize();
    const uint32_t color = color_of(s);
    if (s.kind == SpanKind::GateWait) held_.push_back({&s, {x0, x1}});
    // Square corners: a rounded rectangle costs a software rasterizer many more triangles.
    // An injected delay is a sleep: striped, as the plot's other time without work is, and in the
    // failure colour, where reduce-scatter's orange filled would read as the same red.
    if (s.kind == SpanKind::Delay) {
      dl_->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), with_alpha(color, 0.35f));
      hatch(dl_, ImVec2(x0, y0), ImVec2(x1, y1), color, fs * 0.45f);
    } else if (s.kind == SpanKind::LeftOut) {
      // A step that ran unseen covers the whole lane, compute and collectives alike, pale and
      // striped: what is not there is not time without work.
      y1 = rows_.band(2).second;
      dl_->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), color);
      hatch(dl_, ImVec2(x0, y0), ImVec2(x1, y1), with_alpha(p.text_dim, 0.55f), fs * 0.6f);
    } else {
      dl_->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), s.kind == SpanKind::GateWait ? with_alpha(color, 0.6f) : color);
    }
    if (s.kind == SpanKind::Transfer && crosses_nodes(s, nodes_) && x1 - x0 >= 3.0f)
      dl_->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), p.network, 0, 0, 2.0f);
    if (s.kind == SpanKind::Collective || s.kind == SpanKind::Transfer) {
      // Until the last rank arrived, this rank could only wait: a straggler shows up here, on the
      // all-reduce and on the chunk it waited for (a receive posted at once that completes only
      // once the straggler sends: drawn plain, it read as a slow reduce-scatter).
      const int64_t last = tl_.last_arrival_ns(s.collective_id);
      const float xw = last > s.t_begin_ns ? std::min(a_.x_of(std::min(last, s.t_end_ns) / 1e6), x1) : x0;
      if (xw - x0 >= 3.0f) hatch(dl_, ImVec2(x0, y0), ImVec2(xw, y1), with_alpha(p.reduced, 0.9f), fs * 0.45f);
    }
    if (s.kind == SpanKind::Collective && x1 - x0 > fs * 3) {
      const std::string text = s.bucket >= 0 ? trf("bucket {}", s.bucket) : std::string(tr("all-reduce"));
      bar_label(dl_, x0, x1, y0, y1, a_.plot_min.x, label_limit_, 0xFFFFFFFF, text.c_str());
    }
    if (hovered_ && mouse_in(x0, y0, x1, y1)) hit_ = {&s, rank_};
  }

  // A bucket becoming ready: a small triangle on the all-reduce's row. Zoomed out, marks a few
  // pixels apart would merge into a black band: one per width.
  void bucket_mark(const TimelineSpan& s, float x0) {
    const float fs = ImGui::GetFontSize();
    if (x0 < last_mark_ + fs * 0.8f) return;
    last_mark_ = x0;
    const float y = rows_.compute_top() + rows_.row_h;
    dl_->AddTriangleFilled(ImVec2(x0, y - fs * 0.1f), ImVec2(x0 - fs * 0.3f, y + fs * 0.4f),
                           ImVec2(x0 + fs * 0.3f, y + fs * 0.4f), palette().text);
    // Only the triangle itself: it sits on the all-reduce's bar, which a small pane makes hardly
    // taller than it, and a wider zone read the bar's pointer as "bucket ready".
    const ImVec2 m = ImGui::GetIO().MousePos;
    const float down = m.y - (y - fs * 0.1f);  // 0 at the apex, 0.5 fs at the base
    if (hovered_ && down >= 0 && down <= fs * 0.5f && std::fabs(m.x - x0) <= down * 0.6f) hit_ = {&s, rank_};
  }

  // A span narrower than a pixel, into row `row`'s column at x `at` (the column before it drawn).
  void gather(int row, float at, uint32_t color, const TimelineSpan& s) {
    PixelColumn& column = columns_[row];
    if (at != column.x) {
      flush(column);
      const auto [y0, y1] = rows_.band(row);
      column.x = at;
      column.y0 = y0;
      column.y1 = y1;
    }
    column.add(color, &s);
  }

  // Spans narrower than a pixel: one pixel per column, in the colour of the kind that took most
  // of its time (zoomed out, backward, not the first sliver of optimizer step that begins there).
  void flush(PixelColumn& c) {
    if (c.colors == 0) return;
    const auto most = std::max_element(c.time_by_color.begin(), c.time_by_color.begin() + c.colors,
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    dl_->AddRectFilled(ImVec2(c.x, c.y0), ImVec2(c.x + 1.0f, c.y1), most->first);
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (hovered_ && m.x >= c.x && m.x < c.x + 1.0f && m.y >= c.y0 && m.y <= c.y1) hit_ = {c.longest, rank_};
    c = PixelColumn{};
  }

  ImDrawList* dl_;
  const view_model::TimelineModel& tl_;
  const TimeAxis& a_;
  const NodeLayout& nodes_;
  LaneRows rows_;
  int rank_;
  float label_limit_;
  bool hovered_;
  SpanHit& hit_;
  PixelColumn columns_[3];  // per row: the pixel column whose narrow spans are being gathered
  float last_mark_ = -1e9f;  // where the last bucket-ready mark was drawn
  std::vector<std::pair<const TimelineSpan*, std::pair<float, float>>> held_;  // this lane's waits at the gate
};

// Collectives still open: live, a rank waiting for a straggler; after a failure, the ranks left
// waiting for the one that broke the run, which gets its red band and the lab's note. A gated run
// that has not failed holds its ranks at the gate between the teacher's presses (and a Stop leaves
// them there). Returns the words on the open collectives it drew, empty when there were none.
std::string draw_open_and_failed(ImDrawList* dl, const view_model::RunModel& model, const AppState& state, const TimeAxis& a,
                          const std::vector<LaneNote>& notes, float lane_h, float row_h, double held_until_ms,
                          std::string& hover_text) {
  const view_model::TimelineModel& tl = model.timeline();
  const view_model::FailureDiagnosis& failure = model.failure();
  const OpenBecause why = open_because(failure.failed, state);
  std::string said;
  for (int rank = 0; rank < static_cast<int>(notes.size()); ++rank) {
    const LaneRows rows{a.plot_min.y + rank * lane_h, lane_h, row_h};
    const auto [y0, y1] = rows.band(1);
    const float label_limit = notes[rank].left(a.plot_max.x);
    // A killed rank was not waiting: its last events died with it, and its red band says so.
    const view_model::RankDiagnosis* diagnosed = failure.failed ? failure.rank(rank) : nullptr;
    const bool killed = diagnosed && view_model::ended_silently(diagnosed->cause);
    if (!killed)
      tl.for_each_open_collective(rank, [&](const TimelineSpan& s) {
        const double until_ms = std::max(s.t_end_ns / 1e6, held_until_ms);
        const float x0 = a.x_of(s.t_begin_ns / 1e6), x1 = a.x_of(until_ms);
        draw_unfinished(dl, x0, x1, y0, y1, a.plot_min.x, label_limit, why);
        said = open_label(why);
        const ImVec2 m = ImGui::GetIO().MousePos;
        if (m.x >= x0 - 3 && m.x <= std::max(x1, x0 + 1) + 3 && m.y >= y0 && m.y <= y1)  // a bar just begun: 1 px
          hover_text = open_read_out(why, rank, s, until_ms * 1e6 - static_cast<double>(s.t_begin_ns));
      });
    if (failure.failed) {
      const view_model::RankDiagnosis* d = failure.rank(rank);
      const double last_ms = d && d->last_progress_ns >= 0 ? (d->last_progress_ns - tl.origin_ns()) / 1e6 : a.begin;
      draw_failure_lane(dl, failure, rank, notes[rank], a.x_of(last_ms), ImVec2(a.plot_min.x, rows.top),
                        ImVec2(a.plot_max.x, rows.top + lane_h - 1));
    } else {  // a run gone quiet: what each rank was last seen doing
      draw_lane_note(dl, notes[rank], ImVec2(a.plot_min.x, rows.top), ImVec2(a.plot_max.x, rows.top + lane_h - 1),
                     palette().text);
    }
  }
  return said;
}

// The stretches let go that the window reaches into, each veiled with its note where it fits; a
// veiled stretch gives no read-out.
void draw_let_go_stretches(ImDrawList* dl, const view_model::TimelineModel& tl, TimelineViewState& v, const TimeAxis& a,
                           bool hovered, SpanHit& hit) {
  v.let_go_shown = false;
  for (const auto& [from, to] : tl.let_go()) {
    if (from / 1e6 >= a.end || to / 1e6 <= a.begin) continue;
    v.let_go_shown = true;
    const float x0 = a.x_of(from / 1e6), x1 = a.x_of(to / 1e6);
    draw_let_go(dl, x0, x1, a.plot_min, a.plot_max, tl.max_spans_per_lane(), v.follow);
    if (hovered && ImGui::GetIO().MousePos.x >= x0 && ImGui::GetIO().MousePos.x < x1) hit.span = nullptr;
  }
}

// The read-out of the span under the mouse: what it was, and how much of it was waiting.
std::string span_read_out(const view_model::TimelineModel& tl, const SpanHit& hit, const NodeLayout& nodes) {
  const TimelineSpan& s = *hit.span;
  std::string text = describe(s, hit.rank, nodes);
  const bool waits = s.kind == SpanKind::Collective || s.kind == SpanKind::Transfer;
  const int64_t last = waits ? tl.last_arrival_ns(s.collective_id) : -1;
  if (last > s.t_begin_ns)
    text.append("\n").append(trf("waited {:.2f} ms for the last rank to arrive", (std::min(last, s.t_end_ns) - s.t_begin_ns) / 1e6));
  if (s.kind != SpanKind::GateWait && s.kind != SpanKind::BucketReady) {
    const int64_t held = tl.gate_wait_within(hit.rank, s.t_begin_ns, s.t_end_ns);
    if (held > 0) text.append("\n").append(trf("of which held at the gate: {}", format_duration(static_cast<double>(held))));
  }
  if (s.unfinished) text.append("\n").append(std::string(tr("never finished: a rank failed")));
  return text;
}

// The time an all-reduce took, from its first rank's begin to its last rank's end (to the
// latest begin while a rank is still in it), on the timeline's clock (ms); none if nobody began it.
std::optional<std::pair<double, double>> collective_ms(const view_model::CollectiveRecord& rec, int64_t origin_ns) {
  std::optional<int64_t> begin, end;
  for (const auto& r : rec.ranks) {
    if (!r.began) continue;
    begin = std::min(begin.value_or(r.t_begin_ns), r.t_begin_ns);
    end = std::max(end.value_or(r.t_begin_ns), r.ended ? r.t_end_ns : r.t_begin_ns);
  }
  if (!begin) return std::nullopt;
  return std::pair{(*begin - origin_ns) / 1e6, (*end - origin_ns) / 1e6};
}

// Replay: the view goes to the all-reduce the ring is set to, once each time it is set to another
// (the class can still drag and zoom around it), with a little of the steps either side.
std::optional<std::pair<double, double>> follow_replay(const view_model::RunModel& model, AppState& state) {
  TimelineViewState& v = state.timeline;
  const view_model::CollectiveRecord* rec = state.step.mode == RingMode::Replay ? ShownCollective(model, state) : nullptr;
  const auto ms = rec ? collective_ms(*rec, model.timeline().origin_ns()) : std::nullopt;
  if (!ms) {
    if (state.step.mode != RingMode::Replay) {
      if (v.replay_took_follow) {  // Replay left: following again, as before it
        v.follow = true;
        v.window_ms = 0;
      }
      v.replay_took_follow = false;
    }
    v.replay_shown.reset();
    return std::nullopt;
  }
  if (v.replay_shown != rec->key) {
    v.replay_shown = rec->key;
    const double took = std::max(ms->second - ms->first, 0.001);
    v.replay_took_follow = v.replay_took_follow || v.follow;
    v.follow = false;
    v.window_ms = std::max(took * 6, v.drawn_window_ms > 0 ? std::min(v.drawn_window_ms, took * 40) : 0.0);
    v.end_ms = ms->second + (v.window_ms - took) / 2;
  }
  return ms;
}

// The replayed all-reduce's time, a light band over every lane, so the ring's all-reduce is found
// among the timeline's.
void mark_replayed(ImDrawList* dl, const TimeAxis& a, std::pair<double, double> ms) {
  const float x0 = a.x_of(ms.first), x1 = std::max(a.x_of(ms.second), x0 + 2);
  dl->AddRectFilled(ImVec2(x0, a.plot_min.y), ImVec2(x1, a.plot_max.y), with_alpha(palette().accent, 0.12f));
  dl->AddRect(ImVec2(x0, a.plot_min.y), ImVec2(x1, a.plot_max.y), with_alpha(palette().accent, 0.7f), 0, 0, 1.5f);
}

}  // namespace

void DrawTimelineView(const view_model::RunModel& model, AppState& state) {
  const view_model::TimelineModel& tl = model.timeline();
  TimelineViewState& v = state.timeline;
  // The last frame's open all-reduces: held at the gate gets its own legend entry.
  const bool held_open = !v.open_label.empty() && open_because(model.failure().failed, state) != OpenBecause::Peer;
  v.open_label.clear();
  const float fs = ImGui::GetFontSize();
  const int all_lanes = tl.lanes();
  const view_model::Generation* generation = model.current_generation();
  const NodeLayout nodes = view_model::node_layout_of(model, generation ? generation->index : -1,
                                                      std::max(model.world_size(), all_lanes), state.job);
  draw_legend(v, nodes, tl.has_delays(), tl.has_left_out(), model.failure().failed && !model.failure().culprits.empty(), held_open,
              state.run.live());
  if (all_lanes == 0) {
    DimWrapped(tr("Nothing yet: each rank's forward, backward and all-reduces appear here as they happen."));
    return;
  }
  const ImVec2 size = ImGui::GetContentRegionAvail();
  if (size.y < fs * 3) return;
  ImGui::InvisibleButton("##timeline", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool dragging = ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f);
  double held_until_ms = 0;
  const double latest_ms = latest_ms_of(tl, state, held_until_ms);
  const bool ended = state.run.phase == RunPhase::Finished || state.run.phase == RunPhase::Stopped;
  const auto replayed = follow_replay(model, state);
  const TimeAxis a = place_time_axis(tl, v, nodes, all_lanes, ended, latest_ms, hovered, dragging);
  // The ranks of the current set, and ranks that are gone while their spans are in view.
  const int lanes = std::max(std::min(model.world_size(), all_lanes),
                             tl.lanes_in(static_cast<int64_t>(a.begin * 1e6), static_cast<int64_t>(a.end * 1e6)));
  if (lanes == 0) return;

  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_time_ticks(dl, a);
  const float lane_h = std::min(fs * 5.0f, (a.plot_max.y - a.plot_min.y) / lanes);
  const float row_h = lane_h * 0.42f;
  if (nodes.multi_node()) draw_node_groups(dl, nodes, lanes, lane_h, a.origin, a.plot_min, a.plot_max);
  for (int rank = 0; rank < lanes; ++rank)
    DrawRankLabel(dl, ImVec2(a.origin.x + a.node_w + fs * 0.3f, a.plot_min.y + rank * lane_h + (lane_h - fs) / 2), rank,
                  trf("rank {}", rank));
  const view_model::FailureDiagnosis& failure = model.failure();
  std::vector<LaneNote> notes(static_cast<size_t>(lanes));
  const bool hangs = !failure.failed && HungForNs(state) > 0;
  if (failure.failed)
    for (int rank = 0; rank < lanes; ++rank) notes[rank] = lane_note(failure, rank);
  else if (hangs)
    for (int rank = 0; rank < std::min(lanes, model.world_size()); ++rank)
      notes[rank] = quiet_lane_note(tl, rank, hang_now_rel_ns(tl, state));
  v.lane_notes.clear();
  for (const LaneNote& n : notes) v.lane_notes.push_back(n.text);
  dl->PushClipRect(a.plot_min, a.plot_max, true);
  SpanHit hit;
  v.spans_shown = 0;
  for (int rank = 0; rank < lanes; ++rank) {
    const LaneRows rows{a.plot_min.y + rank * lane_h, lane_h, row_h};
    dl->AddLine(ImVec2(a.plot_min.x, rows.top + lane_h - 1), ImVec2(a.plot_max.x, rows.top + lane_h - 1), palette().grid);
    LanePainter lane(dl, tl, a, nodes, rows, rank, notes[rank].left(a.plot_max.x), hovered, hit);
    v.spans_shown += tl.for_each_visible(rank, static_cast<int64_t>(a.begin * 1e6), static_cast<int64_t>(a.end * 1e6),
                                         [&](const TimelineSpan& s) { lane.span(s); });
    lane.finish();
  }
  std::string open_hover;
  v.open_label = draw_open_and_failed(dl, model, state, a, notes, lane_h, row_h, held_until_ms, open_hover);
  draw_let_go_stretches(dl, tl, v, a, hovered, hit);
  v.replay_marked = replayed.has_value();
  if (replayed) mark_replayed(dl, a, *replayed);
  if (ended && latest_ms > a.begin && latest_ms < a.end) draw_run_end(dl, a.x_of(latest_ms), a.plot_min, a.plot_max);
  dl->PopClipRect();
  v.span_read_out = hit.span && !dragging ? span_read_out(tl, hit, nodes) : "";
  if (!v.span_read_out.empty()) WrappedTooltip(v.span_read_out);
  v.open_read_out = hovered && !dragging && !hit.span ? open_hover : "";
  if (!v.open_read_out.empty()) WrappedTooltip(v.open_read_out);
}

}  // namespace ringlab::viz
