// The ring: ranks on a circle, each rank's buffer as N chunks, packets moving along the links.
// When a run fails, the rank that broke it is drawn in the warning colour with what happened.
// A run over several nodes gets a labelled band behind each node's ranks, and the ring links
// that join two nodes (they cross the network) are dashed in their own colour.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "engine/view_model/node_layout.h"
#include "engine/view_model/ring_state.h"
#include "engine/view_model/step_through.h"
#include "viz/fault_explanations.h"
#include "viz/fonts.h"
#include "viz/frame_change.h"
#include "viz/i18n.h"
#include "viz/plot.h"
#include "viz/ring_geometry.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

using view_model::ChunkState;
using view_model::NodeLayout;
using view_model::RingFrame;

constexpr float kPi = std::numbers::pi_v<float>;
constexpr int kMaxValuesShown = 3;  // per chunk; more than that shows colours only

std::string human_bytes(double bytes) {
  if (bytes >= 1 << 20) return fmt::format("{:.1f} MiB", bytes / (1 << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  return fmt::format("{:.0f} B", bytes);
}

std::string short_value(float v) {
  if (v == std::floor(v) && std::fabs(v) < 1e6) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

bool same_room(const RingRoom& a, const RingRoom& b) {
  return a.min.x == b.min.x && a.min.y == b.min.y && a.max.x == b.max.x && a.max.y == b.max.y &&
         a.font_size == b.font_size && a.label_w == b.label_w && a.short_label_w == b.short_label_w &&
         a.values_per_cell == b.values_per_cell && a.compact == b.compact && a.chips == b.chips;
}

// Fitting the cards takes a few hundred microseconds, and a frame asks for the rooms the frame
// before it did (up to three: the room under the words, and a smaller one where the ring did
// not fit it): the last few are kept. Views run on the drawing thread alone.
RingGeometry geometry_for(const RingRoom& room, int n) {
  struct Kept {
    RingRoom room;
    int n = 0;
    RingGeometry g;
  };
  static std::array<Kept, 4> kept;
  static size_t next = 0;
  for (const Kept& k : kept)
    if (k.n == n && same_room(k.room, room)) return k.g;
  kept[next] = {room, n, ring_geometry(room, n)};
  const RingGeometry& made = kept[next].g;
  next = (next + 1) % kept.size();
  return made;
}

// A packet's half-size on screen.
ImVec2 packet_half(const RingGeometry& g) {
  const ImVec2 size = packet_size(g, ImGui::GetFontSize());
  return ImVec2(size.x / 2, size.y / 2);
}

// The smallest angle past a card's centre at which a packet of `packet` size no longer
// overlaps the card (the worst case over the ring's positions), found by bisection.
float exit_angle(const RingGeometry& g, int n, ImVec2 packet) {
  float worst = 0;
  for (int r = 0; r < n; ++r) {
    const float a = ring_angle(r, n);
    const ImVec2 c = ring_point(g, a);
    auto clear = [&](float d) {
      const ImVec2 p = ring_point(g, a + d);
      return std::fabs(p.x - c.x) > (g.card.x + packet.x) / 2 || std::fabs(p.y - c.y) > (g.card.y + packet.y) / 2;
    };
    float lo = 0, hi = kPi / std::max(n, 1);
    if (!clear(hi)) {
      worst = std::max(worst, hi * 0.8f);
      continue;
    }
    for (int i = 0; i < 24; ++i) {
      const float mid = (lo + hi) / 2;
      (clear(mid) ? hi : lo) = mid;
    }
    worst = std::max(worst, hi);
  }
  return worst;
}

// A chunk's contributors as horizontal bands in rank colours: the more ranks summed in, the
// more bands; a fully reduced chunk holds every colour and gets a gold frame.
void draw_bands(ImDrawList* dl, ImVec2 a, ImVec2 b, uint64_t contributors, int n, float alpha) {
  int count = 0;
  for (int r = 0; r < n && r < 64; ++r) count += (contributors >> r) & 1;
  if (count == 0) {
    dl->AddRectFilled(a, b, with_alpha(palette().grid, alpha));
    return;
  }
  const float band = (b.y - a.y) / count;
  float y = a.y;
  for (int r = 0; r < n && r < 64; ++r) {
    if (!((contributors >> r) & 1)) continue;
    dl->AddRectFilled(ImVec2(a.x, y), ImVec2(b.x, y + band + 0.5f), rank_color(r, alpha));
    y += band;
  }
}

// A fully reduced chunk's gold frame, edged in the text's colour: gold alone was lost on rank 1's
// amber cells (the two colours are nearly the same), as was the legend's swatch beside them.
// Around the cell where it has the room; `inside` it in a small ring's cells, whose marks,
// drawn around, reached over their card's border and into each other.
void draw_reduced_mark(ImDrawList* dl, ImVec2 a, ImVec2 b, float rounding = 0, bool inside = false) {
  const Palette& p = palette();
  const float gold = inside ? 1.0f : -1.0f, edge = inside ? 0.0f : -3.0f;
  dl->AddRect(ImVec2(a.x + gold, a.y + gold), ImVec2(b.x - gold, b.y - gold), p.reduced, rounding, 0, inside ? 2.0f : 3.0f);
  dl->AddRect(ImVec2(a.x + edge, a.y + edge), ImVec2(b.x - edge, b.y - edge), p.text, rounding, 0, 1.0f);
}

void draw_chunk(ImDrawList* dl, const RingGeometry& g, ImVec2 a, const ChunkState& chunk, int n, bool receiving,
                bool empty) {
  const Palette& p = palette();
  const ImVec2 b(a.x + g.cell_w - 2, a.y + g.cell_h);
  if (empty) {  // fewer elements than ranks: this chunk holds nothing and is never sent
    dl->AddRect(a, b, p.grid, 0, 0, 1.0f);
    dl->AddLine(a, b, p.grid, 1.0f);
    return;
  }
  draw_bands(dl, a, b, chunk.contributors, n, 0.9f);
  if (chunk.fully_reduced) {
    draw_reduced_mark(dl, a, b, 0, g.cell_h < 14);
  } else if (chunk.updated) {
    dl->AddRect(a, b, p.text, 0, 0, 2.0f);
  }
  if (receiving) dashed_line(dl, ImVec2(a.x, b.y + 3), ImVec2(b.x, b.y + 3), p.text, 2.0f, 3.0f);
  if (g.values_per_cell == 0 || !chunk.has_values) return;
  ImFont* mono = fonts().mono;
  const float fs = ImGui::GetFontSize() * 1.15f;
  float y = a.y + (g.cell_h - fs * 1.12f * std::min<size_t>(chunk.values.size(), kMaxValuesShown)) / 2;
  for (size_t i = 0; i < chunk.values.size() && i < kMaxValuesShown; ++i) {
    const std::string s = short_value(chunk.values[i]);
    const ImVec2 ts = mono->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str());
    const ImVec2 at(std::floor(a.x + (g.cell_w - 2 - ts.x) / 2), std::floor(y));
    dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y), with_alpha(p.canvas, 0.8f), 3);
    dl->AddText(mono, fs, at, p.text, s.c_str());
    y += fs * 1.12f;
  }
}

// How far a card's label sits from its left edge, in pixels.
constexpr float kCardLabelInset = 8;

// A card's label: "rank 7", or "7" on cards too narrow for the word (the colour says the rest).
std::string card_label(const RingGeometry& g, int rank) {
  return g.short_labels ? fmt::format("{}", rank) : trf("rank {}", rank);
}

// The widest label a card of an `n`-rank ring carries (DrawRankLabel's: its colour, then the words).
float rank_label_width(int n, bool short_labels) {
  const float fs = ImGui::GetFontSize();
  RingGeometry g;
  g.short_labels = short_labels;
  const std::string widest = card_label(g, std::max(n - 1, 0));
  return fs * 1.0f + fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, widest.c_str()).x + 8;
}

void draw_card(ImDrawList* dl, const RingGeometry& g, int rank, const RingFrame* frame, int n,
               const std::vector<char>& receiving) {
  const Palette& p = palette();
  const ImVec2 c = ring_point(g, ring_angle(rank, n));
  const ImVec2 a(c.x - g.card.x / 2, c.y - g.card.y / 2), b(c.x + g.card.x / 2, c.y + g.card.y / 2);
  dl->AddRectFilled(a, b, p.card, 8);
  dl->AddRect(a, b, rank_color(rank), 8, 0, 3.0f);
  // The label sits in the header, clear of the chunk cells under it.
  DrawRankLabel(dl, ImVec2(a.x + kCardLabelInset, a.y + std::max(1.0f, (g.header_h - ImGui::GetFontSize()) / 2)), rank,
                card_label(g, rank));
  const float fs = ImGui::GetFontSize();
  float x = a.x + fs * 0.3f;
  const float y = a.y + g.header_h;
  for (int chunk = 0; chunk < n && g.cells; ++chunk) {
    ChunkState own;  // before any all-reduce: each rank holds only its own gradient
    own.contributors = uint64_t{1} << (rank % 64);
    const ChunkState& state = frame ? frame->chunks[rank][chunk] : own;
    const bool empty = frame && frame->chunk_offsets[chunk + 1] == frame->chunk_offsets[chunk];
    draw_chunk(dl, g, ImVec2(x, y), state, n, receiving[rank * n + chunk], empty);
    x += g.cell_w;
  }
}

// The angle halfway along the longest stretch of the link from angle a0 to a1 that no card
// covers (a margin of `margin` pixels kept from the cards): on a squarer track the link's
// middle angle can fall under a card, which would hide its arrow.
float visible_middle(const RingGeometry& g, int n, float a0, float a1, float margin) {
  return visible_stretch(g, n, a0, a1, ImVec2(margin, margin)).middle;
}

using Rects = std::vector<ScreenRect>;

// Where a link's label may go, in order of preference: the centres of its text, with 'o' for
// outside the ring and 'i' for inside. Out along the normal at the link's point at angle `mid`
// (or a little along the link, then further), then the same inwards, then on the way to the
// ring's centre. Closest to the link at 0.8 of the packets' clearance: the labels of a ring's
// bottom links found no room between the cards and the note under the ring.
std::vector<std::pair<ImVec2, char>> label_spots(const RingGeometry& g, float mid, ImVec2 ts) {
  const float fs = ImGui::GetFontSize();
  const ImVec2 packet(packet_half(g).x * 2, packet_half(g).y * 2);
  std::vector<std::pair<ImVec2, char>> spots;
  for (const float side : {1.0f, -1.0f})
    for (const float along : {0.0f, 0.12f, -0.12f, 0.24f, -0.24f})
      for (const float farther : {1.0f, 1.5f, 2.0f, 0.8f}) {
        const float angle = mid + along;
        const ImVec2 m = ring_point(g, angle), dir = ring_direction(g, angle), out(dir.y, -dir.x);
        // Clear of the packets that pass along the link (their size as in draw_packets).
        const float clear =
            farther * ((std::fabs(out.x) * (packet.x + ts.x) + std::fabs(out.y) * (packet.y + ts.y)) / 2 + fs * 0.4f);
        spots.emplace_back(ImVec2(m.x + side * out.x * clear, m.y + side * out.y * clear), side > 0 ? 'o' : 'i');
      }
  const ImVec2 m = ring_point(g, mid);
  for (const float t : {0.35f, 0.5f})
    spots.emplace_back(ImVec2(m.x + (g.center.x - m.x) * t, m.y + (g.center.y - m.y) * t), 'i');
  return spots;
}

