#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "engine/core/error.h"

namespace ringlab::app {

void add_simulate_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("simulate", "not available yet in this build");
  cmd->allow_extras();
  cmd->callback([] { throw InputError("'ringlab simulate' is not available yet in this build"); });
}

}  // namespace ringlab::app
