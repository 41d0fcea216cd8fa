#pragma once
// Watchdog: what a broker leaves behind if it dies without stopping (SIGKILL, a crash) is ended
// by a small process forked at its start. The broker holds the write end of a pipe, the watchdog
// the read end; the broker's death closes it (EOF), and the watchdog then kills the process
// groups it was told of (each job's ranks and what they started) and removes the paths it was
// given (the run directory, its sockets, session directories and shared-memory files), and exits.
// A broker that stops normally says so first ("quit"), and the watchdog exits doing nothing.
//
// Why a process and not PR_SET_PDEATHSIG on each rank: the death signal follows the spawning
// thread, reaches only the direct child (not what a rank starts), and cannot remove files.
//
// Invariants and limits:
// - The watchdog is in a session of its own: a signal meant for the broker's process group or
//   terminal (Ctrl-C, a kill of the group) does not end it before the broker.
// - After fork it makes raw system calls only (the broker has threads), holds no descriptor of
//   the broker's but its pipe (0-2 go to /dev/null), and remembers at most kMaxGroups groups
//   (beyond that, a group is not guarded; the broker logs it).
// - guard/release/quit are one atomic pipe write each, from one thread at a time.
#include <sys/types.h>

#include <string>
#include <vector>

namespace zpmix {

class Watchdog {
  public:
    static constexpr int kMaxGroups = 4096;

    // `remove`: removed recursively when the broker dies; `rmdir_if_empty`: then removed if empty.
    Watchdog(std::vector<std::string> remove, std::string rmdir_if_empty);
    ~Watchdog();  // quit()
    Watchdog(const Watchdog &) = delete;
    Watchdog &operator=(const Watchdog &) = delete;

    // Forks the watchdog; an error (empty when started).
    std::string start();
    // Process group `pgid` is killed (SIGKILL) if the broker dies; false if it cannot be guarded.
    bool guard(pid_t pgid);
    void release(pid_t pgid);
    // The broker stops normally: the watchdog exits and is reaped (bounded).
    void quit();
    pid_t pid() const { return pid_; }

  private:
    std::vector<std::string> remove_;
    std::string rmdir_;
    pid_t pid_ = -1;
    int fd_ = -1;  // the pipe's write end
    int guarded_ = 0;

    bool tell(char op, pid_t pgid);
};

}  // namespace zpmix
