// Job control, process monitoring and logging end to end: a standalone `zpmix broker`, jobs
// started by `zpmix run`, controlled by `zpmix ctl|ps|preempt` and by the processes themselves
// through the standard API (jobctl_prog). Every wait has a deadline; nothing waits by sleeping.
#define BOOST_TEST_MODULE jobctl
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

extern char **environ;

namespace {

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/jobctl_prog";

// Blocks up to ms for nothing in particular: the pause between two polls of a condition.
void poll_pause(int ms = 2) {
    ::poll(nullptr, 0, ms);
}

// A child process; stdout captured by a pipe, stderr by a pipe or into a file.
class Proc {
  public:
    Proc(std::vector<std::string> args, const std::vector<std::string> &extra_env,
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
        std::vector<std::string> env;
        for (char **e = environ; *e; ++e) env.emplace_back(*e);
        for (auto &e : extra_env) env.push_back(e);
        std::vector<char *> argv, envp;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto &e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        BOOST_REQUIRE(::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        ::close(err[1]);
        out_fd_ = out[0];
        err_fd_ = err[0];
        if (!err_file.empty()) {
            ::close(err_fd_);
            err_fd_ = -1;
        }
        pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    }
    ~Proc() {
        if (!status_) {
            ::kill(pid_, SIGTERM);
            if (!wait(5s)) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, nullptr, 0);
            }
        }
        for (int fd : {out_fd_, err_fd_, pidfd_})
            if (fd >= 0) ::close(fd);
    }
    pid_t pid() const { return pid_; }
    const std::string &out() const { return out_; }
    const std::string &err() const { return err_; }

    template <class Pred>
    bool read_until(Pred pred, std::chrono::milliseconds timeout = 20s) {
        const auto deadline = Clock::now() + timeout;
        while (!pred(out_))
            if (!pump(deadline)) return pred(out_);
        return true;
    }
    bool read_until_has(const std::string &s, std::chrono::milliseconds timeout = 20s) {
        return read_until([&](const std::string &o) { return o.find(s) != std::string::npos; },
                          timeout);
    }
    std::optional<int> wait(std::chrono::milliseconds timeout = 30s) {
        const auto deadline = Clock::now() + timeout;
        while (out_fd_ >= 0 || err_fd_ >= 0)
            if (!pump(deadline)) break;
        pollfd p{pidfd_, POLLIN, 0};
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (::poll(&p, 1, std::max<int>(0, static_cast<int>(left.count()))) <= 0)
            return std::nullopt;
        int st = 0;
        ::waitpid(pid_, &st, 0);
        status_ = st;
        return st;
    }
    int exit_code(std::chrono::milliseconds timeout = 30s) {
        auto st = wait(timeout);
        BOOST_REQUIRE_MESSAGE(st, "process did not exit in time; stderr: " + err_);
        return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
    }

  private:
    bool pump(Clock::time_point deadline) {
        std::vector<pollfd> fds;
        if (out_fd_ >= 0) fds.push_back({out_fd_, POLLIN, 0});
        if (err_fd_ >= 0) fds.push_back({err_fd_, POLLIN, 0});
        if (fds.empty()) return false;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) return false;
        for (auto &p : fds) {
            if (!(p.revents & (POLLIN | POLLHUP))) continue;
            char buf[4096];
            const ssize_t n = ::read(p.fd, buf, sizeof buf);
            std::string &dst = p.fd == out_fd_ ? out_ : err_;
            int &fd = p.fd == out_fd_ ? out_fd_ : err_fd_;
            if (n > 0) {
                dst.append(buf, static_cast<std::size_t>(n));
            } else {
                ::close(fd);
                fd = -1;
            }
        }
        return true;
    }

    pid_t pid_ = -1;
    int out_fd_ = -1, err_fd_ = -1, pidfd_ = -1;
    std::string out_, err_;
    std::optional<int> status_;
};

