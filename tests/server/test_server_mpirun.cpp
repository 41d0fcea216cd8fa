#define BOOST_TEST_MODULE server_mpirun
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support/process.hpp"

// Integration: Debian's Open MPI mpirun, unchanged, hosting zpmix as its PMIx server library:
// its ext3x component links libpmix.so.2, so zpmix's directory first on LD_LIBRARY_PATH makes
// mpirun, and the ranks it starts, load zpmix's. Each test checks that they really did.
namespace {

using namespace zpmix::test;

const std::string kMpirun = ZPMIX_MPIRUN;
const std::string kMpiProg = ZPMIX_MPI_PROG;
const std::string kMpiDyn = ZPMIX_MPI_DYN;
const std::string kRmClient = std::string(ZPMIX_BIN_DIR) + "/../tests/server_rm_client";
const std::string kLib = std::string(ZPMIX_LIB_DIR) + "/libpmix.so.2";

// mpirun ARGS on this node, as root in a container: Open MPI's two variables, no InfiniBand
// probing, tcp on loopback only (the multinode tests add and remove interfaces).
class Mpirun {
  public:
    explicit Mpirun(std::vector<std::string> args, std::vector<std::string> extra_env = {})
        : child_(with_mpirun(std::move(args)), env(std::move(extra_env))) {}
    Child &child() { return child_; }
    int exit_code() { return child_.exit_code(60s); }
    const std::string &tmp() const { return tmp_.path; }

  private:
    static std::vector<std::string> with_mpirun(std::vector<std::string> args) {
        args.insert(args.begin(), {kMpirun, "--allow-run-as-root", "--mca", "btl", "self,vader,tcp",
                                   "--mca", "btl_tcp_if_include", "lo"});
        return args;
    }
    std::vector<std::string> env(std::vector<std::string> extra) const {
        const char *old = std::getenv("LD_LIBRARY_PATH");
        extra.insert(
            extra.end(),
            {"LD_LIBRARY_PATH=" + std::string(ZPMIX_LIB_DIR) + (old ? ":" + std::string(old) : ""),
             "TMPDIR=" + tmp_.path, "OMPI_MCA_orte_tmpdir_base=" + tmp_.path});
        return extra;
    }
    TempDir tmp_{"zpmix-mpirun"};
    Child child_;
};

// Whether process `pid` has zpmix's libpmix.so.2 mapped (and no other libpmix).
bool maps_zpmix(pid_t pid) {
    const std::string maps = slurp("/proc/" + std::to_string(pid) + "/maps");
    const auto real = std::filesystem::canonical(kLib).string();
    bool ours = false, other = false;
    std::istringstream in(maps);
    for (std::string line; std::getline(in, line);) {
        if (line.find("libpmix.so") == std::string::npos) continue;
        (line.find(real) != std::string::npos ? ours : other) = true;
    }
    return ours && !other;
}

// Whether mpirun `pid` loads zpmix's libpmix.so.2 (its pmix component opens it early in its start,
// and mpirun lives until its job ended): polled until a libpmix is mapped, then which one.
bool loads_zpmix(pid_t pid) {
    const std::string maps = "/proc/" + std::to_string(pid) + "/maps";
    eventually([&] { return slurp(maps).find("libpmix.so") != std::string::npos; }, 20s);
    return maps_zpmix(pid);
}

// The "<role> R merged M of N got V" lines of ompi_mpi_dyn.
std::multiset<std::string> merged_lines(const std::string &out) {
    std::multiset<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.find(" merged ") != std::string::npos) lines.insert(line);
    return lines;
}

