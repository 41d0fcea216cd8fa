#include "broker/tree/boot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "actors/runtime/spawn_attributes.hpp"

extern char **environ;

namespace zpmix::tree {

namespace {

std::vector<std::string> split_blanks(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

std::string describe_status(int st) {
    if (WIFSIGNALED(st)) return fmt::format("killed by signal {}", WTERMSIG(st));
    if (WEXITSTATUS(st) == 255) return "exited with status 255 (the node cannot be reached?)";
    return fmt::format("exited with status {}", WEXITSTATUS(st));
}

}  // namespace

Boot::Boot(Reactor &reactor, BootSettings settings, std::string public_key, std::string secret_key,
           std::function<void(std::uint32_t, const std::string &)> on_exit)
    : reactor_(reactor),
      s_(std::move(settings)),
      public_key_(std::move(public_key)),
      secret_key_(std::move(secret_key)),
      on_exit_(std::move(on_exit)) {}

Boot::~Boot() {
    reap(std::chrono::milliseconds(0));
}

std::string Boot::start(std::uint32_t rank, std::uint32_t size, std::uint32_t radix,
                        const std::vector<std::string> &parent) {
    std::vector<std::string> args = split_blanks(s_.agent);
    if (args.empty()) return "no rsh agent";
    std::string parents;
    for (const auto &a : parent) parents += (parents.empty() ? "" : ",") + a;
    for (const std::string &a :
         {s_.nodes.at(rank), s_.zpmix, std::string("broker"), std::string("--parent"), parents,
          std::string("--rank"), std::to_string(rank), std::string("--size"), std::to_string(size),
          std::string("--radix"), std::to_string(radix), std::string("--node"), s_.nodes.at(rank),
          std::string("--keys-on-stdin")})
        args.push_back(a);
    args.insert(args.end(), s_.extra.begin(), s_.extra.end());

    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return fmt::format("pipe: {}", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);  // a broker's output is diagnostics: stderr
    posix_spawnattr_t attr;
    init_child_spawnattr(attr, 0);  // its own group: a terminal's ^C is zpmix run's to handle
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    if (rc != 0) {
        ::close(in[1]);
        return fmt::format("cannot run the rsh agent '{}': {}", args[0], strerror(rc));
    }
    // Two short lines fit the pipe: this never blocks. An agent that exits first (EPIPE) is
    // reported by its exit.
    const std::string keys = public_key_ + "\n" + secret_key_ + "\n";
    ::signal(SIGPIPE, SIG_IGN);
    [[maybe_unused]] ssize_t n = ::write(in[1], keys.data(), keys.size());
    ::close(in[1]);
    Agent a;
    a.pid = pid;
    a.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    agents_[rank] = a;
    if (a.pidfd >= 0) reactor_.watch_fd(a.pidfd, [this, rank] { exited(rank); });
    return {};
}

void Boot::exited(std::uint32_t rank) {
    auto it = agents_.find(rank);
    if (it == agents_.end()) return;
    int st = 0;
    if (::waitpid(it->second.pid, &st, WNOHANG) <= 0) return;
    reactor_.unwatch_fd(it->second.pidfd);
    ::close(it->second.pidfd);
    agents_.erase(it);
    on_exit_(rank, describe_status(st));
}

void Boot::reap(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool termed = false;
    auto killed_at = std::chrono::steady_clock::time_point::max();
    while (!agents_.empty()) {
        for (auto it = agents_.begin(); it != agents_.end();) {
            int st = 0;
            if (::waitpid(it->second.pid, &st, WNOHANG) > 0) {
                if (it->second.pidfd >= 0) {
                    reactor_.unwatch_fd(it->second.pidfd);
                    ::close(it->second.pidfd);
                }
                it = agents_.erase(it);
            } else {
                ++it;
            }
        }
        if (agents_.empty()) break;
        const auto now = std::chrono::steady_clock::now();
        if (!termed && now >= deadline) {
            for (auto &[rank, a] : agents_) ::kill(-a.pid, SIGTERM), ::kill(a.pid, SIGTERM);
            termed = true;
            killed_at = now + std::chrono::seconds(1);
        } else if (termed && now >= killed_at) {
            for (auto &[rank, a] : agents_) ::kill(-a.pid, SIGKILL), ::kill(a.pid, SIGKILL);
            killed_at = std::chrono::steady_clock::time_point::max();
        }
        ::poll(nullptr, 0, 10);
    }
}

}  // namespace zpmix::tree
