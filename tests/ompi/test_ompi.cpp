#define BOOST_TEST_MODULE ompi
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

// Integration: unmodified Open MPI programs (built with Debian's mpicc) and a python3-pmix
// client under `zpmix run`, which gives them zpmix's libpmix.so.2 (the ompi personality).
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

extern char **environ;

namespace {

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kMpiProg = ZPMIX_MPI_PROG;

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/zpmix-ompi-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(path); }
};

// `zpmix run ARGS` with its output captured; every wait has a deadline.
class Run {
  public:
    explicit Run(std::vector<std::string> args) {
        args.insert(args.begin(), {kZpmix, "run"});
        int out[2], err[2];
        BOOST_REQUIRE(::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        std::vector<std::string> env;
        for (char **e = environ; *e; ++e) env.emplace_back(*e);
        // A private base directory (no standalone broker of the machine interferes); Open MPI
        // refuses root without the two variables; no InfiniBand probing in containers.
        env.insert(env.end(), {"XDG_RUNTIME_DIR=" + tmp_.path, "OMPI_ALLOW_RUN_AS_ROOT=1",
                               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,vader,tcp"});
        std::vector<char *> argv, envp;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto &e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        BOOST_REQUIRE(::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
        posix_spawn_file_actions_destroy(&fa);
        ::close(out[1]);
        ::close(err[1]);
        fds_[0] = out[0];
        fds_[1] = err[0];
    }
    ~Run() {
        if (!reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        for (int fd : fds_)
            if (fd >= 0) ::close(fd);
    }
    const std::string &out() const { return text_[0]; }
    const std::string &err() const { return text_[1]; }

    // The exit code (128+signal when killed), after reading all output; fails at the deadline.
    int exit_code(std::chrono::milliseconds timeout = 60s) {
        const auto deadline = Clock::now() + timeout;
        while (fds_[0] >= 0 || fds_[1] >= 0) {
            std::vector<pollfd> p;
            for (int fd : fds_)
                if (fd >= 0) p.push_back({fd, POLLIN, 0});
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            BOOST_REQUIRE_MESSAGE(
                left.count() > 0 && ::poll(p.data(), p.size(), static_cast<int>(left.count())) > 0,
                "zpmix run did not finish in time; stderr: " + err());
            for (const auto &x : p) {
                if (!(x.revents & (POLLIN | POLLHUP))) continue;
                const int i = x.fd == fds_[0] ? 0 : 1;
                char buf[4096];
                const ssize_t n = ::read(x.fd, buf, sizeof buf);
                if (n > 0) {
                    text_[i].append(buf, static_cast<std::size_t>(n));
                } else {
                    ::close(fds_[i]);
                    fds_[i] = -1;
                }
            }
        }
        int st = 0;
        ::waitpid(pid_, &st, 0);  // its output is closed: it is exiting
        reaped_ = true;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }

  private:
    TempDir tmp_;
    pid_t pid_ = -1;
    int fds_[2] = {-1, -1};
    std::string text_[2];
    bool reaped_ = false;
};

std::size_t count(const std::string &s, const std::string &what) {
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
}

// The pids the ranks printed ("rank R pid P").
std::vector<pid_t> rank_pids(const std::string &out) {
    std::vector<pid_t> pids;
    static const std::regex re(R"(rank \d+ pid (\d+))");
    for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
        pids.push_back(std::stoi((*it)[1]));
    return pids;
}

// zpmix run returns after the launcher reaped every rank: none may be left.
void require_all_gone(const std::vector<pid_t> &pids) {
    for (pid_t pid : pids)
        BOOST_TEST((::kill(pid, 0) != 0 && errno == ESRCH), "rank pid " << pid << " still exists");
}

}  // namespace

BOOST_AUTO_TEST_CASE(world_of_four) {
    Run run({"-n", "4", kMpiProg, "check", "4"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(
            count(run.out(), "rank " + std::to_string(r) + " of 4: allreduce 10 ring 6 ok") == 1u);
}

// The personality is what makes it work: without it every rank is a singleton of size 1.
BOOST_AUTO_TEST_CASE(without_the_personality_ranks_are_singletons) {
    Run run({"--personality", "none", "-n", "2", kMpiProg, "check", "2"});
    BOOST_TEST(run.exit_code() != 0);
    BOOST_TEST(count(run.err(), "world size 1, expected 2") >= 1u, run.err());
}

BOOST_AUTO_TEST_CASE(mpi_abort_ends_the_job_with_its_code) {
    Run run({"-n", "4", kMpiProg, "abort", "2", "7"});
    BOOST_TEST(run.exit_code() == 7, run.err());
    const auto pids = rank_pids(run.out());
    BOOST_TEST(pids.size() == 4u, run.out());
    BOOST_TEST(count(run.out() + run.err(), "passed the barrier") == 0u);
    require_all_gone(pids);
}

BOOST_AUTO_TEST_CASE(a_killed_rank_ends_the_job) {
    Run run({"-n", "4", kMpiProg, "kill", "1"});
    BOOST_TEST(run.exit_code() == 128 + SIGKILL, run.err());
    const auto pids = rank_pids(run.out());
    BOOST_TEST(pids.size() == 4u, run.out());
    BOOST_TEST(count(run.out() + run.err(), "passed the barrier") == 0u);
    require_all_gone(pids);
}

#ifdef ZPMIX_PYTHON_PMIX
// Debian's python3-pmix, built against OpenPMIx, on zpmix's libpmix.so.2 (python3 does not link
// libmpi, so the personality is asked for).
BOOST_AUTO_TEST_CASE(python3_pmix_peers_exchange_data) {
    Run run({"--personality", "ompi", "-n", "2", "/usr/bin/python3", ZPMIX_PMIX_PEER_PY});
    BOOST_TEST(run.exit_code() == 0, run.err());
    BOOST_TEST(count(run.out(), "rank 0 got 1's card-of-1") == 1u, run.out());
    BOOST_TEST(count(run.out(), "rank 1 got 0's card-of-0") == 1u, run.out());
}
#endif