// The link (an index into `links`, screen polylines) nearest to `p`.
size_t nearest_link(const std::vector<std::vector<ImVec2>>& links, ImVec2 p) {
  const auto distance = [&](ImVec2 a, ImVec2 b) {  // from p to the segment a-b
    const ImVec2 d(b.x - a.x, b.y - a.y);
    const float len2 = d.x * d.x + d.y * d.y;
    const float t = len2 > 0 ? std::clamp(((p.x - a.x) * d.x + (p.y - a.y) * d.y) / len2, 0.0f, 1.0f) : 0.0f;
    return std::hypot(a.x + d.x * t - p.x, a.y + d.y * t - p.y);
  };
  size_t nearest = 0;
  float best = std::numeric_limits<float>::max();
  for (size_t l = 0; l < links.size(); ++l)
    for (size_t i = 1; i < links[l].size(); ++i)
      if (const float d = distance(links[l][i - 1], links[l][i]); d < best) best = d, nearest = l;
  return nearest;
}

// Link `r`'s byte label at the first of label_spots() that lies in one of `areas`, clear of the
// cards, the links and the labels written before (`taken`), and nearer its own link than any
// other (a label by two links reads as either's): outside where the ring leaves room, else
// further out, inside or along the link. A class checks every link's bytes, and the bottom ones
// of a ring flattened by the words above it were left out. Returns its side ('o', 'i'), or '-'
// where it fits nowhere.
char place_link_label(ImDrawList* dl, const RingGeometry& g, int n, int r, float mid, const std::string& text,
                      const Rects& areas, const std::vector<std::vector<ImVec2>>& links, const NodeLayout& nodes,
                      Rects& taken) {
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
  for (const auto& [centre, side] : label_spots(g, mid, ts)) {
    const ImVec2 at(centre.x - ts.x / 2, centre.y - ts.y / 2), end(at.x + ts.x, at.y + ts.y);
    const ScreenRect box{at.x, at.y, end.x, end.y};
    if (std::none_of(areas.begin(), areas.end(), [&](const ScreenRect& a) { return a.contains(box); }) ||
        std::any_of(taken.begin(), taken.end(), [&](const ScreenRect& t) { return t.overlaps(box); }) ||
        under_a_card(g, n, at, end) || segments_through(links, at, end) > 0 ||
        nearest_link(links, centre) != static_cast<size_t>(r))
      continue;
    // Over several nodes, on a plate of the canvas's colour: a label half on a band's tint and half
    // off it reads as cut at the band's rim.
    if (nodes.multi_node()) {
      const float pad = ImGui::GetFontSize() * 0.2f;
      dl->AddRectFilled(ImVec2(at.x - pad, at.y), ImVec2(end.x + pad, end.y), palette().canvas, pad);
    }
    dl->AddText(at, palette().text_dim, text.c_str());
    taken.push_back(box);
    return side;
  }
  return '-';
}

// The ring's links: rank r sends to rank r + 1, clockwise; labelled with the bytes each link
// has carried in the steps on screen (the legend says so).
// Link labels are written only where all of their text is inside one of `areas` (the ring's own
// part of the pane, and the room beside the legend under it) and clear of the cards: otherwise
// they would run into the words around the ring.
// A link between two nodes is dashed in the network's colour: its bytes leave the machine.
// Returns where each link's label went (RingViewState::Cards::link_labels); `taken` gets their boxes.
std::string draw_links(ImDrawList* dl, const RingGeometry& g, int n, const RingFrame* frame, const NodeLayout& nodes,
                       bool labels, const Rects& areas, Rects& taken) {
  std::string placed(static_cast<size_t>(std::max(n, 0)), '-');
  if (n < 2) return placed;
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  std::vector<std::vector<ImVec2>> arcs(static_cast<size_t>(n));
  std::vector<float> mids(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const float a0 = ring_angle(r, n), a1 = ring_angle(r + 1, n);
    std::vector<ImVec2>& arc = arcs[static_cast<size_t>(r)];
    for (int i = 0; i <= 24; ++i) arc.push_back(ring_point(g, a0 + (a1 - a0) * i / 24.0f));
    const bool network = nodes.ring_link_crosses(r);
    const uint32_t color = network ? p.network : p.edge;
    if (network) dashed_polyline(dl, arc, color, 3.0f, fs * 0.45f);
    else dl->AddPolyline(arc.data(), static_cast<int>(arc.size()), color, 0, 3.0f);
    // An arrow head halfway along the part of the link the cards leave in view, pointing along the ring.
    const float s = fs * 0.55f;
    const float mid = mids[static_cast<size_t>(r)] = visible_middle(g, n, a0, a1, fs * 0.15f);
    const ImVec2 m = ring_point(g, mid), dir = ring_direction(g, mid);
    const ImVec2 out(dir.y, -dir.x);  // outward normal of a clockwise ring
    dl->AddTriangleFilled(ImVec2(m.x + dir.x * s, m.y + dir.y * s),
                          ImVec2(m.x - dir.x * s + out.x * s * 0.8f, m.y - dir.y * s + out.y * s * 0.8f),
                          ImVec2(m.x - dir.x * s - out.x * s * 0.8f, m.y - dir.y * s - out.y * s * 0.8f), color);
  }
  if (!frame || !labels || n > 8) return placed;
  // Every link drawn first: a label pushed away from its own link must not sit on another one.
  for (const auto& link : frame->links_so_far)
    if (link.src >= 0 && link.src < n && link.dst == (link.src + 1) % n)
      placed[static_cast<size_t>(link.src)] = place_link_label(dl, g, n, link.src, mids[static_cast<size_t>(link.src)],
                                                               human_bytes(static_cast<double>(link.bytes)), areas, arcs, nodes, taken);
  return placed;
}

// A node's band: the part of the ring's track that holds its ranks' cards, between an ellipse
// inside the cards and one outside them, with a little gap to the next node's band. Drawn
// first, in opaque tints (one quad per slice: translucent slices would show their seams).
struct NodeBand {
  float a0 = 0, a1 = 0;  // angles, clockwise
  ImVec2 inner, outer;   // the two ellipses' radii
};

NodeBand node_band(const RingGeometry& g, const view_model::NodeGroup& node, int n) {
  const float fs = ImGui::GetFontSize();
  const float step = 2 * kPi / n, gap = std::min(step * 0.08f, fs * 0.3f / std::max(g.rx, 1.0f));
  NodeBand band;
  band.a0 = ring_angle(node.first_rank, n) - step / 2 + gap;
  band.a1 = ring_angle(node.last_rank(), n) + step / 2 - gap;
  const float dx = g.card.x / 2 + fs * 0.5f, dy = g.card.y / 2 + fs * 0.5f;
  band.inner = ImVec2(std::max(g.rx - dx, 0.0f), std::max(g.ry - dy, 0.0f));
  band.outer = ImVec2(g.rx + dx, g.ry + dy);
  return band;
}

void draw_node_bands(ImDrawList* dl, const RingGeometry& g, const NodeLayout& nodes, int n) {
  const Palette& p = palette();
  for (const auto& node : nodes.nodes) {
    const NodeBand band = node_band(g, node, n);
    const uint32_t fill = mix(p.canvas, node.node % 2 == 0 ? p.edge : p.network, node.node % 2 == 0 ? 0.26f : 0.16f);
    const int slices = 8 * std::max(node.ranks, 1);
    for (int i = 0; i < slices; ++i) {
      const float t0 = band.a0 + (band.a1 - band.a0) * i / slices, t1 = band.a0 + (band.a1 - band.a0) * (i + 1) / slices;
      dl->AddQuadFilled(track_point(g, band.outer, t0), track_point(g, band.outer, t1), track_point(g, band.inner, t1),
                        track_point(g, band.inner, t0), fill);
    }
  }
}

// Where a node's name may go, in order of preference: just inside its band's inner edge, as close
// to the node's cards as the label allows, then further in towards the centre; each of those also
// a little further towards the band's side of the ring (up or down); last, just outside the band.
// On a flat ring the inner edge is nearly a line: every band's spot falls by the centre, and two
// names there sat side by side, touching ("node 1node 0"), or one was left out; the corners
// outside such a ring, between its cards, have room.
std::vector<ImVec2> node_label_spots(const RingGeometry& g, const NodeBand& band, ImVec2 ts) {
  const float fs = ImGui::GetFontSize(), pad = fs * 0.3f;
  const float mid = (band.a0 + band.a1) / 2;
  const ImVec2 edge = track_point(g, ImVec2(std::max(band.inner.x - ts.x / 2 - pad, 0.0f), std::max(band.inner.y - ts.y / 2 - pad, 0.0f)), mid);
  const ImVec2 out = track_point(g, ImVec2(band.outer.x + ts.x / 2 + pad, band.outer.y + ts.y / 2 + pad), mid);
  const float side = edge.y < g.center.y ? -1.0f : 1.0f;
  std::vector<ImVec2> spots;
  for (const float nudge : {0.0f, 0.6f})
    for (const float in : {0.0f, 0.2f, 0.4f, 0.6f})
      spots.emplace_back(edge.x + (g.center.x - edge.x) * in, edge.y + (g.center.y - edge.y) * in + side * nudge * ts.y);
  for (const float back : {0.0f, 0.5f, 1.0f})  // towards the band, as far as the cards allow
    spots.emplace_back(out.x + (g.center.x - out.x) * back * (ts.y + pad) / std::max(std::abs(out.y - g.center.y), 1.0f),
                       out.y + (g.center.y - out.y) * back * (ts.y + pad) / std::max(std::abs(out.y - g.center.y), 1.0f));
  return spots;
}

// "node 0" inside the ring, by the middle of its band (node_label_spots), where it clears the
// cards, the links' byte labels (`taken`), the other node labels (by a space's width: two names
// that touch read as one) and the ring's part of the pane. Every node named, or none: a single
// "node 0" by the centre of a flat ring could be read as naming either band (the bands' tints are
// the Timeline's, where the nodes are named). Returns how many were written.
int draw_node_labels(ImDrawList* dl, const RingGeometry& g, const NodeLayout& nodes, int n, ImVec2 area_min, ImVec2 area_max,
                      const Rects& taken) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  Rects names;
  for (const auto& node : nodes.nodes) {
    const std::string text = trf("node {}", node.node);
    const ImVec2 ts = fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, text.c_str());
    for (const ImVec2 c : node_label_spots(g, node_band(g, node, n), ts)) {
      const ScreenRect box{c.x - ts.x / 2, c.y - ts.y / 2, c.x + ts.x / 2, c.y + ts.y / 2};
      const ScreenRect spaced{box.x0 - fs * 0.5f, box.y0 - fs * 0.1f, box.x1 + fs * 0.5f, box.y1 + fs * 0.1f};
      const bool inside = ScreenRect{area_min.x, area_min.y, area_max.x, area_max.y}.contains(box);
      const bool clear = std::none_of(taken.begin(), taken.end(), [&](const ScreenRect& o) { return o.overlaps(box); }) &&
                         std::none_of(names.begin(), names.end(), [&](const ScreenRect& o) { return o.overlaps(spaced); });
      if (!inside || !clear || under_a_card(g, n, ImVec2(box.x0, box.y0), ImVec2(box.x1, box.y1))) continue;
      names.push_back(box);
      break;
    }
    if (names.size() <= static_cast<size_t>(&node - nodes.nodes.data())) return 0;  // this one fits nowhere
  }
  for (size_t i = 0; i < names.size(); ++i) {
    // In its band's colour: grey for the even nodes, the network's tint for the odd ones.
    const int node = nodes.nodes[i].node;
    dl->AddText(fonts().bold, fs, ImVec2(names[i].x0, names[i].y0), node % 2 == 1 ? p.network : p.text_dim,
                trf("node {}", node).c_str());
  }
  return static_cast<int>(names.size());
}

