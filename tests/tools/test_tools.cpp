// Tools and queries end to end: jobs of query_client ranks (which query their own process table)
// under `zpmix run`'s embedded brokers or a standalone `zpmix broker`, and tool_prog, a tool of
// the standard API, finding their brokers every way the standard offers; the first case also
// under the test host (tests/server/host.c, a resource manager on pmix_server.h), whose server a
// tool finds by the host's pid or the job's nspace, and whose query upcall answers the process
// table. Every wait has a deadline; nothing waits by sleeping.
#define BOOST_TEST_MODULE tools
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "support/launcher.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kTests = std::string(ZPMIX_BIN_DIR) + "/../tests/";

// A private base directory, optionally with a standalone broker, and jobs of query_client.
struct Node {
    TempDir tmp{"zpmix-tools"};
    std::optional<Child> broker;

    explicit Node(bool standalone, std::vector<std::string> broker_args = {}) {
        if (!standalone) return;
        std::vector<std::string> argv{kZpmix, "broker"};
        argv.insert(argv.end(), broker_args.begin(), broker_args.end());
        broker.emplace(argv, env(), tmp.path + "/broker.log");
        BOOST_REQUIRE_MESSAGE(
            eventually([&] { return fs::exists(tmp.path + "/zpmix/broker.json"); }),
            "the broker did not start: " + slurp(tmp.path + "/broker.log"));
    }
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }

    struct Job {
        std::unique_ptr<Child> run;
        std::string nspace, release;
    };
    // `zpmix run -n np query_client FILE` (or the test host's), once every rank has queried and
    // said it is ready.
    Job start(int np, const std::string &name, JobLauncher launcher = JobLauncher::zpmix_run) {
        Job j;
        j.release = tmp.path + "/release." + name;
        j.run = std::make_unique<Child>(
            launch_command(launcher,
                           {.argv = {kTests + "query_client", j.release}, .np = np, .tools = true}),
            env());
        BOOST_REQUIRE_MESSAGE(j.run->read_until([&](const std::string &o) {
            return count(o, " ready") == std::size_t(np);
        }),
                              "the job did not start: " + j.run->out() + j.run->err());
        std::smatch m;
        const std::string out = j.run->out();
        BOOST_REQUIRE(std::regex_search(out, m, std::regex("nspace (\\S+) rank")));
        j.nspace = m[1];
        return j;
    }
    // Lets the job's ranks finish; their own queries' verdict is the job's exit status.
    void finish(Job &j) {
        std::ofstream(j.release) << "go";
        BOOST_TEST(j.run->exit_code() == 0, "the ranks' queries: " << j.run->err());
    }
    // tool_prog with args (and more environment); its exit code, its output in out.
    int tool(const std::vector<std::string> &args, std::string &out,
             const std::vector<std::string> &more_env = {}) {
        std::vector<std::string> a{kTests + "tool_prog"};
        a.insert(a.end(), args.begin(), args.end());
        auto e = env();
        e.insert(e.end(), more_env.begin(), more_env.end());
        Child p(a, e);
        const int code = p.exit_code();
        out = p.out() + p.err();
        return code;
    }
    // rank -> pid, as `zpmix ps` lists the job.
    std::map<int, long> ps(const std::string &nspace) {
        Child p({kZpmix, "ps", "--ranks", "--job", nspace, "--json"}, env());
        BOOST_REQUIRE(p.exit_code() == 0);
        std::map<int, long> pids;
        for (const auto &row : nlohmann::json::parse(p.out())) pids[row["rank"]] = row["pid"];
        return pids;
    }
};

// rank -> pid from tool_prog's "row RANK PID STATE HOST EXE" lines.
std::map<int, long> rows(const std::string &out) {
    std::map<int, long> pids;
    std::regex row("row (\\d+) (\\d+) (\\d+) \\S+ (\\S+)");
    for (std::sregex_iterator it(out.begin(), out.end(), row), end; it != end; ++it) {
        BOOST_TEST((*it)[3] == std::to_string(5));  // PMIX_PROC_STATE_RUNNING
        BOOST_TEST((*it)[4].str().find("query_client") != std::string::npos);
        pids[std::stoi((*it)[1])] = std::stol((*it)[2]);
    }
    return pids;
}

}  // namespace

BOOST_DATA_TEST_CASE(tool_finds_the_launchers_server_by_pid_and_by_nspace,
                     boost::unit_test::data::make({JobLauncher::zpmix_run,
                                                   JobLauncher::server_host}),
                     launcher) {
    Node node(false);
    auto job = node.start(4, "a", launcher);
    std::string out;
    BOOST_TEST(node.tool({"pid", std::to_string(job.run->pid()), job.nspace}, out) == 0, out);
    const auto listed = rows(out);
    BOOST_TEST(listed.size() == 4u);
    BOOST_TEST(listed == node.ps(job.nspace));  // the pids are the ranks'
    BOOST_TEST(node.tool({"nspace", job.nspace}, out) == 0, out);
    BOOST_TEST(rows(out).size() == 4u);
    BOOST_TEST(node.tool({"pid", "1", job.nspace}, out) != 0, "no broker has pid 1");
    node.finish(job);
}

