#define BOOST_TEST_MODULE wireup
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>

#include "broker/broker.hpp"
#include "support/launcher.hpp"
#include "support/launcher_peer.hpp"
#include "support/process.hpp"

// Integration: real PMIx programs (tests/wireup/wireup_prog.c) launched by the real broker's
// launcher, as `zpmix run` would, with their output and exit statuses checked; the same
// scenarios under the test host (tests/server/host.c, a resource manager on pmix_server.h), on
// one node and across its two (fence_nb, direct_modex), at the end.
using namespace zpmix;
using namespace zpmix::test;

namespace {

const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/wireup_prog";

struct JobResult {
    std::int32_t status = -1;
    std::string message;  // why it ended, when not by itself
    std::string out, err;
    std::vector<msg::ProcExit> exits;
};

// An embedded broker and a launcher-role peer that starts jobs on it.
struct JobRunner {
    TempDir tmp{"zpmix-wireup"};
    int kill_grace_ms;
    Broker broker{[this] {
        Config c;
        c.run_dir = tmp.path + "/run";
        c.kill_grace_ms = kill_grace_ms;
        return c;
    }()};
    std::optional<LauncherPeer> peer;
    std::map<std::string, JobResult> jobs;  // by namespace

    explicit JobRunner(int grace_ms = 500) : kill_grace_ms(grace_ms) {
        broker.start();
        peer.emplace(broker.uri());
    }
    ~JobRunner() {
        peer.reset();
        broker.stop();
    }

    template <class M>
    void send(const M &m) {
        peer->send(m);
    }
    std::optional<Envelope> recv(std::chrono::milliseconds timeout) { return peer->recv(timeout); }
    // Starts a job; returns its namespace.
    std::string launch(std::vector<std::string> argv, std::uint32_t np,
                       std::vector<std::string> env = {}, std::string bind_to = "none") {
        msg::Launch l;
        l.bind_to = std::move(bind_to);
        l.argv = std::move(argv);
        l.np = np;
        l.env = std::move(env);
        l.timeout_s = 60;  // a hung job fails the test instead of hanging it
        // Its scenarios end ranks early, without PMIx_Finalize, to see what the others' fences
        // and Gets do: a recoverable job (PMIX_JOB_RECOVERABLE) lets them go on.
        l.recoverable = true;
        send(l);
        for (;;) {
            auto e = recv(20s);
            BOOST_REQUIRE_MESSAGE(e, "no answer to the launch");
            if (e->type == msg::ErrorReply::type)
                BOOST_FAIL("launch refused: " << e->as<msg::ErrorReply>().message);
            if (e->type == msg::LaunchReply::type) return e->as<msg::LaunchReply>().nspace;
            handle(*e);
        }
    }
    void handle(const Envelope &e) {
        if (e.type == msg::Output::type) {
            auto o = e.as<msg::Output>();
            (o.fd == 1 ? jobs[o.nspace].out : jobs[o.nspace].err) += o.data;
        } else if (e.type == msg::ProcExit::type) {
            auto x = e.as<msg::ProcExit>();
            jobs[x.nspace].exits.push_back(x);
        } else if (e.type == msg::JobEnded::type) {
            auto j = e.as<msg::JobEnded>();
            jobs[j.nspace].status = j.status;
            jobs[j.nspace].message = j.message;
        }
    }
    // Waits (bounded) until every given job has ended.
    void wait(const std::vector<std::string> &nspaces) {
        const auto deadline = std::chrono::steady_clock::now() + 90s;
        auto all_done = [&] {
            for (const auto &ns : nspaces)
                if (jobs[ns].status < 0) return false;
            return true;
        };
        while (!all_done()) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            BOOST_REQUIRE_MESSAGE(left.count() > 0, "jobs did not end in time");
            if (auto e = recv(left)) handle(*e);
        }
    }
    JobResult run(const std::string &scenario, std::uint32_t np, std::string bind_to = "none") {
        const std::string ns = launch({kProg, scenario}, np, {}, std::move(bind_to));
        wait({ns});
        const JobResult &r = jobs[ns];
        BOOST_TEST_MESSAGE(scenario << " stdout:\n" << r.out << "stderr:\n" << r.err);
        return r;
    }
};

