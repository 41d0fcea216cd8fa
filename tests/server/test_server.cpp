#define BOOST_TEST_MODULE server
#include <boost/test/unit_test.hpp>

#include <regex>

#include "server/host_run.hpp"

// Integration: zpmix as the PMIx server library of a host written on pmix_server.h alone
// (server_host), running standard-API clients (server_client): registration, the upcalls on the
// wire-up path, fences and direct modex across two hosts' nodes, NULL upcalls, late callbacks,
// refusals, aborts, and nothing left behind.
namespace {

using namespace zpmix::test;

const std::string kClient = kServerTests + "/server_client";

// Nothing of the host's servers is left in /tmp (each host removes its own PMIX_SERVER_TMPDIR,
// which must be empty by then, or it exits 99).
BOOST_AUTO_TEST_CASE(one_node_wire_up) {
    HostRun h({"-n", "3", kClient, "check"}, {"EXPECT_SIZE=3"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("rank "), 3u);
    BOOST_CHECK_EQUAL(h.count(" ok"), 3u);
    // Each client's connection and finalize reached the host, with its own server_object.
    BOOST_CHECK_EQUAL(h.count("upcall client_connected"), 3u);
    BOOST_CHECK_EQUAL(h.count("upcall client_finalized"), 3u);
    BOOST_CHECK_EQUAL(h.count("bad-server-object"), 0u);
    // A fence over one node never leaves it: every rank is here, so the ranks fence on a board.
    BOOST_CHECK_EQUAL(h.count("upcall fence_nb"), 0u);
    BOOST_CHECK_EQUAL(h.count("fence board yes"), 3u);
    BOOST_CHECK(h.child.out().find("host library zpmix") != std::string::npos);
}

// The node's inventory (PMIx_server_collect_inventory): its name as the host named it, and its
// topology as hwloc XML.
BOOST_AUTO_TEST_CASE(node_inventory) {
    HostRun h({"--inventory", "-n", "1", kClient, "plain"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    static const std::regex inventory(R"(inventory host (\S+) topology (\d+) bytes: PMIX_SUCCESS)");
    std::smatch m;
    const std::string out = h.child.out();
    BOOST_REQUIRE(std::regex_search(out, m, inventory));
    BOOST_CHECK(m[1].str() != "?");
    BOOST_CHECK_GT(std::stoul(m[2].str()), 100u);
}

// Resources a host registers beside its jobs (PMIx_server_register_resources), some taken back
// (_deregister_resources), and the other node's inventory it delivers (_deliver_inventory): each
// node's ranks read them as job information, the other node's with Gets that name that node.
BOOST_AUTO_TEST_CASE(resources_and_delivered_inventory) {
    HostRun h({"--nodes", "2", "--resources", "-n", "3", kClient, "resources"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("resources registered"), 2u);
    BOOST_CHECK_EQUAL(h.count(" ok"), 3u);
}

BOOST_AUTO_TEST_CASE(own_namespace_registered_without_data_as_mpirun_does) {
    HostRun h({"--nodata", "-n", "2", kClient, "check"}, {"EXPECT_SIZE=2"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// Two hosts' nodes: fences go through fence_nb (the host concatenates the nodes' parts in
// opposite orders on the two nodes), and each node's clients read the other's data.
BOOST_AUTO_TEST_CASE(fence_across_nodes_through_fence_nb) {
    HostRun h({"--nodes", "2", "-n", "4", kClient, "check"}, {"EXPECT_SIZE=4"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 4u);
    // One fence_nb per node per fence (the collecting one and the barrier), the node's
    // contributions reduced first.
    BOOST_CHECK_EQUAL(h.count("node0: upcall fence_nb"), 2u);
    BOOST_CHECK_EQUAL(h.count("node1: upcall fence_nb"), 2u);
    BOOST_CHECK_EQUAL(h.count("collect 1"), 2u);
    BOOST_CHECK_EQUAL(h.count("fence board no"), 4u);  // the job spans both nodes
}

BOOST_AUTO_TEST_CASE(direct_modex_across_nodes) {
    HostRun h({"--nodes", "2", "-n", "4", kClient, "dmodex"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 4u);
    // Each client read the two ranks of the other node through its host: 4 requests served on
    // each node, none for a rank of the asker's own node.
    BOOST_CHECK_EQUAL(h.count("dmodex-served 4"), 2u);
    BOOST_CHECK_EQUAL(h.count("upcall direct_modex"), 8u);
}

// A client's event for its namespace reaches the other node through notify_event, and that
// node's host publishes it there with its source (PMIx_Notify_event in a host's process).
BOOST_AUTO_TEST_CASE(event_across_nodes_through_notify_event) {
    HostRun h({"--nodes", "2", "-n", "4", kClient, "event"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 4u);
    BOOST_CHECK_EQUAL(h.count("node0: upcall notify_event -3077 from 0"), 1u);
    BOOST_CHECK_EQUAL(h.count("node1: relayed event -3077 from 0: PMIX_SUCCESS"), 1u);
    // Only the notifier's node sends it out: the relayed copy stays where it was relayed to.
    BOOST_CHECK_EQUAL(h.count("node1: upcall notify_event"), 0u);
}

// Handlers for environment events: the host hears of their codes once (register_events), and
// once no handler wants them (deregister_events); the events it then delivers with
// PMIx_Notify_event reach the clients by range (the namespace, a custom range of rank 1). Without
// the upcall such a registration is PMIX_ERR_NOT_SUPPORTED.
BOOST_AUTO_TEST_CASE(environment_events_through_register_events) {
    {
        HostRun h({"-n", "3", kClient, "enviro"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 3u);
        BOOST_CHECK_EQUAL(h.count("upcall register_events ncodes 2 codes -3079,-3078"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall register_events"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall deregister_events ncodes 2 codes -3079,-3078"), 1u);
        BOOST_CHECK_EQUAL(h.count(": PMIX_SUCCESS"), 2u);
    }
    HostRun h({"--null-upcalls", "-n", "2", kClient, "enviro"}, {"NO_ENVIRO=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// PMIx_Spawn goes to the host's spawn upcall, which registers and starts the new job (here from
// inside the upcall); its ranks see their parent. Without the upcall: PMIX_ERR_NOT_SUPPORTED.
BOOST_AUTO_TEST_CASE(spawn_through_the_hosts_upcall) {
    {
        HostRun h({"-n", "2", kClient, "spawn"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 2u);  // the spawner and its first child
        BOOST_CHECK_EQUAL(h.count("rank 1 ok"), 2u);
        BOOST_CHECK_EQUAL(h.count("upcall spawn 0 napps 1 np 2"), 1u);
        BOOST_CHECK_EQUAL(h.count("spawned host-job-spawned-0"), 1u);
        BOOST_CHECK_EQUAL(h.count("spawned child exit 0"), 2u);
        BOOST_CHECK_EQUAL(h.count("bad-server-object"), 0u);
        // The spawner and its two children connected and disconnected: once each on the node.
        BOOST_CHECK_EQUAL(h.count("upcall connect nprocs 2"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall disconnect nprocs 2"), 1u);
    }
    HostRun h({"--null-upcalls", "-n", "1", kClient, "spawn"}, {"NO_SPAWN=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 1u);
}

// A hosted client's PMIx_Spawn with PMIX_DEBUG_STOP_IN_INIT: the host's spawn upcall gets it and
// registers the new job with it; its ranks wait in PMIx_Init, the library counts them and says
// PMIX_READY_FOR_DEBUG once both wait (the host hears it), and the host's PMIX_DEBUGGER_RELEASE
// (PMIx_Notify_event) lets them on: they find the stop in their job information, connect to
// their parent and end.
BOOST_AUTO_TEST_CASE(spawn_stopped_in_init_released_by_the_host) {
    HostRun h({"-n", "1", kClient, "spawn"}, {"STOP_SPAWNED=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("upcall spawn 0 napps 1 np 2 cmd " + kClient + " with pmix.dbg.init"),
                      1u);
    BOOST_CHECK_EQUAL(h.count("ready for debug host-job-spawned-0 ranks *"), 1u);
    BOOST_CHECK_EQUAL(h.count("released host-job-spawned-0: PMIX_SUCCESS"), 1u);
    BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 2u);  // the spawner and its first child
    BOOST_CHECK_EQUAL(h.count("rank 1 ok"), 1u);
    BOOST_CHECK_EQUAL(h.count("spawned child exit 0"), 2u);
    // Nobody went past PMIx_Init before the release: the children's ends come after it.
    const auto released = h.child.out().find("released host-job-spawned-0");
    BOOST_CHECK(released != std::string::npos &&
                h.child.out().find("spawned child exit", released) != std::string::npos &&
                h.child.out().rfind("spawned child exit", released) == std::string::npos);
}

// PMIX_NOTIFY_COMPLETION: once the spawned job's last process ended, the host deregisters it and
// raises PMIX_EVENT_JOB_END as PRRTE does, ranged to the spawner; the spawner's handler hears it
// once (the library adds none of its own for the host's job), with the child job as the affected
// proc and PRRTE's termination status and exit code (rank 1 of the child exits 3). Its job's
// other ranks, on its node and on the other, have handlers for it and hear nothing.
BOOST_AUTO_TEST_CASE(job_end_from_the_host_to_the_spawner) {
    HostRun h({"--nodes", "2", "-n", "3", kClient, "jobend"}, {"CHILD_EXIT=3"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("node0: upcall spawn 0 napps 1 np 2"), 1u);
    BOOST_CHECK_EQUAL(h.count("spawned child exit 3"), 1u);
    BOOST_CHECK_EQUAL(h.count("spawned child exit 0"), 1u);
    // -187: PMIX_ERR_JOB_NON_ZERO_TERM
    BOOST_CHECK_EQUAL(h.count("job end host-job-spawned-0 to host-job:0 status -187 exit 3: "
                              "PMIX_SUCCESS"),
                      1u);
    BOOST_CHECK_EQUAL(h.count(": job end "), 1u);  // raised once, on the spawner's node
    // from the host's own process (its default name)
    BOOST_CHECK_EQUAL(
        h.count("heard job end host-job-spawned-0 status -187 exit 3 from zpmix-server."), 1u);
    BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 2u);  // the spawner and its first child
    BOOST_CHECK_EQUAL(h.count("rank 1 ok"), 2u);
    BOOST_CHECK_EQUAL(h.count("rank 2 ok"), 1u);
}

// PMIx_Connect and PMIx_Disconnect go to the host's upcalls, once per node; without them a node
// that runs every participant serves them, and across nodes they are PMIX_ERR_NOT_SUPPORTED.
BOOST_AUTO_TEST_CASE(connect_and_disconnect_through_the_hosts_upcalls) {
    {
        HostRun h({"--nodes", "2", "-n", "4", kClient, "connect"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 4u);
        BOOST_CHECK_EQUAL(h.count("node0: upcall connect nprocs 1"), 1u);
        BOOST_CHECK_EQUAL(h.count("node1: upcall connect nprocs 1"), 1u);
        BOOST_CHECK_EQUAL(h.count("node0: upcall disconnect nprocs 1"), 1u);
        BOOST_CHECK_EQUAL(h.count("node1: upcall disconnect nprocs 1"), 1u);
    }
    {
        HostRun h({"--null-upcalls", "-n", "2", kClient, "connect"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
    }
    HostRun h({"--null-upcalls", "--nodes", "2", "-n", "2", kClient, "connect"}, {"NO_CONNECT=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// Groups of the host's processes go to its group upcall once per node, which assigns the context
// id and carries each node's part (PMIX_GROUP_ENDPT_DATA) to the other: every member, on either
// node, reads every member's PMIX_GROUP_INFO, endpoint data and local context id, and the group
// is destructed on both and constructed again. Without the upcall a node that runs every member
// serves the group, across nodes it is PMIX_ERR_NOT_SUPPORTED.
BOOST_AUTO_TEST_CASE(groups_through_the_hosts_upcall) {
    {
        HostRun h({"--nodes", "2", "-n", "4", kClient, "group"}, {"GROUP_CONTEXT_ID=4242"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 4u);
        BOOST_CHECK_EQUAL(h.count("node0: upcall group construct hgrp nprocs 4 assign 1"), 2u);
        BOOST_CHECK_EQUAL(h.count("node1: upcall group construct hgrp nprocs 4 assign 1"), 2u);
        BOOST_CHECK_EQUAL(h.count("upcall group destruct hgrp nprocs 4"), 4u);
        // Each node's part crossed (its members' data, then none but the proposal), and both
        // nodes returned node0's context ids.
        BOOST_CHECK_EQUAL(h.count("group exchanged"), 8u);
        BOOST_CHECK_EQUAL(h.count("bytes context id 4242"), 2u);
        BOOST_CHECK_EQUAL(h.count("bytes context id 4243"), 2u);
    }
    {
        HostRun h({"--null-upcalls", "-n", "2", kClient, "group"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
    }
    HostRun h({"--null-upcalls", "--nodes", "2", "-n", "2", kClient, "group"}, {"NO_GROUP=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// Publish and lookup beyond a node go to the host's directory (its upcalls); a node's range stays
// in the broker's. Without the upcalls the session's range is PMIX_ERR_NOT_SUPPORTED at once.
BOOST_AUTO_TEST_CASE(publish_and_lookup_through_the_hosts_directory) {
    {
        HostRun h({"-n", "3", kClient, "publish"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 3u);
        // PMIX_RANGE_SESSION is 4.
        BOOST_CHECK_EQUAL(h.count("upcall publish 0 range 4 keys 1"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall lookup"), 2u);
        BOOST_CHECK_EQUAL(h.count("upcall unpublish 0 removed 1"), 1u);
    }
    HostRun h({"--null-upcalls", "-n", "2", kClient, "publish"}, {"NO_DIRECTORY=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// A host that provides no upcall: one node works without any; across nodes a fence is
// PMIX_ERR_NOT_SUPPORTED at once, never a hang.
BOOST_AUTO_TEST_CASE(null_upcalls) {
    {
        HostRun h({"--null-upcalls", "-n", "2", kClient, "check"}, {"EXPECT_SIZE=2"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
    }
    HostRun h({"--null-upcalls", "--nodes", "2", "-n", "2", kClient, "check"});
    BOOST_CHECK_EQUAL(h.exit_code(), 1);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(
        count(h.child.err(), "PMIx_Fence(&all, 1, &collect, 1) = PMIX_ERR_NOT_SUPPORTED"), 2u);
    // Without direct_modex, the other node's data cannot come either: said at once.
    BOOST_CHECK(h.child.err().find("PMIX_ERR_NOT_SUPPORTED") != std::string::npos);
}

// Callbacks from the host's own thread after the upcall returned.
BOOST_AUTO_TEST_CASE(late_callbacks) {
    HostRun h({"--late-callbacks", "-n", "2", kClient, "abort", "0"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_NE(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("upcall abort 0 status 7 nprocs 0 msg rank aborts on purpose"), 1u);
    // PMIx_Abort returned once the host's callback came.
    BOOST_CHECK(h.child.err().find("rank 0: PMIx_Abort returned PMIX_SUCCESS") !=
                std::string::npos);
    HostRun f({"--late-callbacks", "--nodes", "2", "-n", "2", kClient, "check"});
    BOOST_CHECK_EQUAL(f.exit_code(), 0);
    BOOST_CHECK_EQUAL(f.count(" ok"), 2u);
}

// A host that calls a callback twice: the second is logged and ignored, nothing breaks.
BOOST_AUTO_TEST_CASE(callbacks_called_twice) {
    HostRun h({"--double-callbacks", "-n", "2", kClient, "abort", "1"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_NE(h.exit_code(), 99);
    BOOST_CHECK_EQUAL(h.count("upcall abort 1 status 7"), 1u);
    BOOST_CHECK(h.child.err().find("rank 1: PMIx_Abort returned PMIX_SUCCESS") !=
                std::string::npos);
    BOOST_CHECK((h.child.out() + h.child.err()).find("where nothing waits") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(abort_reaches_the_host) {
    HostRun h({"-n", "3", kClient, "abort", "1"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_NE(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("upcall abort 1 status 7"), 1u);
    BOOST_CHECK_EQUAL(h.count("child 1 exit 3"), 1u);
}

// client_connected refuses a client: its PMIx_Init fails with the host's status; the other
// goes on.
BOOST_AUTO_TEST_CASE(host_refuses_a_client) {
    HostRun h({"--refuse-rank", "1", "-n", "2", kClient, "refused", "1"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("init refused: PMIX_ERR_NO_PERMISSIONS"), 1u);
    BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 1u);
    BOOST_CHECK((h.child.out() + h.child.err()).find("the resource manager refused this client") !=
                std::string::npos);
}

// A client that exits without PMIx_Finalize: no client_finalized for it, the rest finish.
BOOST_AUTO_TEST_CASE(client_vanishes) {
    HostRun h({"-n", "2", kClient, "vanish"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("upcall client_finalized 1"), 1u);
    BOOST_CHECK_EQUAL(h.count("upcall client_finalized 0"), 0u);
}

// A process that is not the registered client cannot be it: the wrong secret is refused.
BOOST_AUTO_TEST_CASE(impostor_without_the_secret_is_refused) {
    HostRun h({"-n", "1", kClient, "impostor"});
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_CHECK_EQUAL(h.count("impostor refused: PMIX_ERR_NO_PERMISSIONS"), 1u);
}

}  // namespace
