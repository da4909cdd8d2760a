#pragma once
// Each subcommand lives in its own file and registers itself on the root CLI11 app.
// A subcommand's callback throws InputError for bad input (exit 2), Error for failures (exit 1),
// or sets a non-zero exit code with set_exit_code.
namespace CLI { class App; }

namespace ringlab::app {

void add_run_command(CLI::App& root);       // cmd_run.cpp: the controller, headless
void add_worker_command(CLI::App& root);    // cmd_worker.cpp: what one rank runs
void add_gui_command(CLI::App& root);       // cmd_gui.cpp: the desktop app (default)
void add_bench_command(CLI::App& root);     // cmd_bench.cpp: measurements
void add_simulate_command(CLI::App& root);  // cmd_simulate.cpp: cost-model simulator

void set_exit_code(int code);
int exit_code();

}  // namespace ringlab::app
