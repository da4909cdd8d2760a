#pragma once
// Each subcommand lives in its own file and registers itself on the root CLI11 app.
// A subcommand's callback throws InputError for bad input (exit 2), Error for failures (exit 1),
// or sets a non-zero exit code with set_exit_code.
#include <functional>
#include <string>

namespace CLI { class App; }

namespace ringlab::app {

void add_run_command(CLI::App& root);       // cmd_run.cpp: the controller, headless
void add_worker_command(CLI::App& root);    // cmd_worker.cpp: what one rank runs
void add_gui_command(CLI::App& root);       // cmd_gui.cpp: the desktop app (default)
void add_bench_command(CLI::App& root);     // cmd_bench.cpp: measurements
void add_simulate_command(CLI::App& root);  // cmd_simulate.cpp: cost-model simulator

void set_exit_code(int code);
int exit_code();
// Flushes standard output: what a command printed (simulate's JSON, run's report) under
// `> file` is an output too, and a full disk must not end in exit 0. Returns `code`, or 1
// (after saying why on stderr) when the flush or an earlier write failed.
int check_stdout(int code);
// Runs `write` for the output at `path` (nothing when the path is empty). An Error is printed as
// "ringlab COMMAND: ..." and returns false: one output that cannot be written does not cost the
// others, nor the run's own result.
bool write_output(const char* command, const std::string& path, const std::function<void()>& write);

}  // namespace ringlab::app
