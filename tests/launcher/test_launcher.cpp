#define BOOST_TEST_MODULE launcher
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <pmix_version.h>

#include "support/process.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kRank = std::string(ZPMIX_BIN_DIR) + "/../tests/zpmix_rank_prog";

// Every run uses its own base directory, so no standalone broker of the machine interferes.
struct Env {
    TempDir tmp{"zpmix-ltest"};
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }
    std::string base() const { return tmp.path + "/zpmix"; }
    Child run(std::vector<std::string> args) const {
        args.insert(args.begin(), {kZpmix, "run"});
        return Child(args, env());
    }
};

// The pids of "rank R pid P" lines. (No std::regex: GCC 12 warns inside it under ASan.)
std::vector<pid_t> pids_in(const std::string &out) {
    std::vector<pid_t> pids;
    for (auto pos = out.find(" pid "); pos != std::string::npos; pos = out.find(" pid ", pos + 1))
        if (out.rfind("rank ", pos) != std::string::npos) pids.push_back(std::atoi(&out[pos + 5]));
    return pids;
}

// Processes are reaped by their parent; until then they are zombies, which kill(pid, 0) sees.
bool gone_within(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) return errno == ESRCH;
    pollfd p{fd, POLLIN, 0};
    const bool exited = ::poll(&p, 1, static_cast<int>(timeout.count())) == 1;
    ::close(fd);
    // Exited; now wait (bounded) for its parent to reap it.
    while (exited && Clock::now() < deadline)
        if (::kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        else
            std::this_thread::yield();
    return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(output_of_every_rank) {
    Env e;
    auto p = e.run({"-n", "4", kRank});
    BOOST_TEST(p.exit_code() == 0);
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(count(p.out(), "rank " + std::to_string(r) + " pid") == 1u);
    BOOST_TEST(!fs::exists(e.base() + "/broker.json"));  // the embedded broker is private
}

BOOST_AUTO_TEST_CASE(program_arguments_are_not_options) {
    Env e;
    auto p = e.run(
        {"-n", "2", "sh", "-c", "printf '%s %s\\n' \"$1\" \"$2\"", "sh", "-n", "--tag-output"});
    BOOST_TEST(p.exit_code() == 0);
    BOOST_TEST(count(p.out(), "-n --tag-output\n") == 2u);
}

BOOST_AUTO_TEST_CASE(tag_output_and_partial_last_line) {
    Env e;
    auto p = e.run({"-n", "2", "--tag-output", kRank, "noeol:tail"});
    BOOST_TEST(p.exit_code() == 0);
    BOOST_TEST(p.out().starts_with("[zpmix."), p.out());
    BOOST_TEST(count(p.out(), ".1,1]<stdout>: rank 1 pid ") == 1u, p.out());
    BOOST_TEST(count(p.out(), "<stdout>: tail") == 2u);
}

BOOST_AUTO_TEST_CASE(exit_status_of_the_job) {
    Env e;
    BOOST_TEST(e.run({"-n", "2", kRank, "exit:3"}).exit_code() == 3);
    auto killed = e.run({"-n", "2", kRank, "0=signal:9", "ok"});
    BOOST_TEST(killed.exit_code() == 128 + 9);
    BOOST_TEST(killed.err().find("rank 0") != std::string::npos, killed.err());
    BOOST_TEST(killed.err().find("signal 9") != std::string::npos);
    auto missing = e.run({"no-such-program-zpmix"});
    BOOST_TEST(missing.exit_code() == 127);
    BOOST_TEST(missing.err().find("no-such-program-zpmix") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(failing_rank_terminates_the_others) {
    Env e;
    const std::string ready = e.tmp.path + "/ready";
    fs::create_directory(ready);
    auto p = e.run({"-n", "4", kRank, "2=exit:5:" + ready + ":3", "sleep:" + ready});
    BOOST_TEST(p.exit_code() == 5);
    const auto pids = pids_in(p.out());
    BOOST_TEST(pids.size() == 4u, p.out());
    for (pid_t pid : pids) BOOST_TEST(gone_within(pid, 5s), "pid " << pid);
    BOOST_TEST(p.err().find("rank 2") != std::string::npos, p.err());
}

BOOST_AUTO_TEST_CASE(sigterm_to_run_leaves_nothing_behind) {
    Env e;
    auto p = e.run({"-n", "3", kRank, "sleep"});
    BOOST_REQUIRE(p.read_until([](const std::string &o) { return pids_in(o).size() == 3; }));
    ::kill(p.pid(), SIGTERM);
    BOOST_TEST(p.exit_code() == 128 + SIGTERM);
    for (pid_t pid : pids_in(p.out())) BOOST_TEST(gone_within(pid, 5s), "pid " << pid);
    BOOST_TEST(fs::is_empty(e.base()));  // the embedded broker's directory is gone
}

BOOST_AUTO_TEST_CASE(time_limit) {
    Env e;
    auto p = e.run({"--timeout", "0.5", "-n", "2", kRank, "sleep"});
    BOOST_TEST(p.exit_code() == 124);
    BOOST_TEST(p.err().find("job exceeded its time limit of 0.5 s") != std::string::npos, p.err());
    for (pid_t pid : pids_in(p.out())) BOOST_TEST(gone_within(pid, 5s));
}

BOOST_AUTO_TEST_CASE(environment) {
    Env e;
    ::setenv("ZPMIX_TEST_EXPORTED", "from-here", 1);
    auto p = e.run({"-x", "FOO=bar", "-x", "ZPMIX_TEST_EXPORTED", "-n", "1", "sh", "-c",
                    "echo $FOO $ZPMIX_TEST_EXPORTED $PMIX_NAMESPACE $PMIX_RANK; "
                    "test -n \"$ZPMIX_SECRET\" && echo \"$ZPMIX_URI\""});
    BOOST_TEST(p.exit_code() == 0);
    BOOST_TEST(p.out().starts_with("bar from-here zpmix."), p.out());
    BOOST_TEST(p.out().find(".1 0\nipc://") != std::string::npos, p.out());
    BOOST_TEST(p.out().ends_with("/broker.sock\n"), p.out());
}

BOOST_AUTO_TEST_CASE(binding_to_cores) {
    Env e;
    auto p = e.run({"-n", "2", "--bind-to", "core", kRank, "cpus"});
    BOOST_TEST(p.exit_code() == 0);
    BOOST_TEST(count(p.out(), "cpus 1\n") == 2u, p.out());
}

// The hosts the ranks go on, as mpirun reads them; this host by any of its names runs as before.
BOOST_AUTO_TEST_CASE(hosts_of_this_host_run_here) {
    Env e;
    char host[256] = {};
    BOOST_REQUIRE(::gethostname(host, sizeof host - 1) == 0);
    auto p = e.run({"-H", "localhost:2," + std::string(host) + ":1", kRank});
    BOOST_TEST(p.exit_code() == 0, p.err());
    BOOST_TEST(count(p.out(), " pid ") == 3u, p.out());  // -n defaults to every slot

    auto over = e.run({"-H", "127.0.0.1:2", "-n", "3", kRank});
    BOOST_TEST(over.exit_code() == 1);
    BOOST_TEST(
        over.err().find("not enough slots: 3 rank(s) asked for, 2 slot(s)") != std::string::npos,
        over.err());
    BOOST_TEST(over.out() == "");
    auto allowed = e.run({"-H", "127.0.0.1:2", "-n", "3", "--oversubscribe", kRank});
    BOOST_TEST(allowed.exit_code() == 0, allowed.err());
    BOOST_TEST(count(allowed.out(), " pid ") == 3u, allowed.out());

    TempDir dir{"zpmix-hostfile"};
    std::ofstream(dir.path + "/hosts") << "# here\nlocalhost slots=2\n";
    auto file = e.run({"--hostfile", dir.path + "/hosts", "-N", "1", kRank});
    BOOST_TEST(file.exit_code() == 0, file.err());
    BOOST_TEST(count(file.out(), " pid ") == 1u, file.out());

    // Inside a Slurm allocation of this host alone, its slots are the default.
    Child slurm({kZpmix, "run", kRank},
                {"XDG_RUNTIME_DIR=" + e.tmp.path, "SLURM_JOB_NODELIST=" + std::string(host),
                 "SLURM_TASKS_PER_NODE=2"});
    BOOST_TEST(slurm.exit_code() == 0, slurm.err());
    BOOST_TEST(count(slurm.out(), " pid ") == 2u, slurm.out());
}

// Ranks on other hosts run under brokers started there through the rsh agent; when it cannot start
// them, the launch fails at once naming the node, and nothing is started (tests/multinode runs
// jobs across real namespace nodes).
BOOST_AUTO_TEST_CASE(a_node_whose_broker_cannot_start_fails_the_launch) {
    Env e;
    for (const auto &args :
         {std::vector<std::string>{"--launcher", "rsh", "--rsh-agent", "false", "-H", "n1:1,n2:1",
                                   kRank},
          std::vector<std::string>{"--launcher", "rsh", "--rsh-agent", "false", "-H",
                                   "localhost:1,n2:1", "--map-by", "node", kRank}}) {
        auto p = e.run(args);
        BOOST_TEST(p.exit_code() == 1);
        BOOST_TEST(p.err().find("did not start") != std::string::npos, p.err());
        BOOST_TEST(p.err().find(" on n") != std::string::npos, p.err());
        BOOST_TEST(p.out() == "");
    }
    // --launcher rsh: the same inside a real allocation, where srun would start the brokers.
    Child slurm({kZpmix, "run", "--launcher", "rsh", "--rsh-agent", "/nonexistent/agent", kRank},
                {"XDG_RUNTIME_DIR=" + e.tmp.path, "SLURM_JOB_NODELIST=n[1-2]",
                 "SLURM_TASKS_PER_NODE=1(x2)"});
    BOOST_TEST(slurm.exit_code() == 1);
    BOOST_TEST(slurm.err().find("cannot run the rsh agent") != std::string::npos, slurm.err());
}

BOOST_AUTO_TEST_CASE(bad_placement_options_are_refused) {
    Env e;
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    for (const auto &c : {Case{{"-H", "n1:x", kRank}, "slot count"},
                          Case{{"--map-by", "socket", kRank}, "unknown --map-by 'socket'"},
                          Case{{"--hostfile", "/nonexistent", kRank}, "cannot read hostfile"},
                          Case{{"-N", "2", "--map-by", "node", kRank}, "conflicts"}}) {
        auto p = e.run(c.args);
        BOOST_TEST(p.exit_code() == 1);
        BOOST_TEST(p.err().find(c.says) != std::string::npos, p.err());
        BOOST_TEST(p.out() == "");
    }
    auto both = e.run({"--oversubscribe", "--nooversubscribe", kRank});
    BOOST_TEST(both.exit_code() != 0);
    BOOST_TEST(both.out() == "");
}

// --report-bindings says what each rank is bound to: what the rank itself sees.
BOOST_AUTO_TEST_CASE(report_bindings) {
    Env e;
    auto p = e.run({"-n", "2", "--bind-to", "core", "--report-bindings", "sh", "-c",
                    "echo \"$PMIX_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\""});
    BOOST_TEST(p.exit_code() == 0, p.err());
    for (const auto &line : p.lines()) {
        const auto space = line.find(' ');
        const std::string rank = line.substr(0, space), cpus = line.substr(space + 1);
        BOOST_TEST(
            p.err().find("] rank " + rank + " bound to cpus " + cpus + " (") != std::string::npos,
            line << " / " << p.err());
    }
    BOOST_TEST(p.lines().size() == 2u);
    auto unbound = e.run({"-n", "1", "--report-bindings", kRank});
    BOOST_TEST(unbound.exit_code() == 0);
    BOOST_TEST(unbound.err().find("] rank 0 not bound") != std::string::npos, unbound.err());
}

BOOST_AUTO_TEST_CASE(standalone_broker) {
    Env e;
    Child broker({kZpmix, "broker"}, e.env());
    const std::string rdv = e.base() + "/broker.json";
    // The rendezvous file is written before the broker logs that it listens.
    BOOST_REQUIRE(
        broker.until([&] { return broker.err().find("listening on") != std::string::npos; }, 10s));
    BOOST_TEST(fs::exists(rdv));
    Child second({kZpmix, "broker"}, e.env());
    BOOST_TEST(second.exit_code() == 1);
    BOOST_TEST(second.err().find("already running") != std::string::npos, second.err());

    // zpmix run finds it: the namespace carries the broker's pid.
    auto p = e.run({"--tag-output", kRank});
    BOOST_TEST(p.exit_code() == 0);
    BOOST_TEST(p.out().find("[zpmix." + std::to_string(broker.pid()) + ".") != std::string::npos,
               p.out());

    // A `zpmix run` that dies does not leave its job running.
    {
        auto doomed = e.run({"-n", "2", kRank, "sleep"});
        BOOST_REQUIRE(
            doomed.read_until([](const std::string &o) { return pids_in(o).size() == 2; }));
        ::kill(doomed.pid(), SIGKILL);
        BOOST_TEST(doomed.exit_code() == 128 + SIGKILL);
        for (pid_t pid : pids_in(doomed.out())) BOOST_TEST(gone_within(pid, 10s), "pid " << pid);
    }

    // Stopping the broker ends a running job with a message, and removes every file.
    auto running = e.run({"-n", "2", kRank, "sleep"});
    BOOST_REQUIRE(running.read_until([](const std::string &o) { return pids_in(o).size() == 2; }));
    ::kill(broker.pid(), SIGTERM);
    BOOST_TEST(broker.exit_code() == 0);
    BOOST_TEST(running.exit_code() == 128 + SIGTERM);
    BOOST_TEST(running.err().find("shutting down") != std::string::npos, running.err());
    for (pid_t pid : pids_in(running.out())) BOOST_TEST(gone_within(pid, 5s));
    BOOST_TEST(!fs::exists(rdv));
    BOOST_TEST(!fs::exists(e.base()));
}

BOOST_AUTO_TEST_CASE(cli_help_and_version) {
    Child v({kZpmix, "--version"});
    BOOST_TEST(v.exit_code() == 0);
    BOOST_TEST(v.out().starts_with("zpmix " ZPMIX_VERSION_STRING "\n"));
    Child h({kZpmix, "run", "--help"});
    BOOST_TEST(h.exit_code() == 0);
    BOOST_TEST(h.out().find("--tag-output") != std::string::npos);
    Child none({kZpmix, "run"});
    BOOST_TEST(none.exit_code() != 0);
}
