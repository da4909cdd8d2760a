// Help > About: ringlab's version and what it is made with, each part with its licence. The
// rows follow the build: a backend that was not built in is not listed.
#include <imgui.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/theme.h"
#include "viz/views.h"

namespace ringlab::viz {
namespace {

struct Part {
  const char* name;
  const char* use;
  const char* licence;  // SPDX where there is an identifier
};

// As the Debian packages' copyright files state them; glad's generated loader as the header it
// writes does (its text comes from the Khronos XML).
constexpr Part kParts[] = {
    {"Dear ImGui", "the interface", "MIT"},
    {"GLFW", "window, OpenGL context, input", "Zlib"},
    {"glad", "generates the OpenGL loader at build time", "MIT"},
    {"glad's generated loader", "loads OpenGL (from the Khronos XML)", "(WTFPL OR CC0-1.0) AND Apache-2.0"},
#ifdef RINGLAB_HAVE_GLOO
    {"gloo", "the gloo backend", "BSD-3-Clause"},
#endif
#ifdef RINGLAB_HAVE_MPI
    {"Open MPI", "the MPI backend", "BSD-3-Clause"},
#endif
#ifdef RINGLAB_CUDA_PLUGIN
    {"NCCL", "the NCCL backend", "BSD-3-Clause"},
    {"CUDA runtime, cuBLAS", "the model on GPUs", "NVIDIA CUDA Toolkit EULA"},
#endif
    {"CLI11", "command line", "BSD-3-Clause"},
    {"nlohmann-json", "scenarios, events and reports", "MIT"},
    {"{fmt}", "text formatting", "MIT"},
    {"stb", "PNG screenshots, font rasterising", "public domain or MIT"},
    {"DejaVu fonts", "the text", "Bitstream Vera licence; DejaVu's changes public domain"},
    {"doctest", "unit tests (not part of the app)", "MIT"},
    {"PyTorch", "parity scripts and benchmarks (not part of the app)", "BSD-3-Clause"},
};

void parts_table() {
  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_NoHostExtendX;
  if (!ImGui::BeginTable("##about_parts", 3, flags)) return;
  ImGui::TableSetupColumn(tr("Part"));
  ImGui::TableSetupColumn(tr("Used for"));
  ImGui::TableSetupColumn(tr("Licence"));
  ImGui::TableHeadersRow();
  for (const Part& p : kParts) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(tr(p.name));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(tr(p.use));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(tr(p.licence));
  }
  ImGui::EndTable();
}

}  // namespace

std::string AboutText(const std::string& version) {
  std::string out = "ringlab " + version + "\n" + tr("DDP and ring all-reduce, for real") + "\n\n";
  size_t name_width = 0, use_width = 0;
  for (const Part& p : kParts) {
    name_width = std::max(name_width, std::string(tr(p.name)).size());
    use_width = std::max(use_width, std::string(tr(p.use)).size());
  }
  for (const Part& p : kParts)
    out += fmt::format("  {:<{}}  {:<{}}  {}\n", tr(p.name), name_width, tr(p.use), use_width, tr(p.licence));
  return out + "\n" + tr("Full licence texts: /usr/share/doc/<package>/copyright") + "\n";
}

void DrawAboutWindow(AppState& state) {
  if (state.about_open && state.escape_pressed) state.about_open = false;
  if (!state.about_open) return;
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
  if (ImGui::Begin(label("About ringlab", "about").c_str(), &state.about_open, flags)) {
    ImGui::PushFont(fonts().big);
    ImGui::Text("ringlab %s", state.version.c_str());
    ImGui::PopFont();
    ImGui::TextUnformatted(tr("DDP and ring all-reduce, for real"));
    ImGui::Spacing();
    parts_table();
    ImGui::Spacing();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().text_dim), "%s",
                       tr("Full licence texts: /usr/share/doc/<package>/copyright"));
  }
  ImGui::End();
}

}  // namespace ringlab::viz
