#include "actors/launcher/rank_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <pmix_common.h>
#include <spdlog/spdlog.h>

#include "actors/launcher/caller_spawn.hpp"
#include "actors/runtime/spawn_attributes.hpp"

namespace zpmix {

std::string start_rank_process(AppPlan &app, const RankStart &how, RankProcess &p, int &status) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return fmt::format("pipe: {}", strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        ::close(out[0]);
        ::close(out[1]);
        return fmt::format("pipe: {}", strerror(e));
    }
    // Its stdin: what `zpmix run` reads (Input), when it is a stdin rank; else nothing.
    int in[2] = {-1, -1};
    if (how.with_stdin && ::pipe2(in, O_CLOEXEC) != 0) {
        const int e = errno;
        for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
        return fmt::format("pipe: {}", strerror(e));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (in[0] >= 0)
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    // Merged, its stderr is its stdout pipe: one stream, in the order it wrote (its stderr pipe
    // is closed at once, unwritten).
    const int err_fd = how.merge_stderr ? out[1] : err[1];
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    if (!app.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, app.cwd.c_str());
    // One process group per job: signals reach what the ranks start too.
    posix_spawnattr_t attr;
    init_child_spawnattr(attr, how.pgroup);

    set_rank(app, how.rank);
    std::vector<char *> argv, envp;
    for (auto &a : app.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto &e : app.env) envp.push_back(e.data());
    envp.push_back(nullptr);

    std::string error;
    hwloc_const_bitmap_t set = how.set;
    hwloc_bitmap_t saved = set ? hwloc_bitmap_alloc() : nullptr;
    // The child inherits the spawning thread's binding, so it never runs unbound.
    if (set) {
        hwloc_get_cpubind(how.topology, saved, HWLOC_CPUBIND_THREAD);
        if (hwloc_set_cpubind(how.topology, set, HWLOC_CPUBIND_THREAD) != 0)
            error = fmt::format("cannot bind rank {} to cpuset {}: {}", how.rank, how.cpuset,
                                strerror(errno));
    }
    pid_t pid = -1;
    if (error.empty()) {
        int rc = 0;
        const bool as_caller = how.caller && caller_differs(*how.caller);
        if (how.stop_at_exec || as_caller) {
            pid = fork_spawn(app.cmd, argv.data(), envp.data(), ChildIo{in[0], out[1], err_fd},
                             app.cwd, how.pgroup, as_caller ? how.caller : nullptr,
                             how.stop_at_exec, rc);
        } else {
            rc = ::posix_spawnp(&pid, app.cmd.c_str(), &fa, &attr, argv.data(), envp.data());
        }
        if (rc != 0) {
            error = fmt::format("cannot launch '{}': {}", app.cmd, strerror(rc));
            status = rc == ENOENT                    ? PMIX_ERR_JOB_EXE_NOT_FOUND
                     : rc == EACCES || rc == ENOEXEC ? PMIX_ERR_JOB_APP_NOT_EXECUTABLE
                                                     : PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        }
    }
    if (set) {
        hwloc_set_cpubind(how.topology, saved, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(saved);
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(out[1]);
    ::close(err[1]);
    p.out = out[0];
    p.err = err[0];
    if (in[0] >= 0) {
        ::close(in[0]);
        p.in = in[1];
    }
    if (error.empty()) p.pid = pid;
    return error;
}

}  // namespace zpmix
