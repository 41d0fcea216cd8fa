#define BOOST_TEST_MODULE ompi
#include <boost/test/unit_test.hpp>

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <regex>
#include <set>

#include "support/process.hpp"

// Integration: unmodified Open MPI programs (built with Debian's mpicc) and a python3-pmix
// client under `zpmix run`, which gives them zpmix's libpmix.so.2 (the ompi personality).
namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kMpiProg = ZPMIX_MPI_PROG;
const std::string kMpiDyn = ZPMIX_MPI_DYN;
const std::string kPmixInit = std::string(ZPMIX_BIN_DIR) + "/../bench/init_finalize";

// `zpmix run ARGS` with its output captured, in a private base directory (no standalone broker
// of the machine interferes); Open MPI refuses root without the two variables; no InfiniBand
// probing in containers.
class Run {
  public:
    explicit Run(std::vector<std::string> args)
        : child_(with_run(std::move(args)), env(tmp_.path)) {}
    // The same, in the base directory `dir` (where a standalone broker may run).
    Run(std::vector<std::string> args, const std::string &dir)
        : child_(with_run(std::move(args)), env(dir)) {}
    // tcp over loopback only: the multinode tests beside this one add and remove bridges, and an
    // interface that goes between Open MPI listing it and binding to it fails the bind.
    static std::vector<std::string> env(const std::string &dir) {
        return {"XDG_RUNTIME_DIR=" + dir, "OMPI_ALLOW_RUN_AS_ROOT=1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,vader,tcp",
                "OMPI_MCA_btl_tcp_if_include=lo"};
    }
    Child &child() { return child_; }
    const std::string &out() const { return child_.out(); }
    const std::string &err() const { return child_.err(); }
    // The exit code (128+signal when killed), after reading all output; fails at the deadline.
    int exit_code(std::chrono::milliseconds timeout = 60s) { return child_.exit_code(timeout); }

  private:
    static std::vector<std::string> with_run(std::vector<std::string> args) {
        args.insert(args.begin(), {kZpmix, "run"});
        return args;
    }
    TempDir tmp_{"zpmix-ompi"};
    Child child_;
};

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

// Open MPI's shared-memory segments of this host (vader_segment.HOST.JOBID.RANK): a rank that
// does not finalize leaves its segment unless the runtime removes it, as Open MPI registers it
// with PMIX_REGISTER_CLEANUP.
std::set<std::string> shm_segments() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string prefix = std::string("vader_segment.") + host + ".";
    std::set<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator("/dev/shm"))
        if (e.path().filename().string().starts_with(prefix)) out.insert(e.path().filename());
    return out;
}

void require_no_new_segments(const std::set<std::string> &before) {
    for (const auto &s : shm_segments())
        BOOST_TEST(before.contains(s), "/dev/shm/" << s << " was left behind");
}

}  // namespace

