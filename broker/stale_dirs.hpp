#pragma once
// What a broker killed outright leaves when its watchdog could not clean up either (both
// killed, the OOM killer, a crash of the node's session): its run directory, sockets, session
// directories. A live broker holds an flock on `<run_dir>/broker.lock` for its whole life; a
// starting broker removes what no one holds, and never what a live broker does.
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

namespace zpmix {

// Opens and locks `<dir>/broker.lock` (close-on-exec: no rank inherits it); returns the
// descriptor, which keeps the lock until it is closed. Throws if another process holds it.
int lock_run_dir(const std::string &dir);

// Whether the broker owning `dir` is gone: the pid in its name (broker-<pid>-<n>) is dead and
// nobody holds its lock (a broker makes its directory, then locks it: in between, only the pid
// tells that it lives; a pid reused since leaves the directory for a later start).
bool run_dir_abandoned(const std::string &dir, long pid_in_name);

// Where embedded brokers' directories may be: the base directory (config.hpp), and
// /dev/shm/zpmix-<uid> when the base is elsewhere ($XDG_RUNTIME_DIR); those that are ours.
std::vector<std::string> stale_dir_bases();

// Removes the embedded brokers' directories under `base` whose owner is gone.
void remove_stale_run_dirs(const std::string &base, spdlog::logger &log);

}  // namespace zpmix
