#pragma once
// Starts one rank's process: its stdout and stderr on pipes (which RankOutput reads), its stdin on
// a pipe when it reads the job's (which StdinForwarding writes) or else /dev/null, the app's
// working directory, the job's process group (signals reach what the ranks start too), bound to
// its cpuset: the spawning thread is bound for the spawn and then bound back, since the child
// inherits its binding and so never runs unbound. posix_spawnp, or fork_spawn
// (caller_spawn.hpp) where it cannot: to run with its caller's umask and limits, or to stop at
// exec for a debugger.
#include <sys/types.h>

#include <cstddef>
#include <string>

#include <hwloc.h>

#include "actors/launcher/rank_environment.hpp"
#include "actors/protocol/job.hpp"

namespace zpmix {

// How to start a rank of an app.
struct RankStart {
    std::size_t rank = 0;
    hwloc_topology_t topology = nullptr;  // to bind with; null when unbound
    hwloc_const_bitmap_t set = nullptr;   // its cpuset; null: unbound
    std::string cpuset;                   // the same as a list, for an error
    pid_t pgroup = 0;                     // the job's process group; 0: a new one
    const msg::Caller *caller = nullptr;  // what `zpmix run` runs with (its umask and limits)
    bool stop_at_exec = false;            // PMIX_DEBUG_STOP_ON_EXEC
    bool with_stdin = false;              // it reads the job's stdin
    bool merge_stderr = false;            // its stderr is its stdout pipe
};

// A rank's process and our ends of its pipes; -1 for what does not exist.
struct RankProcess {
    pid_t pid = -1;
    int out = -1, err = -1;  // read ends of its stdout and stderr pipes
    int in = -1;             // write end of its stdin pipe
};

// Starts the rank (app's environment becomes the rank's: set_rank). Returns why it did not start
// (and `status`, the PMIx status that says so), or empty. The pipes made are ours even when it
// did not start.
std::string start_rank_process(AppPlan &app, const RankStart &how, RankProcess &p, int &status);

}  // namespace zpmix