// Whether the box [a, b] meets the words on any card: its name in the header, and its cells'
// values where the cards show them.
bool over_card_words(const RingGeometry& g, int n, ImVec2 a, ImVec2 b) {
  const float label_w = rank_label_width(n, g.short_labels);
  for (int r = 0; r < n; ++r) {
    const ImVec2 c = ring_point(g, ring_angle(r, n));
    const ImVec2 lo(c.x - g.card.x / 2, c.y - g.card.y / 2);
    const ScreenRect name{lo.x + kCardLabelInset, lo.y, lo.x + kCardLabelInset + label_w, lo.y + g.header_h};
    const ScreenRect cells{lo.x, lo.y + g.header_h, lo.x + g.card.x, lo.y + g.card.y};
    const ScreenRect box{a.x, a.y, b.x, b.y};
    if (box.overlaps(name) || (g.cells && g.values_per_cell > 0 && box.overlaps(cells))) return true;
  }
  return false;
}

// Where a packet from rank `src` to rank `dst` travels, as angles on the track: along the
// longest stretch of their link where the whole packet is clear of the cards, else where its
// centre is in a gap between cards and it covers no card's words (drawn over the cards:
// `over_cards`), else from card edge to card edge. A flattened ring in a small pane has cards that nearly meet: a packet sent from
// card edge to card edge there would move under the cards, peeking out as a bare corner.
struct PacketTrack {
  float from = 0, to = 0;
  bool over_cards = false;
};

// `half`: the packet's half-size. On a ring whose cards cover the whole track (a small pane
// squeezed flat, the Timeline's) there is no gap to travel in: the packet goes under the cards,
// unnamed, as `ring_cards.packets_unnamed` counts.
PacketTrack packet_track(const RingGeometry& g, int n, int src, int dst, ImVec2 half) {
  const float from = ring_angle(src, n);
  float to = ring_angle(dst, n);
  if (to < from) to += 2 * kPi;
  const TrackStretch whole = visible_stretch(g, n, from, to, half);
  if (whole.length > 0) return {whole.start, whole.end, false};
  // Drawn over the cards, a packet must leave their words readable: its centre in the gap
  // between two cards, the box clear of every card's name (and of its cells where they show
  // numbers).
  const TrackStretch over = free_stretch(g, from, to, [&](ImVec2 p) {
    return under_a_card(g, n, p, p) || over_card_words(g, n, ImVec2(p.x - half.x, p.y - half.y), ImVec2(p.x + half.x, p.y + half.y));
  });
  if (over.length > 0) return {over.start, over.end, true};
  return {from + g.exit_angle, to - g.exit_angle, false};
}

// Each of the frame's packets' track, worked out once a frame for both of draw_packets' passes.
std::vector<PacketTrack> packet_tracks(const RingGeometry& g, const RingFrame& frame) {
  std::vector<PacketTrack> tracks;
  tracks.reserve(frame.packets.size());
  for (const auto& packet : frame.packets)
    tracks.push_back(packet_track(g, frame.world_size, packet.src, packet.dst, packet_half(g)));
  return tracks;
}

// The packets that clear the cards are drawn before them (`over_cards` false): one that passes
// a card's corner goes under it. Those that cannot clear them are drawn after the cards, over
// them (`over_cards` true), else they would hardly show at all. `tracks`: packet_tracks().
void draw_packets(ImDrawList* dl, const RingGeometry& g, const RingFrame& frame, const std::vector<PacketTrack>& tracks,
                  float progress, bool over_cards, RingViewState& counts) {
  const Palette& p = palette();
  const int n = frame.world_size;
  // Ease in and out, so the class sees each packet leave and arrive.
  const float t = progress * progress * (3 - 2 * progress);
  const ImVec2 half = packet_half(g);
  for (size_t i = 0; i < frame.packets.size(); ++i) {
    const view_model::PacketInFlight& packet = frame.packets[i];
    const PacketTrack& track = tracks[i];
    if (track.over_cards != over_cards) continue;
    const ImVec2 c = ring_point(g, track.from + (track.to - track.from) * t);
    const ImVec2 a(c.x - half.x, c.y - half.y), b(c.x + half.x, c.y + half.y);
    ++counts.packets_drawn;
    if (over_cards) ++counts.packets_over_cards;
    dl->AddRectFilled(ImVec2(a.x + 3, a.y + 4), ImVec2(b.x + 3, b.y + 4), with_alpha(0xFF000000, 0.25f), 4);
    draw_bands(dl, a, b, packet.contributors, n, 1.0f);
    const uint32_t frame_color = packet.phase == RingPhase::ReduceScatter ? p.reduce_scatter : p.all_gather;
    dl->AddRect(a, b, frame_color, 0, 0, 3.0f);
    const std::string text = fmt::format("c{}", packet.chunk);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    if (!over_cards && under_a_card(g, n, ImVec2(c.x - ts.x / 2 - 2, c.y - ts.y / 2), ImVec2(c.x + ts.x / 2 + 2, c.y + ts.y / 2))) {
      ++counts.packets_unnamed;
      continue;  // passing under a card (drawn after it): its name would be half hidden
    }
    dl->AddRectFilled(ImVec2(c.x - ts.x / 2 - 2, c.y - ts.y / 2), ImVec2(c.x + ts.x / 2 + 2, c.y + ts.y / 2),
                      with_alpha(p.canvas, 0.85f), 3);
    dl->AddText(ImVec2(c.x - ts.x / 2, c.y - ts.y / 2), p.text, text.c_str());
  }
}

struct CardNote {
  ImVec2 a, b;   // the pill
  float wrap;    // the text's wrap width
};

// Where a note goes by its card: under it, or over it for the lower half of the ring (the side
// facing the ring's middle has the room), or the other side when that one is taken; centred on
// the card, or narrower and flush with its outer edge, clear of the notes of the cards nearer
// the ring's top and bottom.
struct NotePlace {
  bool other_side = false;
  bool hug_outer_edge = false;
};

// A note in a pill by a rank's card, kept inside the pane.
CardNote place_card_note(const RingGeometry& g, int rank, int n, ImVec2 pane_min, ImVec2 pane_max, const std::string& text,
                         ImFont* font, NotePlace place = {}) {
  const float fs = ImGui::GetFontSize();
  const ImVec2 c = ring_point(g, ring_angle(rank, n));
  // No wider than the card and a little: notes of neighbouring cards must not run into each other.
  const float wrap = place.hug_outer_edge ? std::max(g.card.x - fs, fs * 7.0f) : std::max(g.card.x + fs * 1.5f, fs * 8.0f);
  const ImVec2 ts = font->CalcTextSizeA(fs, FLT_MAX, wrap, text.c_str());
  const float pad = fs * 0.35f, h = ts.y + pad;
  const bool above = (c.y > g.center.y + 1.0f) != place.other_side;
  const float y = above ? c.y - g.card.y / 2 - h - fs * 0.25f : c.y + g.card.y / 2 + fs * 0.25f;
  const float w = ts.x + 2 * pad;
  const float centred = c.x - w / 2;
  const float flush = c.x < g.center.x ? c.x - g.card.x / 2 : c.x + g.card.x / 2 - w;
  const float x = std::clamp(place.hug_outer_edge ? flush : centred, pane_min.x + 2, std::max(pane_min.x + 2, pane_max.x - w - 2));
  return {ImVec2(x, y), ImVec2(x + ts.x + 2 * pad, y + h), wrap};
}

void draw_card_note(ImDrawList* dl, const CardNote& note, const std::string& text, ImFont* font, uint32_t fill,
                    uint32_t border, uint32_t ink) {
  const float fs = ImGui::GetFontSize(), pad = fs * 0.35f, h = note.b.y - note.a.y;
  dl->AddRectFilled(note.a, note.b, fill, std::min(h / 2, fs));
  dl->AddRect(note.a, note.b, border, std::min(h / 2, fs), 0, 2.0f);
  dl->AddText(font, fs, ImVec2(note.a.x + pad, note.a.y + pad / 2), ink, text.c_str(), nullptr, note.wrap);
}

bool overlaps(const CardNote& x, const CardNote& y) {
  return x.a.x < y.b.x && x.b.x > y.a.x && x.a.y < y.b.y && x.b.y > y.a.y;
}

// The failure lab's highlight: the rank that broke the run in the warning colour with what
// happened to it; the ranks it left waiting get a quieter note of where they wait, where it does
// not run into another note, a card or a link's byte label (`link_labels`; the failure lab's
// table has every rank's).
void draw_failure_marks(ImDrawList* dl, const RingGeometry& g, int n, const view_model::FailureDiagnosis& f, ImVec2 pane_min,
                        ImVec2 pane_max, float ring_bottom, bool compact, const Rects& link_labels) {
  const Palette& p = palette();
  std::vector<std::pair<CardNote, std::string>> culprit_notes;
  std::vector<CardNote> placed, cards;
  for (int r = 0; r < n; ++r) {
    const ImVec2 c = ring_point(g, ring_angle(r, n));
    cards.push_back({ImVec2(c.x - g.card.x / 2, c.y - g.card.y / 2), ImVec2(c.x + g.card.x / 2, c.y + g.card.y / 2), 0});
  }
  for (int r = 0; r < n && r < static_cast<int>(f.ranks.size()); ++r) {
    if (!f.is_culprit(r)) continue;
    const ImVec2 a = cards[r].a, b = cards[r].b;
    dl->AddRectFilled(a, b, with_alpha(p.bad, 0.22f), 8);
    dl->AddRect(ImVec2(a.x - 4, a.y - 4), ImVec2(b.x + 4, b.y + 4), p.bad, 10, 0, 5.0f);
    std::string text = trf("rank {}: {}", r, RankFailureLabel(f.ranks[r], f));
    const CardNote note = place_card_note(g, r, n, pane_min, pane_max, text, fonts().bold);
    placed.push_back(note);
    culprit_notes.emplace_back(note, std::move(text));
  }
  for (int r = 0; r < n && r < static_cast<int>(f.ranks.size()); ++r) {
    const view_model::RankDiagnosis& d = f.ranks[r];
    if (f.is_culprit(r) || d.cause != view_model::RankCause::Waiting || compact || n > 8) continue;
    const ImVec2 a = cards[r].a, b = cards[r].b;
    dl->AddRect(ImVec2(a.x - 2, a.y - 2), ImVec2(b.x + 2, b.y + 2), p.reduced, 9, 0, 2.5f);
    const std::string text = RankFailureLabel(d, f);
    // Under (or over) its card; where another note or card is there (longer words, as in
    // Indonesian), on the card's other side, or narrower at its outer edge; left out when no
    // place is free.
    const auto free = [&](const CardNote& note) {
      const bool in_pane = note.a.y >= pane_min.y && note.b.y <= ring_bottom;  // not over the footer's words
      const ScreenRect box{note.a.x, note.a.y, note.b.x, note.b.y};
      return in_pane && std::none_of(placed.begin(), placed.end(), [&](const CardNote& o) { return overlaps(o, note); }) &&
             std::none_of(cards.begin(), cards.end(), [&](const CardNote& o) { return overlaps(o, note); }) &&
             std::none_of(link_labels.begin(), link_labels.end(), [&](const ScreenRect& o) { return o.overlaps(box); });
    };
    std::optional<CardNote> note;
    for (const NotePlace place : {NotePlace{false, false}, NotePlace{true, false}, NotePlace{false, true}, NotePlace{true, true}}) {
      const CardNote tried = place_card_note(g, r, n, pane_min, pane_max, text, fonts().regular, place);
      if (free(tried)) {
        note = tried;
        break;
      }
    }
    if (!note) continue;
    placed.push_back(*note);
    draw_card_note(dl, *note, text, fonts().regular, with_alpha(p.canvas, 0.92f), p.reduced, p.text);
  }
  for (const auto& [note, text] : culprit_notes) draw_card_note(dl, note, text, fonts().bold, p.bad, p.bad, 0xFFFFFFFF);
}

