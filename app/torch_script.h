#pragma once
// `--torch SCRIPT [-- ARGS]`: a user's PyTorch script, checked and resolved before a run starts.
#include <string>
#include <vector>

#include "engine/control/controller.h"

namespace ringlab::app {

// The interpreter (RINGLAB_PYTHON, else /usr/bin/python3, else python3 on PATH), the script with
// its arguments, and the folder that holds the ringlab_torch package (RINGLAB_PYTHONPATH, else
// beside this executable's build or install tree, else the source tree it was built from).
// Throws InputError naming what is missing: the script, the interpreter, the package.
TorchScript resolve_torch_script(const std::string& script, const std::vector<std::string>& args);

// For --torch's option: "" for a path, the reason for an empty one (an unset shell variable must
// not quietly run ringlab's own job instead).
std::string torch_option_problem(const std::string& script);

}  // namespace ringlab::app
