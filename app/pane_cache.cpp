// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/pane_cache.h"

#include <glad/gl.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ringlab::app {

namespace {

int slot_of(const ImDrawData& frame, const ImDrawList* list) {
  for (int i = 0; i < frame.CmdListsCount; ++i)
    if (frame.CmdLists[i] == list) return i;
  return -1;  // drawn nothing this frame: Dear ImGui left it out
}

bool same_place(ImVec2 a_min, ImVec2 a_max, ImVec2 b_min, ImVec2 b_max) {
  return a_min.x == b_min.x && a_min.y == b_min.y && a_max.x == b_max.x && a_max.y == b_max.y;
}

}  // namespace

// The side pane drawn afresh in this frame besides those that moved or were never drawn
// (FramePacer::side_pane_to_refresh), "" when none.
std::string PaneCache::next_refresh(const ImDrawData& frame, const std::vector<viz::PaneDrawn>& panes,
                                    int64_t now_ns) const {
  std::vector<std::string> ids;
  std::vector<int64_t> drawn;
  for (const viz::PaneDrawn& pane : panes) {
    if (pane.every_frame || slot_of(frame, pane.list) < 0) continue;
    const auto it = entries_.find(pane.id);
    ids.push_back(pane.id);
    drawn.push_back(it == entries_.end() ? 0 : it->second.drawn_ns);
  }
  const int pick = view_model::FramePacer::side_pane_to_refresh(now_ns, drawn);
  return pick < 0 ? std::string() : ids[static_cast<size_t>(pick)];
}

PaneCache::~PaneCache() {
  for (auto& [id, e] : entries_) release(e);
}

void PaneCache::release(Entry& e) {
  if (e.texture) glDeleteTextures(1, &e.texture);
  if (e.framebuffer) glDeleteFramebuffers(1, &e.framebuffer);
  e.texture = e.framebuffer = 0;
  e.width = e.height = 0;
  e.drawn_ns = 0;
}

int PaneCache::apply(ImDrawData& frame, const std::vector<viz::PaneDrawn>& panes, const view_model::FramePacer& pacer,
                     const view_model::FrameCause& cause, int64_t now_ns, ImVec4 background) {
  changed_rects_.clear();
  std::vector<viz::ScreenRect> shown_before;
  for (const Entry* e : shown_) shown_before.push_back(viz::ScreenRect{e->min.x, e->min.y, e->max.x, e->max.y});
  shown_.clear();
  if (!pacer.side_panes_reusable(cause)) {
    for (auto& [id, e] : entries_) e.drawn_ns = 0;
    changed_rects_ = shown_before;  // the panes' lists are drawn there again, or something else is
    return 0;
  }
  int reused = 0;
  const std::string refreshed = next_refresh(frame, panes, now_ns);
  for (const viz::PaneDrawn& pane : panes) {
    const int slot = pane.every_frame ? -1 : slot_of(frame, pane.list);
    if (slot < 0) continue;
    Entry& e = entries_[pane.id];
    const ImVec2 min(pane.x0, pane.y0), max(pane.x1, pane.y1);
    if (!same_place(min, max, e.min, e.max) || e.drawn_ns == 0 || refreshed == pane.id) {
      if (!draw_afresh(e, pane.list, min, max, frame, background)) continue;  // shown as it is
      e.drawn_ns = now_ns;
      changed_rects_.push_back(viz::ScreenRect{min.x, min.y, max.x, max.y});
    } else {
      ++reused;
    }
    shown_.push_back(&e);
    frame.CmdLists[slot] = nullptr;
  }
  // A pane's texture shown last frame where none is shown now (the pane moved or went) leaves
  // pixels that the frame's lists may not all cover.
  for (const viz::ScreenRect& before : shown_before)
    if (std::none_of(shown_.begin(), shown_.end(), [&](const Entry* e) {
          return same_place(e->min, e->max, ImVec2(before.x0, before.y0), ImVec2(before.x1, before.y1));
        }))
      changed_rects_.push_back(before);
  // The panes shown from their textures leave the draw data: draw_panes copies them in.
  int kept = 0;
  frame.TotalVtxCount = frame.TotalIdxCount = 0;
  for (int i = 0; i < frame.CmdListsCount; ++i) {
    if (!frame.CmdLists[i]) continue;
    frame.CmdLists[kept++] = frame.CmdLists[i];
    frame.TotalVtxCount += frame.CmdLists[i]->VtxBuffer.Size;
    frame.TotalIdxCount += frame.CmdLists[i]->IdxBuffer.Size;
  }
  frame.CmdListsCount = kept;
  return reused;
}

// A framebuffer copy: no blending and nothing for Dear ImGui to draw. (On llvmpipe it still
// costs about a shaded pixel each, some 6 ms for the side panes at 1920x1080: Mesa keeps a
// window's rows top-down and a texture's bottom-up, so the copy flips and goes through a
// shader.) In GL's terms both count rows from the bottom, so the pane lands the right way up.
void PaneCache::draw_panes(int framebuffer_height) const {
  if (shown_.empty()) return;
  GLint target = 0;
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &target);
  for (const Entry* e : shown_) {
    const int x = static_cast<int>(std::lround(e->min.x * e->scale.x));
    const int top = static_cast<int>(std::lround(e->min.y * e->scale.y));
    const int y = framebuffer_height - top - e->height;
    glBindFramebuffer(GL_READ_FRAMEBUFFER, e->framebuffer);
    glBlitFramebuffer(0, 0, e->width, e->height, x, y, x + e->width, y + e->height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(target));
}

// Renders the pane's draw list alone into its texture, over the background the panes sit on,
// with the projection of the pane's rectangle: the texture then holds, pixel for pixel, what the
// list draws there on screen (opaque: the blending keeps the cleared alpha of 1).
bool PaneCache::draw_afresh(Entry& e, ImDrawList* list, ImVec2 min, ImVec2 max, const ImDrawData& frame,
                            ImVec4 background) {
  const ImVec2 scale = frame.FramebufferScale;
  const int width = static_cast<int>(std::lround((max.x - min.x) * scale.x));
  const int height = static_cast<int>(std::lround((max.y - min.y) * scale.y));
  if (width <= 0 || height <= 0) return false;
  if (width != e.width || height != e.height) {
    release(e);
    glGenTextures(1, &e.texture);
    glBindTexture(GL_TEXTURE_2D, e.texture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);  // copied 1:1, never filtered
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glGenFramebuffers(1, &e.framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, e.framebuffer);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, e.texture, 0);
    const bool complete = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (!complete) {
      release(e);
      return false;
    }
    e.width = width;
    e.height = height;
  }
  GLint previous = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous);
  glBindFramebuffer(GL_FRAMEBUFFER, e.framebuffer);
  glViewport(0, 0, width, height);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(background.x, background.y, background.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImDrawData one = frame;
  ImDrawList* lists[] = {list};
  one.CmdLists = lists;
  one.CmdListsCount = 1;
  one.TotalVtxCount = list->VtxBuffer.Size;
  one.TotalIdxCount = list->IdxBuffer.Size;
  one.DisplayPos = min;
  one.DisplaySize = ImVec2(max.x - min.x, max.y - min.y);
  ImGui_ImplOpenGL3_RenderDrawData(&one);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous));
  e.min = min;
  e.max = max;
  e.scale = scale;
  return true;
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
