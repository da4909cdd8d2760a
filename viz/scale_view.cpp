// Scale: what if the same training ran on more ranks, with a bigger model, over another link?
// The cost models of engine/sim answer while the slider moves: every all-reduce algorithm's time
// and bus bandwidth against the message size, one DDP step's compute against the communication
// it could not hide, and the live run's own all-reduces as measured points on the same axes.
// Over several nodes (a second link, between them) it sets the flat ring against the
// hierarchical all-reduce (engine/sim/node_models.h).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/sim/link_presets.h"
#include "engine/view_model/live_calibration.h"
#include "engine/sim/model_presets.h"
#include "engine/sim/scale_curves.h"
#include "engine/sim/units.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/log_plot.h"
#include "viz/plot.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using sim::Algorithm;
using sim::NodeAlgorithm;

// What was computed for the current controls and for the live run so far. A frame recomputes
// only what changed: the curves when a control moved, the calibration when events arrived.
struct ScaleCache {
  bool valid = false;
  sim::ScaleQuery query;
  sim::ScaleData data;
  std::string error;
  uint64_t live_version = ~uint64_t{0};
  uint64_t live_collectives = ~uint64_t{0};
  sim::LiveCalibration live;
};
ScaleCache g_cache;

enum class Quantity { Time, BusBandwidth };

// Series colours from the rank palette, skipping its sky blue: next to the ring's blue it would
// read as the same line on a projector.
uint32_t algorithm_color(size_t index) {
  constexpr int kRankColor[] = {0, 1, 2, 3, 5};
  return rank_color(kRankColor[index % std::size(kRankColor)]);
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return tr("ring");
    case Algorithm::Tree: return tr("binary tree");
    case Algorithm::Rhd: return tr("halving-doubling");
    case Algorithm::Dbt: return tr("double binary tree");
    case Algorithm::ParameterServer: return tr("parameter server");
  }
  return "";
}

const char* node_algorithm_name(NodeAlgorithm a) {
  return a == NodeAlgorithm::FlatRing ? tr("flat ring") : tr("hierarchical");
}

// One line on the plots: an algorithm's curve, its name and colour.
struct Series {
  const char* name;
  const std::vector<sim::CurvePoint>* points;
  uint32_t color;
};

// Flat ring in the ring's colour; hierarchical in one the single-node view does not give the ring.
std::vector<Series> series_of(const sim::ScaleData& d) {
  std::vector<Series> out;
  for (size_t i = 0; i < d.curves.size(); ++i) out.push_back({algorithm_name(d.curves[i].algorithm), &d.curves[i].points, algorithm_color(i)});
  for (const auto& c : d.node_curves)
    out.push_back({node_algorithm_name(c.algorithm), &c.points, algorithm_color(c.algorithm == NodeAlgorithm::FlatRing ? 0 : 2)});
  return out;
}

