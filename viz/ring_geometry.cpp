#include "viz/ring_geometry.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

namespace ringlab::viz {
namespace {

constexpr float kPi = std::numbers::pi_v<float>;

// Chunk cells: one per rank across the card, tall enough for their numbers where they show any.
void size_cells(RingGeometry& g, const RingRoom& room, int n) {
  const float fs = room.font_size;
  if (room.chips) {
    g.cells = false;
    g.cell_w = (g.card.x - fs * 0.6f) / std::max(n, 1);
    g.cell_h = 0;
    g.values_per_cell = 0;
    g.card.y = g.header_h + fs * 0.1f;
    return;
  }
  const float number_rows = static_cast<float>(std::max(room.values_per_cell, 1));
  g.cell_w = (g.card.x - fs * 0.6f) / std::max(n, 1);
  const bool numbers = !room.compact && room.values_per_cell > 0 && g.cell_w > fs * 1.6f;
  g.values_per_cell = numbers ? room.values_per_cell : 0;
  g.cell_h = numbers        ? std::max(fs * 1.3f * number_rows + fs * 0.5f, std::min(g.cell_w * 0.55f, fs * 2.6f))
             : room.compact ? fs * 0.9f
                            : std::clamp(g.cell_w * 0.6f, fs * 1.3f, fs * 2.2f);
  g.card.y = g.header_h + g.cell_h + fs * 0.6f;
}

// The unit superellipse |x|^e + |y|^e = 1 at angle `theta` of the circle it stretches.
// The stretch, v^(2/e), magnifies the rounding of cos(-pi/2) (about -4e-8) into -0.015 of the
// radius: the track's two ends at the top, its first and its last point, were 2 px apart and the
// track stepped back there, so that the arrow of the link over the top (7 -> 0 of a ring of 8
// in rows) pointed against the ring. Values that small are the axis itself.
ImVec2 unit_superellipse(float e, float theta) {
  const auto stretch = [e](float v) {
    if (std::fabs(v) < 1e-6f) return 0.0f;
    return e == 2 ? v : std::copysign(std::pow(std::fabs(v), 2 / e), v);
  };
  return ImVec2(stretch(std::cos(theta)), stretch(std::sin(theta)));
}

// A squarer track bunches equal angles into its corners (and its flat sides take angles near
// the top and the sides in big leaps): its points and lengths at many angles let track_point
// space places by length along it instead.
void measure_track(RingGeometry& g) {
  g.track_length[0] = 0;
  for (int k = 0; k <= RingGeometry::kTrackSamples; ++k) {
    g.track_unit[k] = unit_superellipse(g.exponent, -kPi / 2 + 2 * kPi * static_cast<float>(k) / RingGeometry::kTrackSamples);
    if (k == 0) continue;
    const ImVec2 a = g.track_unit[k - 1], b = g.track_unit[k];
    g.track_length[k] = g.track_length[k - 1] + std::hypot((b.x - a.x) * g.rx, (b.y - a.y) * g.ry);
  }
}

// The ring as wide and as tall as the room leaves once a card's half sticks out on each side.
void set_radii(RingGeometry& g, const RingRoom& room) {
  const float fs = room.font_size;
  const float w = room.max.x - room.min.x, h = room.max.y - room.min.y;
  g.rx = std::max(fs * 3.0f, (w - g.card.x) / 2 * 0.96f);
  // Top and bottom cards must not meet: at least half a card (and a little) from the centre.
  g.ry = std::max(g.card.y * 0.55f, (h - g.card.y) / 2 * 0.94f);
  if (g.exponent != 2) measure_track(g);
}

// The first two cards (in rank order) that overlap or come within `gap` in both x and y, as the
// distance between their centres; false when every pair clears.
bool closest_pair(const RingGeometry& g, int n, float gap, ImVec2& apart) {
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const ImVec2 pa = ring_point(g, ring_angle(a, n)), pb = ring_point(g, ring_angle(b, n));
      const ImVec2 d(std::fabs(pa.x - pb.x), std::fabs(pa.y - pb.y));
      if (d.x < g.card.x + gap && d.y < g.card.y + gap) {
        apart = d;
        return true;
      }
    }
  return false;
}

// A card's width that holds its label (the colour, "rank 7") and a margin on each side.
float label_room(const RingRoom& room) {
  if (room.chips) return std::max(room.font_size * 2.0f, room.label_w + room.font_size * 0.15f);  // the label, snug
  return std::max(room.font_size * 3.0f, room.label_w + room.font_size * 0.8f);
}

// The cards at height `h`, as far as the smallest allows: lower chunk cells (no lower than a
// strip, and none taller than `cells` would have them), then less margin under them; numbers
// only where a cell still holds them.
struct Cells {
  float h = 0;
  int values = 0;
};
void set_card_height(RingGeometry& g, const RingRoom& room, float h, Cells natural) {
  if (room.chips) return;  // a label's height, no lower
  const float fs = room.font_size;
  g.cell_h = std::clamp(h - g.header_h - fs * 0.6f, fs * 0.5f, std::max(natural.h, fs * 0.5f));
  g.card.y = std::max(h, g.header_h + g.cell_h + fs * 0.3f);
  g.values_per_cell = g.cell_h >= fs * 1.3f * static_cast<float>(natural.values) ? natural.values : 0;
}

// Six ranks or more in a small pane stack the side cards one above the other, closer than a
// card is high. Each overlapping pair is cleared where it costs the card least: in y by lower
// chunk cells (down to a strip, numbers dropped), in x by narrower cells (down to the label's
// width); the ring grows into the room the smaller cards leave, which helps the next pair.
void fit_cards_apart(RingGeometry& g, const RingRoom& room, int n) {
  const float fs = room.font_size, gap = fs * 0.3f;
  const float min_w = label_room(room);
  const float min_h = room.chips ? g.card.y : g.header_h + fs * 0.5f + fs * 0.3f;
  Cells natural{g.cell_h, g.values_per_cell};
  float natural_h = g.card.y;
  ImVec2 apart;
  for (int pass = 0; pass < 4 * n && closest_pair(g, n, gap, apart); ++pass) {
    const float want_w = apart.x - gap, want_h = apart.y - gap;
    const bool by_width = want_w >= min_w && (want_h < min_h || want_w / g.card.x >= want_h / g.card.y);
    if (by_width) {
      g.card.x = want_w;
      const float card_h = g.card.y;
      size_cells(g, room, n);  // narrower cells may want another height (and hold no numbers)
      natural = {g.cell_h, g.values_per_cell};
      natural_h = g.card.y;
      set_card_height(g, room, std::min(card_h, natural_h), natural);
    } else if (g.card.y > min_h) {
      set_card_height(g, room, std::max(min_h, want_h), natural);
    } else {
      return;  // the smallest cards still meet: the room is too small for this many
    }
    set_radii(g, room);
  }
  // A pair cleared by a lower card early on may have needed only the narrower one that came
  // after it: give the cards back as much of their height as still clears.
  if (g.card.y >= natural_h || closest_pair(g, n, gap, apart)) return;
  float low = g.card.y, high = natural_h;
  for (int i = 0; i < 12; ++i) {
    const float h = i == 0 ? high : (low + high) / 2;
    RingGeometry trial = g;
    set_card_height(trial, room, h, natural);
    set_radii(trial, room);
    if (closest_pair(trial, n, gap, apart)) {
      high = h;
    } else {
      low = h;
      g = trial;
      if (i == 0) return;
    }
  }
}

// Narrower cards: their cells narrower, and without numbers where a cell no longer holds them.
void set_card_width(RingGeometry& g, const RingRoom& room, int n, float w) {
  const float fs = room.font_size;
  g.card.x = w;
  g.cell_w = (g.card.x - fs * 0.6f) / std::max(n, 1);
  if (g.cell_w <= fs * 1.6f) g.values_per_cell = 0;
}

// In a short pane the cards can clear each other and still leave no gap between neighbours:
// every packet would then sit on a card, covering its chunks. Narrower cards (down to their
// label) and then lower ones (down to a strip of cells) move the cards apart, as the ring grows
// into the room they leave; the cards are changed only where that opens a gap a packet can be
// seen to travel along.
void make_room_for_packets(RingGeometry& g, const RingRoom& room, int n) {
  const float fs = room.font_size;
  const float wanted = packet_travel(fs);
  if (packet_room(g, n, fs) >= wanted) return;
  const float min_w = label_room(room);
  const float min_h = room.chips ? g.card.y : g.header_h + fs * 0.5f + fs * 0.3f;
  RingGeometry trial = g;
  for (int pass = 0; pass < 24; ++pass) {
    if (trial.card.x * 0.93f >= min_w) {
      set_card_width(trial, room, n, trial.card.x * 0.93f);
    } else if (trial.card.y * 0.93f >= min_h) {
      set_card_height(trial, room, trial.card.y * 0.93f, Cells{trial.cell_h, trial.values_per_cell});
    } else {
      return;  // no gap even for the smallest cards: the packets are drawn over them
    }
    set_radii(trial, room);
    if (packet_room(trial, n, fs) >= wanted) {
      g = trial;
      return;
    }
  }
}

RingGeometry on_track(const RingRoom& room, int n, float exponent, float turn) {
  RingGeometry g;
  g.turn = turn;
  g.compact = room.compact;
  const float fs = room.font_size;
  const float w = room.max.x - room.min.x, h = room.max.y - room.min.y;
  g.center = ImVec2((room.min.x + room.max.x) / 2, (room.min.y + room.max.y) / 2);
  g.exponent = exponent;
  g.header_h = room.compact ? fs * 1.25f : fs * 1.35f;
  g.rx = w * 0.36f;
  g.ry = h * 0.36f;
  for (int pass = 0; pass < 3; ++pass) {
    // Cards share the ring: each gets a good part of its arc, capped for few ranks.
    const float perimeter = 2 * kPi * std::sqrt((g.rx * g.rx + g.ry * g.ry) / 2);
    const float arc = n > 1 ? perimeter / static_cast<float>(n) : w;
    g.card.x = std::clamp(arc * (n > 4 ? 0.62f : n > 2 ? 0.72f : 0.45f), fs * 4.0f, fs * 17.0f);
    // Neighbouring cards must clear each other: the side ones sit rx from the centre.
    if (n >= 3) g.card.x = std::max(fs * 3.0f, std::min(g.card.x, w / 3.1f));
    // And wide enough for its label, where the room allows (fit_cards_apart narrows it no further).
    g.card.x = std::max(g.card.x, std::min(label_room(room), w / 3.1f));
    size_cells(g, room, n);
    set_radii(g, room);
  }
  if (n > 1) fit_cards_apart(g, room, n);
  if (n == 1) g.rx = g.ry = 0;
  return g;
}

}  // namespace