BOOST_AUTO_TEST_CASE(mpirun_loads_zpmix_and_its_ranks_run) {
    TempDir dir{"zpmix-mpirun-go"};
    const std::string go = dir.path + "/go";
    Mpirun m({"-n", "2", kMpiProg, "wait", go});
    // Both ranks are up (past MPI_Init: its modex fence and barrier, through zpmix's server).
    BOOST_REQUIRE_MESSAGE(
        m.child().read_until([](const std::string &out) { return count(out, "ready ") == 2; }, 60s),
        "stdout: " + m.child().out() + "\nstderr: " + m.child().err());
    BOOST_CHECK_MESSAGE(maps_zpmix(m.child().pid()), "mpirun did not load " + kLib);
    static const std::regex ready(R"(ready (\d+) )");
    const std::string out = m.child().out();
    int ranks = 0;
    for (std::sregex_iterator it(out.begin(), out.end(), ready), end; it != end; ++it, ++ranks)
        BOOST_CHECK_MESSAGE(maps_zpmix(std::stoi((*it)[1])), "a rank did not load " + kLib);
    BOOST_CHECK_EQUAL(ranks, 2);
    std::ofstream(go).put('\n');
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
}

BOOST_AUTO_TEST_CASE(collectives_under_mpirun) {
    Mpirun m({"--oversubscribe", "-n", "4", kMpiProg, "check", "4"});
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(count(m.child().out(), " ok\n"), 4u);
}

// MPI_Abort goes to mpirun through the abort upcall: the job ends with the code, and the other
// rank never passes its barrier.
BOOST_AUTO_TEST_CASE(mpi_abort_under_mpirun) {
    Mpirun m({"-n", "2", kMpiProg, "abort", "1", "5"});
    const int code = m.exit_code();
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(code, 5);
    BOOST_CHECK_EQUAL(count(m.child().err(), "passed the barrier"), 0u);
}

// A plain PMIx client under mpirun: the job information mpirun registers reaches it.
BOOST_AUTO_TEST_CASE(pmix_client_under_mpirun) {
    Mpirun m({"-n", "2", std::string(ZPMIX_BIN_DIR) + "/../tests/server_client", "dmodex"});
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(count(m.child().out(), " ok\n"), 2u);
}

// mpirun's data server (its publish, lookup and unpublish upcalls) holds what a job publishes in
// its session.
BOOST_AUTO_TEST_CASE(publish_and_lookup_under_mpirun) {
    Mpirun m({"--oversubscribe", "-n", "3", std::string(ZPMIX_BIN_DIR) + "/../tests/server_client",
              "publish"});
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(count(m.child().out(), " ok\n"), 3u);
}

// MPI_Comm_spawn: the spawn upcall (mpirun starts the children, which load zpmix's library too),
// then the parents and children connect through the connect upcall and exchange messages.
BOOST_AUTO_TEST_CASE(mpi_comm_spawn_under_mpirun) {
    Mpirun m({"--oversubscribe", "-n", "2", kMpiDyn, "spawn"});
    BOOST_CHECK_MESSAGE(loads_zpmix(m.child().pid()), "mpirun did not load " + kLib);
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    const std::multiset<std::string> want{
        "parent 0 merged 0 of 4 got 42", "parent 1 merged 1 of 4 got 43",
        "child 0 merged 2 of 4 got 44", "child 1 merged 3 of 4 got 45"};
    BOOST_CHECK(merged_lines(m.child().out()) == want);
}