// What the screen shows now; the step that moves next is said separately (next_step_of).
// `brief`: the words a small pane's one line holds (it has no step pills to say the phase).
std::string banner_of(const RingFrame& f, const view_model::CollectiveRecord& rec, bool brief = false) {
  if (f.expected_steps == 0 && f.world_size <= 1) return tr("One rank: nothing to exchange");
  if (f.expected_steps == 0 && rec.algorithm == "native") return tr("The backend's own all-reduce: one library call");
  if (f.expected_steps == 0) return tr("No ring steps were recorded for this all-reduce");
  if (f.done) return brief ? tr("Done: every rank holds the sum") : tr("All-reduce done: every rank holds the sum");
  if (f.position == 0) return brief ? tr("Before step 1: each rank's own input") : tr("Before ring step 1: each rank holds its own input");
  const view_model::RingPlace place = view_model::ring_place(f.position, f.world_size);
  const int steps = std::max(f.total_steps, f.expected_steps);
  if (brief)
    return trf(place.phase == RingPhase::ReduceScatter ? "After step {} of {} (reduce-scatter)" : "After step {} of {} (all-gather)",
               f.position, steps);
  const char* text = place.phase == RingPhase::ReduceScatter ? "After ring step {} of {} (reduce-scatter {} of {})"
                                                             : "After ring step {} of {} (all-gather {} of {})";
  return trf(text, f.position, steps, place.step_in_phase, place.steps_in_phase);
}

// Every banner an all-reduce's steps show, from before its first to done: the pane gives them one
// size, or the heading jumps between a large and a small font as the class presses Next.
std::vector<std::string> banners_of_all_steps(const RingFrame& f, const view_model::CollectiveRecord& rec, bool brief) {
  if (f.expected_steps == 0) return {banner_of(f, rec, brief)};
  // Only what banner_of reads: a copy of the whole frame (its chunks, packets and links) four
  // times a frame would be work for nothing.
  RingFrame at;
  at.world_size = f.world_size;
  at.total_steps = f.total_steps;
  at.expected_steps = f.expected_steps;
  std::vector<std::string> all;
  for (const int position : {0, f.world_size - 1, std::max(f.total_steps, f.expected_steps)}) {
    at.position = position;
    all.push_back(banner_of(at, rec, brief));
  }
  at.done = true;
  all.push_back(banner_of(at, rec, brief));
  return all;
}

// Whether each of `texts` fits one line of `width` in the banner's small (bold) font.
bool each_fits_a_line(const std::vector<std::string>& texts, float width) {
  const float fs = ImGui::GetFontSize();
  return std::all_of(texts.begin(), texts.end(), [&](const std::string& t) {
    return fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, t.c_str()).x <= width;
  });
}

// "Next: Reduce-scatter, step 2 of 3": what the packets on screen, or the next Next, will do.
std::string next_step_of(const RingFrame& f) {
  if (f.done || f.expected_steps == 0) return "";
  const char* phase = f.active_phase == RingPhase::ReduceScatter ? "Reduce-scatter, step {} of {}" : "All-gather, step {} of {}";
  return trf("Next: {}", trf(phase, f.active_step_in_phase, f.steps_in_phase));
}

// A run stopped inside the all-reduce on screen, shown up to the last step its ranks took.
std::string ended_text(const RingFrame& f) {
  if (f.total_steps == 0) return tr("The run ended before this all-reduce's first step");
  return trf("The run ended here: no rank took step {}", f.total_steps + 1);
}

std::string explanation_of(RingPhase phase) {
  if (phase == RingPhase::ReduceScatter) return tr("Each rank sends one chunk to its right neighbour, which adds it to its own copy.");
  return tr("The finished chunks travel on around the ring and replace the stale copies.");
}

std::string explanation_of(const RingFrame& f) {
  if (f.done || f.expected_steps == 0) return "";
  return explanation_of(f.active_phase);
}

std::string bandwidth(double gbs) {
  if (gbs >= 1.0) return fmt::format("{:.2f} GB/s", gbs);
  if (gbs >= 1e-3) return fmt::format("{:.1f} MB/s", gbs * 1e3);
  return fmt::format("{:.1f} kB/s", gbs * 1e6);
}

std::string values_text(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < 12; ++i) s += (i ? ", " : "") + short_value(v[i]);
  if (v.size() > 12) s += ", …";
  return s + "]";
}

// Fewer floats than ranks (the demo's 3 over 4): a chunk holds nothing and is never sent, and the
// rank that would own it fully reduced ends reduce-scatter with none; a class asks why.
std::string empty_chunks_note(const RingFrame& f) {
  std::vector<int> empty;
  for (int c = 0; c + 1 < static_cast<int>(f.chunk_offsets.size()); ++c)
    if (f.chunk_offsets[c + 1] == f.chunk_offsets[c]) empty.push_back(c);
  if (empty.empty() || f.world_size < 2) return "";
  if (empty.size() == 1)
    return trf("{} floats over {} ranks: chunk {} is empty and never sent, so rank {} ends reduce-scatter with no fully "
               "reduced chunk",
               f.elements, f.world_size, empty[0], (empty[0] + f.world_size - 1) % f.world_size);
  return trf("{} floats over {} ranks: {} chunks are empty and never sent", f.elements, f.world_size, empty.size());
}

// The line under the ring, in `width` (left of the legend): the full line, the short one when
// the full one does not fit, wrapped when neither does.
// Draws it when `dl` is given; returns the height it takes either way.
// `gated_as`: measured as if the all-reduce's steps had waited at the gate or not (its ranks have
// not waited there yet before its first step), instead of as the record says.
float draw_footer(ImDrawList* dl, ImVec2 at, float width, const RingFrame& f, const view_model::CollectiveRecord& rec,
                  bool compact, std::optional<bool> gated_as = {}) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  const float top = at.y;
  const bool gated = gated_as ? *gated_as
                              : std::any_of(rec.ranks.begin(), rec.ranks.end(), [](const auto& r) { return r.gate_wait_ns > 0; });
  // A small pane leaves out the all-reduce's time (the full pane says it): taken once it was done,
  // that line shrank the ring at its last step, down to bare rank numbers.
  const bool timed = f.duration_s > 0 && !compact;
  if (timed && gated) {
    // Held at the gate, its time is how fast the class pressed Next (and how soon each rank saw
    // it), not the network's: no bandwidth from it.
    const std::string full = trf("{} · its ring steps waited at the gate, so its time says nothing of the network",
                                 human_bytes(double(rec.bytes)));
    const std::string short_line = trf("{} · its ring steps waited at the gate", human_bytes(double(rec.bytes)));
    const std::string& line = ImGui::CalcTextSize(full.c_str()).x <= width ? full : short_line;
    if (dl) dl->AddText(nullptr, fs, at, p.text_dim, line.c_str(), nullptr, width);
    at.y += ImGui::CalcTextSize(line.c_str(), nullptr, false, width).y + fs * 0.3f;
  } else if (timed) {
    // In the unit that keeps it short: over MPI on one machine it takes tens of µs, not "0.00 ms".
    const std::string full = trf("{} · {} in {} · algbw {} · busbw {}", human_bytes(double(rec.bytes)), rec.algorithm,
                                 format_duration(f.duration_s * 1e9), bandwidth(f.algbw_gbs), bandwidth(f.busbw_gbs));
    const std::string short_line =
        trf("{} in {} · busbw {}", human_bytes(double(rec.bytes)), format_duration(f.duration_s * 1e9), bandwidth(f.busbw_gbs));
    const std::string& line = ImGui::CalcTextSize(full.c_str()).x <= width ? full : short_line;
    if (dl) dl->AddText(nullptr, fs, at, p.text_dim, line.c_str(), nullptr, width);
    at.y += ImGui::CalcTextSize(line.c_str(), nullptr, false, width).y + fs * 0.3f;
  }
  if (f.has_inputs && f.elements <= 64) {
    std::string check = trf("serial sum {}", values_text(f.serial_sum));
    uint32_t color = p.text_dim;
    if (f.final_checked) {
      // A small pane's in one line; the full pane gives the error.
      if (compact) check += f.final_matches ? tr(" ✓ on every rank") : tr(" ✗ not on every rank");
      else check += f.final_matches ? trf("  ✓ every rank holds it (max error {:.2g})", f.max_abs_error)
                                    : trf("  ✗ a rank differs (max error {:.3g})", f.max_abs_error);
      color = f.final_matches ? p.ok : p.bad;
    }
    if (dl) dl->AddText(fonts().bold, fs, at, color, check.c_str(), nullptr, width);
    at.y += fonts().bold->CalcTextSizeA(fs, FLT_MAX, width, check.c_str()).y;
  }
  // Not in a small pane, where the ring's cards need the room more (the layout audit's 6 to 12
  // rank rings beside a big Timeline lost their cells to it).
  const std::string empty = compact ? "" : empty_chunks_note(f);
  if (!empty.empty()) {
    if (dl) dl->AddText(nullptr, fs, at, p.text_dim, empty.c_str(), nullptr, width);
    at.y += ImGui::CalcTextSize(empty.c_str(), nullptr, false, width).y;
  }
  return at.y - top;
}

// One pill per ring step, reduce-scatter then all-gather: done ones filled, the moving one
// filling up as its packets travel. Right-aligned at `right_top`.
// The pills' sizes: width of one pill, and of the whole row (0: no pills for this frame).
struct PillsSize {
  float pill = 0, row = 0, label = 0;
};
PillsSize step_pills_size(const RingFrame& f) {
  const int per_phase = f.world_size - 1;
  if (per_phase < 1 || f.expected_steps == 0) return {};
  const float fs = ImGui::GetFontSize();
  const float sfs = fs * 0.8f;
  ImFont* small = fonts().regular;
  const float label_w = std::max(small->CalcTextSizeA(sfs, FLT_MAX, 0, "reduce-scatter").x,
                                 small->CalcTextSizeA(sfs, FLT_MAX, 0, "all-gather").x);
  const float gap = fs * 0.25f, phase_gap = fs * 0.8f;
  // Each phase's pills span at least its label: at 2 and 3 ranks (one or two steps a phase) they
  // grow to it, or the phases went unnamed, where a class meets them first.
  const float w = std::max((label_w - (per_phase - 1) * gap) / per_phase, fs * 0.5f);
  const int steps = 2 * per_phase;
  return {w, steps * w + (steps - 2) * gap + phase_gap, label_w};
}