float ring_angle(int rank, int n) {
  if (n == 2) return kPi + kPi * static_cast<float>(rank);
  return -kPi / 2 + 2 * kPi * static_cast<float>(rank) / static_cast<float>(std::max(n, 1));
}

ImVec2 track_point(const RingGeometry& g, ImVec2 radii, float angle) {
  angle += g.turn;
  if (g.exponent == 2) return ImVec2(g.center.x + radii.x * std::cos(angle), g.center.y + radii.y * std::sin(angle));
  // The same fraction of the track's length as `angle` is of a turn.
  const auto& length = g.track_length;
  float turn = (angle + kPi / 2) / (2 * kPi);
  turn -= std::floor(turn);
  const float target = turn * length.back();
  const auto after = std::upper_bound(length.begin() + 1, length.end() - 1, target);
  const int k = static_cast<int>(after - length.begin()) - 1;
  const float span = length[k + 1] - length[k];
  const float within = span > 0 ? (target - length[k]) / span : 0;
  const ImVec2 a = g.track_unit[k], b = g.track_unit[k + 1];
  return ImVec2(g.center.x + radii.x * (a.x + (b.x - a.x) * within), g.center.y + radii.y * (a.y + (b.y - a.y) * within));
}

ImVec2 ring_point(const RingGeometry& g, float angle) { return track_point(g, ImVec2(g.rx, g.ry), angle); }

