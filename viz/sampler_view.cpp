// The sampler: every dataset index as a cell coloured by the rank that trains on it this
// epoch, padded repeats marked, each rank's current batch outlined, an epoch scrubber, and the
// "forget set_epoch" switch that shows the same order coming back every epoch.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "engine/view_model/sampler_grid.h"
#include "viz/fonts.h"
#include "viz/i18n.h"
#include "viz/rank_colors.h"
#include "viz/theme.h"
#include "viz/views.h"
#include "viz/widgets.h"

namespace ringlab::viz {
namespace {

constexpr int64_t kMaxCells = 16384;  // larger datasets: one cell per group of indices

struct Cells {
  int columns = 1;
  int rows = 1;
  float size = 1;
  int64_t per_cell = 1;
  float label_size = 0;  // the font size of the numbers in the cells; 0: none
};

Cells fit_cells(int64_t count, ImVec2 area) {
  Cells c;
  c.per_cell = std::max<int64_t>(1, (count + kMaxCells - 1) / kMaxCells);
  const int64_t cells = (count + c.per_cell - 1) / c.per_cell;
  // The largest square cell that fits all cells in the area.
  float best = 1;
  for (int columns = 1; columns <= cells; ++columns) {
    const int64_t rows = (cells + columns - 1) / columns;
    const float size = std::min(area.x / columns, area.y / rows);
    if (size > best) {
      best = size;
      c.columns = columns;
      c.rows = static_cast<int>(rows);
    }
    if (columns * best > area.x) break;
  }
  c.size = best;
  return c;
}

// The font size a cell's number is written in (its index, or with Show order its place in its
// shard): the widest number fits inside the cell's frame, no smaller than a size still read from
// the back of a classroom; 0 when the cells are too small for that (or hold several indices).
float cell_label_size(const Cells& cells, int64_t widest_number) {
  if (cells.per_cell != 1) return 0;
  ImFont* mono = fonts().mono;
  const float inner = cells.size - (cells.size > 8 ? 3.0f : 0.0f) - 4.0f;
  const std::string widest = std::to_string(std::max<int64_t>(widest_number, 0));
  const float width = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, widest.c_str()).x;
  const float size = std::min({mono->FontSize * 0.8f, inner * mono->FontSize / width, inner * 0.8f});
  return size >= mono->FontSize * 0.6f ? size : 0;
}

// A shard line's hover read-out: the whole order its line cuts off at the pane's edge.
void shard_read_out(int rank, const std::vector<int64_t>& shard) {
  constexpr size_t kMostListed = 512;
  std::string list;
  for (size_t i = 0; i < shard.size() && i < kMostListed; ++i) list += fmt::format("{}{}", i ? " " : "", shard[i]);
  if (shard.size() > kMostListed) list += " " + trf("… and {} more", shard.size() - kMostListed);
  WrappedTooltip(trf("rank {}: its {} indices in the order it trains on them", rank, shard.size()) + "\n" + list, 40);
}

// Each rank's shard in the order it trains on it (with set_epoch forgotten, the same every
// epoch), one line per rank, as many lines as `rows` (the last one says how many ranks did not
// fit when there are more).
// `more`: that last line as drawn, in the first of its forms that fits the width (the others cut).
void draw_shard_order(ImDrawList* dl, ImVec2 at, float width, const view_model::SamplerGrid& grid, int rows,
                      std::string& more) {
  const Palette& p = palette();
  ImFont* mono = fonts().mono;
  const float fs = ImGui::GetFontSize();
  const int shown = grid.world_size <= rows ? grid.world_size : std::max(rows - 1, 0);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int r = 0; r < shown; ++r) {
    const auto& shard = grid.shards[r];
    if (!shard.empty() && ImGui::IsWindowHovered() && mouse.x >= at.x && mouse.x < at.x + width && mouse.y >= at.y &&
        mouse.y < at.y + fs * 1.25f)
      shard_read_out(r, shard);
    float x = at.x + DrawRankLabel(dl, at, r, trf("rank {}:", r)) + fs * 0.5f;
    if (shard.empty()) dl->AddText(ImVec2(x, at.y), p.text_dim, tr("no shard yet"));
    for (size_t i = 0; i < shard.size(); ++i) {
      const std::string s = fmt::format("{}", shard[i]);
      const ImVec2 vs = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, s.c_str());
      if (x + vs.x + fs > at.x + width) {
        dl->AddText(mono, mono->FontSize, ImVec2(x, at.y), p.text_dim, "…");
        break;
      }
      const bool padded = !grid.padded[r].empty() && grid.padded[r][i];
      dl->AddText(mono, mono->FontSize, ImVec2(x, at.y), padded ? p.bad : p.text, s.c_str());
      x += vs.x + mono->FontSize * 0.6f;
    }
    at.y += fs * 1.25f;
  }
  more.clear();
  if (shown >= grid.world_size) return;
  const std::vector<std::string> forms = {shown == 0 ? std::string(tr("each rank's indices in order: enlarge the pane"))
                                                     : trf("the order of {} more ranks: enlarge the pane", grid.world_size - shown),
                                          shown == 0 ? std::string(tr("indices in order: enlarge the pane"))
                                                     : trf("{} more ranks: enlarge the pane", grid.world_size - shown),
                                          tr("enlarge the pane")};
  const std::string* fits = FirstThatFits(forms, width);
  more = fits ? *fits : forms.back();
  dl->PushClipRect(at, ImVec2(at.x + width, at.y + fs * 1.25f), true);
  dl->AddText(at, p.text_dim, more.c_str());
  dl->PopClipRect();
}