void draw_step_pills(ImDrawList* dl, ImVec2 right_top, const RingFrame& f, float progress) {
  const PillsSize size = step_pills_size(f);
  if (size.row == 0) return;
  const int per_phase = f.world_size - 1;
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  ImFont* small = fonts().regular;
  const float sfs = fs * 0.8f;
  const float label_w = size.label, w = size.pill, total_w = size.row;
  const float gap = fs * 0.25f, phase_gap = fs * 0.8f, h = fs * 0.7f;
  const int steps = 2 * per_phase;
  float x = right_top.x - total_w;
  for (int i = 0; i < steps; ++i) {
    const bool scatter = i < per_phase;
    const uint32_t color = scatter ? p.reduce_scatter : p.all_gather;
    const ImVec2 a(x, right_top.y), b(x + w, right_top.y + h);
    if (i < f.position) {
      dl->AddRectFilled(a, b, color, h / 2);
    } else if (i == f.position && !f.done) {
      dl->AddRectFilled(a, ImVec2(a.x + w * progress, b.y), color, h / 2);
      dl->AddRect(a, b, color, h / 2, 0, 2.0f);
    } else {
      dl->AddRect(a, b, with_alpha(color, 0.6f), h / 2, 0, 1.0f);
    }
    x += w + (i == per_phase - 1 ? phase_gap : gap);
  }
  const float rs_w = per_phase * w + (per_phase - 1) * gap;
  if (rs_w < label_w) return;  // too few steps to label the phases under them
  dl->AddText(small, sfs, ImVec2(right_top.x - total_w, right_top.y + h + 3), p.text_dim, "reduce-scatter");
  dl->AddText(small, sfs, ImVec2(right_top.x - total_w + rs_w + phase_gap, right_top.y + h + 3), p.text_dim, "all-gather");
}

// The legend's lines: a fourth for the dashed links when the ring spans several nodes.
std::vector<const char*> legend_lines(bool nodes) {
  std::vector<const char*> lines = {"fully reduced", "colours: ranks summed in", "dotted: arriving in the next step"};
  if (nodes) lines.push_back("dashed: between nodes, over the network");
  return lines;
}

float legend_height(bool nodes) { return ImGui::GetFontSize() * (1.25f * legend_lines(nodes).size() + 0.5f); }

void draw_legend(ImDrawList* dl, ImVec2 at, bool nodes) {
  const Palette& p = palette();
  const float fs = ImGui::GetFontSize();
  const float s = fs * 0.9f;
  draw_reduced_mark(dl, ImVec2(at.x + 2, at.y + 2), ImVec2(at.x + s - 2, at.y + s - 2), 2);
  dl->AddText(ImVec2(at.x + s + 6, at.y - 1), p.text_dim, tr("fully reduced"));
  at.y += fs * 1.25f;
  draw_bands(dl, at, ImVec2(at.x + s, at.y + s), 0b1011, 4, 0.9f);
  dl->AddText(ImVec2(at.x + s + 6, at.y - 1), p.text_dim, tr("colours: ranks summed in"));
  at.y += fs * 1.25f;
  dashed_line(dl, ImVec2(at.x, at.y + s * 0.6f), ImVec2(at.x + s, at.y + s * 0.6f), p.text, 2.0f, 3.0f);
  dl->AddText(ImVec2(at.x + s + 6, at.y - 1), p.text_dim, tr("dotted: arriving in the next step"));
  if (!nodes) return;
  at.y += fs * 1.25f;
  dashed_line(dl, ImVec2(at.x, at.y + s * 0.6f), ImVec2(at.x + s, at.y + s * 0.6f), p.network, 3.0f, s * 0.3f);
  dl->AddText(ImVec2(at.x + s + 6, at.y - 1), p.text_dim, tr("dashed: between nodes, over the network"));
}

// Why the dashed links matter, under the ring: every link of a flat ring carries 2(p-1)/p of
// the buffer, the slow ones between nodes too, and the ring goes as fast as its slowest link.
std::string node_note(const NodeLayout& nodes) {
  const int p = nodes.world_size;
  return trf("{} nodes: {} of the ring's {} links cross the network. In a flat ring each link carries 2(p-1)/p = "
             "{:.2f}× the buffer, the slow links between nodes too, and every step waits for them: this is why "
             "hierarchical all-reduce exists (the Scale view compares the two).",
             nodes.nodes.size(), nodes.crossing_ring_links(), p, 2.0 * (p - 1) / p);
}

// How far generation `generation` has got with its ring all-reduces (its broadcast of the weights
// is none): none begun, begun but held before a ring step, or a ring step taken.
enum class RingProgress { None, Begun, Stepped };
RingProgress ring_progress_of(const view_model::CollectiveLog& log, int generation) {
  RingProgress found = RingProgress::None;
  for (const size_t i : view_model::steppable_collectives(log)) {
    if (log.at(i).key.generation != generation) continue;
    if (view_model::recorded_steps(log.at(i)) > 0) return RingProgress::Stepped;
    found = RingProgress::Begun;
  }
  return found;
}

// The newest all-reduce of world `generation` with a ring step to show; nullptr if none has.
const view_model::CollectiveRecord* last_ring_of(const view_model::CollectiveLog& log, int generation) {
  const view_model::CollectiveRecord* last = nullptr;
  for (const size_t i : view_model::steppable_collectives(log))
    if (log.at(i).key.generation == generation && view_model::recorded_steps(log.at(i)) > 0) last = &log.at(i);
  return last;
}

// A live change with the newest world not yet at its first ring step: the ring on screen is the
// old world's, the last it finished or, stepped back with Previous, an earlier one (then named,
// with the last beside it). `world_before`: the one on screen is of the world that ran just
// before the change; Previous can go further back, past another change, to an earlier world.
// `newest`: that world in words ("3 ranks", or "2 ranks on mpi" beside another 2-rank world);
// `over`: the run ended (a Stop, most often) before that world's first ring step.
std::string change_note(const view_model::CollectiveLog& log, const view_model::CollectiveRecord& shown,
                        const std::string& newest, RingProgress progress, bool world_before, bool over) {
  const std::string now =
      over ? (progress == RingProgress::None ? trf("The run ended before the newest world ({}) began an all-reduce", newest)
                                             : trf("The run ended before the newest world ({}) took its first ring step", newest))
      : progress == RingProgress::None ? trf("The world now running ({}) has no all-reduce yet", newest)
                                       : trf("The world now running ({}) waits before its first ring step", newest);
  const view_model::CollectiveRecord* last = world_before ? last_ring_of(log, shown.key.generation) : nullptr;
  const std::string shown_words =
      !world_before ? trf("all-reduce #{} of an earlier world ({} ranks), before the change before this one",
                          grouped(shown.key.id), shown.world_size)
      : !last || last->key == shown.key
          ? std::string(tr("the last all-reduce before the change"))
          : trf("all-reduce #{} of the {} ranks before the change (their last: #{})", grouped(shown.key.id),
                shown.world_size, grouped(last->key.id));
  return trf("{}: shown, {}", now, shown_words);
}

// A live change (paused, or stepped through, the new world waits at the gate): the ring on
// screen is the old world's, beside a header that names the new one. Said as far as the new
// world has got: none of its all-reduces begun, or its first held before its first ring step;
// once that step is taken, "" (stepped through, Next goes on to it). Said too, in the past, when
// the run ended there: the status names the new world, the ring the old one.
std::string live_change_note(const view_model::RunModel& model, const AppState& state,
                             const view_model::CollectiveRecord& shown) {
  const view_model::Generation* newest = model.current_generation();
  if (!newest || newest->index <= shown.key.generation) return "";
  const RingProgress progress = ring_progress_of(model.collectives(), newest->index);  // a scan of the log: only after a change
  if (progress == RingProgress::Stepped) return "";
  const view_model::Generation* before = nullptr;  // the world that ran just before the newest
  const view_model::Generation* of_shown = nullptr;
  for (const auto& g : model.generations()) {
    if (g.index < newest->index) before = &g;
    if (g.index == shown.key.generation) of_shown = &g;
  }
  const bool world_before = before && before->index == shown.key.generation;
  // Two worlds of as many ranks (2 on gloo, then 2 on mpi) read as one without their backends.
  const int n = newest->world_size;
  const bool same_count = of_shown && of_shown->world_size == n;
  // The same world on the same backend is a restart (the Failure lab's, from a checkpoint), not a
  // change: the ring shows that world's own last all-reduce, and there is nothing to explain.
  if (same_count && of_shown->has_job && newest->has_job && of_shown->job.backend == newest->job.backend) return "";
  const std::string words = same_count && newest->has_job ? trf("{} rank{} on {}", n, n == 1 ? "" : "s", newest->job.backend)
                                                          : trf("{} rank{}", n, n == 1 ? "" : "s");
  return change_note(model.collectives(), shown, words, progress, world_before, !state.run.live());
}

// The collective's number in its world (as PyTorch's flight recorder numbers them: from 0, the
// weights' broadcast first): after a live change the number says what changed, or the count
// starting again would read as the run starting over.
std::string all_reduce_number(const std::vector<view_model::Generation>& gens, const view_model::CollectiveRecord& rec,
                              int n, bool brief = false) {
  if (gens.empty() || rec.key.generation == gens.front().index) return trf("all-reduce #{}", grouped(rec.key.id));
  const view_model::Generation* now = nullptr;
  const view_model::Generation* before = nullptr;
  for (const auto& g : gens) {
    if (g.index == rec.key.generation) now = &g;
    if (!now) before = &g;
  }
  const bool backend_changed = now && before && now->has_job && before->has_job && now->job.backend != before->job.backend;
  const bool world_changed = !now || !before || now->world_size != before->world_size;
  const std::string id = grouped(rec.key.id);
  // The number since the change ("#54,514 since the change to 2 ranks"); in full, with
  // "all-reduce" before it. `brief`: without, the heading above it saying it (a small pane's one
  // line; the full words took two).
  std::string since;
  if (backend_changed && world_changed) since = trf("#{} since the change to {} ranks on {}", id, n, now->job.backend);
  else if (backend_changed) since = trf("#{} since the change to {}", id, now->job.backend);
  // The same world again: a restart (--max-restarts after a failure) from the last checkpoint.
  else if (!world_changed) since = trf("#{} since the restart", id);
  else since = trf("#{} since the change to {} ranks", id, n);
  return brief ? since : trf("all-reduce {}", since);
}

// The presses that show the rest of an all-reduce on screen part-way, with the workers past it
// ("6 more steps"), a Next whose packets are on their way counted as made: so that a class
// stepped back through 8 ranks' 14 steps, or through the old world's after a live change, knows
// how far the workers are.
std::string steps_left_to_show(const view_model::RingFrame& frame, const StepThroughState& st) {
  const int left = std::max(1, std::max(frame.total_steps, frame.expected_steps) - std::max(st.position, st.target));
  return trf("{} more step{}", left, left == 1 ? "" : "s");
}

