// The ring view's cards never cover each other where the pane has room for them: every world
// size from 2 to 8 in the rooms the app gives the ring (the big pane, and the small one at a
// projector's 1280x720, where six ranks once stacked their side cards half over each other),
// at the text sizes a class uses. Pure geometry: nothing is drawn.
#include <doctest/doctest.h>

#include <string>

#include "viz/ring_geometry.h"

using ringlab::viz::cards_overlap;
using ringlab::viz::packet_room;
using ringlab::viz::packet_travel;
using ringlab::viz::ring_angle;
using ringlab::viz::ring_geometry;
using ringlab::viz::ring_point;
using ringlab::viz::RingGeometry;
using ringlab::viz::RingRoom;

namespace {

// The ring's room in the app's panes at 1280x720 (logical pixels, under the pane's words): the
// small pane beside the big Timeline, and the big pane.
constexpr float kSmallW = 300, kSmallH = 92, kBigW = 560, kBigH = 250;

RingRoom room(float w, float h, float font, int n, bool compact) {
  RingRoom r;
  r.min = ImVec2(100, 50);
  r.max = ImVec2(100 + w, 50 + h);
  r.font_size = font;
  const float digits = n > 10 ? 2 : 1;  // of the highest rank, n - 1
  r.label_w = font * (1.0f + 0.6f * (static_cast<float>(std::string("rank ").size()) + digits)) + 8;
  r.short_label_w = font * (1.0f + 0.6f * digits) + 8;
  r.compact = compact;
  return r;
}

bool inside(const RingGeometry& g, int n, const RingRoom& r) {
  for (int k = 0; k < n; ++k) {
    const ImVec2 c = ring_point(g, ring_angle(k, n));
    if (c.x - g.card.x / 2 < r.min.x - 1 || c.x + g.card.x / 2 > r.max.x + 1) return false;
    if (c.y - g.card.y / 2 < r.min.y - 1 || c.y + g.card.y / 2 > r.max.y + 1) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cards clear each other in the small pane at 1280x720, up to six ranks") {
  for (int n = 2; n <= 6; ++n) {
    CAPTURE(n);
    const RingRoom r = room(kSmallW, kSmallH, 13, n, true);
    const RingGeometry g = ring_geometry(r, n);
    CHECK_FALSE(cards_overlap(g, n, 13 * 0.3f));
    CHECK(inside(g, n, r));
    CHECK(g.card.x >= (g.short_labels ? r.short_label_w : r.label_w));  // the label stays on its card
    CHECK(g.cell_h >= 13 * 0.5f);  // the chunks are still there to see
    // "rank 3" up to four; from five the number alone, where the word would leave the packets
    // no gap between the cards.
    CHECK(g.short_labels == (n >= 5));
  }
}

TEST_CASE("seven and eight ranks in the small pane: the cards carry their number alone") {
  for (int n = 7; n <= 8; ++n) {
    CAPTURE(n);
    const RingRoom r = room(kSmallW, kSmallH, 13, n, true);
    const RingGeometry g = ring_geometry(r, n);
    CHECK(g.short_labels);
    CHECK_FALSE(cards_overlap(g, n, 13 * 0.3f));
    CHECK(inside(g, n, r));
    CHECK(g.card.x >= r.short_label_w);
  }
  // Up to four, the word stays.
  CHECK_FALSE(ring_geometry(room(kSmallW, kSmallH, 13, 4, true), 4).short_labels);
}

TEST_CASE("up to sixteen ranks, the world slider's most, in the big pane") {
  for (int n = 2; n <= 16; ++n) {
    CAPTURE(n);
    const RingRoom r = room(kBigW, kBigH, 13, n, false);
    CHECK_FALSE(cards_overlap(ring_geometry(r, n), n, 13 * 0.3f));
  }
}

TEST_CASE("six ranks in the small pane go round a squarer track, in two rows") {
  const RingRoom r = room(kSmallW, kSmallH, 13, 6, true);
  const RingGeometry g = ring_geometry(r, 6);
  CHECK(g.exponent > 2);
  // Ranks 5, 0, 1 along the top and 4, 3, 2 along the bottom: the side pairs one above the other.
  const float top = ring_point(g, ring_angle(0, 6)).y, bottom = ring_point(g, ring_angle(3, 6)).y;
  for (int k : {1, 5}) CHECK(ring_point(g, ring_angle(k, 6)).y < (top + bottom) / 2);
  for (int k : {2, 4}) CHECK(ring_point(g, ring_angle(k, 6)).y > (top + bottom) / 2);
}

TEST_CASE("the big pane keeps an ellipse with room to spare, at 1x and 1.5x text") {
  for (const float font : {13.0f, 19.5f})
    for (int n = 2; n <= 8; ++n) {
      CAPTURE(font);
      CAPTURE(n);
      const RingRoom r = room(kBigW, kBigH, font, n, false);
      const RingGeometry g = ring_geometry(r, n);
      CHECK_FALSE(cards_overlap(g, n, font * 0.3f));
      CHECK(inside(g, n, r));
      if (font == 13.0f) CHECK(g.exponent == 2);
    }
}

TEST_CASE("one rank sits in the middle; two side by side") {
  const RingRoom r = room(kBigW, kBigH, 13, 2, false);
  const RingGeometry one = ring_geometry(r, 1);
  CHECK(ring_point(one, ring_angle(0, 1)).x == doctest::Approx(100 + kBigW / 2));
  const RingGeometry two = ring_geometry(r, 2);
  CHECK(ring_point(two, ring_angle(0, 2)).x < ring_point(two, ring_angle(1, 2)).x);
  CHECK(ring_point(two, ring_angle(0, 2)).y == doctest::Approx(ring_point(two, ring_angle(1, 2)).y));
}

TEST_CASE("twelve ranks in the small pane: cards as their labels alone, clear of each other") {
  const RingRoom r = room(kSmallW, kSmallH, 14, 12, true);
  const RingGeometry g = ring_geometry(r, 12);
  CHECK_FALSE(g.cells);
  CHECK(g.short_labels);
  CHECK_FALSE(cards_overlap(g, 12, 14 * 0.3f));
  CHECK(inside(g, 12, r));
  // Eight keep their chunk cells there.
  CHECK(ring_geometry(room(kSmallW, kSmallH, 14, 8, true), 8).cells);
}

TEST_CASE("a room too small for eight cards says so rather than claim they clear") {
  const RingRoom r = room(120, 40, 13, 8, true);
  CHECK(cards_overlap(ring_geometry(r, 8), 8, 13 * 0.3f));
}

TEST_CASE("a short pane's flat ring leaves each packet a gap between neighbouring cards") {
  // The small Ring pane of a 1280x720 window beside an enlarged Training view (349x88 under the
  // Ring's three lines of words), beside an enlarged Timeline (284x96), and the latter with the
  // text a step larger (273x82 at 14.3 px): the cards cleared each other, and packets sat on two
  // of them, over their chunks, or went under them unseen. Narrower and lower cards, rows of
  // cards (a squarer track, or four turned half a place) and, for five or more, their numbers
  // alone leave every packet a gap now, each card still with its chunks.
  struct Room {
    float w, h, font;
  };
  // (Six or more in the smallest of them leave no gap even so: their packets are drawn over the
  // cards, clear of the names.)
  for (const Room size : {Room{349, 88, 13}, Room{284, 96, 13}, Room{273, 82, 14.3f}})
    for (int n = 3; n <= (size.font > 13 ? 5 : 8); ++n) {
      CAPTURE(size.w);
      CAPTURE(n);
      const RingRoom r = room(size.w, size.h, size.font, n, true);
      const RingGeometry g = ring_geometry(r, n);
      CHECK_FALSE(cards_overlap(g, n, size.font * 0.3f));
      CHECK(inside(g, n, r));
      CHECK(packet_room(g, n, size.font) >= packet_travel(size.font));
      CHECK(g.cells);
      CHECK(g.card.x >= (g.short_labels ? r.short_label_w : r.label_w));
    }
}

TEST_CASE("a room with gaps to spare keeps its cards as they were") {
  // The big pane at 1920x1080: packets have room, and the cards keep their natural width.
  const RingRoom r = room(900, 420, 13, 4, false);
  const RingGeometry g = ring_geometry(r, 4);
  CHECK(packet_room(g, 4, 13) >= 13 * 1.5f);
  CHECK(g.card.x == doctest::Approx(13 * 17.0f).epsilon(0.3));
  CHECK(g.exponent == 2);
  CHECK(g.turn == 0);  // rank 0 at the top, as the class knows the ring
}

TEST_CASE("in a small pane the cards stay in the ring's room, off the words above and under it") {
  // A newcomer's walk found cards drawn over the "Next:" line and the timing line under the ring
  // (5 ranks beside an enlarged Training view; 3 and 5 with the text a step larger): the cards
  // kept their chunk cells in a room too low for them. Such a room now gets the cards as their
  // labels alone, which fit. (Below about 50 pixels not even those do.)
  for (const float font : {13.0f, 14.3f})
    for (int n = 2; n <= 8; ++n)
      for (float w = 250; w <= 420; w += 20)
        for (float h = 54; h <= 120; h += 6) {
          CAPTURE(font);
          CAPTURE(n);
          CAPTURE(w);
          CAPTURE(h);
          const RingRoom r = room(w, h, font, n, true);
          const RingGeometry g = ring_geometry(r, n);
          CHECK(inside(g, n, r));
          CHECK_FALSE(cards_overlap(g, n, font * 0.3f));
        }
}

// A link's arrow head points where the ring goes: along the link's course a twenty-fourth of it
// either side (as the link is drawn). On a squarer track the top's first and last points sat 2 px
// apart, the track stepping back where it closes, and the arrow of the link over the top of a
// ring in rows (7 -> 0 of 8) pointed against the ring.
TEST_CASE("every link's arrow points along the ring, in every room and world") {
  using ringlab::viz::ring_direction;
  using ringlab::viz::visible_stretch;
  int against = 0, links = 0;
  for (int n = 3; n <= 16; ++n)
    for (float w = 200; w <= 600; w += 20)
      for (float h = 60; h <= 280; h += 10)
        for (const bool compact : {true, false}) {
          const RingRoom r = room(w, h, 13, n, compact);
          const RingGeometry g = ring_geometry(r, n);
          for (int k = 0; k < n; ++k, ++links) {
            const float a0 = ring_angle(k, n), a1 = ring_angle(k + 1, n), step = (a1 - a0) / 24;
            const float mid = visible_stretch(g, n, a0, a1, ImVec2(2, 2)).middle;
            const ImVec2 d = ring_direction(g, mid), ahead = ring_point(g, mid + step), behind = ring_point(g, mid - step);
            if (d.x * (ahead.x - behind.x) + d.y * (ahead.y - behind.y) <= 0 && against++ < 3)
              MESSAGE(n << " ranks, " << w << "x" << h << std::string(compact ? " compact" : "") << ": link " << k << " -> " << (k + 1) % n);
          }
        }
  CHECK(links > 30000);
  CHECK(against == 0);
}
