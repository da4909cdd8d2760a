#include "viz/frame_change.h"

#include <imgui.h>

namespace ringlab::viz {
namespace {

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

}  // namespace

bool FrameChange::changed(const ImDrawData& draw) {
  now_.clear();
  append(now_, &draw.DisplaySize, 1);
  append(now_, &draw.FramebufferScale, 1);
  for (int i = 0; i < draw.CmdListsCount; ++i) {
    const ImDrawList& list = *draw.CmdLists[i];
    for (const ImDrawCmd& cmd : list.CmdBuffer) {  // what each draws; callbacks are not used
      append(now_, &cmd.ClipRect, 1);
      append(now_, &cmd.TextureId, 1);
      append(now_, &cmd.VtxOffset, 1);
      append(now_, &cmd.IdxOffset, 1);
      append(now_, &cmd.ElemCount, 1);
    }
    append(now_, list.VtxBuffer.Data, static_cast<size_t>(list.VtxBuffer.Size));
    append(now_, list.IdxBuffer.Data, static_cast<size_t>(list.IdxBuffer.Size));
  }
  const bool differs = now_ != last_;
  last_.swap(now_);
  return differs;
}

}  // namespace ringlab::viz
