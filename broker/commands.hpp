#pragma once
// The `zpmix` subcommands: each registers itself on the app and runs from its callback,
// leaving the process exit status in `status`.
#include <CLI/CLI.hpp>

namespace zpmix::cli {

void add_broker_command(CLI::App &app, int &status);
void add_run_command(CLI::App &app, int &status);
void add_ctl_command(CLI::App &app, int &status);
void add_ps_command(CLI::App &app, int &status);
void add_preempt_command(CLI::App &app, int &status);
void add_events_command(CLI::App &app, int &status);
void add_notify_command(CLI::App &app, int &status);

// stderr logging at a level from the defaults, the config and -v/-q counts.
void setup_logging(const std::string &name, const std::string &level, int verbose, int quiet);

}  // namespace zpmix::cli