std::string slurp(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Polls cond until it holds or the deadline passes.
template <class Cond>
bool eventually(Cond cond, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = Clock::now() + timeout;
    while (!cond()) {
        if (Clock::now() >= deadline) return cond();
        poll_pause();
    }
    return true;
}

std::size_t count(const std::string &s, const std::string &what) {
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
}

// A standalone broker in a private base directory (monitor times in units of 20 ms, syslog to a
// socket of ours), and helpers to run jobs and commands against it.
struct Broker {
    std::string tmp;
    int syslog_fd = -1;
    std::optional<Proc> broker;

    Broker() {
        char tmpl[] = "/tmp/zpmix-jctest-XXXXXX";
        tmp = ::mkdtemp(tmpl);
        syslog_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strcpy(addr.sun_path, (tmp + "/syslog.sock").c_str());
        BOOST_REQUIRE(::bind(syslog_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
        std::ofstream(tmp + "/zpmix.toml")
            << "[monitor]\ntime_unit_ms = 20\n[log]\nsyslog_socket = \"" << tmp
            << "/syslog.sock\"\n";
        broker.emplace(std::vector<std::string>{kZpmix, "broker"}, env(), log_path());
        BOOST_REQUIRE_MESSAGE(eventually([&] { return fs::exists(tmp + "/zpmix/broker.json"); }),
                              "the broker did not start: " + log());
    }
    ~Broker() {
        broker.reset();  // SIGTERM: it ends its jobs and cleans up
        ::close(syslog_fd);
        fs::remove_all(tmp);
    }
    std::vector<std::string> env() const {
        return {"XDG_RUNTIME_DIR=" + tmp, "ZPMIX_CONFIG=" + tmp + "/zpmix.toml"};
    }
    std::string log_path() const { return tmp + "/broker.log"; }
    std::string log() const { return slurp(log_path()); }

    // `zpmix run -n np jobctl_prog mode tmp`, once every rank said it is ready; its namespace.
    std::unique_ptr<Proc> run(int np, const std::string &mode, std::string &nspace) {
        auto p = std::make_unique<Proc>(
            std::vector<std::string>{kZpmix, "run", "-n", std::to_string(np), kProg, mode, tmp},
            env());
        BOOST_REQUIRE_MESSAGE(p->read_until([&](const std::string &o) {
            return count(o, " ready") == std::size_t(np);
        }),
                              "the job did not start: " + p->out() + p->err());
        std::smatch m;
        BOOST_REQUIRE(std::regex_search(p->out(), m, std::regex("nspace (\\S+) ready")));
        nspace = m[1];
        return p;
    }
    // A `zpmix` command; its exit code, output in out.
    int cmd(std::vector<std::string> args, std::string &out) {
        args.insert(args.begin(), kZpmix);
        Proc p(args, env());
        const int code = p.exit_code();
        out = p.out() + p.err();
        return code;
    }
    int ctl(const std::vector<std::string> &args, std::string &out) {
        std::vector<std::string> a{"ctl"};
        a.insert(a.end(), args.begin(), args.end());
        return cmd(a, out);
    }
    nlohmann::json ps(const std::string &nspace) {
        std::string out;
        BOOST_REQUIRE(cmd({"ps", "--job", nspace, "--json"}, out) == 0);
        return nlohmann::json::parse(out);
    }
    std::string state(const std::string &nspace, int rank) { return ps(nspace)[rank]["state"]; }
    long counter(int rank) const {
        const std::string s = slurp(tmp + "/counter." + std::to_string(rank));
        return s.empty() ? 0 : std::stol(s);
    }
    // The next syslog datagram, within the deadline.
    std::string syslog_message(std::chrono::milliseconds timeout = 10s) {
        pollfd p{syslog_fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return {};
        char buf[9000];
        const ssize_t n = ::recv(syslog_fd, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    }
};

char proc_state(pid_t pid) {
    const std::string s = slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto close = s.rfind(')');
    return close == std::string::npos || close + 2 >= s.size() ? '?' : s[close + 2];
}

}  // namespace

BOOST_AUTO_TEST_CASE(pause_freezes_and_resume_restarts) {
    Broker b;
    std::string ns, out;
    auto job = b.run(2, "counter", ns);
    BOOST_REQUIRE(eventually([&] { return b.counter(0) > 10 && b.counter(1) > 10; }));
    BOOST_REQUIRE_MESSAGE(b.ctl({"pause", "--job", ns, "--ranks", "0"}, out) == 0, out);
    const pid_t pid0 = b.ps(ns)[0]["pid"];
    BOOST_REQUIRE(eventually([&] { return proc_state(pid0) == 'T'; }));
    BOOST_TEST(b.state(ns, 0) == "paused");
    BOOST_TEST(b.state(ns, 1) == "running");
    // Rank 1 keeps counting: our clock. Rank 0 must not move meanwhile.
    const long frozen = b.counter(0), c1 = b.counter(1);
    BOOST_REQUIRE(eventually([&] { return b.counter(1) > c1 + 200; }));
    BOOST_TEST(b.counter(0) == frozen);
    BOOST_REQUIRE_MESSAGE(b.ctl({"resume", "--job", ns}, out) == 0, out);
    BOOST_TEST(eventually([&] { return b.counter(0) > frozen + 10; }));
    BOOST_TEST(b.state(ns, 0) == "running");
    BOOST_TEST(b.log().find("asks pause of " + ns + ":0") != std::string::npos);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns}, out) == 0);
    BOOST_TEST(job->wait(20s).has_value());
}

BOOST_AUTO_TEST_CASE(signal_kill_and_terminate_reach_exactly_their_targets) {
    Broker b;
    std::string ns, out;
    auto job = b.run(3, "counter", ns);
    BOOST_REQUIRE_MESSAGE(b.ctl({"signal", "USR1", "--job", ns, "--ranks", "0,2"}, out) == 0, out);
    BOOST_TEST(job->read_until([](const std::string &o) {
        return o.find("rank 0 got signal 10") != std::string::npos &&
               o.find("rank 2 got signal 10") != std::string::npos;
    }));
    BOOST_REQUIRE(b.ctl({"signal", "12", "--job", ns, "--ranks", "1"}, out) == 0);
    BOOST_TEST(job->read_until_has("rank 1 got signal 12"));
    BOOST_TEST(count(job->out(), "got signal 10") == 2u);
    BOOST_TEST(count(job->out(), "rank 1 got signal 10") == 0u);

    BOOST_REQUIRE(b.ctl({"kill", "--job", ns, "--ranks", "1"}, out) == 0);
    BOOST_TEST(eventually([&] { return b.state(ns, 1) == "killed"; }));
    BOOST_TEST(b.ps(ns)[1]["signal"] == SIGKILL);
    BOOST_REQUIRE(b.ctl({"terminate", "--job", ns, "--ranks", "2"}, out) == 0);
    BOOST_TEST(eventually([&] { return b.state(ns, 2) == "killed"; }));
    BOOST_TEST(b.ps(ns)[2]["signal"] == SIGTERM);
    // Ended on request: the rest of the job runs on.
    BOOST_TEST(b.state(ns, 0) == "running");
    const long c0 = b.counter(0);
    BOOST_TEST(eventually([&] { return b.counter(0) > c0 + 10; }));
    // A rank that is gone is no target any more.
    BOOST_TEST(b.ctl({"kill", "--job", ns, "--ranks", "1"}, out) == 1);
    std::string text;
    BOOST_REQUIRE(b.cmd({"ps", "--job", ns}, text) == 0);
    BOOST_TEST(text.find("paused") == std::string::npos);
    BOOST_TEST(count(text, "killed") == 2u);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns}, out) == 0);
    BOOST_TEST(job->wait(20s).has_value());
    BOOST_TEST(b.ctl({"kill", "--job", "no.such.job"}, out) == 1);
}