// Three significant digits, never in exponent form: "{:.3g}" wrote 1000 as "1e+03".
std::string three_digits(double v) { return v >= 99.95 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

std::string time_text(double s) {
  if (s < 1e-6) return three_digits(s * 1e9) + " ns";
  if (s < 1e-3) return three_digits(s * 1e6) + " µs";
  if (s < 1) return three_digits(s * 1e3) + " ms";
  return three_digits(s) + " s";
}

std::string rate_text(double bytes_per_s) {
  if (bytes_per_s >= 1e12) return three_digits(bytes_per_s / 1e12) + " TB/s";
  if (bytes_per_s >= 1e9) return three_digits(bytes_per_s / 1e9) + " GB/s";
  if (bytes_per_s >= 1e6) return three_digits(bytes_per_s / 1e6) + " MB/s";
  if (bytes_per_s >= 1e3) return three_digits(bytes_per_s / 1e3) + " kB/s";
  return three_digits(bytes_per_s) + " B/s";
}

std::string bytes_text(double bytes) { return sim::format_bytes(bytes); }

std::string ratio_text(double ratio) { return ratio >= 100 ? fmt::format("{:.0f}×", ratio) : fmt::format("{:.2g}×", ratio); }

// The presets' names are command-line words; the menu says what they are.
std::string link_title(const std::string& name) {
  if (name == ScaleViewState::kLiveLink) return tr("this machine as measured (live run)");
  if (name == "this-machine") return tr("this machine: loopback TCP (gloo)");
  if (name == "this-machine-shm") return tr("this machine: shared memory (MPI)");
  if (name == "100gbe") return tr("100 Gb Ethernet");
  if (name == "ib-ndr") return tr("InfiniBand NDR (400 Gb/s)");
  if (name == "nvlink4") return tr("NVLink 4 (H100)");
  return name;
}

std::string model_title(const std::string& name) {
  if (name == "seed") return tr("the seed's MLP");
  if (name == "25M") return tr("25M MLP");
  if (name == "124M") return tr("GPT-2 small (124M)");
  return name;
}

// The backend of the world the live points come from ("" before its RunBegin).
std::string live_backend(const view_model::RunModel& model, const sim::LiveCalibration& live) {
  for (const view_model::Generation& g : model.generations())
    if (g.index == live.generation && g.has_job) return g.job.backend;
  return "";
}

void refresh_live(const view_model::RunModel& model) {
  const uint64_t seen = model.collectives().total_seen();
  if (g_cache.live_version == model.version() && g_cache.live_collectives == seen) return;
  g_cache.live_version = model.version();
  g_cache.live_collectives = seen;
  g_cache.live = sim::calibrate_live(sim::measured_allreduces(model.collectives()));
}

// The link the curves use: a preset, or the one fitted to the live run. A choice that no longer
// exists (the fit went away with a reset) falls back to this machine's preset.
sim::LinkParams preset_link(std::string& name) {
  for (const sim::LinkPreset& p : sim::link_presets())
    if (p.name == name) return p.link;
  name = sim::link_presets().front().name;
  return sim::link_presets().front().link;
}

sim::LinkParams chosen_link(ScaleViewState& v, const sim::LiveCalibration& live) {
  if (v.link == ScaleViewState::kLiveLink) {
    if (live.usable()) return live.calibration.link;
    v.link = "this-machine";
  }
  return preset_link(v.link);
}

// Going from one node to several: this machine's loopback inside each node would set two slow
// links against each other; a node of GPUs (NVLink inside, the network between) is the case
// hierarchical all-reduce is made for, so the node's link becomes NVLink unless one was chosen.
void enter_several_nodes(ScaleViewState& v) {
  if (v.link == "this-machine" || v.link == "this-machine-shm") v.link = "nvlink4";
}

// The link within a node starts as the job's own transport on this machine, loopback TCP for
// gloo and shared memory for MPI (whose ranks on one host never touch TCP), and follows the
// backend as it is changed, until another link is chosen. NCCL has no preset measured here: the
// link stays.
void follow_job_backend(ScaleViewState& v, const std::string& backend) {
  const std::string own = sim::own_link_preset(backend);
  if (own.empty() || v.link != v.link_followed || v.link == own) return;
  v.link = v.link_followed = own;
}

// A job over several nodes opens the what-if at its node count, once per node split.
void follow_job_nodes(ScaleViewState& v, const JobConfig& job) {
  if (job.ranks_per_node == v.job_split_seen) return;
  v.job_split_seen = job.ranks_per_node;
  if (job.node_count() < 2) return;
  if (v.nodes == 1) enter_several_nodes(v);
  v.nodes = std::min(job.node_count(), 128);
}

void refresh_data(const sim::ScaleQuery& query) {
  if (g_cache.valid && g_cache.query == query) return;
  g_cache.valid = true;
  g_cache.query = query;
  g_cache.error.clear();
  try {
    g_cache.data = sim::compute_scale_data(query);
  } catch (const Error& e) {
    g_cache.data = {};
    g_cache.error = e.what();
  }
}

// A caption and the widget after it, on the current line when both fit.
void caption(const char* text, float widget_w, bool first = false) {
  if (!first) SameLineIfFits(ImGui::CalcTextSize(text).x + widget_w + ImGui::GetStyle().ItemSpacing.x);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(text);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(widget_w);
}

int64_t power_of_two_below(int64_t p) { return std::max<int64_t>(1, sim::floor_pow2(std::max<int64_t>(1, p - 1))); }
int64_t power_of_two_above(int64_t p) { return std::min<int64_t>(1024, sim::floor_pow2(p) * 2); }

// On one node the world size; over several, the ranks of each node.
void world_size_control(ScaleViewState& v) {
  const float fs = ImGui::GetFontSize();
  // Not the controls' World size, which trains for real: named apart, the two sliders read as one.
  caption(v.nodes == 1 ? tr("Simulated world") : tr("Ranks per node"), fs * 12, true);
  const std::string shown = trf(v.ranks_per_node == 1 ? "{} rank" : "{} ranks", v.ranks_per_node);
  if (SliderIntBeside("##scale_world", &v.ranks_per_node, 1, 1024, shown,
                      ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp)
          .hovered)
    WrappedTooltip(v.nodes == 1 ? tr("The ranks the cost model simulates, up to 1,024; the run's own World size is in the "
                                     "controls. A logarithmic slider: equal moves multiply the ranks. Ctrl+click to type a number.")
                                  : tr("The ranks on each simulated node, up to 1,024: the world is the nodes times these. "
                                       "A logarithmic slider: equal moves multiply the ranks. Ctrl+click to type a number."));
  ImGui::SameLine(0, fs * 0.3f);
  if (ImGui::Button("◀##scale_less")) v.ranks_per_node = static_cast<int>(power_of_two_below(v.ranks_per_node));
  if (ImGui::IsItemHovered()) Tooltip(tr("the power of two below"));
  ImGui::SameLine(0, fs * 0.3f);
  if (ImGui::Button("▶##scale_more")) v.ranks_per_node = static_cast<int>(power_of_two_above(v.ranks_per_node));
  if (ImGui::IsItemHovered()) Tooltip(tr("the power of two above"));
  v.ranks_per_node = std::clamp(v.ranks_per_node, 1, 1024);
}

void nodes_control(ScaleViewState& v) {
  caption(tr("Nodes"), ImGui::GetFontSize() * 8);
  const int was = v.nodes;
  const std::string shown = trf(v.nodes == 1 ? "{} node" : "{} nodes", v.nodes);
  if (SliderIntBeside("##scale_nodes", &v.nodes, 1, 128, shown, ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp)
          .hovered)
    Tooltip(tr("Hosts, each with the ranks per node. Ranks of one node share a fast link; "
                               "between nodes the data crosses the network."));
  v.nodes = std::clamp(v.nodes, 1, 128);
  if (was == 1 && v.nodes > 1) enter_several_nodes(v);
}

void model_control(ScaleViewState& v) {
  static const std::vector<std::pair<std::string, int64_t>> models = [] {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const std::string& name : sim::model_preset_names()) out.emplace_back(name, sim::model_preset(name).total_bytes());
    return out;
  }();
  caption(tr("Model"), ImGui::GetFontSize() * 13);
  if (!ImGui::BeginCombo("##scale_model", model_title(v.model).c_str())) return;
  for (const auto& [name, bytes] : models) {
    const std::string item = trf("{} · {} of gradients", model_title(name), bytes_text(double(bytes)));
    if (ImGui::Selectable(item.c_str(), v.model == name)) v.model = name;
  }
  ImGui::EndCombo();
}

