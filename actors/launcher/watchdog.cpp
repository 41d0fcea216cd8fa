#include "actors/launcher/watchdog.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace zpmix {

namespace {

struct Record {
    std::int32_t op;  // 'g'uard, 'r'elease, 'q'uit
    std::int32_t pgid;
};
static_assert(sizeof(Record) <= PIPE_BUF);  // one write, never interleaved

// --- the watchdog process: raw system calls only (forked from a process with threads, and the
// sanitizers' interceptors are not to be entered there) ---------------------------------------

long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
    return ::syscall(nr, a, b, c, d);
}

struct Dirent64 {
    std::uint64_t ino;
    std::int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
};

// Removes `name` under directory `dirfd`, a directory with everything in it.
void remove_tree(int dirfd, const char *name, int depth) {
    if (sys(SYS_unlinkat, dirfd, reinterpret_cast<long>(name), 0) == 0 || errno == ENOENT) return;
    if (depth > 32) return;
    const long fd = sys(SYS_openat, dirfd, reinterpret_cast<long>(name),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    alignas(8) char buf[4096];
    for (;;) {
        const long n = sys(SYS_getdents64, fd, reinterpret_cast<long>(buf), sizeof buf);
        if (n <= 0) break;
        for (long at = 0; at < n;) {
            const auto *d = reinterpret_cast<const Dirent64 *>(buf + at);
            at += d->reclen;
            if (d->name[0] == '.' && (d->name[1] == 0 || (d->name[1] == '.' && d->name[2] == 0)))
                continue;
            remove_tree(static_cast<int>(fd), d->name, depth + 1);
        }
    }
    sys(SYS_close, fd);
    sys(SYS_unlinkat, dirfd, reinterpret_cast<long>(name), AT_REMOVEDIR);
}

[[noreturn]] void watch(int fd, const std::vector<const char *> &remove, const char *rmdir) {
    pid_t groups[Watchdog::kMaxGroups];
    int n = 0;
    for (;;) {
        Record r{};
        const long got = sys(SYS_read, fd, reinterpret_cast<long>(&r), sizeof r);
        if (got < 0 && errno == EINTR) continue;
        if (got == static_cast<long>(sizeof r)) {
            if (r.op == 'q') sys(SYS_exit_group, 0);
            if (r.op == 'g' && n < Watchdog::kMaxGroups) groups[n++] = r.pgid;
            if (r.op == 'r')
                for (int i = 0; i < n; ++i)
                    if (groups[i] == r.pgid) {
                        groups[i] = groups[--n];
                        break;
                    }
            continue;
        }
        break;  // EOF: the broker is gone without a word
    }
    for (int i = 0; i < n; ++i) sys(SYS_kill, -groups[i], SIGKILL);
    for (const char *path : remove) remove_tree(AT_FDCWD, path, 0);
    if (rmdir && *rmdir) sys(SYS_unlinkat, AT_FDCWD, reinterpret_cast<long>(rmdir), AT_REMOVEDIR);
    sys(SYS_exit_group, 0);
    __builtin_unreachable();
}

}  // namespace

Watchdog::Watchdog(std::vector<std::string> remove, std::string rmdir_if_empty)
    : remove_(std::move(remove)), rmdir_(std::move(rmdir_if_empty)) {}

Watchdog::~Watchdog() {
    quit();
}

std::string Watchdog::start() {
    if (pid_ > 0) return {};
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return std::string("pipe: ") + strerror(errno);
    // Prepared before fork: the child allocates nothing.
    std::vector<const char *> remove;
    for (const auto &path : remove_) remove.push_back(path.c_str());
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {p[0], p[1], devnull})
            if (fd >= 0) ::close(fd);
        return std::string("fork: ") + strerror(e);
    }
    if (pid == 0) {
        // Its own session: a signal to the broker's process group or terminal is not for it.
        sys(SYS_setsid);
        if (devnull >= 0)
            for (int fd = 0; fd < 3; ++fd) sys(SYS_dup2, devnull, fd);
        sys(SYS_dup2, p[0], 3);
        if (sys(SYS_close_range, 4, ~0U, 0) != 0)
            for (int fd = 4; fd < 65536; ++fd) sys(SYS_close, fd);
        watch(3, remove, rmdir_.c_str());
    }
    ::close(p[0]);
    if (devnull >= 0) ::close(devnull);
    fd_ = p[1];
    pid_ = pid;
    return {};
}

bool Watchdog::tell(char op, pid_t pgid) {
    if (fd_ < 0) return false;
    const Record r{op, pgid};
    ssize_t n;
    do n = ::write(fd_, &r, sizeof r);
    while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof r);
}

bool Watchdog::guard(pid_t pgid) {
    if (pgid <= 0 || guarded_ >= kMaxGroups || !tell('g', pgid)) return false;
    ++guarded_;
    return true;
}

void Watchdog::release(pid_t pgid) {
    if (pgid > 0 && tell('r', pgid)) --guarded_;
}

void Watchdog::quit() {
    if (pid_ <= 0) return;
    tell('q', 0);
    ::close(fd_);
    fd_ = -1;
    // It exits at once; one that does not (stopped, say) is killed rather than waited for.
    const int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pfd >= 0) {
        pollfd p{pfd, POLLIN, 0};
        if (::poll(&p, 1, 1000) == 0) ::kill(pid_, SIGKILL);
        ::close(pfd);
    }
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

}  // namespace zpmix