BOOST_AUTO_TEST_CASE(checkpoint_by_signal_by_event_and_refused_without_method) {
    Broker b;
    std::string ns, out;
    {
        auto job = b.run(2, "ckpt-signal", ns);
        BOOST_TEST_MESSAGE("ckpt-signal " << ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck1", "--job", ns}, out) == 0, out);
        BOOST_TEST(out.find("checkpoint complete") != std::string::npos);
        BOOST_TEST(
            job->read_until([](const std::string &o) { return count(o, "checkpointed") == 2; }));
        BOOST_TEST(job->out().find("got signal 12") != std::string::npos);
        b.ctl({"kill", "--job", ns}, out);
    }
    {
        auto job = b.run(1, "ckpt-event", ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck2", "--job", ns}, out) == 0, out);
        BOOST_TEST(job->read_until_has("rank 0 checkpointed"));
        BOOST_TEST(job->out().find("got signal") == std::string::npos);
        b.ctl({"kill", "--job", ns}, out);
    }
    {
        auto job = b.run(1, "counter", ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck3", "--job", ns}, out) == 1);
        BOOST_TEST(out.find("registered no checkpoint method") != std::string::npos, out);
        b.ctl({"kill", "--job", ns}, out);
    }
}

BOOST_AUTO_TEST_CASE(cancel_by_id_and_all_and_own_job_only) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "ckpt-cancel", ns);
    BOOST_TEST(job->exit_code() == 0);
    BOOST_TEST(job->out().find("cancel c1: 0, checkpoint c1: -180") != std::string::npos,
               job->out());
    BOOST_TEST(job->out().find("cancel all: 0, checkpoint c2: -180, c3: -180") !=
               std::string::npos);
    BOOST_TEST(job->out().find("cancel again: -46") != std::string::npos);
    auto other = b.run(1, "control-other", ns);
    BOOST_TEST(other->exit_code() == 0);
    BOOST_TEST(other->out().find("other job: -23") != std::string::npos, other->out());
}

BOOST_AUTO_TEST_CASE(preempt_alerts_a_preemptible_job_then_ends_it) {
    Broker b;
    std::string ns, out, plain;
    auto job = b.run(1, "preempt", ns);
    auto other = b.run(1, "counter", plain);
    BOOST_TEST(b.cmd({"preempt", "--job", plain}, out) == 1);
    BOOST_TEST(out.find("not preemptible") != std::string::npos, out);
    BOOST_TEST(b.cmd({"preempt", "--job", ns, "--grace-ms", "100"}, out) == 0, out);
    BOOST_TEST(job->read_until_has("rank 0 preempt alert"));
    BOOST_TEST(job->wait(20s).has_value());
    BOOST_TEST(b.state(plain, 0) == "running");
    b.ctl({"kill", "--job", plain}, out);
}

BOOST_AUTO_TEST_CASE(heartbeat_alerts_once_per_stall) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "heartbeat", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    const std::string &o = job->out();
    BOOST_TEST(o.find("while beating: 0") != std::string::npos, o);
    BOOST_TEST(o.find("first stall alerted: 1") != std::string::npos);
    BOOST_TEST(o.find("more while stalled: 0") != std::string::npos);
    BOOST_TEST(o.find("while beating again: 0") != std::string::npos);
    BOOST_TEST(o.find("second stall alerted: 1") != std::string::npos);
    // The monitored process itself heard it, as the source of its alerts.
    BOOST_TEST(count(o, "alert -109 from " + ns + ":0") == 2u);
    BOOST_TEST(eventually([&] { return count(b.log(), "tripped") == 2; }));
}