// MPI_Comm_accept and MPI_Comm_connect between the jobs of two mpiruns joined by ompi-server (Open
// MPI's data server): the port goes through its publish and lookup; each mpirun registers the
// other's job (no process of it on its node), the ranks' Gets of the other job's data go to
// mpirun's direct_modex, which asks the other mpirun (its PMIx_server_dmodex_request), and the
// disconnect's fence spans both mpiruns through fence_nb.
BOOST_AUTO_TEST_CASE(mpi_comm_connect_accept_across_two_mpiruns) {
    TempDir dir{"zpmix-mpirun-dyn"};
    const std::string uri = dir.path + "/uri";
    const auto ompi_server = std::filesystem::path(kMpirun).parent_path() / "ompi-server";
    BOOST_REQUIRE(std::filesystem::exists(ompi_server));
    Child server({ompi_server.string(), "--no-daemonize", "-r", uri},
                 {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                  "OMPI_MCA_oob_tcp_if_include=lo", "TMPDIR=" + dir.path,
                  "OMPI_MCA_orte_tmpdir_base=" + dir.path});
    BOOST_REQUIRE(eventually([&] { return !slurp(uri).empty(); }, 20s));
    Mpirun accept({"--ompi-server", "file:" + uri, "--oversubscribe", "-n", "2", kMpiDyn, "server",
                   dir.path});
    BOOST_REQUIRE_MESSAGE(
        eventually([&] { return std::filesystem::exists(dir.path + "/published"); }, 60s),
        "stderr: " + accept.child().err());
    Mpirun connect({"--ompi-server", "file:" + uri, "-n", "1", kMpiDyn, "client"});
    BOOST_CHECK_MESSAGE(maps_zpmix(accept.child().pid()), "mpirun did not load " + kLib);
    BOOST_CHECK_MESSAGE(loads_zpmix(connect.child().pid()), "mpirun did not load " + kLib);
    BOOST_CHECK_EQUAL(connect.exit_code(), 0);
    BOOST_CHECK_EQUAL(accept.exit_code(), 0);
    BOOST_TEST_INFO("accepting: " << accept.child().out() << accept.child().err()
                                  << "\nconnecting: " << connect.child().out()
                                  << connect.child().err());
    const std::multiset<std::string> want{"server 0 merged 0 of 3 got 42",
                                          "server 1 merged 1 of 3 got 43"};
    BOOST_CHECK(merged_lines(accept.child().out()) == want);
    BOOST_CHECK(merged_lines(connect.child().out()) ==
                std::multiset<std::string>{"client 0 merged 2 of 3 got 44"});
}

// MPI-IO (ROMIO over the job's communicator): a collective write and reads of the others' blocks.
BOOST_AUTO_TEST_CASE(mpi_io_under_mpirun) {
    TempDir dir{"zpmix-mpirun-io"};
    Mpirun m({"--oversubscribe", "-n", "3", kMpiProg, "io", dir.path + "/file"});
    BOOST_CHECK_MESSAGE(loads_zpmix(m.child().pid()), "mpirun did not load " + kLib);
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(count(m.child().out(), " io ok\n"), 3u);
    BOOST_CHECK_EQUAL(std::filesystem::file_size(dir.path + "/file"), 3u * 64 * sizeof(int));
}

// Tools under mpirun. Open MPI 4.1's tool_connected refuses every tool (PMIX_ERR_NOT_SUPPORTED
// on each of its paths), so a tool that finds mpirun's server (by mpirun's pid: its
// orte_pmix_session_server makes it pass PMIX_SERVER_TOOL_SUPPORT; by the job's nspace; by URI)
// is told so at once, and mpirun ends normally with its job (it waits forever for the job it
// files a tool without a name under). The job's process table comes through its query upcall.
BOOST_AUTO_TEST_CASE(tools_under_mpirun) {
    TempDir runtime{"zpmix-mpirun-tools"};
    Mpirun m({"-n", "2", kRmClient, "tool", "pid,nspace,uri", "query"},
             {"OMPI_MCA_orte_pmix_session_server=1", "XDG_RUNTIME_DIR=" + runtime.path});
    BOOST_CHECK_MESSAGE(loads_zpmix(m.child().pid()), "mpirun did not load " + kLib);
    BOOST_CHECK_EQUAL(m.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << m.child().out() << "\nstderr: " << m.child().err());
    BOOST_CHECK_EQUAL(count(m.child().out(), "tool refused: PMIX_ERR_NOT_SUPPORTED\n"), 3u);
    BOOST_CHECK_EQUAL(count(m.child().out(), " ok\n"), 2u);

    Mpirun table({"-n", "2", kRmClient, "ptable"});
    BOOST_CHECK_EQUAL(table.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << table.child().out() << "\nstderr: " << table.child().err());
    BOOST_CHECK_EQUAL(count(table.child().out(), "rank 0 proc table rows 2\n"), 1u);
    BOOST_CHECK_EQUAL(count(table.child().out(), " ok\n"), 2u);
}

}  // namespace