// The presets as a combo's items, each with its latency and bandwidth and its source on hover.
void preset_items(std::string& chosen) {
  for (const sim::LinkPreset& p : sim::link_presets()) {
    const std::string item = fmt::format("{} · α {} · {}", link_title(p.name), time_text(p.link.alpha_s),
                                         rate_text(1.0 / p.link.beta_s_per_byte));
    if (ImGui::Selectable(item.c_str(), chosen == p.name)) chosen = p.name;
    if (ImGui::IsItemHovered()) Tooltip(p.description + "\n\n" + p.source);
  }
}

// Wide enough for the chosen link's name beside the combo's arrow (at 17 lines of text, "this
// machine: shared memory (MPI)" lost its closing parenthesis under it).
float link_combo_width(const std::string& chosen) {
  return std::max(ImGui::GetFontSize() * 17, ImGui::CalcTextSize(link_title(chosen).c_str()).x +
                                                  ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2);
}

void link_control(ScaleViewState& v, const sim::LiveCalibration& live) {
  caption(v.nodes == 1 ? tr("Link") : tr("Link within a node"), link_combo_width(v.link));
  if (!ImGui::BeginCombo("##scale_link", link_title(v.link).c_str())) return;
  preset_items(v.link);
  ImGui::Separator();
  if (live.usable()) {
    const sim::LinkParams& l = live.calibration.link;
    const std::string item = fmt::format("{} · α {} · {}", link_title(ScaleViewState::kLiveLink), time_text(l.alpha_s),
                                         rate_text(l.beta_s_per_byte > 0 ? 1.0 / l.beta_s_per_byte : 0.0));
    if (ImGui::Selectable(item.c_str(), v.link == ScaleViewState::kLiveLink)) v.link = ScaleViewState::kLiveLink;
  } else {
    ImGui::TextDisabled("%s", tr("this machine as measured: needs a live run whose message sizes show both latency and bandwidth"));
  }
  ImGui::EndCombo();
}

