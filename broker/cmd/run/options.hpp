#pragma once
// `zpmix run`'s options: what the user typed, registered on the command line with their --help
// text (add_run_command, mpirun_style_args: commands.hpp), and the launch request they make for
// the broker (launch_request), checked.
//
// Invariants and limits:
// - The command line is Open MPI 4.1's mpirun's where zpmix has the option, in its spellings
//   (apps.hpp): single-dash long forms (-np, -host, -npernode), MPMD apps between `:` and
//   --app FILE, MPIEXEC_TIMEOUT for --timeout. The program and its arguments are everything from
//   the first word that is not an option (or after --). An option zpmix run does not have fails,
//   naming the nearest; it is never taken for -h (help).
// - Nothing here starts anything: reading the options only reads this process's environment
//   (-x, the caller's environment, limits and umask, the working directory).
#include <cstdint>
#include <string>
#include <vector>

#include "actors/launcher/allocation.hpp"
#include "actors/protocol/job.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/run/apps.hpp"

namespace zpmix::cli::run {

struct RunOptions {
    std::uint32_t np = 1;
    bool np_given = false;
    std::vector<std::string> exports, psets, hosts;
    std::string hostfile;
    std::uint32_t npernode = 0;
    bool pernode = false;  // -npernode 1
    bool oversubscribe = false, nooversubscribe = false, report_bindings = false;
    bool tag_output = false, timestamp_output = false;
    bool merge_stderr = false;  // --merge-stderr-to-stdout
    bool report_child_sep = false;
    bool enable_recovery = false;
    bool stop_in_init = false;
    bool stop_on_exec = false;
    double timeout = 0;  // --timeout, else MPIEXEC_TIMEOUT
    std::string bind_to = "none", map_by, broker;
    bool overload_allowed = false;  // --bind-to X:overload-allowed (bind_to is then X)
    std::string wdir;               // --wdir: every app's working directory but its own
    std::string app_file;           // --app FILE
    std::string personality = "ompi";
    std::string rsh_agent, tcp_if, launcher;
    int verbose = 0, quiet = 0;
    LogOptions log;  // its own and its embedded broker's log
    std::string output_filename;
    std::vector<std::string> mca;  // KEY VALUE pairs
    std::string stdin_target = "0";
    // The job's apps (the command line's, or --app's), each with its -n when there are several.
    std::vector<AppSpec> apps;
};

// What the ranks get from `zpmix run`'s process, whichever broker starts them: its environment,
// umask and soft limits (srun's PropagateResourceLimits). Taken before an embedded broker
// changes any (it raises its descriptor limit).
msg::Caller this_caller();

// The launch request of the options for their apps, a job of `np` ranks, as it goes to a broker on
// this node (placed with the launcher's placement); an error when --stdin names no rank of the job.
alloc::Result<msg::Launch> launch_request(const RunOptions &o, std::uint32_t np,
                                          msg::Caller caller);

// Runs the job: the exit status of `zpmix run` (run.cpp).
int run_job(const RunOptions &o);

}  // namespace zpmix::cli::run
