// Debuggers end to end (RFC0010): debugger_tool, a debugger of the standard tool API, spawns
// debug_rank jobs stopped in PMIx_Init through a standalone broker, waits for
// PMIX_READY_FOR_DEBUG, checks that no rank went past PMIx_Init, finds the ranks in the process
// table, attaches Debian's gdb to one and reads a variable, releases the job and waits for its
// end; the same with every rank stopped at exec (PMIX_DEBUG_STOP_ON_EXEC); the application's own
// stop (PMIX_DEBUG_STOP_IN_APP); debugger daemons co-launched beside their target; `zpmix run
// --stop-in-init` and `--stop-on-exec` with a tool attaching, and `zpmix release`. Every wait has
// a deadline.
//
// Under the test host (tests/server/host.c, support/launcher.hpp) too: a job the host registers
// with PMIX_DEBUG_STOP_IN_INIT, a tool attached to the host's server by its pid (the same checks
// and release as under `zpmix run --stop-in-init`, gdb aside), and a job across the host's two
// nodes, ready node by node, which a tool attached to one node releases whole. The other cases
// stay under zpmix's own launcher: a tool's PMIx_Spawn under a host goes to the host's spawn upcall
// (tests/server), and `zpmix release` and `--stop-on-exec` are zpmix run's. A hosted client's spawn
// stopped in init, released by the host: tests/server.
#define BOOST_TEST_MODULE debugger
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <regex>

#include "support/launcher.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kTests = std::string(ZPMIX_BIN_DIR) + "/../tests/";

// A private base directory with a standalone broker (for the tool's spawns), and a directory for
// the ranks' files.
struct Node {
    TempDir tmp{"zpmix-debugger"};
    std::string files = tmp.path + "/files";
    std::optional<Child> broker;

    explicit Node(bool standalone) {
        fs::create_directories(files);
        if (!standalone) return;
        broker.emplace(std::vector<std::string>{kZpmix, "broker"}, env(), tmp.path + "/broker.log");
        BOOST_REQUIRE_MESSAGE(
            eventually([&] { return fs::exists(tmp.path + "/zpmix/broker.json"); }),
            "the broker did not start: " + slurp(tmp.path + "/broker.log"));
    }
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }

    // debugger_tool with args: its exit code, its output in out.
    int tool(const std::vector<std::string> &args, std::string &out) {
        std::vector<std::string> a{kTests + "debugger_tool"};
        a.insert(a.end(), args.begin(), args.end());
        Child p(a, env());
        const int code = p.exit_code(60s);
        out = p.out() + p.err();
        return code;
    }
    bool up(int rank) const { return fs::exists(files + "/up." + std::to_string(rank)); }
};

// `zpmix run --stop-in-init`'s job, once it said how to attach: its namespace and broker.
struct StoppedRun {
    std::unique_ptr<Child> run;
    std::string nspace, uri;
};

StoppedRun run_stopped(Node &node, int np, const std::string &how = "--stop-in-init") {
    StoppedRun s;
    s.run = std::make_unique<Child>(
        std::vector<std::string>{kZpmix, "run", how, "-n", std::to_string(np),
                                 kTests + "debug_rank", node.files},
        node.env());
    std::smatch m;
    const std::regex said("release them: zpmix release (\\S+) --broker (\\S+)");
    BOOST_REQUIRE_MESSAGE(s.run->until([&] { return std::regex_search(s.run->err(), m, said); }),
                          "zpmix run did not say how to release: " + s.run->err());
    s.nspace = m[1];
    s.uri = m[2];
    return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tool_spawns_stopped_in_init_attaches_gdb_and_releases) {
    Node node(true);
    std::string out;
    BOOST_TEST(node.tool({"spawn", node.files, "3", kTests + "debug_rank", "gdb"}, out) == 0, out);
    BOOST_TEST(out.find("gdb: $1 = 4242") != std::string::npos, out);
    BOOST_TEST(count(out, "proc ") == 3u, out);
}

// Every rank stopped at its first instruction (state T, already debug_rank), gdb reads its
// variable there, and the release lets them all run to the end.
BOOST_AUTO_TEST_CASE(tool_spawns_stopped_on_exec_attaches_gdb_and_releases) {
    Node node(true);
    std::string out;
    BOOST_TEST(node.tool({"exec", node.files, "3", kTests + "debug_rank", "gdb"}, out) == 0, out);
    BOOST_TEST(out.find("gdb: $1 = 4242") != std::string::npos, out);
    BOOST_TEST(count(out, "proc ") == 3u, out);
}

BOOST_AUTO_TEST_CASE(stop_in_app_is_the_application_s_own_wait) {
    Node node(true);
    std::string out;
    BOOST_TEST(node.tool({"app", node.files, "2", kTests + "debug_rank"}, out) == 0, out);
}

BOOST_AUTO_TEST_CASE(debugger_daemons_beside_their_target) {
    Node node(true);
    std::string out;
    BOOST_TEST(node.tool({"colaunch", node.files, "2", kTests + "debug_rank"}, out) == 0, out);
}