// The pane's switches: set_epoch forgotten (a live run asks before it starts again), following
// the newest epoch, and the cells labelled by position in their shard instead of by index.
void draw_sampler_switches(AppState& state) {
  bool forget = !state.job.set_epoch;
  if (FlowCheckbox(label("Forget set_epoch", "forget_set_epoch"), &forget, true)) {
    if (state.run.live())
      state.pending_restart = {true, state.job.set_epoch};  // the run starts again only if the person says so
    state.job.set_epoch = !forget;
  }
  if (ImGui::IsItemHovered())
    Tooltip(tr("sampler.set_epoch(epoch) seeds each epoch's shuffle. Without it every epoch repeats epoch 0's order. Changing it during a run asks to start the run again."));
  FlowCheckbox(label("Newest epoch", "follow_epoch"), &state.sampler.follow);
  FlowCheckbox(label("Show order", "label_order"), &state.sampler.label_order);
  if (ImGui::IsItemHovered())
    Tooltip(tr("Each cell shows its place in its rank's shard (the order the rank trains on it) instead of its dataset index, where the cell has room for a number."));
}

const view_model::Generation* generation_of(const view_model::RunModel& model, int index) {
  for (const auto& g : model.generations())
    if (g.index == index) return &g;
  return nullptr;
}

int world_of(const view_model::RunModel& model, int index) {
  const view_model::Generation* g = generation_of(model, index);
  return !g ? 0 : g->world_size > 0 ? g->world_size : (g->has_job ? g->job.world_size : 0);
}

// The epoch on screen (its slot among the recorded ones): the newest while following, else the
// chosen one, or the oldest still recorded once it has dropped out. With more than one, a slider.
int choose_epoch(const view_model::RunModel& model, AppState& state, const std::vector<view_model::EpochKey>& epochs) {
  const auto chosen = std::lower_bound(epochs.begin(), epochs.end(), state.sampler.chosen);
  int slot = state.sampler.follow
                 ? view_model::followed_epoch(model.sampler(), epochs, world_of(model, epochs.back().generation), state.run.live())
                 : std::min(static_cast<int>(chosen - epochs.begin()), static_cast<int>(epochs.size()) - 1);
  if (state.sampler.follow) state.sampler.chosen = epochs[slot];  // "Newest epoch" unticked: stay on it
  const std::string text = trf("epoch {}", grouped(epochs[slot].epoch + 1));  // as the status says it
  state.said.sampler_epoch = text;
  // With one epoch there is nothing to choose, and a slider over one value is all grab: its
  // words would sit dark on the grab's blue.
  if (epochs.size() == 1) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(text.c_str());
  } else {
    // The words beside the slider, not on it: on a short run's slider the grab is wide, and "epoch
    // 2" sat half on it, dark on blue. Not typed into: the slider's value is a slot, not the epoch.
    if (SliderIntBeside("##epoch", &slot, 0, static_cast<int>(epochs.size()) - 1, text, ImGuiSliderFlags_NoInput)
            .changed) {
      state.sampler.follow = false;
      state.sampler.chosen = epochs[slot];
    }
  }
  return slot;
}

