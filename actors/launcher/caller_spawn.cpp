#include "actors/launcher/caller_spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace zpmix {

namespace {

// This process's umask, read without changing it (umask(2) would, for every thread).
mode_t own_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("Umask:"))
            return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    return 022;
}

rlim_t soft_limit_for(const msg::Limit &l) {
    rlimit now{};
    if (::getrlimit(l.resource, &now) != 0) return l.soft;
    return l.soft > now.rlim_max ? now.rlim_max : static_cast<rlim_t>(l.soft);
}

// The traced child exec'd: it stops with SIGTRAP, and is left stopped (SIGSTOP) and untraced.
// False, with error, when it ended instead (then reaped).
bool stopped_at_exec(pid_t pid, int &error) {
    int st = 0;
    while (::waitpid(pid, &st, __WALL) < 0)
        if (errno != EINTR) {
            error = errno;
            return false;
        }
    if (!WIFSTOPPED(st)) {
        error = ECHILD;
        return false;
    }
    if (::ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void *>(SIGSTOP)) != 0) {
        error = errno;
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
        }
        return false;
    }
    // Reported only once it is in the stop: a debugger told of it finds it stopped.
    while (::waitpid(pid, &st, WUNTRACED) < 0)
        if (errno != EINTR) break;
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        error = ECHILD;
        return false;
    }
    return true;
}

}  // namespace

bool caller_differs(const msg::Caller &caller) {
    if (!caller.given) return false;
    if ((caller.umask & 0777) != own_umask()) return true;
    for (const auto &l : caller.limits) {
        rlimit now{};
        if (::getrlimit(l.resource, &now) == 0 && now.rlim_cur != soft_limit_for(l)) return true;
    }
    return false;
}

pid_t fork_spawn(const std::string &cmd, char *const argv[], char *const envp[], const ChildIo &io,
                 const std::string &cwd, pid_t pgroup, const msg::Caller *caller, bool stop_at_exec,
                 int &error) {
    // Everything the child needs is computed here: after fork it only makes system calls.
    std::vector<std::pair<int, rlimit>> limits;
    if (caller)
        for (const auto &l : caller->limits) {
            rlimit r{};
            if (::getrlimit(l.resource, &r) != 0) continue;
            r.rlim_cur = soft_limit_for(l);
            limits.emplace_back(l.resource, r);
        }
    const mode_t mask = caller ? caller->umask & 0777 : 0;
    int report[2];  // the exec's errno; closed by a successful exec
    if (::pipe2(report, O_CLOEXEC) != 0) {
        error = errno;
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
        ::setpgid(0, pgroup);
        const int in = io.in >= 0 ? io.in : ::open("/dev/null", O_RDONLY);
        int e = 0;
        if (::dup2(in, 0) < 0 || ::dup2(io.out, 1) < 0 || ::dup2(io.err, 2) < 0 ||
            (!cwd.empty() && ::chdir(cwd.c_str()) != 0))
            e = errno;
        if (caller) ::umask(mask);
        for (const auto &[resource, r] : limits)
            ::setrlimit(static_cast<__rlimit_resource_t>(resource), &r);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (e == 0 && stop_at_exec && ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) e = errno;
        if (e == 0) {
            ::execvpe(cmd.c_str(), argv, envp);
            e = errno;
        }
        (void)!::write(report[1], &e, sizeof e);
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        error = fork_errno;
        return -1;
    }
    int e = 0;
    ssize_t n;
    while ((n = ::read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    ::close(report[0]);
    if (n == sizeof e) {  // it did not exec, and has exited
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        error = e;
        return -1;
    }
    if (stop_at_exec && !stopped_at_exec(pid, error)) return -1;
    return pid;
}

}  // namespace zpmix