void inter_link_control(ScaleViewState& v) {
  if (v.nodes == 1) return;
  caption(tr("Link between nodes"), link_combo_width(v.inter_link));
  if (!ImGui::BeginCombo("##scale_inter_link", link_title(v.inter_link).c_str())) return;
  preset_items(v.inter_link);
  ImGui::EndCombo();
}

// A combo over `all`, holding the chosen one's index.
template <typename Choice>
void choice_combo(const char* id, int& index, const std::vector<Choice>& all, const char* (*name)(Choice)) {
  index = std::clamp(index, 0, static_cast<int>(all.size()) - 1);
  if (!ImGui::BeginCombo(id, name(all[index]))) return;
  for (size_t i = 0; i < all.size(); ++i)
    if (ImGui::Selectable(name(all[i]), index == static_cast<int>(i))) index = static_cast<int>(i);
  ImGui::EndCombo();
}

// The step bar's all-reduce: any of the single-link algorithms on one node; over several, the
// flat ring or the hierarchical all-reduce.
void algorithm_control(ScaleViewState& v) {
  caption(tr("DDP all-reduce"), ImGui::GetFontSize() * 10);
  if (v.nodes > 1) choice_combo("##scale_node_algorithm", v.node_step_algorithm, sim::all_node_algorithms(), node_algorithm_name);
  else choice_combo("##scale_algorithm", v.step_algorithm, sim::all_algorithms(), algorithm_name);
}

double value_of(const sim::CurvePoint& p, Quantity q) { return q == Quantity::Time ? p.seconds : p.busbw; }

double measured_value(const sim::MeasuredSize& m, int64_t p, Quantity q) {
  return q == Quantity::Time ? m.median_s : sim::busbw(m.bytes, m.median_s, p);
}

