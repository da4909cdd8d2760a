// ringlab: one executable, one subcommand per job. With no subcommand it opens the desktop app.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/parse_errors.h"
#include "engine/core/error.h"
#include "engine/dist/backends.h"
#include "engine/job/scenario.h"

namespace {

// `ringlab` and `ringlab --scenario x` mean `ringlab gui ...`.
std::vector<std::string> arguments_with_default_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool asks_root = !args.empty() && (args[0] == "-h" || args[0] == "--help" || args[0] == "--version");
  if (args.empty() || (args[0].rfind('-', 0) == 0 && !asks_root)) args.insert(args.begin(), "gui");
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  return args;
}

// "run " or "bench allreduce ": the subcommands a command line had reached, for the hint after
// an error.
std::string used_subcommand(const CLI::App& root) {
  std::string path;
  for (const CLI::App* at = &root; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += at->get_name() + " ";
  }
  return path;
}

// An output flag given an empty path (`--report "$REPORT"` with REPORT unset) would write nothing
// and say nothing: the run's result lost without a word. An input flag given an empty value
// (`--scenario "$LESSON"`) ran the default job as if it had not been given. Both are refused as
// bad input, like any other.
void refuse_empty_values(CLI::App& app) {
  static const std::set<std::string> outputs = {"--report", "--trace", "--metrics", "--dump-flight-recorder",
                                                "--json", "--screenshot", "--frame-stats", "--state-json",
                                                "--layout-audit"};
  static const std::set<std::string> inputs = {"--scenario", "--join-file", "--hosts", "--hostfile", "--master-addr",
                                               "--run-id", "--torch"};
  const auto refusing = [](const char* words) {
    return CLI::Validator([words](std::string& value) { return value.empty() ? std::string(words) : std::string(); }, "");
  };
  const CLI::Validator no_empty_output = refusing("an empty path: give the file to write");
  const CLI::Validator no_empty_input = refusing("an empty value: give one, or leave the flag out");
  const auto named = [](const std::set<std::string>& names, const CLI::Option* option) {
    return names.count(option->get_name(false, true)) || names.count("--" + option->get_single_name());
  };
  for (CLI::Option* option : app.get_options()) {
    if (named(outputs, option)) option->check(no_empty_output);
    if (named(inputs, option)) option->check(no_empty_input);
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  // Past the file size limit (ulimit -f) a write raises SIGXFSZ, which kills the process without
  // a word. Ignored, the write fails with EFBIG instead, and the output that hit the limit says
  // so with its name. Every subcommand (the controller and the workers alike) starts here.
  std::signal(SIGXFSZ, SIG_IGN);
  // A binary copied out of its build tree still finds the scenarios of the sources it was built
  // from (after RINGLAB_SCENARIO_DIR and the folders beside the binary).
  ringlab::add_scenario_search_dir(std::filesystem::path(RINGLAB_SOURCE_DIR) / "assets/scenarios");
  CLI::App root{"ringlab: see DistributedDataParallel and ring all-reduce work, for real"};
  root.name("ringlab");
  root.require_subcommand(0, 1);
  root.set_version_flag("--version", "ringlab " RINGLAB_VERSION);
  ringlab::app::add_run_command(root);
  ringlab::app::add_worker_command(root);
  ringlab::app::add_gui_command(root);
  ringlab::app::add_bench_command(root);
  ringlab::app::add_simulate_command(root);
  refuse_empty_values(root);
  try {
    ringlab::check_backend_environment();
    std::vector<std::string> args = arguments_with_default_command(argc, argv);
    root.parse(args);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, with exit code 0, and print what was asked for.
    if (e.get_exit_code() == 0) return root.exit(e);
    // A flag that does not parse is bad input like any other: the same prefix and exit code 2.
    fmt::print(stderr, "ringlab: error: {}\n(ringlab {}--help lists the options)\n", ringlab::app::plain_parse_error(root, e),
               used_subcommand(root));
    return 2;
  } catch (const ringlab::InputError& e) {
    fmt::print(stderr, "ringlab: error: {}\n", e.what());
    return 2;
  } catch (const ringlab::Error& e) {
    fmt::print(stderr, "ringlab: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ringlab: unexpected error: {}\n", e.what());
    return 1;
  } catch (...) {
    fmt::print(stderr, "ringlab: unexpected error: an exception that is not a std::exception\n");
    return 1;
  }
  return ringlab::app::check_stdout(ringlab::app::exit_code());
}
