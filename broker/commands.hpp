#pragma once
// The `zpmix` subcommands: each registers itself on the app and runs from its callback,
// leaving the process exit status in `status`.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace zpmix::cli {

void add_broker_command(CLI::App &app, int &status);
void add_run_command(CLI::App &app, int &status);
void add_ctl_command(CLI::App &app, int &status);
void add_ps_command(CLI::App &app, int &status);
void add_preempt_command(CLI::App &app, int &status);
void add_events_command(CLI::App &app, int &status);
void add_notify_command(CLI::App &app, int &status);
void add_release_command(CLI::App &app, int &status);
void add_pset_command(CLI::App &app, int &status);
void add_info_command(CLI::App &app, int &status);
// mpirun's single-dash long options of `zpmix run` (-np, -mca) as zpmix's (--np, --mca), in the
// options before the program only; args are argv without argv[0].
void mpirun_style_args(CLI::App &app, std::vector<std::string> &args);

// Which broker the operators' commands talk to. With --broker, that one. Otherwise every broker of
// this user on this node: the standalone one and those embedded in `zpmix run` (found by their
// rendezvous files under the base directory), as prun/pterm or squeue/scancel find any job.
// The broker that runs job nspace; throws std::runtime_error when none does.
std::string broker_of_job(const std::string &broker, const std::string &nspace);
// The brokers to list (`zpmix ps` without --job); throws when there is none.
std::vector<std::string> brokers_to_list(const std::string &broker);

// stderr logging at a level from the defaults, the config and -v/-q counts.
void setup_logging(const std::string &name, const std::string &level, int verbose, int quiet);

}  // namespace zpmix::cli
