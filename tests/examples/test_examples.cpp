// What OpenPMIx v4.2's example programs do, under `zpmix run`, for the examples no other suite
// runs as they do (docs/examples.md maps all 22 to their tests): examples_prog re-writes each.
// Every case is one short job; every wait has a deadline.
#define BOOST_TEST_MODULE examples
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <string>
#include <vector>

#include "support/process.hpp"

using namespace std::chrono_literals;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/examples_prog";

// `zpmix run -n np examples_prog ARGS...` with a base directory of its own.
struct Run {
    TempDir tmp{"zpmix-examples"};
    Child p;
    Run(int np, std::vector<std::string> args)
        : p([&] {
              args.insert(args.begin(), {kZpmix, "run", "-n", std::to_string(np), kProg});
              return Child(args, {"XDG_RUNTIME_DIR=" + tmp.path});
          }()) {}
};

// `np` ranks of the scenario, each saying "<scenario> ok <rank>", and nothing failed.
void holds(const std::string &scenario, int np) {
    Run r(np, {scenario});
    BOOST_TEST_INFO(scenario << ": " << r.p.out() << r.p.err());
    BOOST_TEST(r.p.exit_code() == 0);
    for (int rank = 0; rank < np; ++rank)
        BOOST_TEST(count(r.p.out(), scenario + " ok " + std::to_string(rank) + "\n") == 1u);
    BOOST_TEST(count(r.p.err(), "FAILED") == 0u);
}

}  // namespace

BOOST_AUTO_TEST_CASE(client_and_client2_see_their_peers_keys_by_locality) {
    holds("client", 3);
}

BOOST_AUTO_TEST_CASE(dmodex_reads_every_peers_keys_without_a_fence) {
    holds("dmodex", 3);
}

BOOST_AUTO_TEST_CASE(pub_looks_up_what_rank_0_published) {
    holds("pub", 3);
}

BOOST_AUTO_TEST_CASE(pubi_waits_in_its_lookup_for_the_publish) {
    holds("pubi", 3);
}

BOOST_AUTO_TEST_CASE(hello_gets_both_set_answers_at_the_top_level) {
    holds("hello", 1);
}

BOOST_AUTO_TEST_CASE(nodeinfo_reads_the_nodes_and_a_peers_host) {
    holds("nodeinfo", 2);
}

BOOST_AUTO_TEST_CASE(alloc_is_refused_at_once) {
    holds("alloc", 1);
}

// fault: rank 0 exits 1 without finalizing; the job ends with its status, the others with it.
BOOST_AUTO_TEST_CASE(fault_ends_the_job_with_the_failing_ranks_status) {
    Run r(3, {"fault"});
    BOOST_TEST_INFO(r.p.out() << r.p.err());
    BOOST_TEST(r.p.exit_code() == 1);
    BOOST_TEST(count(r.p.out(), "fault ok 0") == 0u);
    BOOST_TEST(count(r.p.err(), "FAILED") == 0u);
}

// dynamic: rank 0 spawns 2 ranks, reads their job's information, and every parent rank finalizes
// at once; the child runs to its end, as under mpirun, and `zpmix run` waits for it.
BOOST_AUTO_TEST_CASE(dynamic_s_child_runs_to_completion_after_its_parent) {
    Run r(2, {"dynamic", kProg});
    BOOST_TEST_INFO(r.p.out() << r.p.err());
    BOOST_TEST(r.p.exit_code() == 0);
    BOOST_TEST(count(r.p.out(), "spawned ") == 1u);
    BOOST_TEST(count(r.p.out(), "dynamic ok ") == 2u);
    BOOST_TEST(count(r.p.out(), "child 0 done") == 1u);
    BOOST_TEST(count(r.p.out(), "child 1 done") == 1u);
    BOOST_TEST(count(r.p.out(), "child ok ") == 2u);
    BOOST_TEST(count(r.p.err(), "parent job") == 0u);
}