using Shards = std::vector<std::vector<int64_t>>;

// Under the slider: how the indices were dealt, and whether this epoch's order is the previous
// epoch's again, said only of two epochs every rank reported (a shard still on its way would read
// as a new order). A rank that failed or has not reached the epoch has no shard, and is said to be
// missing rather than counted as 0.
// `first`: the words for an epoch with none before it in its world (the run's first, or a new
// world's first after a live change or a restart, which goes on from a later epoch).
void draw_epoch_summary(const view_model::SamplerGrid& grid, const Shards& shards, const Shards* previous,
                        int64_t samples, const std::string& first, SaidOnScreen& said) {
  std::string& shards_differ = said.sampler_shards_differ;
  const Palette& p = palette();
  const int world = static_cast<int>(shards.size());
  size_t per_rank = 0;
  for (const auto& shard : shards) per_rank = std::max(per_rank, shard.size());
  const int reported = view_model::reported_ranks(shards);
  // One line where the pane has room for the full or the short words: a second line took the
  // grid's room (a mosaic of touching cells in Indonesian at 1280x720).
  std::vector<std::string> summary = {
      trf("{} indices over {} rank{} · {} per rank · {} padded repeats", samples, grid.world_size,
          grid.world_size == 1 ? "" : "s", per_rank, grid.padded_count),
      trf("{} indices · {} per rank · {} padded", samples, per_rank, grid.padded_count)};
  if (reported < grid.world_size)
    for (std::string& form : summary) form += " · " + trf("{} of {} ranks reported this epoch", reported, grid.world_size);
  FittedOrWrapped(summary, palette().text);
  ImGui::PushTextWrapPos(0);
  // DistributedSampler pads every rank's shard to one length: shards that differ come from samplers
  // that do not see the same dataset (a script's rank given another one), and such ranks do not take
  // the same number of steps: a hang or a mismatch ahead, and the padding counted above means little.
  if (reported == world && world > 1) {
    std::vector<std::string> sizes;
    size_t shortest = per_rank;
    for (int r = 0; r < world; ++r) {
      shortest = std::min(shortest, shards[r].size());
      sizes.push_back(trf("rank {}: {}", r, shards[r].size()));
    }
    if (shortest != per_rank) {
      shards_differ = trf("The ranks' shards differ in length ({}): their samplers do not see the same dataset, and "
                          "the ranks will not take the same number of steps",
                          fmt::format("{}", fmt::join(sizes, ", ")));
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(p.bad), "%s", shards_differ.c_str());
    }
  }
  // Always a line here, so the grid under it keeps its place from epoch to epoch: a class compares
  // cells by where they sit, and the first epoch's grid sat a line higher than the second's.
  ImGui::PushFont(fonts().bold);
  if (previous && view_model::reported_ranks(*previous) == world && reported == world) {
    const bool same = view_model::same_order(view_model::shards_of_world(*previous, world), shards);
    said.sampler_order = same ? tr("Same order as the epoch before: set_epoch was not called")
                              : tr("New order: set_epoch reshuffled this epoch");
    const std::string brief = same ? tr("Same order: set_epoch not called") : tr("New order (set_epoch reshuffled)");
    FittedOrWrapped({said.sampler_order, brief}, same ? p.bad : p.ok);
  } else {
    said.sampler_order = previous ? tr("Same order or new: said once every rank has reported this epoch") : first;
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(p.text_dim), "%s", said.sampler_order.c_str());
  }
  ImGui::PopFont();
  ImGui::PopTextWrapPos();
}

