#include "viz/torch_script_view.h"

#include <imgui.h>

#include "viz/i18n.h"
#include "viz/widgets.h"

namespace ringlab::viz {

void DrawTorchScriptControls(AppState& state) {
  TorchState& t = state.torch;
  if (!WrappedHeader(tr("PyTorch script"), "torch_script", t.use || t.side_by_side)) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(tr("Your own DDP script, started once per rank with torchrun's environment. Two lines of "
                            "ringlab_torch in it report to this window (README: \"Watch your own PyTorch job\")."));
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##torch_script", tr("path to a .py script"), t.path.data(), t.path.size());
  const bool has_script = t.path[0] != '\0';
  ImGui::BeginDisabled(!has_script);
  FlowCheckbox(tr("Run it instead of ringlab's engine"), &t.use, true);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    Tooltip(tr("The next Start runs the script with the world size above; every view draws what it "
                               "reports."));
  FlowCheckbox(tr("Side by side"), &t.side_by_side, true);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    Tooltip(tr("The next Start runs the script, then ringlab's engine on the same job: the Training "
                               "view draws the two loss curves over each other."));
  ImGui::EndDisabled();
}

}  // namespace ringlab::viz