// Gated, under the ring's words: where the workers are against what the screen shows. The screen
// can be where they wait, behind them in the same all-reduce (Previous), or in an earlier one;
// "" for an all-reduce shown done with the workers still in it (the run is ending).
// After a live change the workers' all-reduce is numbered in its own world ("#1 since the change
// to 2 ranks"): the old world had its own #1 long before.
// `brief`: a line a small pane holds (the words above a small ring take the room of its cards,
// and the heading keeps the height its longest words took, so that the ring does not jump).
std::string gate_hint(const view_model::RunModel& model, const view_model::CollectiveRecord& shown,
                      const view_model::RingFrame& frame, const StepThroughState& st, bool brief) {
  const view_model::CollectiveLog& log = model.collectives();
  const std::vector<size_t> rings = view_model::steppable_collectives(log);
  if (!rings.empty() && log.at(rings.back()).key != shown.key) {
    const view_model::CollectiveRecord& newest = log.at(rings.back());
    const std::string where = all_reduce_number(model.generations(), newest, newest.world_size);
    if (st.playing) return brief ? trf("Playing on to {}", where) : trf("Playing: the screen goes on to {}, where the workers are", where);
    // Shown part-way (Previous went back into it), Next first shows the rest of this one, as the
    // line above says ("Next: All-gather, step 3 of 3"): "Next goes forward to it" read as if one
    // press went there.
    if (!frame.done)
      return brief ? trf("Workers ahead, in {}", where)
                   : trf("The workers have moved on to {}: Next shows the rest of this one first ({})", where,
                         steps_left_to_show(frame, st));
    return brief ? trf("Workers in {}: press Next", where) : trf("The workers have moved on to {}: Next goes forward to it", where);
  }
  if (frame.done) return "";
  // Where the screen is going: a Next's packets on their way to the step the workers have just
  // taken are not the screen behind them (said for the 0.3 s of every step's animation, in two
  // lines, it made the heading, which keeps its tallest height, take a line from the ring).
  const int screen = std::max(st.position, st.target);
  // Between a Next and its step shown, "press Next" invited a second press mid-way.
  if (!st.playing && st.position < st.target && st.target <= frame.total_steps)
    return brief ? trf("Ring step {} on its way", st.target) : trf("Ring step {}: its packets are on their way", st.target);
  if (st.playing && screen < frame.total_steps)
    return brief ? tr("Playing: catching up with the workers")
                 : trf("Playing: the screen catches up with the workers, at ring step {}, then lets them take one step "
                       "at a time",
                       frame.total_steps);
  if (st.playing) return brief ? tr("Playing: one step at a time") : tr("Playing: the workers take one step at a time, at the chosen speed");
  // Every step taken (a live change let them finish it, or Replay ran them on): there is no step
  // after the last to let them take.
  if (screen < frame.total_steps && frame.total_steps >= frame.expected_steps)
    return brief ? tr("Workers done with it: Next shows it")
                 : tr("The workers have finished this all-reduce, ahead of the screen: each Next shows one of their "
                      "steps, then goes on to the next all-reduce");
  if (screen < frame.total_steps)
    return brief ? trf("Workers past ring step {}: Next shows it", frame.total_steps)
                 : trf("The workers are already past ring step {}, ahead of the screen: each Next shows one of their "
                       "steps; once the screen is there, Next lets them take step {}",
                       frame.total_steps, frame.total_steps + 1);
  return brief ? tr("Workers at the gate: press Next") : tr("The workers are waiting at the gate: press Next");
}

// The newest collective that some ranks have begun and others not, as "All-reduce #2 (step 0,
// bucket 0) waits for rank 1" (a rank asleep or stuck before it: the ones in it can only wait);
// "" when there is none. Said before the first all-reduce has a step to show, and when a run goes quiet.
std::string newest_waits_for(const view_model::CollectiveLog& log) {
  if (log.size() == 0) return "";
  const view_model::CollectiveRecord& rec = log.at(log.size() - 1);
  if (rec.algorithm != "ring" && rec.algorithm != "native") return "";
  std::vector<int> missing;
  bool any = false;
  for (int r = 0; r < rec.world_size; ++r) {
    const bool began = r < static_cast<int>(rec.ranks.size()) && rec.ranks[r].began;
    any = any || began;
    if (!began) missing.push_back(r);
  }
  if (!any || missing.empty()) return "";
  const std::string who = fmt::format("{}", fmt::join(missing, ", "));
  return missing.size() == 1 ? trf("All-reduce #{} (step {}, bucket {}) waits for rank {}", grouped(rec.key.id), grouped(rec.step), rec.bucket, who)
                             : trf("All-reduce #{} (step {}, bucket {}) waits for ranks {}", grouped(rec.key.id), grouped(rec.step), rec.bucket, who);
}

// The pane's big line: the failure, what the ring on screen is doing, or what Start will run.
std::string banner_text(const view_model::RunModel& model, const AppState& state,
                        const view_model::CollectiveRecord* rec, const RingFrame& frame, int n) {
  const view_model::FailureDiagnosis& failure = model.failure();
  if (failure.failed) return FailureHeadline(failure);
  if (rec) return banner_of(frame, *rec);
  if (model.events_seen() > 0 && n == 1) return tr("One rank: nothing to exchange");
  if (model.events_seen() > 0) {
    // Once an all-reduce has gone round, the newest one is begun by some ranks and not yet by
    // the others in most frames of a healthy run (each rank's events come in batches): a wait
    // worth naming is said when the run goes quiet (below).
    const bool before_the_first = model.collectives().latest_complete_ring() < 0;
    if (!before_the_first && state.step.mode == RingMode::Replay) return tr("Replay: pick an all-reduce with the All-reduce slider");
    const std::string waits = before_the_first ? newest_waits_for(model.collectives()) : "";
    return waits.empty() ? tr("Waiting for the first ring all-reduce") : waits;
  }
  if (state.run.phase == RunPhase::Running) return tr("Starting: waiting for the first rank to report");
  if (state.torch.runs_next() && state.torch.side_by_side)
    return trf("Press Start: {} processes of {}, then ringlab's {} workers, will train", n, state.torch.script_name(), n);
  if (state.torch.runs_next()) return trf("Press Start: {} processes of {} will train", n, state.torch.script_name());
  if (n == 1) return tr("Press Start: 1 worker process will train");
  return trf("Press Start: {} worker processes will train", n);
}

// The words of the pane, top down: what the collective is, its next step and why, where the
// workers are against the screen. Each line starts at `y` and moves it down.
// With no draw list it only measures: where the words would end (heading_reserve).
class RingWords {
 public:
  RingWords(ImDrawList* dl, ImVec2 min, ImVec2 max, float y) : dl_(dl), min_(min), max_(max), y_(y) {}
  float y() const { return y_; }
  bool banner_big() const { return big_; }

  // The big line, clear of the step pills (`pills_w`): a smaller font when it, or one of the
  // `siblings` the same all-reduce shows at its other steps, does not fit in one line; then
  // wrapped. Returns the width it had.
  float banner(const std::string& text, bool failed, float pills_w, const std::vector<std::string>& siblings = {}) {
    const float fs = ImGui::GetFontSize();
    const float w = max_.x - min_.x - 2 * fs - pills_w;
    ImFont* big = max_.x - min_.x > fs * 34 ? fonts().big : fonts().bold;
    const auto too_wide = [&](const std::string& t) { return big->CalcTextSizeA(big->FontSize, FLT_MAX, 0, t.c_str()).x > w; };
    if (too_wide(text) || std::any_of(siblings.begin(), siblings.end(), too_wide)) big = fonts().bold;
    big_ = big == fonts().big;
    if (dl_) dl_->AddText(big, big->FontSize, ImVec2(min_.x + fs, min_.y + fs * 0.5f), failed ? palette().bad : palette().text,
                 text.c_str(), nullptr, w);
    y_ = min_.y + fs * 0.6f + big->CalcTextSizeA(big->FontSize, FLT_MAX, w, text.c_str()).y;
    return w;
  }

  // "all-reduce #7 · bucket 0 · 2737 floats · training step 5 · links: ...", beside the pills
  // (and their phase labels) where it starts level with them, wrapped only between its parts: no
  // line starts with a "·". Hovered, it says why the number runs ahead of the step.
  // `one_line`: a small pane's, as many of the parts as fit in one line (the full pane says the
  // rest): wrapped at some all-reduces and not at others, it moved the ring between them.
  void subtitle(std::vector<std::string> parts, float banner_w, bool one_line) {
    const float fs = ImGui::GetFontSize();
    const float w = y_ < min_.y + fs * 2.6f ? banner_w : max_.x - min_.x - 2 * fs;
    const auto joined_w = [&] { return ImGui::CalcTextSize(JoinedInLines(parts, FLT_MAX, fs).c_str()).x; };
    while (one_line && parts.size() > 1 && joined_w() > w) parts.pop_back();
    const std::string sub = JoinedInLines(parts, w, fs);
    if (dl_) dl_->AddText(nullptr, fs, ImVec2(min_.x + fs, y_), palette().text_dim, sub.c_str(), nullptr, w);
    const float h = ImGui::GetFont()->CalcTextSizeA(fs, FLT_MAX, w, sub.c_str()).y;
    if (dl_ && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(ImVec2(min_.x + fs, y_), ImVec2(min_.x + fs + w, y_ + h)))
      WrappedTooltip(tr("#N counts every collective this world has run, from 0, not only its gradient all-reduces: the "
                        "broadcast of the weights at the start counts too, and so does the [1, 2, 3] demo all-reduce a "
                        "run begins with. That is why #N is ahead of the training step, which also counts from 0. The "
                        "command line's failure reports call the same number \"collective N\", and PyTorch's flight "
                        "recorder \"seq\"."));
    y_ += h + fs * 0.3f;
  }

  // A line of its own in `font` and `color`, wrapped at the pane's width.
  void line(ImFont* font, uint32_t color, const std::string& text) {
    const float fs = ImGui::GetFontSize();
    const float w = max_.x - min_.x - 2 * fs;
    if (dl_) dl_->AddText(font, fs, ImVec2(min_.x + fs, y_), color, text.c_str(), nullptr, w);
    y_ += font->CalcTextSizeA(fs, FLT_MAX, w, text.c_str()).y + fs * 0.3f;
  }

  // Where the workers are, in at most `most_lines` lines (the heading keeps room for that many,
  // so that the ring stays put): `brief` where `text` would take more, if there is a brief form.
  void gate_line(ImFont* font, uint32_t color, const std::string& text, const std::string& brief, int most_lines) {
    const float fs = ImGui::GetFontSize(), w = max_.x - min_.x - 2 * fs;
    const bool shortened = font->CalcTextSizeA(fs, FLT_MAX, w, text.c_str()).y > most_lines * fs + 0.5f && !brief.empty();
    const float top = y_;
    line(font, color, shortened ? brief : text);
    if (dl_ && shortened && ImGui::IsWindowHovered() &&
        ImGui::IsMouseHoveringRect(ImVec2(min_.x + fs, top), ImVec2(min_.x + fs + w, y_)))
      WrappedTooltip(text.c_str());
  }

  // Room for `lines` lines of text, as line() takes it for a text of that many lines.
  void room_for_lines(int lines) { y_ += (lines + 0.3f) * ImGui::GetFontSize(); }