BOOST_AUTO_TEST_CASE(file_monitor_alerts_on_a_stalled_file_only) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "filemon", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("while growing: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("stalled file alerted: 1") != std::string::npos);
    BOOST_TEST(job->out().find("alert -110 from " + ns + ":0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cancelled_and_dead_monitors_stop) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "mon-cancel", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("cancel hb1: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("cancel all: 0") != std::string::npos);
    BOOST_TEST(job->out().find("cancel again: -46") != std::string::npos);
    BOOST_TEST(job->out().find("alerts after cancel: 0") != std::string::npos);

    auto dead = b.run(1, "mon-exit", ns);
    BOOST_TEST(dead->exit_code() == 0);
    BOOST_TEST(eventually(
        [&] { return b.log().find(ns + ":0 ended: its monitors end") != std::string::npos; }));
    BOOST_TEST(b.log().find("monitor doomed tripped") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(log_reaches_stderr_and_syslog_with_its_source) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "log", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("log: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("log once: 0") != std::string::npos);
    BOOST_TEST(job->out().find("log email: -47") != std::string::npos);
    const std::string log = b.log();
    BOOST_TEST(std::regex_search(log, std::regex("\\[\\d{4}-\\d\\d-\\d\\dT[0-9:]+ " +
                                                 std::regex_replace(ns, std::regex("\\."), "\\.") +
                                                 ":0\\] stderr line from the app")),
               log);
    BOOST_TEST(log.find(ns + ":0] only once") != std::string::npos);
    const std::string dgram = b.syslog_message();
    BOOST_TEST(dgram.starts_with("<14>"), dgram);
    BOOST_TEST(dgram.find(ns + ":0] syslog line from the app") != std::string::npos, dgram);
    BOOST_TEST(b.syslog_message(100ms).empty());  // "never sent": ONCE stopped at stderr
}