void expect_ok(const JobResult &r, const std::string &scenario, std::size_t ranks) {
    BOOST_TEST(r.status == 0, scenario << " failed:\n" << r.err);
    BOOST_TEST(count(r.out, scenario + " ok") == ranks);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wireup, JobRunner)

BOOST_AUTO_TEST_CASE(every_type_round_trips_through_put_fence_get) {
    expect_ok(run("types", 3), "types", 3);
}

BOOST_AUTO_TEST_CASE(sparse_get_waits_for_the_owners_commit) {
    expect_ok(run("sparse", 3), "sparse", 3);
}

BOOST_AUTO_TEST_CASE(subsets_and_concurrent_fences) {
    expect_ok(run("fences", 4), "fences", 4);
}

BOOST_AUTO_TEST_CASE(cards_of_every_size_reach_every_participant) {
    expect_ok(run("cards", 4), "cards", 4);
    // The job is over: the segments of its fences went with its namespace.
    const std::string session = tmp.path + "/run/session";
    auto segments = [&] {
        std::size_t n = 0;
        for (const auto &e : std::filesystem::directory_iterator(session))
            n += e.path().filename().string().starts_with("fence.");
        return n;
    };
    BOOST_TEST(eventually([&] { return segments() == 0; }), segments() << " segments left");
}

BOOST_AUTO_TEST_CASE(fence_timeout_when_a_participant_never_comes) {
    expect_ok(run("timeout", 2), "timeout", 2);
}

BOOST_AUTO_TEST_CASE(participant_death_fails_the_fence_for_the_others) {
    auto r = run("death", 3);
    expect_ok(r, "death", 2);  // the rank that left prints nothing
}

BOOST_AUTO_TEST_CASE(a_participant_that_arrived_and_ended_fails_only_later_fences) {
    expect_ok(run("leaver", 3), "leaver", 2);  // the rank that left prints nothing
}

BOOST_AUTO_TEST_CASE(direct_modex_after_a_fence_reads_the_commit_before_it) {
    expect_ok(run("recommit", 3), "recommit", 3);
}

BOOST_AUTO_TEST_CASE(job_information_keys_and_types) {
    expect_ok(run("jobinfo", 2, "core"), "jobinfo", 2);  // bound: cpuset and locality exist
}

BOOST_AUTO_TEST_CASE(fence_across_two_namespaces) {
    const std::string a = launch({kProg, "twojobs"}, 2, {"WIREUP_SIDE=a"});
    const std::string b = launch({kProg, "twojobs"}, 2, {"WIREUP_SIDE=b"});
    wait({a, b});
    BOOST_TEST_MESSAGE("a:\n"
                       << jobs[a].out << jobs[a].err << "b:\n"
                       << jobs[b].out << jobs[b].err);
    expect_ok(jobs[a], "twojobs", 2);
    expect_ok(jobs[b], "twojobs", 2);
}

BOOST_AUTO_TEST_CASE(abort_ends_the_job_with_its_status) {
    auto r = run("abort", 2);
    BOOST_TEST(r.status == 7, "status " << r.status << "\n" << r.err);
}

BOOST_AUTO_TEST_CASE(gets_and_fences_of_processes_that_cannot_exist_fail_at_once) {
    expect_ok(run("cannot_exist", 2), "cannot_exist", 2);
}

BOOST_AUTO_TEST_CASE(an_oversized_commit_is_refused_and_the_connection_survives) {
    expect_ok(run("bigput", 2), "bigput", 2);
}

BOOST_AUTO_TEST_CASE(get_finds_data_of_the_scope_it_names) {
    expect_ok(run("scope", 2), "scope", 2);
}

BOOST_AUTO_TEST_CASE(job_information_of_another_namespace) {
    const std::string a = launch({kProg, "otherjob"}, 2, {"WIREUP_SIDE=a"}, "core");
    const std::string b = launch({kProg, "otherjob"}, 3, {"WIREUP_SIDE=b"}, "core");
    wait({a, b});
    BOOST_TEST_MESSAGE("a:\n"
                       << jobs[a].out << jobs[a].err << "b:\n"
                       << jobs[b].out << jobs[b].err);
    expect_ok(jobs[a], "otherjob", 2);
    expect_ok(jobs[b], "otherjob", 3);
}

