#pragma once
// Starts a rank by fork and exec where posix_spawn cannot: with what its caller (`zpmix run`) runs
// with when that differs from the broker's (its umask and soft resource limits), or stopped at its
// first instruction for a debugger (PMIX_DEBUG_STOP_ON_EXEC). Otherwise as the launcher's
// posix_spawnp: stdin, stdout and stderr, the working directory, the job's process group, no
// signal blocked and every one at its default.
//
// Stopping at exec: the child asks to be traced (PTRACE_TRACEME) and execs; the kernel stops it
// with SIGTRAP once the new program is loaded, and this process detaches from it leaving SIGSTOP
// in its place. The rank is then stopped, as `kill -STOP` leaves it, and untraced, so that a
// debugger can attach to it (a process has one tracer: it must not be us); SIGCONT releases it.
#include <sys/types.h>

#include <string>
#include <vector>

#include "actors/protocol/job.hpp"

namespace zpmix {

// Whether rank started by this process would not get the caller's umask and limits.
bool caller_differs(const msg::Caller &caller);

struct ChildIo {
    int in = -1;  // -1: /dev/null
    int out = -1, err = -1;
};

// Forks, sets up the child (with the caller's umask and limits when `caller` is given) and execs
// cmd (looked up in this process's PATH, as posix_spawnp does). Returns the pid once the child
// has exec'd (and, with stop_at_exec, is stopped there), or -1 with the exec's errno in error.
// Must be called on the thread that reaps the child: with stop_at_exec it is the child's tracer
// until it has detached.
pid_t fork_spawn(const std::string &cmd, char *const argv[], char *const envp[], const ChildIo &io,
                 const std::string &cwd, pid_t pgroup, const msg::Caller *caller, bool stop_at_exec,
                 int &error);

}  // namespace zpmix
