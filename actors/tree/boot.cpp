#include "actors/tree/boot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "actors/runtime/spawn_attributes.hpp"
#include "actors/tree/munge_keys.hpp"

extern char **environ;

namespace zpmix::tree {

namespace {

std::vector<std::string> split_blanks(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

std::string join(const std::vector<std::string> &words, char sep) {
    std::string out;
    for (const auto &w : words) out += (out.empty() ? "" : std::string(1, sep)) + w;
    return out;
}

std::string describe_status(int st) {
    if (WIFSIGNALED(st)) return fmt::format("killed by signal {}", WTERMSIG(st));
    if (WEXITSTATUS(st) == 255) return "exited with status 255 (the node cannot be reached?)";
    return fmt::format("exited with status {}", WEXITSTATUS(st));
}

}  // namespace

std::string resolve_launcher(const std::string &asked, bool in_allocation, bool have_srun,
                             std::string &error) {
    error.clear();
    if (asked == "rsh") return "rsh";
    if (asked == "srun") {
        if (!in_allocation)
            error =
                "--launcher srun starts the brokers as a step of a Slurm allocation: run it "
                "inside one (salloc, sbatch; SLURM_JOB_ID is not set)";
        else if (!have_srun)
            error = "--launcher srun: srun is not on the PATH";
        return "srun";
    }
    if (asked == "auto" || asked.empty()) return in_allocation && have_srun ? "srun" : "rsh";
    error = "launcher '" + asked + "': auto, rsh or srun";
    return {};
}

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
    if (srun()) {
        if (step_size_ == 0)
            if (auto error = start_step(size, radix); !error.empty()) return error;
        return place(rank, parent);
    }
    std::vector<std::string> args = split_blanks(s_.agent);
    if (args.empty()) return "no rsh agent";
    for (const std::string &a :
         {s_.nodes.at(rank), s_.zpmix, std::string("broker"), std::string("--parent"),
          join(parent, ','), std::string("--rank"), std::to_string(rank), std::string("--size"),
          std::to_string(size), std::string("--radix"), std::to_string(radix),
          std::string("--node"), s_.nodes.at(rank), std::string("--keys-on-stdin")})
        args.push_back(a);
    args.insert(args.end(), s_.extra.begin(), s_.extra.end());
    return spawn(std::move(args), public_key_ + "\n" + secret_key_ + "\n", false, false, rank);
}

// One srun step of every broker but the root's, which read their place and keys on stdin.
std::string Boot::start_step(std::uint32_t size, std::uint32_t radix) {
    step_size_ = size;
    std::vector<std::string> others(s_.nodes.begin() + 1, s_.nodes.end());
    const std::string k = std::to_string(size - 1);
    std::vector<std::string> args{"srun", "--nodes=" + k, "--ntasks=" + k, "--ntasks-per-node=1",
                                  "--nodelist=" + join(others, ','), "--kill-on-bad-exit=1",
                                  "--input=all", "--job-name=zpmix-brokers",
                                  // The brokers hold no CPUs from the job's other steps.
                                  "--overlap", "--cpu-bind=none", "--mpi=none", s_.zpmix, "broker",
                                  "--await-parent", "--size", std::to_string(size), "--radix",
                                  std::to_string(radix)};
    args.insert(args.end(), s_.extra.begin(), s_.extra.end());
    return spawn(std::move(args), "", true, true, kStep);
}

// The line telling broker `rank` (found by its node's name) its rank, its parent's addresses and
// the keypair, sealed for it.
std::string Boot::place(std::uint32_t rank, const std::vector<std::string> &parent) {
    if (step_in_ < 0) return {};  // the step ended: its exit is reported
    std::string keys;
    try {
        keys = seal_keys(public_key_, secret_key_, s_.munge_socket);
    } catch (const std::exception &e) {
        return fmt::format(
            "cannot seal the allocation's keys with MUNGE (srun's input crosses the network in "
            "clear): {}",
            e.what());
    }
    const std::string line =
        fmt::format("{} {} {} {}\n", s_.nodes.at(rank), rank, join(parent, ','), keys);
    const ssize_t n = ::write(step_in_, line.data(), line.size());
    if (n < 0 && errno == EPIPE) return {};  // srun is gone: its exit is reported
    if (n != static_cast<ssize_t>(line.size()))
        return fmt::format("cannot write srun's input (the brokers' boot channel): {}",
                           n < 0 ? strerror(errno) : "short write");
    if (++placed_ + 1 == step_size_) {  // every broker placed: EOF for whoever still reads
        ::close(step_in_);
        step_in_ = -1;
    }
    return {};
}

std::string Boot::spawn(std::vector<std::string> args, const std::string &input, bool keep_input,
                        bool capture_err, std::uint32_t key) {
    int in[2], err[2] = {-1, -1};
    if (::pipe2(in, O_CLOEXEC) != 0) return fmt::format("pipe: {}", strerror(errno));
    if (capture_err && ::pipe2(err, O_CLOEXEC | O_NONBLOCK) != 0) {
        ::close(in[0]), ::close(in[1]);
        return fmt::format("pipe: {}", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);  // a broker's output is diagnostics: stderr
    if (capture_err) posix_spawn_file_actions_adddup2(&fa, err[1], 2);
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
    if (capture_err) ::close(err[1]);
    if (rc != 0) {
        ::close(in[1]);
        if (capture_err) ::close(err[0]);
        return fmt::format("cannot run {} '{}': {}", srun() ? "srun" : "the rsh agent", args[0],
                           strerror(rc));
    }
    // The input fits the pipe: this never blocks. An agent that exits first (EPIPE) is reported by
    // its exit. The step's later lines are written without blocking (place()).
    ::signal(SIGPIPE, SIG_IGN);
    [[maybe_unused]] ssize_t n = ::write(in[1], input.data(), input.size());
    if (keep_input) {
        ::fcntl(in[1], F_SETPIPE_SZ, 1 << 20);  // room for every broker's line (best effort)
        ::fcntl(in[1], F_SETFL, O_NONBLOCK);
        step_in_ = in[1];
    } else {
        ::close(in[1]);
    }
    if (capture_err) {
        step_err_ = err[0];
        reactor_.watch_fd(step_err_, [this] { read_step_err(); });
    }
    Agent a;
    a.pid = pid;
    a.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    agents_[key] = a;
    if (a.pidfd >= 0) reactor_.watch_fd(a.pidfd, [this, key] { exited(key); });
    return {};
}

// srun's messages go on to zpmix run's stderr; those naming a node whose task failed are kept.
void Boot::read_step_err() {
    if (step_err_ < 0) return;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(step_err_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
            [[maybe_unused]] ssize_t w = ::write(2, buf, static_cast<std::size_t>(n));
            err_line_.append(buf, static_cast<std::size_t>(n));
            for (auto nl = err_line_.find('\n'); nl != std::string::npos;
                 nl = err_line_.find('\n')) {
                note_failure(err_line_.substr(0, nl));
                err_line_.erase(0, nl + 1);
            }
            if (err_line_.size() > 4096) err_line_.clear();
            continue;
        }
        if (n == 0) {  // srun closed it: it is exiting
            reactor_.unwatch_fd(step_err_);
            ::close(step_err_);
            step_err_ = -1;
        }
        return;  // EAGAIN: later
    }
}

// "srun: error: NODE: task N: Exited with exit code X" and "srun: error: Task launch for StepId=...
// failed on node NODE: why" name the node whose broker failed.
void Boot::note_failure(const std::string &line) {
    std::string node, why;
    static const std::string task = "srun: error: ", launch = "failed on node ";
    if (line.starts_with(task)) {
        const auto colon = line.find(": ", task.size());
        if (colon != std::string::npos && line.compare(colon + 2, 5, "task ") == 0) {
            node = line.substr(task.size(), colon - task.size());
            why = line.substr(colon + 2);
            if (why.find("Exited with exit code") == std::string::npos) return;  // killed for it
        } else if (auto at = line.find(launch); at != std::string::npos) {
            const auto end = line.find(':', at + launch.size());
            node = line.substr(at + launch.size(), end - at - launch.size());
            why = end == std::string::npos ? "its task did not launch" : line.substr(end + 2);
        }
    }
    if (node.empty()) return;
    for (std::uint32_t r = 1; r < s_.nodes.size(); ++r)
        if (s_.nodes[r] == node && std::none_of(failed_.begin(), failed_.end(),
                                                [r](const auto &f) { return f.first == r; }))
            failed_.emplace_back(r, "(srun: " + why + ")");
}

void Boot::close_step_fds() {
    if (step_in_ >= 0) ::close(step_in_);
    step_in_ = -1;
    if (step_err_ >= 0) {
        read_step_err();
        if (step_err_ >= 0) {
            reactor_.unwatch_fd(step_err_);
            ::close(step_err_);
            step_err_ = -1;
        }
    }
}

void Boot::exited(std::uint32_t rank) {
    auto it = agents_.find(rank);
    if (it == agents_.end()) return;
    int st = 0;
    if (::waitpid(it->second.pid, &st, WNOHANG) <= 0) return;
    reactor_.unwatch_fd(it->second.pidfd);
    ::close(it->second.pidfd);
    agents_.erase(it);
    if (!srun()) return on_exit_(rank, describe_status(st));
    close_step_fds();
    // The brokers srun saw fail first, then the others, which the step took with it.
    std::vector<bool> told(step_size_, false);
    for (const auto &[r, why] : failed_) {
        told[r] = true;
        on_exit_(r, describe_status(st) + " " + why);
    }
    for (std::uint32_t r = 1; r < step_size_; ++r)
        if (!told[r]) on_exit_(r, describe_status(st));
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
        read_step_err();  // srun blocked on a full stderr pipe would never exit
        ::poll(nullptr, 0, 10);
    }
    close_step_fds();
}

}  // namespace zpmix::tree
