#include "broker/stale_dirs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "actors/protocol/rendezvous.hpp"
#include "broker/config.hpp"

namespace zpmix {

namespace fs = std::filesystem;

int lock_run_dir(const std::string &dir) {
    const std::string path = dir + "/broker.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        throw std::system_error(err, std::generic_category(), "another broker holds " + path);
    }
    return fd;
}

bool run_dir_abandoned(const std::string &dir, long pid_in_name) {
    // A broker makes its directory before it locks it: in between, only its pid tells it lives.
    if (pid_in_name <= 0 || process_alive(pid_in_name)) return false;
    const std::string path = dir + "/broker.lock";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno == ENOENT;
    // Taking the lock tells that no one holds it; it is let go at once (close).
    const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return free;
}

std::vector<std::string> stale_dir_bases() {
    std::vector<std::string> out;
    for (std::string dir : {default_base_dir(), "/dev/shm/zpmix-" + std::to_string(::getuid())}) {
        // Only a trusted directory of ours: never follow a link another user planted.
        try {
            check_trusted_dir(dir);
        } catch (const std::exception &) {
            continue;
        }
        if (out.empty() || out.front() != dir) out.push_back(std::move(dir));
    }
    return out;
}

void remove_stale_run_dirs(const std::string &base, spdlog::logger &log) {
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(base, ec)) {
        const std::string name = entry.path().filename();
        struct stat st {};
        // Our own directories only: what another user put there is not ours to remove.
        if (!name.starts_with("broker-") || ::lstat(entry.path().c_str(), &st) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
            continue;
        const long pid = std::strtol(name.c_str() + 7, nullptr, 10);
        if (!run_dir_abandoned(entry.path(), pid)) continue;
        log.info("removing {}: its broker (pid {}) is gone", entry.path().string(), pid);
        fs::remove_all(entry.path(), ec);
    }
}

}  // namespace zpmix
