// I/O forwarding end to end (PMIx_IOF_pull, _push, _deregister): a tool of the standard API
// (iof_tool) attaches by pid to a running `zpmix run` of iof_rank ranks, gets the output they
// wrote before it came from the job's cache, tagged and as XML, pushes input to rank 0 that
// comes back as its echo, deregisters and gets nothing more, ends rank 0's input. The ranks
// check the access rules themselves (a client pulls its own job only). The same under the test
// host (tests/server/host.c, a resource manager on pmix_server.h) that forwards its ranks' I/O
// as mpirun does (PMIx_server_IOF_deliver, push_stdin). A tool (spawn_tool) that
// spawns a job through a standalone broker gets its output and exit status as `zpmix run` does.
// Every wait has a deadline; nothing waits by sleeping.
#define BOOST_TEST_MODULE iof
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "support/launcher.hpp"
#include "support/process.hpp"

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kTests = std::string(ZPMIX_BIN_DIR) + "/../tests/";

// `zpmix run -n np iof_rank` whose stdin (a FIFO this holds open) stays open: rank 0 reads
// only what the tool pushes. Under the test host, rank 0's stdin is the host's pipe.
struct Job {
    TempDir tmp{"zpmix-iof"};
    std::string fifo = tmp.path + "/stdin";
    int keep = -1;
    std::unique_ptr<Child> run;
    std::string nspace;

    explicit Job(int np, JobLauncher launcher = JobLauncher::zpmix_run) {
        BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        keep = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // never blocks, for a FIFO on Linux
        BOOST_REQUIRE(keep >= 0);
        auto cmd = launch_command(
            launcher, {.argv = {kTests + "iof_rank"}, .np = np, .tools = true, .forward_io = true});
        cmd.insert(cmd.begin(), {"/bin/sh", "-c", "exec \"$@\" < \"$0\"", fifo});
        run = std::make_unique<Child>(cmd, env());
        BOOST_REQUIRE_MESSAGE(run->read_until([&](const std::string &o) {
            return count(o, " before\n") == std::size_t(np);
        }),
                              "the job did not start: " + run->out() + run->err());
        std::smatch m;
        const std::string out = run->out();
        BOOST_REQUIRE(std::regex_search(out, m, std::regex("nspace (\\S+)")));
        nspace = m[1];
    }
    ~Job() {
        if (keep >= 0) ::close(keep);
    }
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }
};

}  // namespace

BOOST_DATA_TEST_CASE(tool_pulls_cached_and_live_output_and_pushes_input,
                     boost::unit_test::data::make({JobLauncher::zpmix_run,
                                                   JobLauncher::server_host}),
                     launcher) {
    Job job(2, launcher);
    Child tool({kTests + "iof_tool", std::to_string(job.run->pid()), job.nspace, "2"}, job.env());
    const int code = tool.exit_code();
    BOOST_TEST(code == 0, tool.out() << tool.err());
    BOOST_TEST(tool.out().find("ok\n") != std::string::npos, tool.out());
    // What zpmix run printed is unchanged by the tool: every line, untagged.
    BOOST_TEST(job.run->exit_code() == 0, job.run->out() << job.run->err());
    BOOST_TEST(job.run->out().find("echo: hello\n") != std::string::npos, job.run->out());
    BOOST_TEST(job.run->out().find("echo: second\n") != std::string::npos, job.run->out());
    BOOST_TEST(job.run->out().find("bye\n") != std::string::npos, job.run->out());
}

namespace {

// A standalone broker in a private base directory.
struct Standalone {
    TempDir tmp{"zpmix-iof-spawn"};
    std::unique_ptr<Child> broker;

    Standalone() {
        broker = std::make_unique<Child>(std::vector<std::string>{kZpmix, "broker"}, env(),
                                         tmp.path + "/broker.log");
        BOOST_REQUIRE_MESSAGE(
            eventually([&] { return std::filesystem::exists(tmp.path + "/zpmix/broker.json"); }),
            "the broker did not start: " + slurp(tmp.path + "/broker.log"));
    }
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }
};

// The lines of `text` that start with `prefix`, without it, sorted (ranks write in any order).
std::vector<std::string> lines_of(const std::string &text, const std::string &prefix,
                                  bool strip = true) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(prefix)) out.push_back(strip ? line.substr(prefix.size()) : line);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

// RFC0025: a tool that spawns a job with PMIX_FWD_STDOUT/_STDERR gets its output whenever it
// pulls it, also once the job is over, and its status with PMIX_NOTIFY_COMPLETION: what `zpmix
// run` prints and exits with for the same job.
BOOST_AUTO_TEST_CASE(a_tool_spawning_a_job_gets_its_output_and_status_as_zpmix_run_does) {
    Standalone node;
    // Both ranks write a line on each channel; rank 0 fails once rank 1 has written (a failure
    // ends the others' ranks), so the job's output and status are the same every time.
    auto job = [&](const std::string &run) {
        const std::string dir = node.tmp.path + "/" + run;
        std::filesystem::create_directory(dir);
        return std::vector<std::string>{
            "/bin/sh", "-c",
            "echo out $PMIX_RANK; echo err $PMIX_RANK >&2; touch \"$0/written.$PMIX_RANK\"; "
            "[ $PMIX_RANK = 1 ] && exit 0; i=0; "
            "while [ ! -e \"$0/written.1\" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; "
            "exit 3",
            dir};
    };
    std::vector<std::string> run = {kZpmix, "run", "-n", "2"};
    for (const auto &a : job("run")) run.push_back(a);
    Child r(run, node.env());
    BOOST_TEST(r.exit_code() == 3, r.err());
    const auto out = lines_of(r.out(), "", false);
    const auto err = lines_of(r.err(), "err ", false);
    BOOST_TEST(out == (std::vector<std::string>{"out 0", "out 1"}));
    BOOST_TEST(err == (std::vector<std::string>{"err 0", "err 1"}));
    for (const std::string pull : {"before", "after"}) {
        std::vector<std::string> args = {kTests + "spawn_tool", pull, "2"};
        for (const auto &a : job(pull)) args.push_back(a);
        Child tool(args, node.env());
        BOOST_TEST_INFO("pull " << pull << ": " << tool.out() << tool.err());
        BOOST_TEST(tool.exit_code() == 0);
        BOOST_TEST(lines_of(tool.out(), "stdout: ") == out);
        BOOST_TEST(lines_of(tool.out(), "stderr: ") == err);
        BOOST_TEST(lines_of(tool.out(), "exit ") == std::vector<std::string>{"3"});
    }
}

// OpenPMIx's tool example: a tool spawns with no directive and hears of its child's end through a
// handler for PMIX_ERR_JOB_TERMINATED filtered on its own namespace (PRRTE addresses the spawner,
// naming the child as the affected process). Its launcher example: PMIX_NOTIFY_COMPLETION and
// PMIX_MAPBY in the app's info, which are the job's.
BOOST_AUTO_TEST_CASE(a_tool_hears_of_its_child_s_end_as_openpmix_s_examples_wait_for_it) {
    Standalone node;
    for (const std::string mode : {"example", "launcher"}) {
        Child tool({kTests + "spawn_tool", mode, "2", "/bin/sh", "-c", "exit 5"}, node.env());
        BOOST_TEST_INFO(mode << ": " << tool.out() << tool.err());
        BOOST_TEST(tool.exit_code() == 0);
        const auto ends = lines_of(tool.out(), "exit ", false);
        BOOST_REQUIRE_EQUAL(ends.size(), 1u);
        BOOST_TEST(std::regex_match(ends[0], std::regex("exit 5 affected zpmix\\.\\S+")));
    }
}