BOOST_AUTO_TEST_CASE(world_of_four) {
    Run run({"-n", "4", kMpiProg, "check", "4"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(
            count(run.out(), "rank " + std::to_string(r) + " of 4: allreduce 10 ring 6 ok") == 1u);
}

// An MPMD job of Open MPI ranks, as mpirun runs one: one MPI_COMM_WORLD of both apps, each rank's
// MPI_APPNUM its app's index.
BOOST_AUTO_TEST_CASE(mpmd_apps_share_a_world_with_their_appnum) {
    Run run({"-np", "2", kMpiProg, "appnum", "a", ":", "-np", "1", kMpiProg, "appnum", "b"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    BOOST_TEST(count(run.out(), "a rank 0 of 3 appnum 0") == 1u, run.out());
    BOOST_TEST(count(run.out(), "a rank 1 of 3 appnum 0") == 1u, run.out());
    BOOST_TEST(count(run.out(), "b rank 2 of 3 appnum 1") == 1u, run.out());
}

// The broker writes the node's topology as an MPI program's job starts, before any rank asks
// for it in MPI_Init (which then loads it instead of discovering the node).
BOOST_AUTO_TEST_CASE(the_broker_writes_the_topology_for_mpi_ranks) {
    Run run({"-n", "2", kMpiProg, "topology"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    BOOST_TEST(count(run.out(), "topology ready before MPI_Init") == 2u, run.out());
}

// What mpirun tells Open MPI about oversubscription: 1 when the node runs more ranks than it has
// CPUs (Open MPI's ranks then yield while they wait), else 0; the user's own setting wins.
BOOST_AUTO_TEST_CASE(ranks_get_mpiruns_oversubscription_word) {
    cpu_set_t set;
    CPU_ZERO(&set);
    BOOST_REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    const int cpus = CPU_COUNT(&set);
    const std::string show = "echo over=$OMPI_MCA_mpi_oversubscribe ess=$OMPI_MCA_ess";
    Run fits({"-n", std::to_string(cpus), "sh", "-c", show});
    BOOST_TEST(fits.exit_code() == 0, fits.err());
    BOOST_TEST(count(fits.out(), "over=0 ess=pmi") == static_cast<std::size_t>(cpus), fits.out());
    Run over({"--oversubscribe", "-n", std::to_string(cpus + 1), "sh", "-c", show});
    BOOST_TEST(over.exit_code() == 0, over.err());
    BOOST_TEST(count(over.out(), "over=1 ess=pmi") == static_cast<std::size_t>(cpus + 1),
               over.out());
    Run mine({"--oversubscribe", "-x", "OMPI_MCA_mpi_oversubscribe=0", "-n",
              std::to_string(cpus + 1), "sh", "-c", show});
    BOOST_TEST(mine.exit_code() == 0, mine.err());
    BOOST_TEST(count(mine.out(), "over=0") == static_cast<std::size_t>(cpus + 1), mine.out());
}

// A rank that never reaches the broker while the others do is named on zpmix run's stderr.
BOOST_AUTO_TEST_CASE(a_rank_that_runs_as_a_singleton_is_reported) {
    Run run({"-n", "2", "sh", "-c",
             "if [ \"$PMIX_RANK\" = 1 ]; then exec env -u ZPMIX_URI " + kPmixInit + "; else exec " +
                 kPmixInit + "; fi"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    BOOST_TEST(count(run.err(), "rank 1 of ") == 1u, run.err());
    BOOST_TEST(count(run.err(), "ran as a singleton") == 1u, run.err());
    BOOST_TEST(count(run.err(), "rank 0 of ") == 0u, run.err());
}

// An Open MPI rank that cannot reach zpmix (here: it loads Debian's OpenPMIx, having lost
// LD_LIBRARY_PATH) fails MPI_Init, as under mpirun, instead of running as a world of its own.
BOOST_AUTO_TEST_CASE(an_mpi_rank_without_zpmixs_library_fails_the_job) {
    Run run({"-n", "2", "sh", "-c", "exec env -u LD_LIBRARY_PATH " + kMpiProg + " check 2"});
    BOOST_TEST(run.exit_code() != 0, run.out());
    BOOST_TEST(count(run.out(), "ok") == 0u, run.out());
}

// With the personality off (`--personality none`) every rank is a singleton of size 1.
BOOST_AUTO_TEST_CASE(without_the_personality_ranks_are_singletons) {
    Run run({"--personality", "none", "-n", "2", kMpiProg, "check", "2"});
    BOOST_TEST(run.exit_code() != 0);
    BOOST_TEST(count(run.err(), "world size 1, expected 2") >= 1u, run.err());
}

BOOST_AUTO_TEST_CASE(mpi_abort_ends_the_job_with_its_code) {
    const auto segments = shm_segments();
    Run run({"-n", "4", kMpiProg, "abort", "2", "7"});
    BOOST_TEST(run.exit_code() == 7, run.err());
    const auto pids = rank_pids(run.out());
    BOOST_TEST(pids.size() == 4u, run.out());
    BOOST_TEST(count(run.out() + run.err(), "passed the barrier") == 0u);
    require_all_gone(pids);
    require_no_new_segments(segments);
}

BOOST_AUTO_TEST_CASE(a_killed_rank_ends_the_job) {
    const auto segments = shm_segments();
    Run run({"-n", "4", kMpiProg, "kill", "1"});
    BOOST_TEST(run.exit_code() == 128 + SIGKILL, run.err());
    const auto pids = rank_pids(run.out());
    BOOST_TEST(pids.size() == 4u, run.out());
    BOOST_TEST(count(run.out() + run.err(), "passed the barrier") == 0u);
    require_all_gone(pids);
    require_no_new_segments(segments);
}

// The merged communicator's lines ("<role> R merged M of N got V") each program printed.
std::multiset<std::string> merged_lines(const std::string &out) {
    std::multiset<std::string> lines;
    static const std::regex re(R"(((parent|child|server|client) \d+ merged \d+ of \d+ got \d+))");
    for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
        lines.insert((*it)[1]);
    return lines;
}

// MPI_Comm_spawn: PMIx_Spawn, then the parents' and children's roots exchange their process lists
// by PMIx_Publish/PMIx_Lookup and every process of both jobs calls PMIx_Connect.
BOOST_AUTO_TEST_CASE(mpi_comm_spawn_children_merge_and_exchange) {
    Run run({"-n", "2", kMpiDyn, "spawn"});
    BOOST_TEST(run.exit_code(120s) == 0, run.err());
    const std::multiset<std::string> want{
        "parent 0 merged 0 of 4 got 42", "parent 1 merged 1 of 4 got 43",
        "child 0 merged 2 of 4 got 44", "child 1 merged 3 of 4 got 45"};
    BOOST_TEST(merged_lines(run.out()) == want, run.out() << run.err());
    // The children finish on their own after their parents' normal end: nothing is said of it.
    BOOST_TEST(run.err().find("its parent job") == std::string::npos, run.err());
}

// Two jobs of one broker: the server publishes its port, the client looks it up and connects.
BOOST_AUTO_TEST_CASE(mpi_comm_connect_accept_between_two_jobs) {
    TempDir dir{"zpmix-ompi-dyn"};
    Child broker({kZpmix, "broker"}, Run::env(dir.path));
    BOOST_REQUIRE(
        broker.until([&] { return broker.err().find("listening on") != std::string::npos; }, 10s));
    Run server({"-n", "2", kMpiDyn, "server", dir.path}, dir.path);
    BOOST_REQUIRE_MESSAGE(
        eventually([&] { return std::filesystem::exists(dir.path + "/published"); }, 60s),
        "the server never published its port");
    Run client({"-n", "1", kMpiDyn, "client"}, dir.path);
    BOOST_TEST(client.exit_code(120s) == 0, client.err());
    BOOST_TEST(server.exit_code(120s) == 0, server.err());
    const std::multiset<std::string> want_server{"server 0 merged 0 of 3 got 42",
                                                 "server 1 merged 1 of 3 got 43"};
    BOOST_TEST(merged_lines(server.out()) == want_server, server.out() << server.err());
    const std::multiset<std::string> want_client{"client 0 merged 2 of 3 got 44"};
    BOOST_TEST(merged_lines(client.out()) == want_client, client.out() << client.err());
}

#ifdef ZPMIX_MPI4PY
// mpi4py loads libmpi at run time (python3 does not link it): the personality is on for every
// program, so the ranks find zpmix's libpmix and form one world instead of two singletons.
BOOST_AUTO_TEST_CASE(mpi4py_world_of_two_without_asking_for_the_personality) {
    Run run(
        {"-n", "2", "/usr/bin/python3", "-c",
         "from mpi4py import MPI\n"
         "c = MPI.COMM_WORLD\n"
         "print(f'rank {c.Get_rank()} of {c.Get_size()} sum {c.allreduce(c.Get_rank() + 1)}')"});
    BOOST_TEST(run.exit_code(120s) == 0, run.err());
    BOOST_TEST(count(run.out(), "rank 0 of 2 sum 3") == 1u, run.out() << run.err());
    BOOST_TEST(count(run.out(), "rank 1 of 2 sum 3") == 1u, run.out() << run.err());
}

BOOST_AUTO_TEST_CASE(mpi4py_spawn_merge_and_exchange) {
    Run run({"-n", "1", "/usr/bin/python3", ZPMIX_MPI4PY_SPAWN});
    BOOST_TEST(run.exit_code(120s) == 0, run.err());
    const std::multiset<std::string> want{"parent 0 merged 0 of 3 got 42",
                                          "child 0 merged 1 of 3 got 43",
                                          "child 1 merged 2 of 3 got 44"};
    BOOST_TEST(merged_lines(run.out()) == want, run.out() << run.err());
}
#endif

#ifdef ZPMIX_PYTHON_PMIX
// Debian's python3-pmix, built against OpenPMIx, on zpmix's libpmix.so.2 (python3 links neither
// libmpi nor libpmix: nothing to ask for all the same).
BOOST_AUTO_TEST_CASE(python3_pmix_peers_exchange_data) {
    Run run({"-n", "2", "/usr/bin/python3", ZPMIX_PMIX_PEER_PY});
    BOOST_TEST(run.exit_code() == 0, run.err());
    BOOST_TEST(count(run.out(), "rank 0 got 1's card-of-1") == 1u, run.out());
    BOOST_TEST(count(run.out(), "rank 1 got 0's card-of-0") == 1u, run.out());
}
#endif

// Open MPI's psm and psm2 transports cost MPI_Init ~100 ms each to load, and decline without
// their device: on a node without /dev/hfi1* and /dev/ipath*, zpmix run adds them to the
// installation's exclusions (Debian's excludes ofi), so that Open MPI does not load them (its
// mtl framework, made verbose, names each component it loads). The user's own choice wins.
BOOST_AUTO_TEST_CASE(open_mpi_skips_transports_whose_device_is_absent) {
    for (const auto &entry : std::filesystem::directory_iterator("/dev")) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with("hfi1") || name.starts_with("ipath")) {
            BOOST_TEST_MESSAGE("this node has " << name << "; the exclusion does not apply");
            return;
        }
    }
    const std::string verbose = "OMPI_MCA_mtl_base_verbose=10";
    Run run({"-x", verbose, "-n", "2", kMpiProg, "init"});
    BOOST_TEST(run.exit_code() == 0, run.err());
    const std::string said = run.out() + run.err();
    BOOST_TEST(count(said, "opening mtl components") == 2u, said);
    BOOST_TEST(count(said, "found loaded component") == 0u, said);
    Run mine({"-x", verbose, "-x", "OMPI_MCA_mtl=^ofi", "-n", "2", kMpiProg, "init"});
    BOOST_TEST(mine.exit_code() == 0, mine.err());
    const std::string loaded = mine.out() + mine.err();
    BOOST_TEST(count(loaded, "components_open: found loaded component psm2") == 2u, loaded);
}