// Per index of the dataset: which rank's current batch holds it (rank + 1; 0: none), and its
// position in its owner's shard (-1: no owner).
struct IndexMarks {
  std::vector<char> in_batch;
  std::vector<int64_t> order;
};

IndexMarks mark_indices(const view_model::SamplerHistory& history, const view_model::SamplerGrid& grid,
                        view_model::EpochKey key, int64_t samples, int64_t batch_size) {
  IndexMarks m{std::vector<char>(samples, 0), std::vector<int64_t>(samples, -1)};
  for (int r = 0; r < grid.world_size; ++r) {
    const view_model::RankBatch b = history.current_batch(r);
    if (b.epoch != key.epoch || b.generation != key.generation) continue;
    const view_model::BatchRange range = view_model::batch_positions(static_cast<int64_t>(grid.shards[r].size()), batch_size, b.batch);
    for (int64_t i = range.begin; i < range.end; ++i) {
      const int64_t index = grid.shards[r][i];
      if (index >= 0 && index < samples) m.in_batch[index] = static_cast<char>(r + 1);
    }
  }
  for (int r = 0; r < grid.world_size; ++r)
    for (size_t i = 0; i < grid.shards[r].size(); ++i) {
      const int64_t index = grid.shards[r][i];
      if (index >= 0 && index < samples && grid.owner[index] == r && m.order[index] < 0) m.order[index] = static_cast<int64_t>(i);
    }
  return m;
}

// One cell of the grid: its owner's colour, crossed out where the index was handed out again as
// padding, marked where it is in a rank's batch now, and labelled where the cell has the room.
void draw_cell(ImDrawList* dl, ImVec2 a, ImVec2 b, int64_t index, const view_model::SamplerGrid& grid,
               const IndexMarks& marks, const Cells& cells, bool label_order) {
  const Palette& p = palette();
  const int owner = grid.owner[index];
  dl->AddRectFilled(a, b, owner >= 0 ? rank_color(owner, 0.85f) : p.grid);
  if (grid.copies[index] > 1) {
    dl->AddLine(a, b, p.canvas, 2.0f);
    dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), p.canvas, 2.0f);
    dl->AddRect(a, b, p.bad, 0, 0, 2.0f);
  }
  if (marks.in_batch[index]) {  // a dot, or a frame on big cells
    if (cells.size > 18) dl->AddRect(a, b, p.highlight, 0, 0, 2.0f);
    else {
      const float r = std::max(1.0f, std::floor(cells.size * 0.15f));
      const ImVec2 c((a.x + b.x) / 2, (a.y + b.y) / 2);
      dl->AddRectFilled(ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y + r), p.highlight);
    }
  }
  if (cells.label_size > 0) {
    ImFont* mono = fonts().mono;
    const std::string s = fmt::format("{}", label_order ? marks.order[index] : index);
    const ImVec2 ts = mono->CalcTextSizeA(cells.label_size, FLT_MAX, 0, s.c_str());
    dl->AddText(mono, cells.label_size, ImVec2((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2), 0xFFFFFFFF, s.c_str());
  }
}

void cell_read_out(int64_t index, const view_model::SamplerGrid& grid, const IndexMarks& marks, const Cells& cells) {
  const int owner = grid.owner[index];
  std::string tip = owner >= 0 ? trf("index {}: rank {}, position {} of its shard", index, owner, marks.order[index])
                               : trf("index {}: no rank (dropped by drop_last)", index);
  if (grid.copies[index] > 1) tip.append("\n").append(trf("handed out {} times: the sampler pads by repeating indices", grid.copies[index]));
  if (marks.in_batch[index]) tip.append("\n").append(trf("marked: in rank {}'s batch of this step", marks.in_batch[index] - 1));
  if (cells.per_cell > 1) tip.append("\n").append(trf("each cell shows {} indices", cells.per_cell));
  WrappedTooltip(tip);
}

