// I/O forwarding end to end (PMIx_IOF_pull, _push, _deregister): a tool of the standard API
// (iof_tool) attaches by pid to a running `zpmix run` of iof_rank ranks, gets the output they
// wrote before it came from the job's cache, tagged and as XML, pushes input to rank 0 that
// comes back as its echo, deregisters and gets nothing more, ends rank 0's input. The ranks
// check the access rules themselves (a client pulls its own job only). Every wait has a
// deadline; nothing waits by sleeping.
#define BOOST_TEST_MODULE iof
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <regex>

#include "support/process.hpp"

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kTests = std::string(ZPMIX_BIN_DIR) + "/../tests/";

// `zpmix run -n np iof_rank` whose stdin (a FIFO this holds open) stays open: rank 0 reads
// only what the tool pushes.
struct Job {
    TempDir tmp{"zpmix-iof"};
    std::string fifo = tmp.path + "/stdin";
    int keep = -1;
    std::unique_ptr<Child> run;
    std::string nspace;

    explicit Job(int np) {
        BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        keep = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // never blocks, for a FIFO on Linux
        BOOST_REQUIRE(keep >= 0);
        run = std::make_unique<Child>(
            std::vector<std::string>{"/bin/sh", "-c", "exec \"$0\" run -n \"$1\" \"$2\" < \"$3\"",
                                     kZpmix, std::to_string(np), kTests + "iof_rank", fifo},
            env());
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

BOOST_AUTO_TEST_CASE(tool_pulls_cached_and_live_output_and_pushes_input) {
    Job job(2);
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