ImVec2 ring_direction(const RingGeometry& g, float angle) {
  const ImVec2 ahead = ring_point(g, angle + 0.01f), behind = ring_point(g, angle - 0.01f);
  const float len = std::hypot(ahead.x - behind.x, ahead.y - behind.y) + 1e-6f;
  return ImVec2((ahead.x - behind.x) / len, (ahead.y - behind.y) / len);
}


namespace {

// Whether every card lies within the room (a pixel's slack): one that sticks out covers the
// words above or under the ring.
bool cards_inside(const RingGeometry& g, const RingRoom& room, int n) {
  for (int r = 0; r < n; ++r) {
    const ImVec2 c = ring_point(g, ring_angle(r, n));
    if (c.x - g.card.x / 2 < room.min.x - 1 || c.x + g.card.x / 2 > room.max.x + 1 ||
        c.y - g.card.y / 2 < room.min.y - 1 || c.y + g.card.y / 2 > room.max.y + 1)
      return false;
  }
  return true;
}

// How well a geometry serves the class: its cards clear each other and the words around the
// ring, and every packet has a gap to travel in (2); its cards clear each other and the words
// (1); neither (0).
int fit_of(const RingGeometry& g, const RingRoom& room, int n) {
  if (cards_overlap(g, n, room.font_size * 0.3f) || !cards_inside(g, room, n)) return 0;
  return n < 2 || packet_room(g, n, room.font_size) >= packet_travel(room.font_size) ? 2 : 1;
}

struct Fitted {
  RingGeometry g;
  int fit = -1;
};

// Of the tracks with the ranks' places turned by `turn`: the ellipse wherever it serves fully
// (fit_of 2); else, of those that serve best, the one with the largest cards (the ellipse where
// it does as well as a squarer one); where no cards clear each other, the squarest.
Fitted best_track(const RingRoom& room, int n, float turn) {
  Fitted best;
  for (const float exponent : {2.0f, 3.0f, 4.0f, 6.0f, 8.0f}) {
    RingGeometry g = on_track(room, n, exponent, turn);
    int fit = fit_of(g, room, n);
    if (fit == 1) {
      make_room_for_packets(g, room, n);
      fit = fit_of(g, room, n);
    }
    const bool ellipse_serves = best.g.exponent == 2.0f && best.fit == 2;
    const bool larger = g.card.x * g.card.y > best.g.card.x * best.g.card.y * 1.01f;
    if (best.fit < 0 || fit > best.fit || (fit == best.fit && fit > 0 && !ellipse_serves && larger) || (fit == 0 && best.fit == 0)) {
      best.g = g;
      best.fit = fit;
    }
  }
  return best;
}

}  // namespace

