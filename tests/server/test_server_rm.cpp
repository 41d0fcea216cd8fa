#define BOOST_TEST_MODULE server_rm
#include <boost/test/unit_test.hpp>

#include "server/host_run.hpp"

// Integration: what a resource manager that embeds zpmix serves through its upcalls (RFC0015,
// RFC0010): job control, monitoring, queries and logging reach the test host's upcalls
// (tests/server/host_rm.c) from standard-API clients (rm_client.c); the same with the upcalls
// left NULL (PMIX_ERR_NOT_SUPPORTED or zpmix's own service, at once).
namespace {

using namespace zpmix::test;

const std::string kClient = kServerTests + "/server_rm_client";

// Each directive reaches job_control with its value and the requester named; the host refuses
// a kill; its results come back to PMIx_Job_control and the _nb callback (rm_client checks);
// the checkpoint and preemption events the host raises reach every rank.
BOOST_AUTO_TEST_CASE(job_control_reaches_the_host) {
    HostRun h({"-n", "2", kClient, "jobctl"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
    const std::string from = "upcall job_control from host-job.0 targets 1 ";
    for (const char *d :
         {"pmix.jctrl.pause=true", "pmix.jctrl.resume=true", "pmix.jctrl.sig=10",
          "pmix.jctrl.term=true", "pmix.jctrl.kill=true", "pmix.jctrl.ckpt=ckpt-1",
          "pmix.jctrl.cancel=ckpt-1", "pmix.jctrl.restart=ckpt-1", "pmix.jctrl.pvn=node7",
          "pmix.jctrl.preempt=true", "pmix.jctrl.ckmethod=[pmix.jctrl.ckptsig]"}) {
        BOOST_TEST_INFO(d);
        BOOST_CHECK_EQUAL(h.count(from + d + "\n"), 1u);
    }
    BOOST_CHECK_EQUAL(h.count("upcall job_control"), 11u);
    BOOST_CHECK_EQUAL(h.count(": PMIX_SUCCESS\n"), 2u);  // the two events raised
}

BOOST_AUTO_TEST_CASE(job_control_without_the_upcall_is_not_supported) {
    HostRun h({"--null-upcalls", "-n", "2", kClient, "jobctl"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
}

// zpmix answers the namespaces itself; the allocation's status and the hosted job's process
// table (whose pids only the host knows) are the host's, merged into one answer.
BOOST_AUTO_TEST_CASE(query_merges_the_hosts_answers) {
    {
        HostRun h({"-n", "2", kClient, "query"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
        BOOST_CHECK_EQUAL(h.count("upcall query from host-job.0 pmix.query.alloc nspace host-job"),
                          1u);
        BOOST_CHECK_EQUAL(h.count("upcall query from host-job.0 pmix.qry.ptable nspace host-job"),
                          1u);
        BOOST_CHECK_EQUAL(h.count("upcall query from host-job.0 pmix.qry.ns "), 0u);
    }
    HostRun h({"--null-upcalls", "-n", "1", kClient, "query"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
}

// stderr is zpmix's channel; email goes to the host's log.
BOOST_AUTO_TEST_CASE(log_channels_zpmix_lacks_go_to_the_host) {
    {
        HostRun h({"-n", "1", kClient, "log"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall log from 0 pmix.log.email=a mail for the host"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall log"), 1u);
        BOOST_CHECK_EQUAL(count(h.child.err(), "a line for zpmix's stderr"), 1u);
    }
    HostRun h({"--null-upcalls", "-n", "1", kClient, "log"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
    BOOST_CHECK_EQUAL(count(h.child.err(), "a line for zpmix's stderr"), 1u);
}

// A host with a monitor upcall that did not ask the library to monitor watches its clients
// itself; without the upcall zpmix does.
BOOST_AUTO_TEST_CASE(monitor_by_the_host_or_by_zpmix) {
    {
        HostRun h({"-n", "1", kClient, "monitor"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
        BOOST_CHECK_EQUAL(
            h.count("upcall monitor from host-job.0 pmix.monitor.mbeat code -109 time 30 drops 1"),
            1u);
    }
    HostRun h({"--null-upcalls", "-n", "1", kClient, "monitor"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
}

// PMIX_SERVER_ENABLE_MONITORING (as mpirun asks): zpmix monitors, and its alert reaches the
// client and the host (notify_event).
BOOST_AUTO_TEST_CASE(library_monitoring_alerts_the_host_too) {
    HostRun h({"--enable-monitoring", "-n", "1", kClient, "alert"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
    BOOST_CHECK_EQUAL(h.count("upcall monitor"), 0u);
    BOOST_CHECK_EQUAL(h.count("upcall notify_event -109 from 0"), 1u);
}

// A tool finds the host's server as it finds `zpmix broker` (by the host's pid, the job's nspace,
// the server's URI); tool_connected admits and names it; its query of the job's process table
// and its job control go to the host, which names it as the requester.
BOOST_AUTO_TEST_CASE(tools_attach_through_tool_connected) {
    for (const char *how : {"pid", "nspace", "uri"}) {
        BOOST_TEST_CONTEXT(how) {
            HostRun h({"--tools", "-n", "2", kClient, "tool", how});
            BOOST_CHECK_EQUAL(h.exit_code(), 0);
            BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
            BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
            BOOST_CHECK_GE(h.count("upcall tool_connected tool.* pid-known 1\n"), 1u);
            BOOST_CHECK_EQUAL(h.count("tool named host-tool-"), 1u);
            BOOST_CHECK_EQUAL(h.count("tool proc table PMIX_SUCCESS rows 2 with pids 2"), 1u);
            BOOST_CHECK_EQUAL(h.count("tool pause: PMIX_SUCCESS host results 1"), 1u);
            // The requester is the tool under the host's name for it.
            BOOST_CHECK_EQUAL(h.count("upcall job_control from host-tool-"), 1u);
            BOOST_CHECK_EQUAL(h.count(".0 targets 1 pmix.jctrl.pause=true"), 1u);
        }
    }
}

// A host that is the node's system server (PMIX_SERVER_SYSTEM_SUPPORT): a tool that asks for the
// system's server (PMIX_CONNECT_TO_SYSTEM) attaches to it, in this user's base directory, where a
// standalone `zpmix broker` would be, and nothing is left there after. With such a broker there,
// the host's PMIx_server_init fails and says why.
BOOST_AUTO_TEST_CASE(tools_reach_a_host_that_is_the_system_server) {
    {
        HostRun h({"--system", "-n", "2", kClient, "tool", "system"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
        BOOST_CHECK_EQUAL(h.count("tool named host-tool-1"), 1u);
        BOOST_CHECK_EQUAL(h.count("tool proc table PMIX_SUCCESS rows 2 with pids 2"), 1u);
        BOOST_CHECK(!std::filesystem::exists(h.tmp.path + "/zpmix/broker.json"));
    }
    TempDir runtime("zpmix-system");
    const std::string xdg = "XDG_RUNTIME_DIR=" + runtime.path;
    Child broker({std::string(ZPMIX_BIN_DIR) + "/zpmix", "broker"}, {xdg});
    BOOST_REQUIRE(
        eventually([&] { return std::filesystem::exists(runtime.path + "/zpmix/broker.json"); }));
    HostRun h({"--system", "-n", "1", kClient, "tool", "system"}, {xdg});
    BOOST_CHECK_NE(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("upcall"), 0u);
    BOOST_CHECK(h.child.err().find("is already running in " + runtime.path + "/zpmix") !=
                std::string::npos);
}

BOOST_AUTO_TEST_CASE(host_refuses_a_tool) {
    HostRun h({"--tools", "-n", "1", kClient, "tool", "pid"}, {"HOST_REFUSE_TOOLS=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count("upcall tool_connected tool.* pid-known 1 refused"), 1u);
    BOOST_CHECK_EQUAL(h.count("tool refused: PMIX_ERR_NO_PERMISSIONS"), 1u);
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
}

// Without tool_connected a tool is admitted under its own name; without job_control its pause
// is not supported.
BOOST_AUTO_TEST_CASE(tools_without_the_upcalls) {
    HostRun h({"--null-upcalls", "--tools", "-n", "2", kClient, "tool", "pid"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
    BOOST_CHECK_EQUAL(h.count("tool named tool."), 1u);
    BOOST_CHECK_EQUAL(h.count("tool pause: PMIX_ERR_NOT_SUPPORTED host results 0"), 1u);
}

// A tool's PMIx_Spawn reaches the host's spawn upcall, the tool (by the host's name for it) as
// the parent; the host starts the job, whose rank runs, and names it. Without the upcall the
// broker's own launcher starts the tool's job (no upcall is called).
BOOST_AUTO_TEST_CASE(tool_spawn_through_the_hosts_upcall) {
    {
        HostRun h({"--tools", "-n", "1", kClient, "tool", "pid", "spawn"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count("upcall spawn 0 napps 1 np 1 cmd "), 1u);
        BOOST_CHECK_EQUAL(h.count(" by host-tool-1\n"), 1u);
        BOOST_CHECK_EQUAL(h.count("tool spawn: PMIX_SUCCESS nspace host-job-spawned-0\n"), 1u);
        BOOST_CHECK_EQUAL(h.count("rank 0 ok"), 2u);  // the job's, and the spawned job's
    }
    {  // debugger daemons: the host places them by the target it is told
        HostRun h({"--tools", "-n", "1", kClient, "tool", "pid", "daemons"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" by host-tool-1 daemons of host-job per node 1\n"), 1u);
        BOOST_CHECK_EQUAL(h.count("tool spawn: PMIX_SUCCESS nspace host-job-spawned-0\n"), 1u);
    }
    {
        HostRun h({"--null-upcalls", "--tools", "-n", "1", kClient, "tool", "pid", "spawn"},
                  {"NO_HOST=1"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count("upcall spawn"), 0u);
        BOOST_CHECK_EQUAL(h.count("tool spawn: PMIX_SUCCESS nspace "), 1u);
    }
}

// A tool's pull of the job's output reaches iof_pull; what the host delivers
// (PMIx_server_IOF_deliver) reaches the tool, tagged; its input reaches push_stdin. Without the
// upcalls the pull still works (nothing comes) and the input is not supported.
BOOST_AUTO_TEST_CASE(iof_through_the_host) {
    {
        HostRun h({"--tools", "-n", "2", kClient, "tool", "pid", "iof"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 2u);
        BOOST_CHECK_EQUAL(h.count("upcall iof_pull nprocs 1 rank -2 channels 2"), 1u);
        BOOST_CHECK_EQUAL(h.count("delivered: PMIX_OPERATION_SUCCEEDED"), 1u);
        BOOST_CHECK_EQUAL(h.count("tool got from 1: "), 1u);
        BOOST_CHECK_EQUAL(h.count("output of rank 1 through the host"), 1u);
        BOOST_CHECK_EQUAL(h.count("upcall push_stdin from (tool) targets 1 rank 0 bytes 17"), 1u);
        BOOST_CHECK_EQUAL(h.count("tool push: PMIX_SUCCESS"), 1u);
    }
    HostRun h({"--null-upcalls", "--tools", "-n", "1", kClient, "tool", "pid", "iof"},
              {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
    BOOST_CHECK_EQUAL(h.count("tool pull: PMIX_SUCCESS"), 1u);
    BOOST_CHECK_EQUAL(h.count("tool push: PMIX_ERR_NOT_SUPPORTED"), 1u);
}

// PMIx_Allocation_request reaches allocate, its results come back; without the upcall (and under
// `zpmix run`, which schedules nothing) it is not supported.
BOOST_AUTO_TEST_CASE(allocation_requests_reach_the_host) {
    {
        HostRun h({"-n", "1", kClient, "alloc"});
        BOOST_CHECK_EQUAL(h.exit_code(), 0);
        BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
        BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
        BOOST_CHECK_EQUAL(
            h.count("upcall allocate from host-job.0 directive 1 ndata 1 first pmix.alloc.nnodes"),
            1u);
    }
    HostRun h({"--null-upcalls", "-n", "1", kClient, "alloc"}, {"NO_HOST=1"});
    BOOST_CHECK_EQUAL(h.exit_code(), 0);
    BOOST_TEST_INFO("stdout: " << h.child.out() << "\nstderr: " << h.child.err());
    BOOST_CHECK_EQUAL(h.count(" ok"), 1u);
}

}  // namespace
