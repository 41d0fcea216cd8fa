#define BOOST_TEST_MODULE spawn
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

// PMIx_Spawn end to end: PMIx programs (spawn_parent, spawn_child) under `zpmix run` and its
// embedded broker, or a standalone one.
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kParent = std::string(ZPMIX_BIN_DIR) + "/../tests/spawn_parent";
const std::string kChild = std::string(ZPMIX_BIN_DIR) + "/../tests/spawn_child";

// Every run uses its own base directory, so no standalone broker of the machine interferes.
struct Env {
    TempDir tmp{"zpmix-spawn"};
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }
    Child run(std::vector<std::string> args) const {
        args.insert(args.begin(), {kZpmix, "run"});
        return Child(args, env());
    }
};

// The words of a line, after its --tag-output tag if any.
std::vector<std::string> words(const std::string &line) {
    std::string body = line;
    if (auto tag = body.find(">: "); body.starts_with("[") && tag != std::string::npos)
        body = body.substr(tag + 3);
    std::istringstream in(body);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// The lines whose first word is `first`.
std::vector<std::string> lines_of(const Child &p, const std::string &first) {
    std::vector<std::string> out;
    for (const auto &l : p.lines())
        if (auto w = words(l); !w.empty() && w[0] == first) out.push_back(l);
    return out;
}

// A "key value key value ..." line (after its first words) as a map.
std::map<std::string, std::string> fields(const std::string &line, std::size_t skip = 1) {
    const auto w = words(line);
    std::map<std::string, std::string> out;
    for (std::size_t i = skip; i + 1 < w.size(); i += 2) out[w[i]] = w[i + 1];
    return out;
}

// The child lines of spawn_child, by rank.
std::map<std::string, std::map<std::string, std::string>> children_of(const Child &p) {
    std::map<std::string, std::map<std::string, std::string>> out;
    for (const auto &l : lines_of(p, "child")) {
        const auto w = words(l);
        if (w.size() > 2 && w[1] == "pid") continue;
        auto f = fields(l, 2);
        f["nspace"] = w.at(1);
        out[f["rank"]] = f;
    }
    return out;
}

// The pids the n sleeping child ranks print ("child pid <pid>"); fails the test without them.
std::vector<pid_t> child_pids(Child &p, std::size_t n) {
    std::vector<pid_t> pids;
    const bool all = p.until([&] {
        pids.clear();
        for (const auto &l : lines_of(p, "child"))
            if (auto w = words(l); w.size() == 3 && w[1] == "pid") pids.push_back(std::stoi(w[2]));
        return pids.size() == n;
    });
    BOOST_REQUIRE_MESSAGE(all, p.out() + p.err());
    return pids;
}

bool gone(pid_t pid) {
    return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_rank_spawns_a_job_and_hears_of_its_end) {
    Env e;
    // 16 ranks: rank 0 often spawns before the last ones are started, so that zpmix run hears of
    // the child job before the LaunchReply of its own.
    auto p = e.run({"-n", "16", "--tag-output", kParent, "notify", kChild});
    BOOST_TEST(p.exit_code() == 0, p.err());
    const auto spawned = lines_of(p, "spawned");
    BOOST_REQUIRE_MESSAGE(spawned.size() == 1u, p.out());
    const std::string child_ns = words(spawned[0])[1];
    const std::string parent = words(spawned[0])[3];  // <nspace>:0, the spawning rank
    BOOST_TEST(parent.ends_with(":0"));
    BOOST_TEST(child_ns != parent.substr(0, parent.size() - 2));

    // Both child ranks ran the other program, know their own job and their parent.
    const auto children = children_of(p);
    BOOST_REQUIRE_MESSAGE(children.size() == 2u, p.out());
    for (const auto &[rank, c] : children) {
        BOOST_TEST(c.at("nspace") == child_ns);
        BOOST_TEST(c.at("size") == "2");
        BOOST_TEST(c.at("appnum") == "0");
        BOOST_TEST(c.at("parent") == parent);
        BOOST_TEST(c.at("spawned") == "1");
        BOOST_TEST(c.at("cwd") == fs::current_path().string());  // the spawner's
        // PMIX_NODE_RANK counts every job's ranks on the node: the parent's 16 come first.
        BOOST_TEST(c.at("noderank") == std::to_string(16 + std::stoi(c.at("localrank"))));
        // Their output is tagged with their own namespace and rank.
        BOOST_TEST(count(p.out(), "[" + child_ns + "," + rank + "]<stdout>: child ") == 1u);
    }

    // The spawner heard of the job's end: status 0, the whole job affected.
    const auto ends = lines_of(p, "job-end");
    BOOST_REQUIRE_MESSAGE(ends.size() == 1u, p.out());
    const auto end = fields(ends[0]);
    BOOST_TEST(end.at("status") == "0");
    BOOST_TEST(end.at("exit") == "0");
    BOOST_TEST(end.at("affected") == child_ns + ":*");
    BOOST_TEST(end.at("me") == parent);
}

BOOST_AUTO_TEST_CASE(a_failing_child_job_ends_with_its_status) {
    Env e;
    auto p = e.run({"-n", "1", kParent, "notify", kChild, "1=exit:3"});
    // The spawner handled it, but `zpmix run` reports the first failure of the jobs it ran
    // (PMIX_REPORT_CHILD_SEP false, the standard's default).
    BOOST_TEST(p.exit_code() == 3, p.err());
    const auto ends = lines_of(p, "job-end");
    BOOST_REQUIRE_MESSAGE(ends.size() == 1u, p.out());
    BOOST_TEST(fields(ends[0]).at("status") == "3");
    BOOST_TEST(fields(ends[0]).at("exit") == "3");
    BOOST_TEST(p.err().find("spawned job ") != std::string::npos, p.err());
    BOOST_TEST(p.err().find("rank 1") != std::string::npos, p.err());

    auto own =
        e.run({"--report-child-jobs-separately", "-n", "1", kParent, "notify", kChild, "0=exit:4"});
    BOOST_TEST(own.exit_code() == 0, own.err());
    BOOST_TEST(count(own.out(), "job-end status 4 exit 4") == 1u, own.out());
}

BOOST_AUTO_TEST_CASE(a_job_time_limit_ends_the_child) {
    Env e;
    auto p = e.run({"--report-child-jobs-separately", "-n", "1", kParent, "timeout", kChild});
    BOOST_TEST(p.exit_code() == 0, p.err());
    const auto ends = lines_of(p, "job-end");
    BOOST_REQUIRE_MESSAGE(ends.size() == 1u, p.out());
    BOOST_TEST(fields(ends[0]).at("status") == "124");  // as `zpmix run --timeout`
    BOOST_TEST(p.err().find("time limit") != std::string::npos, p.err());
}

BOOST_AUTO_TEST_CASE(a_spawned_job_spawns_too) {
    Env e;
    // The parent spawns 2 ranks of spawn_parent, whose rank 0 spawns 2 ranks of spawn_child.
    auto p = e.run({"-n", "1", kParent, "notify", kParent, "notify", kChild});
    BOOST_TEST(p.exit_code() == 0, p.err());
    const auto spawned = lines_of(p, "spawned");
    BOOST_REQUIRE_MESSAGE(spawned.size() == 2u, p.out());
    std::map<std::string, std::string> child_of;  // spawner -> the job it spawned
    for (const auto &l : spawned) child_of[words(l)[3]] = words(l)[1];
    // The grandchildren's parent is rank 0 of the child job, whose parent is the root's rank 0.
    const auto children = children_of(p);
    BOOST_REQUIRE_MESSAGE(children.size() == 2u, p.out());
    const std::string middle = children.at("0").at("parent");
    BOOST_REQUIRE(child_of.contains(middle));
    BOOST_TEST(child_of.at(middle) == children.at("0").at("nspace"));
    const std::string middle_ns = middle.substr(0, middle.rfind(':'));
    BOOST_REQUIRE_EQUAL(child_of.size(), 2u);
    for (const auto &[spawner, job] : child_of)
        if (spawner != middle) BOOST_TEST(job == middle_ns);
    BOOST_TEST(lines_of(p, "job-end").size() == 2u, p.out());
    for (const auto &l : lines_of(p, "job-end")) BOOST_TEST(fields(l).at("status") == "0");
}

BOOST_AUTO_TEST_CASE(apps_are_numbered_consecutively) {
    Env e;
    auto p = e.run({"-n", "1", kParent, "multi", kChild, e.tmp.path});
    BOOST_TEST(p.exit_code() == 0, p.err());
    const auto children = children_of(p);
    BOOST_REQUIRE_MESSAGE(children.size() == 3u, p.out());
    struct Want {
        std::string appnum, apprank, appsize, appldr, arg, var, cwd;
    };
    const std::map<std::string, Want> want = {
        {"0", {"0", "0", "2", "0", "app0", "zero", e.tmp.path}},
        {"1", {"0", "1", "2", "0", "app0", "zero", e.tmp.path}},
        {"2", {"1", "0", "1", "2", "app1", "one", "/"}},
    };
    for (const auto &[rank, w] : want) {
        const auto &c = children.at(rank);
        BOOST_TEST_CONTEXT("rank " << rank) {
            BOOST_TEST(c.at("size") == "3");
            BOOST_TEST(c.at("appnum") == w.appnum);
            BOOST_TEST(c.at("apprank") == w.apprank);
            BOOST_TEST(c.at("appsize") == w.appsize);
            BOOST_TEST(c.at("appldr") == w.appldr);
            BOOST_TEST(c.at("arg") == w.arg);
            BOOST_TEST(c.at("var") == w.var);
            BOOST_TEST(c.at("cwd") == w.cwd);
        }
    }
    const auto ends = lines_of(p, "job-end");
    BOOST_REQUIRE_MESSAGE(ends.size() == 1u, p.out());
    BOOST_TEST(fields(ends[0]).at("status") == "0");
}

BOOST_AUTO_TEST_CASE(spawns_that_must_fail) {
    Env e;
    auto p = e.run({"-n", "1", kParent, "errors", kChild});
    BOOST_TEST(p.exit_code() == 0, p.err());
    const std::map<std::string, std::string> want = {
        {"missing", "PMIX_ERR_JOB_EXE_NOT_FOUND"},
        {"missing-second-app", "PMIX_ERR_JOB_EXE_NOT_FOUND"},
        {"napps0", "PMIX_ERR_BAD_PARAM"},
        {"noapps", "PMIX_ERR_BAD_PARAM"},
        {"maxprocs0", "PMIX_ERR_BAD_PARAM"},
        {"badwdir", "PMIX_ERR_JOB_WDIR_NOT_FOUND"},
        {"required", "PMIX_ERR_NOT_SUPPORTED"},
        {"otherhost", "PMIX_ERR_BAD_PARAM"},
        {"badtype", "PMIX_ERR_BAD_PARAM"},
        {"optional", "PMIX_SUCCESS"},  // an optional directive nobody knows is ignored
        {"nb-nocallback", "PMIX_ERR_BAD_PARAM"},
    };
    for (const auto &[what, status] : want) {
        const auto got = lines_of(p, what);
        BOOST_REQUIRE_MESSAGE(got.size() == 1u, what << " in " << p.out());
        BOOST_TEST(words(got[0]).at(1) == status, what);
    }
}

// The parent job ends normally; its child job runs on to its own end, as under ORTE's and PRRTE's
// mpirun (OpenPMIx's dynamic example), and `zpmix run` waits for it. Nothing is said of it.
BOOST_AUTO_TEST_CASE(a_child_outlives_its_parent_s_normal_end) {
    Env e;
    auto p = e.run({"-n", "1", "--tag-output", kParent, "orphan", kChild, e.tmp.path});
    const std::vector<pid_t> pids = child_pids(p, 2);
    BOOST_REQUIRE_MESSAGE(p.until([&] { return !lines_of(p, "spawned").empty(); }),
                          p.out() + p.err());
    const pid_t parent = std::stoi(words(lines_of(p, "parent").at(0)).at(2));
    std::ofstream(e.tmp.path + "/release").close();
    // The parent is reaped by the launcher (nothing is written then: no output to wait on).
    BOOST_REQUIRE_MESSAGE(eventually([&] { return gone(parent); }, 20s), "parent pid " << parent);
    for (pid_t pid : pids) BOOST_TEST(!gone(pid), "pid " << pid);
    BOOST_TEST(!p.wait(std::chrono::milliseconds(0)).has_value());  // `zpmix run` waits for it
    std::ofstream(e.tmp.path + "/go").close();
    BOOST_TEST(p.exit_code() == 0, p.err());
    std::size_t done = 0;
    for (const auto &l : lines_of(p, "child"))
        if (l.find("child done") != std::string::npos) ++done;
    BOOST_TEST(done == 2u, p.out());
    BOOST_TEST(p.err().find("spawned job") == std::string::npos, p.err());
}

// PMIX_SPAWN_CHILD_SEP false: the child job is ended with its parent job, even a normal end,
// before `zpmix run` exits, without counting as a failure (PRRTE warns of it too).
BOOST_AUTO_TEST_CASE(a_child_spawned_tied_ends_with_its_parent) {
    Env e;
    auto p = e.run({"-n", "1", "--tag-output", kParent, "tied", kChild, e.tmp.path});
    const std::vector<pid_t> pids = child_pids(p, 2);
    BOOST_REQUIRE_MESSAGE(p.until([&] { return !lines_of(p, "spawned").empty(); }),
                          p.out() + p.err());
    const std::string child_ns = words(lines_of(p, "spawned").at(0))[1];
    std::ofstream(e.tmp.path + "/release").close();
    BOOST_TEST(p.exit_code() == 0, p.err());
    for (pid_t pid : pids) BOOST_TEST(gone(pid), "pid " << pid);
    BOOST_TEST(p.err().find("spawned job " + child_ns) != std::string::npos, p.err());
    BOOST_TEST(p.err().find("its parent job") != std::string::npos, p.err());
}

// A parent job that fails ends the jobs it spawned; `zpmix run` exits with its status.
BOOST_AUTO_TEST_CASE(a_parent_s_failure_ends_its_children) {
    Env e;
    auto p = e.run({"-n", "1", kParent, "failing", kChild, e.tmp.path});
    const std::vector<pid_t> pids = child_pids(p, 2);
    BOOST_REQUIRE_MESSAGE(p.until([&] { return !lines_of(p, "spawned").empty(); }),
                          p.out() + p.err());
    std::ofstream(e.tmp.path + "/release").close();
    BOOST_TEST(p.exit_code() == 7, p.err());
    for (pid_t pid : pids) BOOST_TEST(gone(pid), "pid " << pid);
}

BOOST_AUTO_TEST_CASE(sigterm_to_run_ends_the_children_too) {
    Env e;
    auto p = e.run({"-n", "1", kParent, "orphan", kChild, e.tmp.path});
    const std::vector<pid_t> pids = child_pids(p, 2);
    ::kill(p.pid(), SIGTERM);
    BOOST_TEST(p.exit_code() == 128 + SIGTERM, p.err());
    for (pid_t pid : pids) BOOST_TEST(gone(pid), "pid " << pid);
}

BOOST_AUTO_TEST_CASE(stopping_the_broker_ends_the_whole_tree) {
    Env e;
    Child broker({kZpmix, "broker"}, e.env());
    BOOST_REQUIRE(
        broker.until([&] { return broker.err().find("listening on") != std::string::npos; }, 10s));
    auto p = e.run({"-n", "1", kParent, "orphan", kChild, e.tmp.path});
    const std::vector<pid_t> pids = child_pids(p, 2);
    ::kill(broker.pid(), SIGTERM);
    BOOST_TEST(broker.exit_code() == 0);
    BOOST_TEST(p.exit_code() == 128 + SIGTERM, p.err());
    for (pid_t pid : pids) BOOST_TEST(gone(pid), "pid " << pid);
}

BOOST_AUTO_TEST_CASE(a_spawner_that_lost_its_broker_fails_fast) {
    Env e;
    Child broker({kZpmix, "broker"}, e.env());
    // The rendezvous file, which `zpmix run` looks for, is written before it logs that it listens.
    BOOST_REQUIRE(
        broker.until([&] { return broker.err().find("listening on") != std::string::npos; }, 10s));
    auto p = e.run({"-n", "1", kParent, "lost", kChild, e.tmp.path});
    BOOST_REQUIRE_MESSAGE(p.read_until_has("ready"), p.out() + p.err());
    kill_watchdog_of(broker.pid());  // the spawner outlives its broker
    broker.kill_now();
    BOOST_TEST(p.exit_code() != 0);  // `zpmix run` lost its broker too
    std::ofstream(e.tmp.path + "/go").close();
    const std::string result = e.tmp.path + "/result";
    BOOST_REQUIRE_MESSAGE(eventually([&] { return fs::exists(result); }, 30s),
                          "the spawner never returned");
    BOOST_TEST(slurp(result) == "spawn PMIX_ERR_LOST_CONNECTION\n");
}
