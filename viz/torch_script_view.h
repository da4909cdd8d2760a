#pragma once
// The controls' "PyTorch script" section: a person's own DDP script, run instead of ringlab's
// engine or side by side with it (see TorchState).
#include "viz/app_state.h"

namespace ringlab::viz {

void DrawTorchScriptControls(AppState& state);

}  // namespace ringlab::viz
