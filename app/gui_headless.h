#pragma once
// What headless runs (--frames) add to the app: the goal --wait-run waits for, the live change
// --switch asks for, and the --state-json summary of what the views showed.
#include <string>

#include "app/gui_options.h"
#include "app/gui_session.h"
#include "viz/app_state.h"

namespace ringlab::app {

// --wait-run: the run has ended, or (step-through with --ring-step) the all-reduce on screen
// has reached the requested step and the workers wait at the gate.
bool reached_goal(const RunSession& session, const viz::AppState& state);

// --switch: asks for the live change once training has reached the step, as the controls do.
void maybe_switch(const GuiOptions& options, const RunSession& session, viz::AppState& state, bool& done);
// --kill-now: presses the Failure lab's kill button once training has reached the step.
void maybe_kill(const GuiOptions& options, const RunSession& session, viz::AppState& state, bool& done);

// --state-json: the ring's frame, the sets of workers, where the loss curve marks a change of
// world, how far training got, and how much the models hold. Throws Error naming the path.
void write_state_json(const std::string& path, const RunSession& session, const viz::AppState& state);

// --layout-audit: the last rendered frame's unreadable text (viz::AuditLayout), with the window
// size, language and text scale it was drawn at. Call after ImGui::Render(). Throws Error naming the path.
void write_layout_audit(const std::string& path, const GuiOptions& options, const viz::AppState& state);

}  // namespace ringlab::app
