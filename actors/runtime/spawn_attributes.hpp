#pragma once
// posix_spawn attributes for a process a broker starts (a rank, an rsh agent): no signal blocked
// (the broker blocks some for its signalfd, and a child would inherit that), every signal at its
// default, in process group `pgroup` (0: a new group of its own). The caller destroys `attr`.
#include <signal.h>
#include <spawn.h>

namespace zpmix {

inline void init_child_spawnattr(posix_spawnattr_t &attr, pid_t pgroup) {
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, pgroup);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

}  // namespace zpmix