  // "Next: Reduce-scatter, step 2 of 3 — why", the explanation beside the step only where it
  // fits in one line: wrapped beside, its second line would hang under the middle of the first.
  void next_step(const std::string& next, const std::string& explanation, bool compact) {
    const Palette& p = palette();
    const float fs = ImGui::GetFontSize();
    std::string why = compact ? "" : " — " + explanation;
    const float line_w = max_.x - min_.x - 2 * fs;
    if (dl_) dl_->AddText(fonts().bold, fs, ImVec2(min_.x + fs, y_), p.accent, next.c_str(), nullptr, line_w);
    float next_w = fonts().bold->CalcTextSizeA(fs, FLT_MAX, 0, next.c_str()).x;
    const float why_w = ImGui::GetFont()->CalcTextSizeA(fs, FLT_MAX, 0, why.c_str()).x;
    if (why_w > line_w - next_w) {
      y_ += fonts().bold->CalcTextSizeA(fs, FLT_MAX, line_w, next.c_str()).y;
      next_w = 0;
      if (!why.empty()) why = explanation;  // on a line of its own: no dash before it
    }
    if (dl_) dl_->AddText(nullptr, fs, ImVec2(min_.x + fs + next_w, y_), p.text, why.c_str(), nullptr, line_w - next_w);
    y_ += ImGui::GetFont()->CalcTextSizeA(fs, FLT_MAX, line_w - next_w, why.c_str()).y + fs * 0.3f;
  }

 private:
  ImDrawList* dl_;
  ImVec2 min_, max_;
  float y_;
  bool big_ = false;
};

// "training step 5"; a rank that skipped or added a collective calls this one at another step,
// and says so: "training step 5 (rank 1: step 6)", not a step number that only one rank had.
std::string training_step_words(const view_model::CollectiveRecord& rec) {
  std::string others;
  for (size_t r = 0; r < rec.ranks.size(); ++r) {
    const auto& span = rec.ranks[r];
    if (!span.began || span.step < 0 || span.step == rec.step) continue;
    others += (others.empty() ? "" : ", ") + trf("rank {}: step {}", r, span.step);
  }
  const std::string words = trf("training step {}", grouped(rec.step));
  return others.empty() ? words : fmt::format("{} ({})", words, others);
}

// Under the banner, for the collective on screen: what it is, its next step (or that the run
// ended before it), and where the workers are against the screen. Says them in state.said.
// The subtitle's parts: "all-reduce #7", "bucket 0", "2737 floats", "training step 5", ...
std::vector<std::string> subtitle_parts(const view_model::RunModel& model, const view_model::CollectiveRecord& rec,
                                        const RingFrame& frame, int n, bool compact) {
  // Every new set of workers runs the course's [1, 2, 3] demo first, as its script does after
  // init_process_group: after a live change it comes again mid-training, and says why.
  const bool demo_again = rec.algorithm == "demo" && !model.generations().empty() &&
                          rec.key.generation != model.generations().front().index;
  std::vector<std::string> parts = {
      all_reduce_number(model.generations(), rec, n, compact),
      rec.algorithm != "demo" ? trf("bucket {}", rec.bucket)
      : demo_again            ? tr("the [1, 2, 3] demo, which each new world runs first")
                              : tr("the [1, 2, 3] demo"),
      trf("{} floats", frame.elements)};  // a no-break space: the number stays with its unit
  if (rec.step >= 0) parts.push_back(training_step_words(rec));  // counted from 0, as the timeline and the failure lab count
  if (!compact && n <= 8) parts.push_back(tr("links: bytes received so far"));
  return parts;
}

// Lines the words keep for where the workers are (the gate line) while a run is live: one; a
// longer line is said in its brief form, the full words under the mouse.
constexpr int kGateLines = 1;

// `parts`: subtitle_parts().
void collective_words(RingWords& words, const view_model::RunModel& model, AppState& state,
                      const view_model::CollectiveRecord& rec, const RingFrame& frame, const std::vector<std::string>& parts,
                      float banner_w, bool compact) {
  const bool failed = model.failure().failed;
  state.said.ring_number = all_reduce_number(model.generations(), rec, std::max(frame.world_size, 1));
  words.subtitle(parts, banner_w, compact);
  // A run stopped inside this all-reduce: no rank will take the step after the last one recorded.
  const bool cut_short = !state.run.live() && !frame.done && frame.expected_steps > 0 &&
                         state.step.position >= frame.total_steps;
  const std::string next = cut_short ? "" : next_step_of(frame);
  state.said.ring_next = failed ? "" : cut_short ? ended_text(frame) : next;
  if (cut_short && !failed) words.line(fonts().bold, palette().text_dim, ended_text(frame));
  if (!next.empty() && !failed) words.next_step(next, explanation_of(frame), compact);
  const bool gated = state.step.mode == RingMode::Gated && state.run.phase == RunPhase::Running;
  std::string gate = gated ? gate_hint(model, rec, frame, state.step, false) : "";
  std::string gate_line = gate;
  std::string gate_brief = gated ? gate_hint(model, rec, frame, state.step, true) : "";
  // Gone quiet (a rank asleep or stuck, the others waiting in their next all-reduce): the ring on
  // screen is the last one done, "every rank holds the sum", and the one they wait in is named.
  const int64_t hung = failed ? 0 : HungForNs(state);
  const std::string waits = hung > 0 ? newest_waits_for(model.collectives()) : "";
  if (!waits.empty())
    gate_line = gate = state.run.live() ? trf("Nothing reported for {:.0f} s: {}", hung * 1e-9, waits)
                                        : trf("Stopped after {:.0f} s with nothing reported: {}", hung * 1e-9, waits);
  if (!waits.empty()) gate_brief.clear();
  // Held (Space, or Hold; it stays into the next run): the ring keeps this all-reduce while the
  // run goes on, and only the button's word said so.
  const bool held_view = state.step.mode == RingMode::Follow && !state.step.playing && state.run.phase == RunPhase::Running;
  if (held_view && waits.empty()) {
    gate_line = gate = tr("Held: the ring stays on this all-reduce while the workers train on; Space (or Play) goes on");
    gate_brief = tr("Held here while the workers train on");
  }
  // Following a fast run, the all-reduce on screen is played slowly while thousands more go by.
  bool behind = waits.empty() && !held_view && state.step.mode == RingMode::Follow &&
                      state.run.phase == RunPhase::Running && rec.step >= 0 && model.latest_step() > rec.step && !compact;
  if (behind) {
    gate_brief.clear();
    const int64_t ahead = model.latest_step() - rec.step;
    gate_line = gate = ahead == 1 ? std::string(tr("Shown slowly: the workers are already 1 training step further on"))
                                  : trf("Shown slowly: the workers are already {} training steps further on", grouped(ahead));
  }
  // Paused while followed: the ring shows the last all-reduce finished, the workers wait in the next.
  // The one on screen may be one the ring was still playing slowly, steps behind them: said, or the
  // class takes it for the all-reduce they are held in.
  if (state.run.phase == RunPhase::Paused && state.step.mode != RingMode::Gated && !compact) {
    gate_brief.clear();
    gate_line = gate = rec.step >= 0 && model.latest_step() > rec.step
               ? trf("Paused at training step {}: the workers wait at the gate before their next ring step; shown, "
                     "an all-reduce of step {} that was being played slowly. Resume lets them go",
                     grouped(model.latest_step()), grouped(rec.step))
               : std::string(tr("Paused: the workers wait at the gate before their next ring step; Resume lets them go"));
  }
  // A live change not yet at the new world's first ring step says where the screen is in its
  // place: beside it, "moved on to all-reduce #1 since the change" said the same thing twice.
  if (std::string note = waits.empty() && !compact ? live_change_note(model, state, rec) : ""; !note.empty()) {
    if (gated && !frame.done) note = fmt::format("{}; {}", note, steps_left_to_show(frame, state.step));
    gate_line = gate = std::move(note);
    gate_brief.clear();
    behind = false;
  }
  if (!behind) state.said.ring_gate = gate;
  if (!gate_line.empty())
    words.gate_line(behind ? fonts().regular : fonts().bold, behind ? palette().text_dim : palette().accent, gate_line,
                    gate_brief, kGateLines);
}

// Where the words above the ring end at most, whatever step of `rec` is on screen and wherever
// the workers are: the banner and subtitle as drawn, a next step's line with the longer of the
// two phases' explanations, and while the run is live (`live`) the gate line's. The ring starts
// below it, so that it keeps its place and size from step to step, forward and back; words drawn
// to a moment's length moved it (a long gate line after Previous, a Next's packets on their way).
float heading_reserve(ImVec2 min, ImVec2 max, const RingWords& drawn_banner, const std::vector<std::string>& parts,
                      float banner_w, int n, bool compact, bool live) {
  RingWords subtitled(nullptr, min, max, drawn_banner.y());
  subtitled.subtitle(parts, banner_w, compact);
  float most = subtitled.y();
  for (const RingPhase phase : {RingPhase::ReduceScatter, RingPhase::AllGather}) {
    RingWords probe = subtitled;
    const int steps = std::max(n - 1, 1);
    probe.next_step(trf("Next: {}", trf(phase == RingPhase::ReduceScatter ? "Reduce-scatter, step {} of {}" : "All-gather, step {} of {}",
                                        steps, steps)),
                    explanation_of(phase), compact);
    if (live) probe.room_for_lines(kGateLines);
    most = std::max(most, probe.y());
  }
  return most - min.y;
}

// Under the ring: the footer's lines, and the legend beside them where they fit in one line
// each; over several nodes, a note on the dashed links between the ring and the footer.
struct RingFooter {
  bool legend = false;
  bool stacked = false;  // the legend in rows of its own above the footer's lines, not beside them
  float legend_w = 0, text_w = 0, width = 0, height = 0;
  float lines_h = 0;     // the footer's lines alone, at `width`
  std::string note;
  float note_h = 0;

  // The legend given up for the ring's room: the footer's lines alone.
  void unstack() {
    legend = stacked = false;
    height = lines_h;
  }
};

// The footer's lines as they will read once the all-reduce on screen is done (its time, the check
// of its values), for the room they take: kept under the ring from its first step, or the ring
// shrank at its last step, and grew back at the next all-reduce's first.
RingFrame footer_when_done(const RingFrame& f) {
  RingFrame d;
  d.done = true;
  d.world_size = f.world_size;
  d.elements = f.elements;
  d.chunk_offsets = f.chunk_offsets;
  d.has_inputs = d.final_checked = f.has_inputs;
  d.serial_sum = f.serial_sum;
  d.final_matches = f.done ? f.final_matches : true;
  d.max_abs_error = f.max_abs_error;
  d.duration_s = f.duration_s > 0 ? f.duration_s : 1e-3;  // any time: the words' width hardly varies with it
  d.algbw_gbs = f.duration_s > 0 ? f.algbw_gbs : 1.0;
  d.busbw_gbs = f.duration_s > 0 ? f.busbw_gbs : 1.0;
  return d;
}

