#pragma once
// Side panes shown from their last drawing. On a CPU renderer (no GPU: Mesa's llvmpipe) a frame's
// cost is its pixels and triangles, and the side panes (the loss plot, the sampler's grid, the
// timeline, the controls) are most of them. While a run's workers compute on the same cores,
// each side pane is drawn into a texture of its own when it is due
// (view_model::FramePacer::side_pane_due; at most one a frame, the longest-waiting), and in the
// frames between, its draw list is replaced by a copy of that texture: the frame then costs the
// big pane and a few copies.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <imgui.h>

#include "engine/view_model/frame_pacing.h"
#include "viz/app_state.h"
#include "viz/frame_change.h"

namespace ringlab::app {

class PaneCache {
 public:
  PaneCache() = default;
  ~PaneCache();  // frees the textures: the window's GL context must still be current
  PaneCache(const PaneCache&) = delete;
  PaneCache& operator=(const PaneCache&) = delete;

  // In a frame that may reuse side panes (FramePacer::side_panes_reusable), for each side pane:
  // draws it afresh into its texture when it is due, and takes its draw list out of `draw_data`
  // (a due pane's too: its texture now holds exactly what its list would draw); draw_panes then
  // copies the textures to the screen. In any other frame it changes nothing, and every pane is
  // due in the next one that may (what the person did may have changed them). `background`:
  // the colour under the panes. Returns how many side panes were shown from an earlier drawing.
  int apply(ImDrawData& draw_data, const std::vector<viz::PaneDrawn>& panes, const view_model::FramePacer& pacer,
            const view_model::FrameCause& cause, int64_t now_ns, ImVec4 background);
  // Copies the panes that apply took out into the bound framebuffer (its height in pixels), after
  // it is cleared and before the rest of the frame is drawn over it (menus and tooltips).
  void draw_panes(int framebuffer_height) const;
  // Where the last apply changed what its panes put on screen (display coordinates): the panes
  // drawn afresh, and where a pane shown from its texture the time before is no longer shown.
  // The draw data, which no longer holds the panes, may look the same as the last frame's.
  const std::vector<viz::ScreenRect>& changed_rects() const { return changed_rects_; }

 private:
  struct Entry {
    uint32_t framebuffer = 0, texture = 0;
    int width = 0, height = 0;  // of the texture, in framebuffer pixels
    ImVec2 min, max;            // where the pane was when last drawn afresh
    ImVec2 scale;               // and the framebuffer's pixels per unit then
    int64_t drawn_ns = 0;
  };
  std::string next_refresh(const ImDrawData& frame, const std::vector<viz::PaneDrawn>& panes, int64_t now_ns) const;
  bool draw_afresh(Entry& e, ImDrawList* list, ImVec2 min, ImVec2 max, const ImDrawData& frame, ImVec4 background);
  static void release(Entry& e);

  std::map<std::string, Entry> entries_;
  std::vector<const Entry*> shown_;  // this frame's, for draw_panes
  std::vector<viz::ScreenRect> changed_rects_;
};

}  // namespace ringlab::app
