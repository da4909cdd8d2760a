#pragma once
// The views, one per file, each a function of the run's model and the app's view state.
// Every one draws into the current ImGui window (a child pane of the fixed layout).
#include <string>
#include <vector>

#include "engine/view_model/run_model.h"
#include "viz/app_state.h"

namespace ringlab::viz {

// "4 ranks, gloo, ring, lr 0.03", translated: the menu bar's summary and the loss curves' names.
std::string JobSummary(const JobConfig& job);

// The view registry (layout.cpp): the view a name from kViewNames (engine/job/scenario.h) puts
// in the big pane (the ring for an unknown name), and the registry's own names, in order.
Focus FocusNamed(const std::string& name);
std::vector<std::string> ViewNames();

void DrawRingView(const view_model::RunModel& model, AppState& state);         // ring_view.cpp
void DrawStepThroughView(const view_model::RunModel& model, AppState& state);  // step_through_view.cpp
void DrawSamplerView(const view_model::RunModel& model, AppState& state);      // sampler_view.cpp
void DrawTrainingView(const view_model::RunModel& model, AppState& state);     // training_view.cpp
void DrawTimelineView(const view_model::RunModel& model, AppState& state);     // timeline_view.cpp
void DrawControlsView(const view_model::RunModel& model, AppState& state);     // controls_view.cpp
// What if there were more ranks: the cost models' curves, a DDP step's compute against its
// exposed communication, and the live run's all-reduces on the same axes (scale_view.cpp).
void DrawScaleView(const view_model::RunModel& model, AppState& state);

// The whole window: menu bar and the fixed layout of panes (layout.cpp).
void DrawMainWindow(const view_model::RunModel& model, AppState& state);

// Help > About: the version and the libraries ringlab is made with, with their licences; a
// window of its own, drawn while state.about_open (about_view.cpp).
void DrawAboutWindow(AppState& state);
// The same as text, for a terminal with no display (`ringlab gui --about` there prints it).
std::string AboutText(const std::string& version);

// Start (the button, F5, the failure lab's): a run that needs much memory is asked about first,
// with the estimate, in a dialog of its own (start_confirmation.cpp).
// Nothing starts while a field holds a refused value (the Start button is disabled and says why).
bool HasRefusedField(const AppState& state);
void RequestStart(AppState& state, bool restart = false);
// Reset: at once when no run trains, after a question when one does.
void RequestReset(AppState& state);
// The job's world size, with the scenario's node split where it is the scenario's own world.
void SetWorldSize(AppState& state, int world);
// Quits at once when no run trains; otherwise asks, and quits on a second request.
void RequestQuit(AppState& state);
void DrawStartConfirmation(AppState& state);
// A question (Start, Start again, Reset, Quit) waits for its answer: keys other than Ctrl+Q and
// Ctrl+R wait with it.
bool QuestionOpen(const AppState& state);

// Keyboard: Space play/pause, Right/Left step, F11 full screen, Ctrl+= / Ctrl+- zoom (shortcuts.cpp).
void HandleShortcuts(const view_model::RunModel& model, AppState& state);
// From the window's key callback: a key pressed (or repeated) since the last frame.
void QueueKeyPress(int key, int mods, bool repeat);

// Step-through (step_through_view.cpp): which all-reduce is on screen and where in it; advanced
// once per frame before drawing.
const view_model::CollectiveRecord* ShownCollective(const view_model::RunModel& model, const AppState& state);
void AdvanceStepThrough(const view_model::RunModel& model, AppState& state);
void StepForward(const view_model::RunModel& model, AppState& state);
void StepBack(const view_model::RunModel& model, AppState& state);
void TogglePlay(AppState& state);
void SetRingMode(const view_model::RunModel& model, AppState& state, RingMode mode);

}  // namespace ringlab::viz