// The y range: every positive value on the plot, widened to whole decades.
std::pair<double, double> y_range(const sim::ScaleData& d, const sim::LiveCalibration& live, Quantity q) {
  double lo = INFINITY, hi = 0;
  auto take = [&](double y) {
    if (y > 0 && std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  };
  for (const Series& s : series_of(d))
    for (const auto& p : *s.points) take(value_of(p, q));
  for (const auto& p : d.reference) take(value_of(p, q));
  for (const auto& m : live.sizes) take(measured_value(m, live.world_size, q));
  if (!(hi > 0)) return {1e-6, 1.0};
  // A curve flat on a decade (a latency of exactly 10 µs) lies on the axis unless a decade is added.
  return {std::pow(10.0, std::floor(std::log10(lo / 1.01))), std::pow(10.0, std::ceil(std::log10(hi * 1.01)))};
}

void line_of(const LogLogPlot& plot, const std::vector<sim::CurvePoint>& points, Quantity q, uint32_t color,
             float thickness, bool dashed) {
  std::vector<double> xs, ys;
  for (const auto& p : points) {
    xs.push_back(p.bytes);
    ys.push_back(value_of(p, q));
  }
  plot.line(xs, ys, color, thickness, dashed);
}

// Hover: every algorithm's value at the nearest size on the curves.
void hover_readout(const LogLogPlot& plot, const sim::ScaleData& d, Quantity q, int64_t p) {
  const double x = plot.x_at(ImGui::GetIO().MousePos.x);
  const std::vector<Series> all = series_of(d);
  const auto& points = *all.front().points;
  size_t best = 0;
  for (size_t i = 1; i < points.size(); ++i)
    if (std::fabs(std::log(points[i].bytes / x)) < std::fabs(std::log(points[best].bytes / x))) best = i;
  const float px = plot.to_screen(points[best].bytes, 1).x;
  plot.draw_list()->AddLine(ImVec2(px, plot.inner_min().y), ImVec2(px, plot.inner_max().y), palette().axis, 1.0f);
  std::string tip = trf("{} at {} ranks", bytes_text(points[best].bytes), p);
  for (const Series& s : all) {
    const double y = value_of((*s.points)[best], q);
    tip += fmt::format("\n{}: {}", s.name, q == Quantity::Time ? time_text(y) : rate_text(y));
  }
  Tooltip(tip.c_str());
}

void draw_curves_plot(const char* id, ImVec2 size, Quantity q, const sim::ScaleData& d, const sim::LiveCalibration& live,
                      const ScaleViewState& v) {
  const auto [lo, hi] = y_range(d, live, q);
  const bool time = q == Quantity::Time;
  LogLogPlot plot(id, size, {g_cache.query.min_bytes, g_cache.query.max_bytes, power_of_two_ticks, bytes_text},
                  {lo, hi, nullptr, time ? time_text : rate_text}, tr("message size"),
                  time ? tr("all-reduce time") : tr("bus bandwidth (busbw)"));
  const double bucket = double(d.step.largest_bucket_bytes);
  if (bucket > 0) plot.marker(bucket, palette().accent);
  if (!d.reference.empty()) line_of(plot, d.reference, q, algorithm_color(0), 2.0f, true);
  for (const Series& s : series_of(d)) line_of(plot, *s.points, q, s.color, 3.0f, false);
  for (const auto& m : live.sizes) plot.point(m.bytes, measured_value(m, live.world_size, q), palette().text, 6.0f);
  if (bucket > 0)
    plot.marker_label(bucket, palette().accent,
                      {trf("{}: largest bucket {}", v.model, bytes_text(bucket)),
                       trf("largest bucket {}", bytes_text(bucket)), trf("bucket {}", bytes_text(bucket))});
  if (plot.hovered()) hover_readout(plot, d, q, v.world_size());
}

void legend(const sim::ScaleData& d, const sim::LiveCalibration& live) {
  std::vector<LegendEntry> entries;
  for (const Series& s : series_of(d)) entries.push_back({s.name, s.color, 3.0f, ""});
  if (live.any())
    entries.push_back({trf("live run: {} ranks, median per size", live.world_size), palette().text, 1.0f, "",
                       LegendEntry::Swatch::point});
  if (!d.reference.empty())
    entries.push_back({trf("ring at the live run's {} ranks, same link", live.world_size), algorithm_color(0), 1.0f, "",
                       LegendEntry::Swatch::dashed});
  LegendRow(entries);
}

uint32_t efficiency_color(double efficiency) {
  const Palette& p = palette();
  return efficiency >= 0.8 ? p.ok : efficiency >= 0.5 ? p.accent : p.bad;
}

// One labelled segment of the step bar; the label is drawn only where it fits.
void segment(ImDrawList* dl, ImVec2 a, ImVec2 b, uint32_t color, const std::string& text) {
  if (b.x - a.x < 0.5f) return;
  dl->AddRectFilled(a, b, color);
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
  if (ts.x + 8 > b.x - a.x) return;
  dl->AddText(ImVec2(a.x + 4, (a.y + b.y - ts.y) / 2), 0xFFFFFFFF, text.c_str());
}

// Two rows over one time axis: the rank's compute (and its wait), and the link's all-reduces.
void draw_step_rows(const sim::StepBar& s, float width) {
  const Palette& pal = palette();
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = fs * 6.5f;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float x0 = at.x + label_w, bar_w = std::max(width - label_w - fs * 0.5f, fs * 4);
  const double total = std::max(s.step_s, 1e-12);
  auto x_of = [&](double t) { return x0 + static_cast<float>(t / total) * bar_w; };
  const float row1 = at.y, row1_h = fs * 1.6f, row2 = row1 + row1_h + fs * 0.3f, row2_h = fs * 1.1f;
  dl->AddText(ImVec2(at.x, row1 + (row1_h - fs) / 2), pal.text, tr("compute"));
  dl->AddText(ImVec2(at.x, row2 + (row2_h - fs) / 2), pal.text, tr("all-reduce"));

  const double f = s.compute.forward_s, b = s.compute.backward_s, wait = s.exposed_comm_s;
  segment(dl, ImVec2(x_of(0), row1), ImVec2(x_of(f), row1 + row1_h), pal.forward, tr("forward"));
  segment(dl, ImVec2(x_of(f), row1), ImVec2(x_of(f + b), row1 + row1_h), pal.backward, tr("backward"));
  segment(dl, ImVec2(x_of(f + b), row1), ImVec2(x_of(f + b + wait), row1 + row1_h), pal.bad,
          trf("waiting: {} exposed", time_text(wait)));
  segment(dl, ImVec2(x_of(f + b + wait), row1), ImVec2(x_of(total), row1 + row1_h), pal.optimizer, tr("optimizer"));
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    const auto& bucket = s.buckets[i];
    const uint32_t color = with_alpha(pal.collective, i % 2 == 0 ? 1.0f : 0.6f);
    dl->AddRectFilled(ImVec2(x_of(bucket.start_s), row2), ImVec2(std::max(x_of(bucket.end_s), x_of(bucket.start_s) + 1), row2 + row2_h), color);
  }
  dl->AddRect(ImVec2(x0, row1), ImVec2(x0 + bar_w, row1 + row1_h), pal.axis);
  ImGui::Dummy(ImVec2(width, row2 + row2_h - row1));
}

