#pragma once
// Starts a rank with what its caller (`zpmix run`) runs with when that differs from the broker's:
// its umask and soft resource limits, which posix_spawn cannot set. Otherwise as the launcher's
// posix_spawnp: stdin, stdout and stderr, the working directory, the job's process group, no
// signal blocked and every one at its default.
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

// Forks, sets up the child and execs cmd (looked up in this process's PATH, as posix_spawnp
// does). Returns the pid once the child has exec'd, or -1 with the exec's errno in error.
pid_t spawn_as_caller(const std::string &cmd, char *const argv[], char *const envp[],
                      const ChildIo &io, const std::string &cwd, pid_t pgroup,
                      const msg::Caller &caller, int &error);

}  // namespace zpmix