// The grid's cells and the shard lines under it, in the room `avail` gives.
struct GridPlan {
  Cells cells;
  int order_rows = 1;
  ImVec2 area;  // the grid's
};

// The shard lines below the grid get what is left once the grid has `min_grid_lines` lines' height
// (four; three when a line below must say why Show order shows nothing), and one line at least.
// Where even that does not fit (a live change's note above it, at 1280x720), the grid gives way,
// down to two lines: kept at four, it pushed the line below out of the pane, cut in half. A pane
// too short for two lines and one below (1.1x text at 1280x720) draws the grid and no line below.
GridPlan plan_grid(ImVec2 avail, int world_size, int64_t samples, int64_t widest_number, float min_grid_lines) {
  const float fs = ImGui::GetFontSize(), line_h = fs * 1.25f, min_grid_h = fs * min_grid_lines, smallest_grid_h = fs * 2.0f;
  const auto rows_beside = [&](float grid_h) { return static_cast<int>(std::floor((avail.y - grid_h - fs * 0.5f) / line_h)); };
  GridPlan plan;
  plan.order_rows = std::clamp(rows_beside(min_grid_h), 1, std::min(world_size, 16));
  // Not a line that the pane's edge would cut (the smallest grid and a line below it do not fit).
  if (rows_beside(smallest_grid_h) < 1) plan.order_rows = 0;
  const float below = plan.order_rows > 0 ? line_h * plan.order_rows + fs * 0.5f : 0.0f;
  plan.area = ImVec2(avail.x, std::max(avail.y - below, smallest_grid_h));
  plan.cells = fit_cells(samples, plan.area);
  plan.cells.label_size = cell_label_size(plan.cells, widest_number);
  return plan;
}

// The grid of the dataset's indices, a cell each (or a few per cell), in its owner's colour; the
// shards' order below it, in the lines the pane leaves.
void draw_index_grid(const view_model::SamplerHistory& history, const view_model::SamplerGrid& grid,
                     view_model::EpochKey key, int64_t samples, int64_t batch_size, bool label_order, SaidOnScreen& said) {
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float line_h = fs * 1.25f;
  int64_t longest_shard = 0;
  for (const auto& shard : grid.shards) longest_shard = std::max<int64_t>(longest_shard, static_cast<int64_t>(shard.size()));
  const int64_t widest_number = label_order ? longest_shard - 1 : samples - 1;
  GridPlan plan = plan_grid(avail, grid.world_size, samples, widest_number, 4);
  const bool order_unseen = label_order && plan.cells.label_size <= 0;
  if (order_unseen) plan = plan_grid(avail, grid.world_size, samples, widest_number, 3);
  const auto& [cells, order_rows, area] = plan;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##sampler_grid", area);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const IndexMarks marks = mark_indices(history, grid, key, samples, batch_size);
  const float gap = cells.size > 8 ? 1.5f : 0.0f;
  const int64_t count = (samples + cells.per_cell - 1) / cells.per_cell;
  int64_t hovered_index = -1;
  for (int64_t c = 0; c < count; ++c) {
    const int64_t index = c * cells.per_cell;
    const float x = origin.x + (c % cells.columns) * cells.size, y = origin.y + (c / cells.columns) * cells.size;
    draw_cell(dl, ImVec2(x + gap, y + gap), ImVec2(x + cells.size - gap, y + cells.size - gap), index, grid, marks, cells,
              label_order);
    if (hovered && mouse.x >= x && mouse.x < x + cells.size && mouse.y >= y && mouse.y < y + cells.size)
      hovered_index = index;
  }
  if (hovered_index >= 0) cell_read_out(hovered_index, grid, marks, cells);
  ImVec2 below(origin.x, origin.y + cells.rows * cells.size + fs * 0.4f);
  said.sampler_numbers = cells.label_size <= 0 ? "" : label_order ? "order" : "index";
  int shard_rows = order_rows;
  // Show order ticked over cells too small for numbers changed nothing that could be seen: say so,
  // in the first of the lines below the grid (in its short form where the long one is cut).
  if (order_unseen && order_rows > 0) {
    said.sampler_note = tr("Show order: cells too small for numbers; enlarge the pane");
    if (ImGui::CalcTextSize(said.sampler_note.c_str()).x > avail.x) said.sampler_note = tr("Show order: enlarge the pane");
    dl->PushClipRect(below, ImVec2(below.x + avail.x, below.y + line_h), true);
    dl->AddText(below, palette().accent, said.sampler_note.c_str());
    dl->PopClipRect();
    below.y += line_h;
    --shard_rows;
  }
  // Rows for no rank's shard would only say "enlarge the pane" once more.
  if (shard_rows > 0 && (!order_unseen || shard_rows >= std::min(grid.world_size, 2)))
    draw_shard_order(dl, below, avail.x, grid, shard_rows, said.sampler_more);
}

}  // namespace

