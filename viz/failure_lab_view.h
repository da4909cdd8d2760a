#pragma once
// The failure lab: a section of the controls that picks a fault (and starts a run with it) or
// kills a rank right now, and a window that explains the fault and, when a run fails or is
// restarted, shows the report: who failed, where every rank was, the fingerprints, the
// controller's own text.
#include "engine/view_model/run_model.h"
#include "viz/app_state.h"

namespace ringlab::viz {

void DrawFailureLabControls(const view_model::RunModel& model, AppState& state);
// The lesson and the report are a pane of the layout (layout.cpp), in the right-hand column, so
// they cover no view: shown while a fault is armed, a run failed or was restarted, until hidden.
bool FailureLabPaneShown(const view_model::RunModel& model, AppState& state);
void DrawFailureLabPane(const view_model::RunModel& model, AppState& state);

}  // namespace ringlab::viz