void draw_step_bar(const sim::StepBar& s, const ScaleViewState& v) {
  const float width = ImGui::GetContentRegionAvail().x;
  const std::string head =
      v.world_size() == 1 ? trf("One DDP step: {}, 1 rank, nothing to all-reduce", model_title(v.model))
      : v.nodes > 1       ? trf("One DDP step: {}, {} nodes × {} ranks, {} all-reduce", model_title(v.model), v.nodes,
                                v.ranks_per_node, node_algorithm_name(sim::all_node_algorithms()[v.node_step_algorithm]))
                          : trf("One DDP step: {}, {} ranks, {} all-reduce", model_title(v.model), v.world_size(),
                                algorithm_name(sim::all_algorithms()[v.step_algorithm]));
  const std::string eff = trf("scaling efficiency {:.1f}%", s.efficiency * 100);
  ImGui::PushFont(fonts().bold);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(head.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  const float head_end = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + ImGui::GetFontSize();
  ImGui::PushFont(fonts().big);
  const float eff_w = ImGui::CalcTextSize(eff.c_str()).x;
  // At the right end of the heading's line, or on a line of its own when they do not both fit.
  if (head_end + eff_w <= ImGui::GetContentRegionMax().x) ImGui::SameLine(ImGui::GetContentRegionMax().x - eff_w);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(efficiency_color(s.efficiency)), "%s", eff.c_str());
  ImGui::PopFont();
  if (ImGui::IsItemHovered())
    Tooltip(tr("Weak scaling: every rank keeps its batch, so the ideal step is one rank's compute. "
                               "Efficiency = compute / step."));
  draw_step_rows(s, width);
  const std::string numbers =
      v.world_size() == 1   ? trf("compute {} · step {}", time_text(s.compute_s), time_text(s.step_s))
      : s.buckets.size() == 1 ? trf("compute {} · all-reduce {} in 1 bucket: {} hidden under backward, {} exposed · step {}",
                                    time_text(s.compute_s), time_text(s.comm_s), time_text(s.hidden_comm_s),
                                    time_text(s.exposed_comm_s), time_text(s.step_s))
                            : trf("compute {} · all-reduce {} in {} buckets: {} hidden under backward, {} exposed · step {}",
                                  time_text(s.compute_s), time_text(s.comm_s), s.buckets.size(), time_text(s.hidden_comm_s),
                                  time_text(s.exposed_comm_s), time_text(s.step_s));
  ImGui::TextWrapped("%s", numbers.c_str());
  // Where the compute comes from: the seed's is PyTorch's whole step on this kind of machine, not
  // ringlab's own (a few tens of µs), which a class comparing it with the live run should know.
  if (ImGui::IsItemHovered()) Tooltip(trf("Compute: {}", sim::model_preset(v.model).compute_source));
}

