#define BOOST_TEST_MODULE watchdog
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "actors/launcher/watchdog.hpp"

using namespace zpmix;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// A process sleeping in a process group of its own (a job's), child of the caller.
pid_t sleeper() {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        for (;;) ::pause();
    }
    ::setpgid(pid, pid);
    return pid;
}

bool alive(pid_t pid) {
    return ::kill(pid, 0) == 0;
}
// An orphan of ours (this process is their subreaper) has ended, and is reaped.
bool ended(pid_t pid) {
    return ::waitpid(pid, nullptr, WNOHANG) == pid;
}

template <class Pred>
bool within(std::chrono::milliseconds limit, Pred pred) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

fs::path scratch(const char *name) {
    fs::path dir = fs::temp_directory_path() / (name + std::to_string(::getpid()));
    fs::create_directories(dir / "session" / "ns" / "0");
    std::ofstream(dir / "session" / "ns" / "fence-board") << "x";
    return dir;
}

}  // namespace

// A broker that dies without a word: its guarded groups are killed, a released one is not, and
// the paths go.
BOOST_AUTO_TEST_CASE(death_kills_guarded_groups_and_removes_paths) {
    const fs::path dir = scratch("zpmix-watchdog-death-");
    // The broker's orphans (its ranks, its watchdog) become ours: their end can be waited for.
    BOOST_REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    int p[2];
    BOOST_REQUIRE(::pipe(p) == 0);
    const pid_t broker = ::fork();
    if (broker == 0) {
        ::close(p[0]);
        const pid_t guarded = sleeper(), released = sleeper();
        Watchdog w({dir.string()}, "");
        if (!w.start().empty() || !w.guard(guarded) || !w.guard(released)) ::_exit(1);
        w.release(released);
        const pid_t pids[2] = {guarded, released};
        if (::write(p[1], pids, sizeof pids) != sizeof pids) ::_exit(1);
        ::_exit(0);  // no quit(): as SIGKILL would end it
    }
    ::close(p[1]);
    pid_t pids[2] = {0, 0};
    BOOST_REQUIRE(::read(p[0], pids, sizeof pids) == sizeof pids);
    ::close(p[0]);
    int st = 0;
    ::waitpid(broker, &st, 0);
    BOOST_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    BOOST_TEST(within(10s, [&] { return ended(pids[0]); }));
    BOOST_TEST(within(10s, [&] { return !fs::exists(dir); }));
    BOOST_TEST(!ended(pids[1]));
    ::kill(pids[1], SIGKILL);
    ::waitpid(pids[1], nullptr, 0);
    while (::waitpid(-1, nullptr, 0) > 0) {  // the watchdog, once done
    }
}

// A broker that stops normally: the watchdog exits, reaped, and touches nothing.
BOOST_AUTO_TEST_CASE(quit_leaves_everything) {
    const fs::path dir = scratch("zpmix-watchdog-quit-");
    const pid_t job = sleeper();
    {
        Watchdog w({(dir / "session").string()}, dir.string());
        BOOST_REQUIRE(w.start().empty());
        BOOST_REQUIRE(w.guard(job));
        const pid_t watcher = w.pid();
        w.quit();
        BOOST_TEST(::waitpid(watcher, nullptr, WNOHANG) == -1);  // reaped already
    }
    BOOST_TEST(alive(job));
    BOOST_TEST(fs::exists(dir / "session" / "ns" / "fence-board"));
    ::kill(job, SIGKILL);
    ::waitpid(job, nullptr, 0);
    fs::remove_all(dir);
}