RingFooter lay_out_footer(const view_model::CollectiveRecord* rec, const RingFrame& frame, const NodeLayout& nodes,
                          int n, float pane_w, bool compact) {
  const float fs = ImGui::GetFontSize();
  RingFooter f;
  for (const char* line : legend_lines(nodes.multi_node())) f.legend_w = std::max(f.legend_w, ImGui::CalcTextSize(tr(line)).x + fs * 1.2f);
  f.text_w = pane_w - 2 * fs;
  const float beside_w = f.text_w - f.legend_w - fs * 2;
  const RingFrame done = rec ? footer_when_done(frame) : RingFrame{};
  // Done, its time line says the gate held it or gives its bandwidth: which, its ranks tell only
  // once they have waited there (the first Next of a bucket stacked the legend over a longer line).
  const auto lines_h = [&](float width) {
    return std::max({draw_footer(nullptr, {}, width, frame, *rec, compact),
                     draw_footer(nullptr, {}, width, done, *rec, compact, false),
                     draw_footer(nullptr, {}, width, done, *rec, compact, true)});
  };
  const float one_line_h = rec ? lines_h(FLT_MAX) : 0;
  const float beside_h = rec && n > 1 && !compact ? lines_h(beside_w) : 0;
  // Beside the legend where the footer's lines take no more height there than at full width;
  // else (a long note, the demo's empty chunk at 1.5x text) above them, if the ring keeps its
  // room (the caller unstacks it otherwise).
  const float legend_h = legend_height(nodes.multi_node());
  f.legend = n > 1 && !compact;
  f.stacked = f.legend && beside_h > one_line_h;
  f.width = f.legend && !f.stacked ? beside_w : f.text_w;
  const float footer_h = f.width == beside_w ? beside_h : rec ? lines_h(f.text_w) : 0;
  f.lines_h = rec ? footer_h + fs * 0.6f : fs;
  f.height = f.stacked ? f.lines_h + legend_h : std::max(f.lines_h, f.legend ? legend_h : 0.0f);
  f.note = nodes.multi_node() && !compact ? node_note(nodes) : "";
  f.note_h = f.note.empty() ? 0 : ImGui::CalcTextSize(f.note.c_str(), nullptr, false, f.text_w).y + fs * 0.3f;
  return f;
}

}  // namespace

void DrawRingView(const view_model::RunModel& model, AppState& state) {
  const Palette& p = palette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 min = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::GetContentRegionAvail();
  if (size.x < 50 || size.y < 50) return;
  const ImVec2 max(min.x + size.x, min.y + size.y);
  ImGui::InvisibleButton("##ring_canvas", size);
  const float fs = ImGui::GetFontSize();

  const view_model::CollectiveRecord* rec = ShownCollective(model, state);
  RingFrame frame;
  if (rec) frame = view_model::ring_frame(*rec, state.step.position);
  const int n = rec ? std::max(frame.world_size, 1)
                    : std::max(1, model.world_size() > 0 ? model.world_size() : state.job.world_size);
  const int generation = rec ? rec->key.generation : model.current_generation() ? model.current_generation()->index : -1;
  const NodeLayout nodes = view_model::node_layout_of(model, generation, n, state.job);
  int values_rows = 0;
  if (rec && frame.elements > 0 && frame.elements <= 64 && n > 0)
    values_rows = static_cast<int>(std::min<int64_t>((frame.elements + n - 1) / n, kMaxValuesShown));

  // Banner and subtitle; a small pane gets a smaller banner and a compact ring.
  // Compact as well where an earlier frame of this pane found the words left no room for a full
  // ring (below): its words are then the compact ones too, from the next frame on.
  RingViewState& held = state.ring_view;
  // The heights held below hold while the all-reduces on screen are alike: between unlike ones
  // (the [1, 2, 3] demo, its values in the cells, and the first bucket) the ring is laid out
  // afresh, or the demo's taller footer left every later all-reduce a smaller ring over an empty
  // strip, and Previous back to the demo drew it under the bucket's longer words.
  const std::string shape = rec ? fmt::format("{}/{}/{}", n, rec->algorithm, values_rows) : "";
  const bool same_pane = held.pane_w == size.x && held.pane_h == size.y && held.font_px == fs && rec && held.shape == shape;
  bool compact = size.y < fs * 16 || size.x < fs * 26 || (same_pane && held.compact_room);
  const view_model::FailureDiagnosis& failure = model.failure();
  const bool pills = rec && !compact && !failure.failed;
  RingWords words(dl, min, max, min.y);
  state.said.ring_banner = banner_text(model, state, rec, frame, n);
  // A small pane's heading in one line: the short banners where the full ones of this
  // all-reduce's steps wrap (a two-line heading at some steps moved the ring down at them).
  std::string banner = state.said.ring_banner;
  std::vector<std::string> siblings = rec && !failure.failed ? banners_of_all_steps(frame, *rec, false) : std::vector<std::string>{};
  if (compact && !siblings.empty() && !each_fits_a_line(siblings, size.x - 2 * fs)) {
    banner = banner_of(frame, *rec, true);
    siblings = banners_of_all_steps(frame, *rec, true);
  }
  // Half a text height between the banner and the pills: "Before ring step 1: each rank holds its
  // own input", the longest of a ring step's banners, then just fits the large font at 1920x1080.
  const float banner_w = words.banner(banner, failure.failed, pills ? step_pills_size(frame).row + fs * 0.5f : 0, siblings);
  state.ring_view.banner_big = words.banner_big();
  state.said.ring_next.clear();
  state.said.ring_number.clear();
  state.said.ring_gate.clear();
  const RingWords banner_only = words;
  const std::vector<std::string> parts = rec ? subtitle_parts(model, *rec, frame, n, compact) : std::vector<std::string>{};
  if (rec) collective_words(words, model, state, *rec, frame, parts, banner_w, compact);
  const float reserve = rec ? heading_reserve(min, max, banner_only, parts, banner_w, n, compact, state.run.live()) : 0;
  RingFooter footer = lay_out_footer(rec, frame, nodes, n, size.x, compact);
  if (!same_pane) {
    held.heading_bottom = 0;  // the layout starts afresh; the packet counts run on
    held.pane_w = size.x, held.pane_h = size.y, held.font_px = fs;
    held.shape = shape;
    held.cards = {};
    held.compact_room = false;
    held.footer_top = 0;
  }
  held.heading_bottom = std::max({held.heading_bottom, words.y() - min.y, reserve});
  const float y = min.y + held.heading_bottom;
  const ImVec2 ring_min(min.x + fs, y + fs * 0.5f);
  ImVec2 ring_max(max.x - fs, max.y - footer.height - footer.note_h);
  RingRoom room{ring_min, ring_max, fs, rank_label_width(n, false), rank_label_width(n, true), values_rows, compact};
  RingGeometry g = geometry_for(room, n);
  // The ring before the legend: given up where the ring, in the room it has without the legend,
  // has cards too tall to go twice into the room left with it. Judged on that room's cards, not
  // the ones squeezed into the smaller room (flatter, turned half a place), so that the choice
  // holds from one step to the next: packets on their way asked for a flatter ring, which then
  // kept the legend, and the ring changed shape at the first Next.
  if (footer.stacked && n > 2) {
    RingRoom without = room;
    without.max.y = max.y - footer.lines_h - footer.note_h;
    if (ring_max.y - ring_min.y < geometry_for(without, n).card.y * 2.1f + fs) {
      footer.unstack();
      ring_max.y = room.max.y = without.max.y;
      g = geometry_for(room, n);
    }
  }
  // The words above took the room a full ring needs (large text, a short pane): a compact ring,
  // and a compact footer under it, without the legend and the nodes' note. With them kept, the
  // small Ring pane of a 1920x1080 window beside the enlarged Timeline had a room of -64 pixels,
  // and its cards were drawn over the note.
  if (!compact && n > 2 && ring_max.y - ring_min.y < g.card.y * 2.1f + fs) {
    compact = room.compact = held.compact_room = true;
    held.heading_bottom = held.footer_top = 0;  // the compact words, shorter, are measured afresh next frame
    footer = lay_out_footer(rec, frame, nodes, n, size.x, true);
    ring_max.y = room.max.y = max.y - footer.height - footer.note_h;
    g = geometry_for(room, n);
  }
  // The footer keeps the height its tallest lines took in this pane, as the heading does: the
  // time and check lines an all-reduce gets once done would otherwise shrink the ring at its
  // last step, and grow it back at the next all-reduce's first.
  if (max.y - ring_max.y < held.footer_top) {
    ring_max.y = room.max.y = max.y - held.footer_top;
    g = geometry_for(room, n);
  }
  held.footer_top = max.y - ring_max.y;
  g.exit_angle = exit_angle(g, n, ImVec2(packet_half(g).x * 2, packet_half(g).y * 2));
  state.ring_view.cards = {n, ring_max.x - ring_min.x, ring_max.y - ring_min.y, !cards_overlap(g, n, fs * 0.3f),
                           g.short_labels, g.cells, g.exponent, {}};

  std::vector<char> receiving(static_cast<size_t>(n) * n, 0);
  if (rec) {
    for (const auto& packet : frame.packets)
      if (packet.dst < n && packet.chunk < n) receiving[packet.dst * n + packet.chunk] = 1;
    for (const auto& [dst, chunk] : frame.next_receives)
      if (dst < n && chunk < n) receiving[dst * n + chunk] = 1;
  }

  dl->PushClipRect(min, max, true);
  if (nodes.multi_node()) draw_node_bands(dl, g, nodes, n);
  // The legend stacked above the footer's lines leaves room left of it, under the ring.
  const float legend_x = max.x - fs - footer.legend_w;
  const float lines_top = max.y - (footer.stacked ? footer.lines_h : footer.height) + fs * 0.3f;
  // A margin from the pane's sides: a label flush with the edge reads as cut off there.
  Rects label_areas = {{min.x + fs * 0.3f, ring_min.y - fs * 0.5f, max.x - fs * 0.3f, ring_max.y}};
  if (footer.legend && footer.stacked && footer.note.empty())
    label_areas.push_back({min.x + fs * 0.3f, ring_max.y, legend_x - fs, lines_top - fs * 0.2f});
  Rects link_label_boxes;
  state.ring_view.cards.link_labels = draw_links(dl, g, n, rec ? &frame : nullptr, nodes, !compact, label_areas, link_label_boxes);
  // Packets only while the view moves on to the next step: one held back by Previous shows the
  // chunks where they are, not sends frozen half-way.
  const bool moving = state.step.progress > 0 || state.step.position < state.step.target;
  const bool packets = rec && !failure.failed && moving;
  const std::vector<PacketTrack> tracks = packets ? packet_tracks(g, frame) : std::vector<PacketTrack>{};
  const float progress = static_cast<float>(state.step.progress);
  if (packets) draw_packets(dl, g, frame, tracks, progress, false, state.ring_view);
  for (int r = 0; r < n; ++r) draw_card(dl, g, r, rec && r < static_cast<int>(frame.chunks.size()) ? &frame : nullptr, n, receiving);
  if (packets) draw_packets(dl, g, frame, tracks, progress, true, state.ring_view);
  // Failure notes may reach into the ring, where the node labels sit: after a failure the bands stay, unlabelled.
  state.ring_view.cards.node_labels =
      nodes.multi_node() && !failure.failed ? draw_node_labels(dl, g, nodes, n, ring_min, ring_max, link_label_boxes) : 0;
  if (failure.failed) draw_failure_marks(dl, g, n, failure, min, max, ring_max.y, compact, link_label_boxes);
  if (pills) draw_step_pills(dl, ImVec2(max.x - fs, min.y + fs * 0.8f), frame, static_cast<float>(state.step.progress));
  state.said.ring_legend = !footer.legend ? "" : footer.stacked ? "above" : "beside";
  if (footer.legend) {
    const float legend_bottom = footer.stacked ? max.y - footer.lines_h : max.y;
    draw_legend(dl, ImVec2(legend_x, legend_bottom - legend_height(nodes.multi_node()) + fs * 0.2f), nodes.multi_node());
  }
  if (!footer.note.empty())
    dl->AddText(nullptr, fs, ImVec2(min.x + fs, ring_max.y + fs * 0.15f), p.text_dim, footer.note.c_str(), nullptr, footer.text_w);
  if (rec) draw_footer(dl, ImVec2(min.x + fs, lines_top), footer.width, frame, *rec, compact);
  dl->PopClipRect();
}

}  // namespace ringlab::viz
