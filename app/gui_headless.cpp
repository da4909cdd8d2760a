// Built only with the desktop app.
#ifdef RINGLAB_HAVE_GUI
#include "app/gui_headless.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/output_file.h"
#include "engine/view_model/ring_state.h"
#include "viz/layout_audit.h"
#include "viz/views.h"

#include <imgui.h>

namespace ringlab::app {

bool reached_goal(const RunSession& session, const viz::AppState& state) {
  if (session.run_over()) return true;
  if (state.step.mode != viz::RingMode::Gated || state.step.fixed_position < 0) return false;
  const view_model::CollectiveRecord* shown = viz::ShownCollective(session.model(), state);
  return shown && state.step.position >= state.step.fixed_position;
}

void write_state_json(const std::string& path, const RunSession& session, const viz::AppState& state) {
  const view_model::RunModel& model = session.model();
  const view_model::CollectiveRecord* shown = viz::ShownCollective(model, state);
  nlohmann::json j;
  j["ring"] = shown ? nlohmann::json::parse(view_model::ring_frame_to_json(view_model::ring_frame(*shown, state.step.position)))
                    : nlohmann::json();
  j["generations"] = nlohmann::json::array();
  for (const auto& g : model.generations())
    j["generations"].push_back({{"index", g.index}, {"world_size", g.world_size}, {"backend", g.has_job ? g.job.backend : ""}});
  j["world_changes"] = nlohmann::json::array();
  for (const auto& c : model.loss().changes)
    j["world_changes"].push_back({{"step", c.step}, {"world_size", c.world_size}, {"backend", c.backend}});
  j["latest_step"] = model.latest_step();
  j["step_at_stop"] = state.run.step_at_stop;  // the views' newest step when Stop was pressed
  j["us_per_step"] = model.us_per_step();  // the workers' step time, else rank 0's timed from its events (not shown when "stepped")
  j["ungated_us_per_step"] = model.ungated_us_per_step();  // rank 0's steps the gate never held (the status's, stepped through)
  j["live_us_per_step"] = model.live_us_per_step();  // the status's "≈ ... (the last second)" while running
  j["stepped"] = state.run.stepped;        // held at the step-through gate: no µs per step on screen
  j["said"] = {{"title", state.said.title}, {"menu_bar", state.said.menu_bar}, {"script_job", state.said.script_job},
               {"status", state.said.status}, {"status_in_view", state.said.status_in_view}, {"pace", state.said.pace}, {"progress", state.said.progress}, {"ring_banner", state.said.ring_banner}, {"ring_next", state.said.ring_next},
               {"ring_number", state.said.ring_number}, {"ring_gate", state.said.ring_gate}, {"ring_legend", state.said.ring_legend},
               {"next_enabled", state.said.next_enabled}, {"lab_command", state.said.lab_command}, {"lab_outcome", state.said.lab_outcome}, {"curves_agree", state.said.curves_agree},
               {"replay_slot", state.said.replay_slot}, {"sampler_numbers", state.said.sampler_numbers}, {"sampler_epoch", state.said.sampler_epoch}, {"sampler_note", state.said.sampler_note},
               {"scale_note", state.said.scale_note}, {"reset_meanwhile", state.said.reset_meanwhile}, {"quit_meanwhile", state.said.quit_meanwhile}};
  j["window"] = {{"frames_drawn", state.frames_drawn}, {"frames_unchanged", state.frames_unchanged},
                 {"largest_frame_vertices", state.largest_frame_vertices},
                 {"world_slider_moved_px", state.controls_moved.world_slider_moved()},  // while this run trained
                 {"side_panes_reused", state.side_panes_reused}, {"frames_in_part", state.frames_in_part},
                 {"partial_frames_checked", state.partial_frames_checked},
                 {"partial_frames_differing", state.partial_frames_differing},
                 {"pixels_presented", state.pixels_presented}, {"open_s", state.window_open_s}};
  // Where each pane of the last frame was (logical pixels), and which was the big one.
  j["panes"] = nlohmann::json::array();
  for (const auto& p : state.panes_drawn)
    j["panes"].push_back({{"id", p.id}, {"x0", p.x0}, {"y0", p.y0}, {"x1", p.x1}, {"y1", p.y1}, {"every_frame", p.every_frame}});
  j["epoch_mse"] = nlohmann::json::array();
  for (const auto& e : model.loss().epoch_mse) j["epoch_mse"].push_back(e.mse);
  j["sampler_epochs"] = model.sampler().epochs().size();
  if (!model.sampler().epochs().empty()) {  // the newest epoch the sampler view can show
    const view_model::EpochKey newest = model.sampler().epochs().back();
    int reported = 0;
    for (const auto& shard : *model.sampler().shards(newest)) reported += shard.empty() ? 0 : 1;
    j["sampler_newest"] = {{"generation", newest.generation}, {"epoch", newest.epoch}, {"ranks", reported}};
  }
  j["errors"] = model.errors();
  const view_model::RunModel::Holdings h = model.holdings();
  j["holdings"] = {{"collectives", h.collectives}, {"transfers", h.transfers}, {"timeline_spans", h.timeline_spans},
                   {"loss_points", h.loss_points}, {"sampler_indices", h.sampler_indices},
                   {"events_seen", model.events_seen()}, {"feed_queued", session.feed().queued()},
                   {"events_lost", session.feed().overflowed()}, {"events_thinned", session.feed().thinned()},
                   {"thinning", session.feed().thinning()}};
  j["timeline"] = {{"follow", state.timeline.follow}, {"begin_ms", state.timeline.drawn_end_ms - state.timeline.drawn_window_ms},
                   {"end_ms", state.timeline.drawn_end_ms}, {"let_go_shown", state.timeline.let_go_shown},
                   {"spans_shown", state.timeline.spans_shown}, {"open_label", state.timeline.open_label},
                   {"lane_notes", state.timeline.lane_notes},
                   {"replay_marked", state.timeline.replay_marked}};
  j["run_message"] = state.run.message;
  j["torch_live"] = state.torch.live;  // the run on screen is a PyTorch script's
  j["overlays"] = nlohmann::json::array();
  for (const auto& o : state.overlays) {
    nlohmann::json mse = nlohmann::json::array();
    for (const auto& e : o.epoch_mse) mse.push_back(e.mse);
    j["overlays"].push_back({{"label", o.label}, {"epoch_mse", mse}});
  }
  static const char* const phases[] = {"idle", "running", "paused", "finished", "failed", "stopped"};
  j["run_phase"] = phases[static_cast<int>(state.run.phase)];
  j["failure_shown"] = model.failure().failed;
  // Who the failure is about and where each rank was, as the Failure lab's table says.
  const view_model::FailureDiagnosis& failure = model.failure();
  j["failure"] = {{"culprits", failure.culprits}, {"ranks", nlohmann::json::array()}};
  for (const view_model::RankDiagnosis& r : failure.ranks)
    j["failure"]["ranks"].push_back({{"rank", r.rank}, {"cause", view_model::to_string(r.cause)}, {"step", r.step},
                                     {"collective", r.collective}, {"collective_done", r.collective_done},
                                     {"position_from_peers", r.position_from_peers}});
  j["menu_open"] = state.menu_open;
  j["about_open"] = state.about_open;
  j["start_asked_bytes"] = state.pending_start.bytes;  // a Start waiting for the person's yes (0: none)
  j["start_waits_for_field"] = state.start_waits_for_field;  // Start pressed over a refused field: the controls say why
  j["restart_asked"] = state.pending_restart.asked;    // a run's restart waiting for the person's yes
  j["reset_asked"] = state.pending_reset;              // Reset pressed during a run, waiting for the yes
  j["quit_asked"] = state.pending_quit;                // Ctrl+Q during a run: asked (a second one quits)
  j["job_world_size"] = state.job.world_size;
  const viz::RingViewState::Cards& cards = state.ring_view.cards;
  j["ring_cards"] = {{"ranks", cards.ranks}, {"room_w", cards.room_w}, {"room_h", cards.room_h}, {"clear", cards.clear},
                     {"short_labels", cards.short_labels}, {"cells", cards.cells}, {"exponent", cards.exponent},
                     {"link_labels", cards.link_labels}, {"node_labels", cards.node_labels}, {"packets_drawn", state.ring_view.packets_drawn},
                     {"packets_unnamed", state.ring_view.packets_unnamed},
                     {"packets_over_cards", state.ring_view.packets_over_cards}};
  const viz::AppState::WorldSlider& w = state.world_slider;
  j["world_slider"] = {{"x0", w.x0}, {"x1", w.x1}, {"y", w.y}, {"minus_x", w.minus_x}, {"plus_x", w.plus_x}};
  j["pause_button"] = {{"x", state.pause_button_x}, {"y", state.pause_button_y}};
  j["job_set_epoch"] = state.job.set_epoch;            // what the next Start (or restart) trains with
  const char* const modes[] = {"follow", "gated", "replay"};
  j["refused_fields"] = nlohmann::json::object();  // typed values the job refused, with the reason shown
  j["fields"] = nlohmann::json::object();  // where a click goes into each number field (for tests that click)
  for (const auto& [id, edit] : state.field_edits) {
    if (edit.refused)
      j["refused_fields"][id] = {{"typed", edit.typed}, {"reason", edit.reason}, {"reason_in_view", edit.reason_seen}};
    j["fields"][id] = {{"x", edit.x}, {"y", edit.y}};
  }
  j["step_through"] = {{"mode", modes[static_cast<int>(state.step.mode)]}, {"position", state.step.position},
                       {"target", state.step.target}, {"playing", state.step.playing},
                       {"gated", state.gated},  // what the workers were told, beside the mode the controls show
                       {"collective_id", shown ? shown->key.id : -1}};  // the all-reduce on screen, as "ring"
  write_output_file(path, "--state-json", [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

void maybe_switch(const GuiOptions& o, const RunSession& session, viz::AppState& state, bool& done) {
  if (done || o.switch_step < 0 || session.model().latest_step() < o.switch_step) return;
  if (state.run.phase != viz::RunPhase::Running) return;
  state.job.world_size = o.switch_world;
  if (!o.switch_backend.empty()) state.job.backend = o.switch_backend;
  state.requests.change_world = true;
  done = true;
}

void maybe_kill(const GuiOptions& o, const RunSession& session, viz::AppState& state, bool& done) {
  if (done || o.kill_step < 0 || session.model().latest_step() < o.kill_step) return;
  if (state.run.phase != viz::RunPhase::Running) return;
  state.requests.kill_rank = o.kill_rank;
  done = true;
}

void write_layout_audit(const std::string& path, const GuiOptions& options, const viz::AppState& state) {
  const viz::LayoutAudit audit = viz::AuditLayout(ImGui::GetDrawData());
  nlohmann::json j;
  j["width"] = options.width;
  j["height"] = options.height;
  j["lang"] = state.language == viz::Language::Indonesian ? "id" : "en";
  j["ui_scale"] = state.ui_scale;
  j["font_px"] = ImGui::GetFontSize();
  j["lines"] = audit.lines;
  j["scrolled_lines"] = audit.scrolled_lines;
  j["flaws"] = nlohmann::json::array();
  for (const auto& f : audit.flaws)
    j["flaws"].push_back({{"kind", viz::to_string(f.kind)}, {"text", f.text}, {"other", f.other}, {"window", f.window},
                          {"box", {f.x0, f.y0, f.x1, f.y1}}});
  write_output_file(path, "--layout-audit", [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

}  // namespace ringlab::app
#endif  // RINGLAB_HAVE_GUI