// The job stopped in init under either launcher (`--stop-in-init` for both), the tool attached
// to the launcher's server by its pid: PMIX_READY_FOR_DEBUG, no rank past PMIx_Init until the
// release, the ranks' pids in the process table (gdb reads a rank's variable under zpmix run), the
// release lets every rank go on to the job's end.
BOOST_DATA_TEST_CASE(a_tool_attaches_to_a_job_stopped_in_init_under_either_launcher,
                     boost::unit_test::data::make({JobLauncher::zpmix_run,
                                                   JobLauncher::server_host}),
                     launcher) {
    Node node(false);
    Child job(launch_command(launcher, {.argv = {kTests + "debug_rank", node.files},
                                        .np = 2,
                                        .tools = true,
                                        .options = {"--stop-in-init"}}),
              node.env());
    std::string nspace = "host-job";  // the test host's
    if (launcher == JobLauncher::zpmix_run) {
        std::smatch m;
        const std::regex said("release them: zpmix release (\\S+) --broker");
        BOOST_REQUIRE_MESSAGE(job.until([&] { return std::regex_search(job.err(), m, said); }),
                              "zpmix run did not say how to release: " + job.err());
        nspace = m[1];
    } else {
        BOOST_REQUIRE_MESSAGE(job.read_until_has("server uri "),
                              "the host did not start: " + job.out() + job.err());
    }
    std::string out;
    // gdb (seconds) once, under zpmix run; under the host the process table gives the same pids.
    std::vector<std::string> args{"attach", std::to_string(job.pid()), nspace, node.files, "2"};
    if (launcher == JobLauncher::server_host) args.push_back("nogdb");
    BOOST_TEST(node.tool(args, out) == 0, out);
    BOOST_TEST(job.exit_code() == 0, job.out() + job.err());
    BOOST_TEST(slurp(node.files + "/up.0") == "init=1 app=0 exec=0 value=4242");
    BOOST_TEST(slurp(node.files + "/up.1") == "init=1 app=0 exec=0 value=4242");
}

// A tool attached to one node's server of the test host releases the whole job: its
// PMIX_DEBUGGER_RELEASE goes to the host's notify_event, which carries it to the other node,
// whose ranks go on too.
BOOST_AUTO_TEST_CASE(a_tools_release_crosses_the_hosts_nodes) {
    Node node(false);
    Child host(
        launch_command(JobLauncher::server_host, {.argv = {kTests + "debug_rank", node.files},
                                                  .np = 4,
                                                  .nodes = 2,
                                                  .tools = true,
                                                  .options = {"--stop-in-init"}}),
        node.env());
    BOOST_REQUIRE_MESSAGE(host.read_until_has("server uri "),
                          "the host did not start: " + host.out() + host.err());
    std::string out;
    BOOST_TEST(
        node.tool({"release", std::to_string(host.pid()), "host-job", node.files, "4"}, out) == 0,
        out);
    BOOST_TEST(host.exit_code() == 0, host.out() + host.err());
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(slurp(node.files + "/up." + std::to_string(r)) ==
                   "init=1 app=0 exec=0 value=4242");
}

// Across the test host's two nodes each node's library counts the ranks it serves: each node's
// PMIX_READY_FOR_DEBUG names that node's ranks (the host on each node hears its own), and a
// release there (the host's, with --release-ready) lets that node's ranks go on.
BOOST_AUTO_TEST_CASE(a_hosted_job_across_two_nodes_is_ready_node_by_node) {
    Node node(false);
    Child host(launch_command(JobLauncher::server_host,
                              {.argv = {kTests + "debug_rank", node.files},
                               .np = 4,
                               .nodes = 2,
                               .options = {"--stop-in-init", "--release-ready"}}),
               node.env());
    BOOST_TEST(host.exit_code() == 0, host.out() + host.err());
    BOOST_TEST(count(host.out(), "node0: ready for debug host-job ranks 0,1\n") == 1u, host.out());
    BOOST_TEST(count(host.out(), "node1: ready for debug host-job ranks 2,3\n") == 1u, host.out());
    BOOST_TEST(count(host.out(), "ready for debug") == 2u, host.out());
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(slurp(node.files + "/up." + std::to_string(r)) ==
                   "init=1 app=0 exec=0 value=4242");
}

BOOST_AUTO_TEST_CASE(a_tool_attaches_to_zpmix_run_stop_on_exec) {
    Node node(false);
    auto s = run_stopped(node, 2, "--stop-on-exec");
    BOOST_TEST(s.run->err().find("are stopped at exec") != std::string::npos, s.run->err());
    std::string out;
    BOOST_TEST(
        node.tool({"attach", std::to_string(s.run->pid()), s.nspace, node.files, "2", "exec"},
                  out) == 0,
        out);
    BOOST_TEST(s.run->exit_code() == 0, s.run->err());
    BOOST_TEST(slurp(node.files + "/up.1") == "init=0 app=0 exec=1 value=4242");
}

BOOST_AUTO_TEST_CASE(zpmix_release_lets_the_ranks_go_on) {
    Node node(false);
    auto s = run_stopped(node, 2);
    // Both ranks are running, and none went past PMIx_Init.
    BOOST_REQUIRE(eventually([&] {
        Child ps({kZpmix, "ps", "--ranks", "--broker", s.uri, "--job", s.nspace}, node.env());
        return ps.exit_code() == 0 && count(ps.out(), s.nspace) == 2u;
    }));
    BOOST_TEST(!node.up(0));
    BOOST_TEST(!node.up(1));
    Child release({kZpmix, "release", s.nspace, "--broker", s.uri}, node.env());
    BOOST_TEST(release.exit_code() == 0, release.err());
    BOOST_TEST(s.run->exit_code() == 0, s.run->err());
    BOOST_TEST((node.up(0) && node.up(1)));
}