// Rank 0 claims to be rank 1: the broker refuses its PMIx_Init; as itself it takes part.
BOOST_AUTO_TEST_CASE(a_rank_cannot_connect_as_another) {
    expect_ok(run("forge", 3), "forge", 3);
}

BOOST_AUTO_TEST_SUITE_END()

// PMIx_Abort naming one other rank: only that rank is terminated (the two others fence together
// afterwards); its end then fails the job, which reports the abort. A long grace period, so that
// the target's SIGTERM, not a SIGKILL, ends it.
BOOST_AUTO_TEST_CASE(abort_of_one_rank_terminates_that_rank) {
    JobRunner runner(10000);
    const JobResult r = runner.run("abortone", 3);
    BOOST_TEST(r.status == 7, "status " << r.status << "\n" << r.err);
    BOOST_TEST(r.message.find("PMIx_Abort") != std::string::npos, r.message);
    BOOST_TEST(count(r.out, "abortone ok") == 2u);
    BOOST_REQUIRE(!r.exits.empty());
    BOOST_TEST(r.exits.front().rank == 2u);  // the first to end
    BOOST_TEST(r.exits.front().signal == SIGTERM);
}

// PMIX_REGISTER_CLEANUP(_DIR): a rank's file goes at its end (rank 0 sees rank 1's go), the job's
// directory at the job's end, even when the rank that registered it is SIGKILLed; what the rule
// ignores and what another uid owns stay.
BOOST_AUTO_TEST_CASE(registered_cleanup_goes_when_its_process_or_job_ends) {
    JobRunner runner;
    TempDir dir{"zpmix-cleanup"};
    const std::string ns = runner.launch({kProg, "cleanup"}, 2, {"CLEANUP_DIR=" + dir.path});
    runner.wait({ns});
    const JobResult &r = runner.jobs[ns];
    BOOST_TEST_MESSAGE("stdout:\n" << r.out << "stderr:\n" << r.err);
    BOOST_TEST(count(r.out, "cleanup ok") == 2u, r.err);
    BOOST_TEST(r.status == 128 + SIGKILL);
    namespace fs = std::filesystem;
    BOOST_TEST(!fs::exists(dir.path + "/rank0.seg"));  // its rank was killed
    BOOST_TEST(!fs::exists(dir.path + "/rank1.seg"));
    BOOST_TEST(!fs::exists(dir.path + "/jobdir/sub"));
    BOOST_TEST(fs::exists(dir.path + "/jobdir/keep.me"));
    if (::geteuid() == 0) BOOST_TEST(fs::exists(dir.path + "/alien"));
}

// Started by another implementation's PMIx server (OpenPMIx's variables, as its mpirun or srun
// sets them, and no ZPMIX_URI): PMIx_Init fails and says what it found and why it cannot connect,
// unless ZPMIX_SINGLETON asks for a singleton.
BOOST_AUTO_TEST_CASE(started_by_another_runtimes_server_fails_loudly_unless_a_singleton_is_asked) {
    // The test's own environment has no ZPMIX_URI or ZPMIX_SINGLETON: the child inherits it.
    const std::vector<std::string> foreign{
        "PMIX_SERVER_URI41=prterun-host-4242@0.0;tcp4://127.0.0.1:1",
        "PMIX_NAMESPACE=prterun-host-4242@1", "PMIX_RANK=0"};
    BOOST_REQUIRE(getenv("ZPMIX_URI") == nullptr && getenv("ZPMIX_SINGLETON") == nullptr);
    Child refused({kProg, "singleton"}, foreign);
    BOOST_TEST(refused.exit_code() == 1);
    const std::string said = refused.out() + refused.err();
    BOOST_TEST(said.find("PMIX_SERVER_URI41=prterun-host-4242@0.0") != std::string::npos, said);
    BOOST_TEST(said.find("cannot speak") != std::string::npos, said);
    BOOST_TEST(said.find("ZPMIX_SINGLETON=1") != std::string::npos, said);
    BOOST_TEST(said.find("PMIx_Init: ") != std::string::npos, said);  // the program's own line

    auto asked = foreign;
    asked.push_back("ZPMIX_SINGLETON=1");
    Child singleton({kProg, "singleton"}, asked);
    BOOST_TEST(singleton.exit_code() == 0, singleton.out() << singleton.err());
    BOOST_TEST((singleton.out() + singleton.err()).find("running alone") != std::string::npos);
}

