#pragma once
// The integration tests' process harness: child processes (`zpmix run`, `zpmix broker`, the
// operators' commands) with their output captured, read with deadlines; private temporary
// directories; polling a condition with a deadline. Header-only, Boost.Test and POSIX only, so
// that any test can include it. Nothing here waits by sleeping: every wait is a poll() on the
// child's pipes or pidfd, bounded by a deadline.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern char **environ;

namespace zpmix::test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The time left until deadline, never negative, in poll()'s unit.
inline int ms_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Blocks up to ms for nothing in particular: the pause between two polls of a condition.
inline void poll_pause(int ms = 2) {
    ::poll(nullptr, 0, ms);
}

// Polls cond until it holds or the deadline passes; whether it held.
template <class Cond>
bool eventually(Cond cond, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = Clock::now() + timeout;
    while (!cond()) {
        if (Clock::now() >= deadline) return cond();
        poll_pause();
    }
    return true;
}

inline std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// How often `what` occurs in s.
inline std::size_t count(const std::string &s, const std::string &what) {
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
}

// A private directory under /tmp, removed with everything in it.
struct TempDir {
    std::string path;
    explicit TempDir(const std::string &prefix = "zpmix-test") {
        std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
};

// A child process: stdin from /dev/null, stdout on a pipe, stderr on a pipe or appended to a
// file; our environment plus extra_env. Destroyed while running, it gets SIGTERM (a broker or
// `zpmix run` then ends its jobs), and SIGKILL if it is still there 5 s later.
class Child {
  public:
    explicit Child(std::vector<std::string> args, const std::vector<std::string> &extra_env = {},
                   const std::string &err_file = {}) {
        int out[2], err[2];
        BOOST_REQUIRE(::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        if (err_file.empty())
            posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        else
            posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(),
                                             O_WRONLY | O_CREAT | O_APPEND, 0600);
        // extra_env wins: an inherited variable it names is left out (getenv reads the first).
        const auto named = [&](std::string_view e) {
            const std::string_view name = e.substr(0, e.find('='));
            return std::any_of(extra_env.begin(), extra_env.end(), [&](const std::string &x) {
                return std::string_view(x).substr(0, x.find('=')) == name;
            });
        };
        std::vector<std::string> env;
        for (char **e = environ; *e; ++e)
            if (!named(*e)) env.emplace_back(*e);
        env.insert(env.end(), extra_env.begin(), extra_env.end());
        std::vector<char *> argv, envp;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto &e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        ::close(err[1]);
        BOOST_REQUIRE_MESSAGE(rc == 0, "cannot start " + args[0]);
        out_fd_ = out[0];
        err_fd_ = err[0];
        if (!err_file.empty()) {
            ::close(err_fd_);
            err_fd_ = -1;
        }
        pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
        BOOST_REQUIRE(pidfd_ >= 0);
    }
    ~Child() {
        if (!status_) {
            ::kill(pid_, SIGTERM);
            if (!wait(5s)) kill_now();
        }
        for (int fd : {out_fd_, err_fd_, pidfd_})
            if (fd >= 0) ::close(fd);
    }
    Child(const Child &) = delete;
    Child &operator=(const Child &) = delete;

    pid_t pid() const { return pid_; }
    const std::string &out() const { return out_; }
    const std::string &err() const { return err_; }
    // The complete lines of stdout so far.
    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        std::size_t at = 0;
        for (std::size_t nl; (nl = out_.find('\n', at)) != std::string::npos; at = nl + 1)
            out.push_back(out_.substr(at, nl - at));
        return out;
    }

    // Reads its output until pred() holds, both pipes end, or the deadline passes.
    template <class Pred>
    bool until(Pred pred, std::chrono::milliseconds timeout = 20s) {
        const auto deadline = Clock::now() + timeout;
        while (!pred())
            if (!pump(deadline)) return pred();
        return true;
    }
    // The same, with pred given stdout so far.
    template <class Pred>
    bool read_until(Pred pred, std::chrono::milliseconds timeout = 20s) {
        return until([&] { return pred(out_); }, timeout);
    }
    bool read_until_has(const std::string &s, std::chrono::milliseconds timeout = 20s) {
        return until([&] { return out_.find(s) != std::string::npos; }, timeout);
    }

    // Reads the rest of its output and reaps it: its wait status, nullopt at the deadline.
    std::optional<int> wait(std::chrono::milliseconds timeout = 30s) {
        if (status_) return status_;
        const auto deadline = Clock::now() + timeout;
        while (out_fd_ >= 0 || err_fd_ >= 0)
            if (!pump(deadline)) break;
        pollfd p{pidfd_, POLLIN, 0};
        if (::poll(&p, 1, ms_left(deadline)) <= 0) return std::nullopt;
        int st = 0;
        ::waitpid(pid_, &st, 0);
        status_ = st;
        return st;
    }
    // The exit code (128 + signal when killed); fails the test at the deadline.
    int exit_code(std::chrono::milliseconds timeout = 30s) {
        const auto st = wait(timeout);
        BOOST_REQUIRE_MESSAGE(st, "process did not exit in time; stderr: " + err_);
        return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
    }
    // SIGKILL, and reaped.
    void kill_now() {
        if (status_) return;
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        status_ = st;
    }

  private:
    // One poll of the pipes; false at the deadline or when both pipes are at their end.
    bool pump(Clock::time_point deadline) {
        std::vector<pollfd> fds;
        if (out_fd_ >= 0) fds.push_back({out_fd_, POLLIN, 0});
        if (err_fd_ >= 0) fds.push_back({err_fd_, POLLIN, 0});
        if (fds.empty()) return false;
        const int left = ms_left(deadline);
        if (left <= 0 || ::poll(fds.data(), fds.size(), left) <= 0) return false;
        for (auto &p : fds) {
            if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            const ssize_t n = ::read(p.fd, buf, sizeof buf);
            const bool is_out = p.fd == out_fd_;
            if (n > 0) {
                (is_out ? out_ : err_).append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(p.fd);
                (is_out ? out_fd_ : err_fd_) = -1;
            }
        }
        return true;
    }

    pid_t pid_ = -1;
    int out_fd_ = -1, err_fd_ = -1, pidfd_ = -1;
    std::string out_, err_;
    std::optional<int> status_;
};

// Kills the watchdog of broker `broker` (a child of its main thread with its command line), for
// a test whose ranks must outlive their broker (what a client sees when its broker is gone).
inline void kill_watchdog_of(pid_t broker) {
    auto read = [](const std::string &path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string proc = "/proc/" + std::to_string(broker);
    const std::string cmdline = read(proc + "/cmdline");
    std::istringstream children(read(proc + "/task/" + std::to_string(broker) + "/children"));
    for (pid_t c; children >> c;)
        if (read("/proc/" + std::to_string(c) + "/cmdline") == cmdline) ::kill(c, SIGKILL);
}

}  // namespace zpmix::test
