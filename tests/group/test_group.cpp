#define BOOST_TEST_MODULE group
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <map>

#include "actors/protocol/group.hpp"
#include "broker/broker.hpp"
#include "support/launcher.hpp"
#include "support/launcher_peer.hpp"
#include "support/process.hpp"

// Integration: process groups (PMIx_Group_construct/destruct) of real PMIx programs
// (tests/group/group_prog.c) launched by the real broker's launcher, as `zpmix run` would.
using namespace zpmix;
using namespace zpmix::test;

namespace {

const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/group_prog";

struct JobResult {
    std::int32_t status = -1;
    std::string out, err;
};

struct JobRunner {
    TempDir tmp{"zpmix-group"};
    Broker broker{[this] {
        Config c;
        c.run_dir = tmp.path + "/run";
        c.kill_grace_ms = 500;
        return c;
    }()};
    std::optional<LauncherPeer> peer;
    std::map<std::string, JobResult> jobs;

    JobRunner() {
        broker.start();
        peer.emplace(broker.uri());
    }
    ~JobRunner() {
        peer.reset();
        broker.stop();
    }

    void handle(const Envelope &e) {
        if (e.type == msg::Output::type) {
            auto o = e.as<msg::Output>();
            (o.fd == 1 ? jobs[o.nspace].out : jobs[o.nspace].err) += o.data;
        } else if (e.type == msg::JobEnded::type) {
            auto j = e.as<msg::JobEnded>();
            jobs[j.nspace].status = j.status;
        }
    }
    JobResult run(const std::string &scenario, std::uint32_t np, bool recoverable = false) {
        msg::Launch l;
        l.bind_to = "none";
        l.argv = {kProg, scenario};
        l.np = np;
        l.timeout_s = 60;  // a hung job fails the test instead of hanging it
        l.recoverable = recoverable;
        peer->send(l);
        std::string ns;
        while (ns.empty()) {
            auto e = peer->recv(20s);
            BOOST_REQUIRE_MESSAGE(e, "no answer to the launch");
            if (e->type == msg::ErrorReply::type)
                BOOST_FAIL("launch refused: " << e->as<msg::ErrorReply>().message);
            if (e->type == msg::LaunchReply::type)
                ns = e->as<msg::LaunchReply>().nspace;
            else
                handle(*e);
        }
        const auto deadline = std::chrono::steady_clock::now() + 90s;
        while (jobs[ns].status < 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            BOOST_REQUIRE_MESSAGE(left.count() > 0, "the job did not end in time");
            if (auto e = peer->recv(left)) handle(*e);
        }
        BOOST_TEST_MESSAGE(scenario << " stdout:\n" << jobs[ns].out << "stderr:\n" << jobs[ns].err);
        return jobs[ns];
    }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(group, JobRunner)

BOOST_AUTO_TEST_CASE(construct_in_any_order_with_info_context_ids_fence_destruct_rebuild) {
    const auto r = run("basic", 5);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "basic ok") == 5u);
}

// Whole-job constructs meet on the job's fence board (one request to the broker for all).
BOOST_AUTO_TEST_CASE(whole_job_constructs_on_the_fence_board) {
    const auto r = run("wholejob", 4);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "wholejob ok") == 4u);
}

BOOST_AUTO_TEST_CASE(a_member_that_never_comes_times_out_and_the_latecomer_is_refused) {
    const auto r = run("timeout", 4);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "timeout ok") == 4u);
}

BOOST_AUTO_TEST_CASE(a_member_that_exits_fails_the_construct_at_once_unless_optional) {
    // The member leaves without PMIx_Finalize: in a job that is not recoverable, that alone would
    // end the job (as mpirun would), before the group could see it.
    const auto r = run("exit", 4, true);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "exit ok") == 3u);
}

BOOST_AUTO_TEST_CASE(a_killed_member_fails_the_construct_of_a_recoverable_job) {
    const auto r = run("kill", 4, true);
    BOOST_TEST(count(r.out, "kill ok") == 3u, r.err);
    BOOST_TEST(r.status == 128 + SIGKILL);  // the job still reports its first failure
}

BOOST_AUTO_TEST_CASE(members_hear_of_a_members_end_with_notify_termination) {
    const auto r = run("notify", 3, true);  // the member leaves without PMIx_Finalize
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "notify ok") == 2u);
}

BOOST_AUTO_TEST_CASE(each_nodes_group_gets_its_own_context_id) {
    const auto r = run("pernode", 3);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "pernode ok") == 3u);
}

BOOST_AUTO_TEST_CASE(invite_accept_decline_then_leave_and_destruct) {
    const auto r = run("invite", 4);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "invite ok") == 4u);
}