// A broker named by its pid or job is looked for in every base directory of the user, as `zpmix
// ps` looks: here a `zpmix run` started with another XDG_RUNTIME_DIR than the tool's.
BOOST_AUTO_TEST_CASE(tool_finds_a_broker_of_another_runtime_dir_by_pid_and_by_nspace) {
    Node node(false);
    const std::string release = node.tmp.path + "/release.x";
    Child run({kZpmix, "run", "-n", "2", kTests + "query_client", release}, {"XDG_RUNTIME_DIR="});
    BOOST_REQUIRE_MESSAGE(
        run.read_until([&](const std::string &o) { return count(o, " ready") == 2u; }),
        "the job did not start: " + run.out() + run.err());
    std::smatch m;
    const std::string said = run.out();
    BOOST_REQUIRE(std::regex_search(said, m, std::regex("nspace (\\S+) rank")));
    const std::string ns = m[1];
    std::string out;
    BOOST_TEST(node.tool({"pid", std::to_string(run.pid()), ns}, out) == 0, out);
    BOOST_TEST(rows(out).size() == 2u);
    BOOST_TEST(node.tool({"nspace", ns}, out) == 0, out);
    BOOST_TEST(rows(out).size() == 2u);
    std::ofstream(release) << "go";
    BOOST_TEST(run.exit_code() == 0, "the ranks' queries: " << run.err());
}

BOOST_AUTO_TEST_CASE(tool_connects_to_the_system_broker) {
    Node node(true);
    auto job = node.start(2, "s");
    std::string out;
    BOOST_TEST(node.tool({"system", job.nspace}, out) == 0, out);
    BOOST_TEST(rows(out) == node.ps(job.nspace));
    BOOST_TEST(node.tool({"pid", std::to_string(node.broker->pid()), job.nspace}, out) == 0, out);
    node.finish(job);
}

// Over tcp a tool holding the broker's keypair is admitted as a tool (RFC0010's PMIX_TCP_URI): it
// queries, hears its events on the broker's tcp publisher and steers the job; without the
// keypair, or with another, it is turned away.
BOOST_AUTO_TEST_CASE(tool_over_tcp_with_the_brokers_keypair) {
    Node node(true, {"--tcp", "tcp://127.0.0.1:0"});
    auto job = node.start(2, "t");
    const auto rdv = nlohmann::json::parse(slurp(node.tmp.path + "/zpmix/broker.json"));
    const std::string uri = rdv["tcp_uri"];
    BOOST_REQUIRE(uri.starts_with("tcp://127.0.0.1:"));
    std::string keys = slurp(node.tmp.path + "/zpmix/tcp.key");
    keys.erase(keys.find_last_not_of('\n') + 1);
    std::string out;
    BOOST_TEST(node.tool({"tcp", uri, job.nspace}, out, {"ZPMIX_TCP_KEYS=" + keys}) == 0, out);
    BOOST_TEST(rows(out) == node.ps(job.nspace));
    // PMIX_TCP_URI in OpenPMIx's form ("nspace.rank;uri") too.
    BOOST_TEST(
        node.tool({"tcp", "zpmix.0;" + uri, job.nspace}, out, {"ZPMIX_TCP_KEYS=" + keys}) == 0,
        out);
    {  // no keypair: refused, and the library says why on stderr, not in the tool's output
        Child refused({kTests + "tool_prog", "tcp", uri, job.nspace}, node.env());
        BOOST_TEST(refused.exit_code() != 0);
        BOOST_TEST(refused.err().find("ZPMIX_TCP_KEYS") != std::string::npos, refused.err());
        BOOST_TEST(refused.out().find("ZPMIX_TCP_KEYS") == std::string::npos, refused.out());
    }
    const std::string other =  // a keypair of libzmq's, not the broker's
        "Sb{%ta6HlAIG(svF(w0/+ZMCkq*FJK]iqcw2:6Nj d#6vkC$BMwPFq8hKP@Ts35^ng-qBT-Dg@<Qj0H98";
    BOOST_TEST(node.tool({"tcp", uri, job.nspace}, out, {"ZPMIX_TCP_KEYS=" + other}) != 0,
               "another keypair: refused");
    node.finish(job);
}

BOOST_AUTO_TEST_CASE(one_tool_two_brokers) {
    Node node(false);
    auto a = node.start(2, "a");
    auto b = node.start(2, "b");
    std::string out;
    BOOST_TEST(node.tool({"two", std::to_string(a.run->pid()), a.nspace,
                          std::to_string(b.run->pid()), b.nspace},
                         out) == 0,
               out);
    node.finish(a);
    node.finish(b);
}

BOOST_AUTO_TEST_CASE(tool_without_a_broker) {
    Node node(false);
    std::string out;
    BOOST_TEST(node.tool({"noconnect"}, out) == 0, out);
    BOOST_TEST(node.tool({"system", "none"}, out) != 0, "no standalone broker: " << out);
}

// `zpmix info` shows what the library says through the tool API.
BOOST_AUTO_TEST_CASE(zpmix_info_lists_the_attributes_per_function) {
    Node node(false);
    Child p({kZpmix, "info", "--attributes", "--json"}, node.env());
    BOOST_REQUIRE(p.exit_code() == 0);
    const auto info = nlohmann::json::parse(p.out());
    BOOST_TEST(info["protocol"].get<int>() > 0);
    bool timeout = false;
    for (const auto &a : info["attributes"]["client"]["PMIx_Get"])
        timeout = timeout || a["key"] == "pmix.timeout";
    BOOST_TEST(timeout);
    BOOST_TEST(info["attributes"]["tool"].contains("PMIx_tool_init"));
}