// Each measured size against the chosen link's ring model: "1.3 KiB: 4.8 ms, model 0.31 ms (15×)".
std::string comparison(const sim::LiveCalibration& live, const sim::LinkParams& link) {
  std::string out;
  const auto rows = sim::compare_with_model(live, link);
  for (size_t i = 0; i < rows.size() && i < 4; ++i)
    out += trf("{}{}: {}, model {} ({})", i ? "; " : "", bytes_text(rows[i].bytes), time_text(rows[i].measured_s),
               time_text(rows[i].model_s), ratio_text(rows[i].ratio));
  return out;
}

// The chosen link's model at each measured size: "10.7 KiB: 9.4 µs".
std::string model_times(const sim::LiveCalibration& live, const sim::LinkParams& link) {
  std::string out;
  const auto rows = sim::compare_with_model(live, link);
  for (size_t i = 0; i < rows.size() && i < 4; ++i)
    out += fmt::format("{}{}: {}", i ? "; " : "", bytes_text(rows[i].bytes), time_text(rows[i].model_s));
  return out;
}

// The link the live points are measured against: their own transport's preset where this machine
// has one, so that choosing NVLink does not call a loopback run "100x slower than its model";
// the chosen link then says what the same sizes would take there.
std::string against_links(const sim::LiveCalibration& live, const ScaleViewState& v, const sim::LinkParams& link,
                          const std::string& own) {
  if (own.empty() || own == v.link)
    return trf("Against the chosen link ({}): {}.", link_title(v.link), comparison(live, link));
  const sim::LinkParams own_link = sim::find_link_preset(own).link;
  return trf("Against its own link ({}): {}. On the chosen link ({}) the model gives {}.", link_title(own),
             comparison(live, own_link), link_title(v.link), model_times(live, link));
}

// What the live run's points say, in words: the fitted link, or why there is none and how far
// the points are from their own link's model.
// `state`: before a run, Start is what brings points; during one stepped through at the gate
// (Start greyed), its held all-reduces are left out.
std::string live_note(const sim::LiveCalibration& live, const ScaleViewState& v, const sim::LinkParams& link,
                      const std::string& own, const AppState& state) {
  if (!live.any() && state.run.live() && state.step.mode == RingMode::Gated)
    return tr("No live all-reduce measured yet: those stepped through at the gate are left out (their time is the "
              "class's pace, not the network's); Follow live lets the next ones be measured.");
  if (!live.any() && state.run.live())
    return tr("No live all-reduce measured yet: the run's own all-reduces appear on the plots as black points as they end.");
  if (!live.any())
    return tr("No live all-reduce yet: press Start, and the run's own all-reduces appear on the plots as black points.");
  const std::string who = trf("Live run, {} ranks ({}): ", live.world_size,
                              live.algorithm == "native" ? tr("the backend's own all-reduce, modelled as a ring")
                                                         : tr("ringlab's ring"));
  if (live.usable()) {
    const sim::Calibration& c = live.calibration;
    return who + trf("{} sizes fitted, α = {}, β = {:.3g} ns/B ({}, the reduction folded in), rms error {:.0f}%. "
                     "Choose \"this machine as measured\" under Link to scale it up.",
                     live.sizes.size(), time_text(c.link.alpha_s), c.link.beta_s_per_byte * 1e9,
                     rate_text(1.0 / c.link.beta_s_per_byte), c.fit.rms_relative_error * 100);
  }
  // Where the ring's bandwidth term catches up with its latency term: 2(p-1)/p n beta = 2(p-1) alpha.
  const double crossover = link.beta_s_per_byte > 0 ? live.world_size * link.alpha_s / link.beta_s_per_byte : 0;
  const std::string why =
      live.sizes.size() == 1
          ? trf("one message size ({} all-reduces). One size cannot separate latency (α) from bandwidth (β), so "
                "nothing is fitted. ", live.sizes[0].samples)
          : trf("{} sizes, but the larger were not slower: the time is all latency (α) or noise, so β cannot be "
                "fitted. On the chosen link bandwidth matters from about {} up. ", live.sizes.size(), bytes_text(crossover));
  return who + why + against_links(live, v, link, own) +
         (live.sizes.size() == 1 ? std::string(" ") + tr("Bucket cap KB = 4 in the controls gives several sizes.") : "");
}

