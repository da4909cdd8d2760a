#pragma once
// Where the ring view puts its rank cards: on an ellipse that fills the room it is given, each
// card as large as its share of the ring allows and no larger than keeps it clear of every
// other card. Pure arithmetic on sizes in pixels (the font size is a parameter), so that it can
// be checked for every world size and pane without drawing anything.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

namespace ringlab::viz {

// Ranks sit on an ellipse, or where that leaves no room between the cards on a squarer track
// (a superellipse: rows of cards along the top and the bottom). Places on the ring are named by
// an angle, 0 at the top, clockwise: on the ellipse the angle itself, on a squarer track the
// same fraction of the way round (so evenly spaced angles are evenly spaced cards there too).
// Every point is turned by the geometry's `turn` (track_point adds it), so that the angles the
// views work with stay those of ring_angle.
struct RingGeometry {
  static constexpr int kTrackSamples = 256;
  ImVec2 center;
  float rx = 0, ry = 0;     // the ring's radii
  float exponent = 2;       // the track's: 2 an ellipse, larger nearer a rectangle with round corners
  float turn = 0;           // how far the places are turned clockwise from rank 0 at the top (a flat
                            // room may put two cards side by side along its top instead)
  // A squarer track at kTrackSamples + 1 evenly spaced angles from the top: its points (as a
  // fraction of the radii, from the centre) and its length up to each.
  std::array<ImVec2, kTrackSamples + 1> track_unit{};
  std::array<float, kTrackSamples + 1> track_length{};
  ImVec2 card;              // card size
  float cell_w = 0, cell_h = 0, header_h = 0;
  int values_per_cell = 0;  // rows of numbers in a chunk cell (0: colours only)
  float exit_angle = 0;     // how far from a card's centre angle a packet clears the card
  bool short_labels = false;  // cards too narrow for "rank 7" carry "7" (and the rank's colour)
  bool cells = true;          // false: a room too small for chunk cells, the cards are their labels alone
  bool compact = false;       // a small pane's ring (RingRoom::compact): lower packets too
};

struct RingRoom {
  ImVec2 min, max;             // the ring's part of the pane
  float font_size = 13;        // the text's, in pixels
  float label_w = 0;           // the widest rank label a card carries ("rank 7" and its colour)
  float short_label_w = 0;     // the same with the number alone ("7"); 0: never shortened
  int values_per_cell = 0;     // rows of numbers a chunk cell would like to show
  bool compact = false;        // a small pane: a lower header, no numbers
  bool chips = false;          // cards without chunk cells: their labels alone
};

// The angle of rank `rank`'s card: two ranks side by side, more from the top, clockwise.
float ring_angle(int rank, int n);
// The point of the ring at `angle`.
ImVec2 ring_point(const RingGeometry& g, float angle);
// The unit direction along the (clockwise) ring at `angle`; its outward normal is (dir.y, -dir.x).
ImVec2 ring_direction(const RingGeometry& g, float angle);
// The point at `angle` of a track of the ring's shape and centre with other radii (a band
// around the ring).
ImVec2 track_point(const RingGeometry& g, ImVec2 radii, float angle);
// The card of each rank of an `n`-rank ring in `room`. Cards shrink (lower chunk cells, then
// narrower ones, never narrower than their label) until no two of them overlap, and where the
// smallest still would, the track squares up, then the labels lose their word ("7" for "rank
// 7"), and last the cards lose their chunk cells; only a room too small even for that leaves
// cards touching (cards_overlap then says so). Cards that clear each other but leave a packet
// no gap to travel in (a short pane's flat ring) are made narrower, then lower, where that
// opens one (packet_room); where it does not, they carry their number alone, and last the
// places are turned half a place, which in a flat room puts the cards in two rows with the
// links between them.
RingGeometry ring_geometry(const RingRoom& room, int n);
// Whether any two cards of `g` overlap, or come closer than `gap` pixels in both x and y.
bool cards_overlap(const RingGeometry& g, int n, float gap = 0);
// Whether the box from `a` to `b` meets any of the ring's n cards.
bool under_a_card(const RingGeometry& g, int n, ImVec2 a, ImVec2 b);
// A chunk's packet on its way between two cards: a little wider than a chunk cell, and tall
// enough for its "c3" (in a compact ring, with less room around it).
ImVec2 packet_size(const RingGeometry& g, float font_size);
// The shortest, over the ring's links, of the longest stretch of a link (in pixels along the
// track) where a packet covers no card: how far a packet can be seen to travel between cards.
float packet_room(const RingGeometry& g, int n, float font_size);
// The longest stretch of the track from angle a0 to a1 (by length along it) none of whose points
// is `blocked`: its ends, the angle halfway along it, and its length in pixels (0 when every
// point is).
struct TrackStretch {
  float start = 0, middle = 0, end = 0, length = 0;
};

template <class Blocked>
TrackStretch free_stretch(const RingGeometry& g, float a0, float a1, const Blocked& blocked) {
  constexpr int kSamples = 128;
  TrackStretch best{a0, (a0 + a1) / 2, a1, 0};
  float run_len = 0;
  std::array<std::pair<float, float>, kSamples + 1> run;  // (angle, length from the run's start)
  size_t in_run = 0;
  for (int i = 0; i <= kSamples; ++i) {
    const float a = a0 + (a1 - a0) * static_cast<float>(i) / kSamples;
    const ImVec2 p = ring_point(g, a);
    if (blocked(p)) {
      in_run = 0;
      run_len = 0;
      continue;
    }
    if (in_run > 0) {
      const ImVec2 q = ring_point(g, run[in_run - 1].first);
      run_len += std::sqrt((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y));
    }
    run[in_run++] = {a, run_len};
    if (run_len > best.length) {
      const auto half_way = std::lower_bound(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(in_run),
                                             run_len / 2, [](const auto& point, float l) { return point.second < l; });
      best = {run[0].first, half_way->first, a, run_len};
    }
  }
  return best;
}

// The stretch from angle a0 to a1 where a box of half-size `half` centred on the track touches
// no card.
TrackStretch visible_stretch(const RingGeometry& g, int n, float a0, float a1, ImVec2 half);
// How far, at the least, a packet should be seen to travel between two cards.
inline float packet_travel(float font_size) { return font_size * 0.5f; }

}  // namespace ringlab::viz
