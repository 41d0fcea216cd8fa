#pragma once
// The `zpmix` subcommands: each registers itself on the app and runs from its callback,
// leaving the process exit status in `status`.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace zpmix {
struct Config;
}

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
void add_exporter_command(CLI::App &app, int &status);
void add_keygen_command(CLI::App &app, int &status);
// The OPTIONS section of a command's man page in roff, from its CLI11 definitions (man_page.cpp).
std::string roff_options(const CLI::App &cmd);
// mpirun's spellings of `zpmix run`'s options (-np, -host, -mca; --n) as zpmix's (--np, --host,
// --mca; --np), in the options before the program only; args are argv without argv[0]. Empty, or
// why one is no option of `zpmix run` (never left for CLI11 to take for -h, the help).
std::string mpirun_style_args(CLI::App &app, std::vector<std::string> &args);

// Which broker the operators' commands talk to. With --broker, that one. Otherwise every broker of
// this user on this node: the standalone one and those embedded in `zpmix run` (found by their
// rendezvous files under the base directory), as prun/pterm or squeue/scancel find any job.
// The broker that runs job nspace; throws std::runtime_error when none does.
std::string broker_of_job(const std::string &broker, const std::string &nspace);
// The broker `zpmix events` watches: --broker, else the standalone broker, else the only one
// (standalone or embedded in `zpmix run`); throws when there is none, or several without a
// standalone one (naming them).
std::string events_broker(const std::string &broker);
// The brokers to list (`zpmix ps` without --job); throws when there is none.
std::vector<std::string> brokers_to_list(const std::string &broker);

// The name of an event code (`zpmix events --json`, `zpmix exporter`): the standard's, or zpmix's
// own for its job lifecycle codes.
const char *event_code_name(std::int32_t code);

// Where and how the process logs (broker/cmd/logging.cpp): [log] format, file, syslog in the
// configuration, --log-format, --log-file, --log-syslog on the command line.
struct LogOptions {
    std::string format = "text";  // text | json (one object per line)
    std::string file;             // append here instead of stderr
    bool syslog = false;          // RFC 3164 datagrams to syslog_socket instead of stderr
    std::string syslog_socket = "/dev/log";
};
// Logging at a level from the defaults, the config and -v/-q counts; throws on a bad format or
// a syslog socket that cannot be used.
void setup_logging(const std::string &name, const std::string &level, int verbose, int quiet,
                   const LogOptions &where = {});
// The command-line options that set `where` (over what the configuration said).
void add_log_options(CLI::App &cmd, LogOptions &where);
// LogOptions saying nothing (empty format), for the command line to fill.
inline LogOptions cli_log_options() {
    LogOptions o;
    o.format.clear();
    return o;
}
// The configuration's [log] keys, with what the command line gave (`cli`: empty format and file,
// syslog false where it gave nothing) over them.
LogOptions log_options(const Config &config, const LogOptions &cli);

}  // namespace zpmix::cli