void DrawSamplerView(const view_model::RunModel& model, AppState& state) {
  const float fs = ImGui::GetFontSize();
  const view_model::SamplerHistory& history = model.sampler();
  const std::vector<view_model::EpochKey> epochs = history.epochs();
  draw_sampler_switches(state);
  state.said.sampler_numbers.clear();
  state.said.sampler_note.clear();
  state.said.sampler_more.clear();
  state.said.sampler_shards_differ.clear();
  state.said.sampler_order.clear();
  state.said.sampler_epoch.clear();
  if (epochs.empty()) {
    // A script's steps with no shard before them: its watch() has no sampler to report.
    if (state.torch.live && model.latest_step() >= 0)
      DimWrapped(tr("The script reported no shards: its ringlab_torch.watch(...) was given no sampler."));
    else
      DimWrapped(tr("No shards yet: each rank reports its indices when an epoch starts."));
    return;
  }
  const int slot = choose_epoch(model, state, epochs);
  const view_model::EpochKey key = epochs[slot];
  // Every rank of the run, those not heard from this epoch with an empty shard.
  const Shards shards = view_model::shards_of_world(*history.shards(key), world_of(model, key.generation));
  const view_model::Generation* gen = generation_of(model, key.generation);
  const int64_t samples = gen && gen->has_job ? gen->job.samples : state.job.samples;
  const int64_t batch_size = gen && gen->has_job ? gen->job.batch_size : state.job.batch_size;
  const view_model::SamplerGrid grid = view_model::build_sampler_grid(samples, key.epoch, shards);
  const Shards* previous = slot > 0 && epochs[slot - 1].generation == key.generation ? history.shards(epochs[slot - 1]) : nullptr;
  const bool set_epoch = gen && gen->has_job ? gen->job.set_epoch : state.job.set_epoch;
  const std::string first =
      key.epoch == 0 ? std::string(tr("The first epoch: shuffled with the seed, set_epoch(0)"))
      : set_epoch    ? trf("This world's first epoch: set_epoch({}) shuffles it with the seed + {}", grouped(key.epoch), grouped(key.epoch))
                     : std::string(tr("This world's first epoch: set_epoch is not called, so it has epoch 0's order"));
  draw_epoch_summary(grid, shards, previous, samples, first, state.said);
  // After a live change whose new world has drawn no shard yet (paused, it waits at the gate):
  // these are the old world's, beside a header that names the new one.
  const view_model::Generation* newest = model.current_generation();
  if (newest && newest->index > key.generation && state.run.live()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette().accent), "%s",
                       trf("The world now running ({} rank{}) has drawn no shard yet: shown, the last world's",
                           newest->world_size, newest->world_size == 1 ? "" : "s").c_str());
    ImGui::PopTextWrapPos();
  }
  // The marks on the cells, said once where the pane has the room (the tooltip says it always).
  if (ImGui::GetContentRegionAvail().y > fs * 12)
    DimWrapped(tr("a cell per dataset index, 0 at the top left, in its rank's colour, numbered by its index (with Show "
                  "order, by its place in the rank's shard); marked: the batch each rank trains on now; crossed out: an "
                  "index repeated as padding"));
  draw_index_grid(history, grid, key, samples, batch_size, state.sampler.label_order, state.said);
}

}  // namespace ringlab::viz