// No ZPMIX_URI: the program initialises as a singleton and does everything on its own.
BOOST_AUTO_TEST_CASE(singleton_init) {
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e) {
        std::string kv(*e);
        if (kv.starts_with("ZPMIX_") || kv.starts_with("PMIX_")) continue;
        env.push_back(kv);
    }
    std::vector<char *> envp, argv;
    for (auto &kv : env) envp.push_back(kv.data());
    envp.push_back(nullptr);
    std::string prog = kProg, scenario = "singleton";
    argv = {prog.data(), scenario.data(), nullptr};
    pid_t pid;
    BOOST_REQUIRE(::posix_spawn(&pid, prog.c_str(), nullptr, nullptr, argv.data(), envp.data()) ==
                  0);
    int status = 0;
    BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0);
}

// The scenarios above that also run under the test host: the same program, the same verdict.
// Across the host's two nodes, fences go through its fence_nb and Gets of the other node's data
// through its direct_modex. Not under the host: scenarios of two jobs at once (twojobs,
// otherjob: the host runs one job), PMIX_REGISTER_CLEANUP and the launcher's kill grace
// (cleanup, abortone: the launcher's own), bound ranks (jobinfo's cpusets and locality: the host
// binds nothing), a forged identity (forge: pmix_server.h gives the library no rank's pid, so
// under a host a process of the job holding its secret that connects first as another rank of it
// is taken for that rank; the rank itself is then refused). The publish/lookup flags of sparse
// and timeout use the host's directory, which is one node's (a rank of the other node would not
// find them).
namespace {

struct HostCase {
    const char *scenario;
    int np, nodes, ok;  // ok: the ranks that say "<scenario> ok"
    const char *arg = nullptr;
};

std::ostream &operator<<(std::ostream &os, const HostCase &c) {
    return os << c.scenario << " -n " << c.np << " on " << c.nodes << " node(s)";
}

const HostCase kUnderTheHost[] = {
    {"types", 3, 1, 3},  {"sparse", 3, 1, 3},   {"fences", 4, 1, 4},      {"timeout", 2, 1, 2},
    {"death", 3, 1, 2},  {"leaver", 3, 1, 2},   {"recommit", 3, 1, 3},    {"cannot_exist", 2, 1, 2},
    {"bigput", 2, 1, 2}, {"scope", 2, 1, 2},    {"types", 4, 2, 4},       {"fences", 4, 2, 4},
    {"cards", 4, 2, 4},  {"recommit", 3, 2, 3}, {"across", 4, 2, 4, "2"},
};

}  // namespace

BOOST_DATA_TEST_CASE(scenarios_under_the_test_host, boost::unit_test::data::make(kUnderTheHost),
                     c) {
    std::vector<std::string> argv{kProg, c.scenario};
    if (c.arg) argv.emplace_back(c.arg);
    LaunchedJob job(JobLauncher::server_host, {.argv = argv, .np = c.np, .nodes = c.nodes});
    const int code = job.exit_code();
    BOOST_TEST_MESSAGE(c << " stdout:\n" << job.out() << "stderr:\n" << job.err());
    BOOST_TEST(code == 0, c << " failed:\n" << job.err());
    BOOST_TEST(count(job.out(), std::string(c.scenario) + " ok") == std::size_t(c.ok), job.out());
}

// As abort_ends_the_job_with_its_status: the host ends the job and exits with the status.
BOOST_AUTO_TEST_CASE(abort_under_the_test_host_ends_the_job_with_its_status) {
    LaunchedJob job(JobLauncher::server_host, {.argv = {kProg, "abort"}, .np = 2});
    BOOST_TEST(job.exit_code() == 7, job.out() << job.err());
    BOOST_TEST(count(job.out(), "upcall abort 1 status 7") == 1u, job.out() << job.err());
}