RingGeometry ring_geometry(const RingRoom& room, int n) {
  // Six ranks on an ellipse stack two cards one above the other at each side; a squarer track
  // puts them in a row along the top and one along the bottom, which a short pane has room for.
  // Where the cards clear each other but leave a packet no gap between neighbours, they may
  // carry their number alone ("7"), narrower; and last the places turn half a place, which puts
  // four cards two along the top and two along the bottom of a flat room. The first of those
  // that serves fully (cards clear, every packet a gap: fit_of), else the first whose cards
  // clear: rank 0 at the top with its full label, as long as that does as well.
  RingRoom numbered = room;
  const bool shorter = room.short_label_w > 0 && room.short_label_w < room.label_w;
  numbered.label_w = room.short_label_w;
  numbered.short_label_w = 0;
  std::vector<const RingRoom*> labels = {&room};
  if (shorter) labels.push_back(&numbered);
  std::optional<RingGeometry> first_clear;
  for (int turns = 0; turns < (n > 2 ? 2 : 1); ++turns) {
    for (const RingRoom* r : labels) {
      Fitted f = best_track(*r, n, static_cast<float>(turns) * kPi / static_cast<float>(n));
      f.g.short_labels = r == &numbered;
      if (f.fit == 2) return f.g;
      if (f.fit == 1 && !first_clear) first_clear = f.g;
    }
  }
  if (first_clear) return *first_clear;
  // Still too many for the room: the cards may be their labels alone (the class enlarges the
  // pane to see the chunks), their numbers where those are shorter.
  if (room.chips) return best_track(room, n, 0).g;
  RingRoom chips = shorter ? numbered : room;
  chips.chips = true;
  RingGeometry fitted = ring_geometry(chips, n);
  fitted.short_labels = fitted.short_labels || shorter;
  return fitted;
}

bool cards_overlap(const RingGeometry& g, int n, float gap) {
  ImVec2 apart;
  return closest_pair(g, n, gap, apart);
}

bool under_a_card(const RingGeometry& g, int n, ImVec2 a, ImVec2 b) {
  for (int r = 0; r < n; ++r) {
    const ImVec2 c = ring_point(g, ring_angle(r, n));
    if (a.x < c.x + g.card.x / 2 && b.x > c.x - g.card.x / 2 && a.y < c.y + g.card.y / 2 && b.y > c.y - g.card.y / 2)
      return true;
  }
  return false;
}

ImVec2 packet_size(const RingGeometry& g, float font_size) {
  if (g.compact) return ImVec2(std::max(g.cell_w * 1.1f, font_size * 1.5f), font_size * 1.15f);
  return ImVec2(std::max(g.cell_w * 1.2f, font_size * 1.8f), font_size * 1.5f);
}

TrackStretch visible_stretch(const RingGeometry& g, int n, float a0, float a1, ImVec2 half) {
  return free_stretch(g, a0, a1, [&](ImVec2 p) {
    return under_a_card(g, n, ImVec2(p.x - half.x, p.y - half.y), ImVec2(p.x + half.x, p.y + half.y));
  });
}

float packet_room(const RingGeometry& g, int n, float font_size) {
  const ImVec2 size = packet_size(g, font_size);
  float shortest = FLT_MAX;
  for (int r = 0; r < n; ++r) {
    const float a0 = ring_angle(r, n);
    shortest = std::min(shortest, visible_stretch(g, n, a0, a0 + 2 * kPi / static_cast<float>(n), ImVec2(size.x / 2, size.y / 2)).length);
  }
  return shortest;
}

}  // namespace ringlab::viz