// Over several nodes, what the two curves are and what each sends over a link between nodes,
// for the model's largest bucket.
std::string node_note(const ScaleViewState& v, const sim::ScaleData& d, const sim::ScaleQuery& query) {
  const sim::Cluster cluster = sim::cluster_of(query);
  const double bucket = double(d.step.largest_bucket_bytes);
  return trf("{} nodes × {} ranks. Flat ring: one ring over every rank; each step waits for the slow links between "
             "nodes, and each of them carries 2(p-1)/p of the buffer ({} of a {} bucket). Hierarchical: reduce-scatter "
             "within each node, all-reduce across the nodes among ranks with the same local rank, all-gather within "
             "each node; a link between nodes carries 2(N-1)/N × 1/P of the buffer ({}).",
             v.nodes, v.ranks_per_node,
             bytes_text(sim::inter_node_bytes_per_link(NodeAlgorithm::FlatRing, cluster, bucket)), bytes_text(bucket),
             bytes_text(sim::inter_node_bytes_per_link(NodeAlgorithm::Hierarchical, cluster, bucket)));
}

}  // namespace

void DrawScaleView(const view_model::RunModel& model, AppState& state) {
  ScaleViewState& v = state.scale;
  refresh_live(model);
  const sim::LiveCalibration& live = g_cache.live;
  follow_job_backend(v, state.job.backend);
  follow_job_nodes(v, state.job);
  world_size_control(v);
  nodes_control(v);
  model_control(v);
  link_control(v, live);
  inter_link_control(v);
  algorithm_control(v);

  sim::ScaleQuery query;
  query.world_size = v.world_size();
  query.model = v.model;
  query.link = chosen_link(v, live);
  query.step_algorithm = sim::all_algorithms()[v.step_algorithm];
  query.nodes = v.nodes;
  query.inter_link = preset_link(v.inter_link);
  query.node_step_algorithm = sim::all_node_algorithms()[v.node_step_algorithm];
  query.reference_world_size = live.any() && live.world_size != v.world_size() ? live.world_size : 0;
  refresh_data(query);
  if (!g_cache.error.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().bad), "%s", g_cache.error.c_str());
    return;
  }
  const sim::ScaleData& d = g_cache.data;
  legend(d, live);

  const float fs = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const std::string note = (v.nodes > 1 ? node_note(v, d, query) + "\n" : std::string()) + live_note(live, v, query.link, sim::own_link_preset(live_backend(model, live)), state);
  state.said.scale_note = note;
  const float note_h = ImGui::CalcTextSize(note.c_str(), nullptr, false, avail.x).y;
  const float bottom_h = fs * 7.4f + note_h;
  const float plot_h = std::max(avail.y - bottom_h, fs * 8);
  if (v.world_size() == 1) {
    ImGui::Dummy(ImVec2(avail.x, fs * 0.5f));
    DimWrapped(tr("One rank has nothing to exchange: every all-reduce takes 0 s. Move the slider to 2 ranks or more."));
    ImGui::Dummy(ImVec2(avail.x, std::max(0.0f, plot_h - fs * 3)));
  } else {
    const float half = std::floor((avail.x - ImGui::GetStyle().ItemSpacing.x) / 2);
    draw_curves_plot("##scale_time", ImVec2(half, plot_h), Quantity::Time, d, live, v);
    ImGui::SameLine();
    draw_curves_plot("##scale_busbw", ImVec2(half, plot_h), Quantity::BusBandwidth, d, live, v);
  }
  draw_step_bar(d.step, v);
  ImGui::TextWrapped("%s", note.c_str());
}

}  // namespace ringlab::viz