BOOST_AUTO_TEST_CASE(join_nb_without_a_callback_joins_and_the_event_says_so) {
    const auto r = run("asyncjoin", 3);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "asyncjoin ok") == 3u);
}

BOOST_AUTO_TEST_CASE(a_leaver_leaves_every_members_membership_without_handlers) {
    const auto r = run("leavequiet", 3);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "leavequiet ok") == 3u);
    const auto nb = run("leavequietnb", 3);  // the same after PMIx_Group_construct_nb
    BOOST_TEST(nb.status == 0, nb.err);
    BOOST_TEST(count(nb.out, "leavequietnb ok") == 3u);
}

BOOST_AUTO_TEST_CASE(an_invitee_that_never_answers_fails_at_the_timeout) {
    const auto r = run("invitesilent", 3);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "invitesilent ok") == 3u);
}

BOOST_AUTO_TEST_CASE(an_invitee_that_ends_fails_at_once) {
    const auto r = run("invitedeath", 3, true);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "invitedeath ok") == 2u);
}

BOOST_AUTO_TEST_CASE(a_leader_that_ends_with_no_one_taking_over_aborts_the_invitation) {
    const auto r = run("leaderdeath", 3, true);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "leaderdeath ok") == 2u);
}

BOOST_AUTO_TEST_CASE(a_participant_that_never_answers_the_leaders_end_aborts_at_the_timeout) {
    const auto r = run("leadersilent", 4, true);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "leadersilent ok") == 3u);
}

BOOST_AUTO_TEST_CASE(a_participant_takes_over_from_a_leader_that_ends_and_the_group_forms) {
    const auto r = run("reselect", 5, true);
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(count(r.out, "reselect ok") == 4u);
}

BOOST_AUTO_TEST_SUITE_END()

// The scenarios above that also run under the test host (tests/server/host.c, a resource manager
// on pmix_server.h that embeds zpmix's server library): the same program, the same verdict, on one
// node, whose broker serves the groups and gets its context ids from the host's group upcall, and
// "basic" across the host's two nodes too (the upcall carries each node's part: every member reads
// the others' PMIX_GROUP_INFO, endpoint data and local context ids; fences over the group, its
// events and queries, destruct and construct again). "wholejob" meets on the job's fence board, as
// a one-node hosted job has one. Invitations across the host's two nodes ("invite", "asyncjoin"):
// the invitation's events and the other node's answers cross as events through the host's
// notify_event, and the group forms through its group upcall, with one membership and context id;
// an invitee that ends there is out at once ("invitedeath": its broker tells the leader's node);
// leaving across them ("invite", "leavequiet"): PMIX_GROUP_LEFT crosses as an event and each
// node's broker drops the leaver, so the destruct names the same members on both. "exit" across
// the nodes: the dead member's node tells the others through the upcall, whose members fail at
// once. Not under the host: the timeout scenarios (their waits cost seconds and test the
// broker's timers, the same code under a host).
namespace {

struct HostCase {
    const char *scenario;
    int np, nodes, ok;  // ok: the ranks that say "<scenario> ok"
};

std::ostream &operator<<(std::ostream &os, const HostCase &c) {
    return os << c.scenario << " -n " << c.np << " on " << c.nodes << " node(s)";
}

const HostCase kUnderTheHost[] = {
    {"basic", 5, 1, 5},     {"exit", 4, 1, 3},       {"invite", 4, 1, 4},
    {"asyncjoin", 3, 1, 3}, {"leavequiet", 3, 1, 3}, {"invitedeath", 3, 1, 2},
    {"wholejob", 4, 1, 4},  {"basic", 4, 2, 4},      {"invite", 4, 2, 4},
    {"asyncjoin", 3, 2, 3}, {"leavequiet", 3, 2, 3}, {"invitedeath", 3, 2, 2},
    {"exit", 4, 2, 3},
};

}  // namespace

BOOST_DATA_TEST_CASE(scenarios_under_the_test_host, boost::unit_test::data::make(kUnderTheHost),
                     c) {
    LaunchedJob job(JobLauncher::server_host,
                    {.argv = {kProg, c.scenario}, .np = c.np, .nodes = c.nodes});
    const int code = job.exit_code();
    BOOST_TEST_MESSAGE(c << " stdout:\n" << job.out() << "stderr:\n" << job.err());
    BOOST_TEST(code == 0, c << " failed:\n" << job.err());
    BOOST_TEST(count(job.out(), std::string(c.scenario) + " ok") == std::size_t(c.ok), job.out());
}
