#define BOOST_TEST_MODULE events_integration
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <map>
#include <regex>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "broker/broker.hpp"
#include "support/launcher.hpp"
#include "support/launcher_peer.hpp"
#include "support/process.hpp"

// Integration: real PMIx programs (tests/events/events_prog.c) launched by the real broker, with
// events injected by this test as a peer of the broker (as `zpmix notify` does).
using namespace zpmix;
using namespace zpmix::test;
namespace fs = std::filesystem;

namespace {

const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/events_prog";

struct Job {
    std::map<std::uint32_t, std::string> out;  // rank -> stdout
    int ready = 0;
    bool ended = false;
    std::int32_t status = -1;
};

struct Runner {
    TempDir tmp{"zpmix-events"};
    std::unique_ptr<Broker> broker;
    std::unique_ptr<Child> broker_proc;  // standalone
    std::optional<LauncherPeer> peer;
    std::map<std::string, Job> jobs;
    std::map<std::uint64_t, std::int32_t> replies;
    std::map<std::uint64_t, std::vector<msg::Event>> resent;  // EventResend answers, by id
    std::vector<std::string> launched;

    struct Options {
        std::string config;       // TOML for the broker
        int kill_grace_ms = 500;  // SIGTERM to SIGKILL when a job is torn down
        bool standalone = false;  // a `zpmix broker` process instead of one in this process
    };

    Runner() : Runner(Options{}) {}
    explicit Runner(Options o) {
        const std::string run_dir = tmp.path + "/run";
        if (o.standalone) {
            broker_proc = std::make_unique<Child>(
                std::vector<std::string>{std::string(ZPMIX_BIN_DIR) + "/zpmix", "broker",
                                         "--run-dir", run_dir, "-q"},
                std::vector<std::string>{}, tmp.path + "/broker.log");
            // Its socket appears once it listens: ZeroMQ retries the connection meanwhile, and
            // the Welcome has a deadline.
            peer.emplace("ipc://" + run_dir + "/broker.sock");
        } else {
            Config c;
            c.run_dir = run_dir;
            c.kill_grace_ms = o.kill_grace_ms;
            if (!o.config.empty()) {
                std::ofstream(tmp.path + "/zpmix.toml") << o.config;
                load_config_file(tmp.path + "/zpmix.toml", c);
            }
            broker = std::make_unique<Broker>(c);
            broker->start();
            peer.emplace(broker->uri());
        }
    }
    ~Runner() {
        peer.reset();
        if (broker) broker->stop();
    }
    // Kills the standalone broker at once.
    void kill_broker() {
        BOOST_REQUIRE(broker_proc);
        zpmix::test::kill_watchdog_of(broker_proc->pid());  // the ranks outlive their broker
        broker_proc->kill_now();
    }

    template <class M>
    std::uint64_t send(const M &m) {
        return peer->send(m);
    }
    std::optional<Envelope> recv(std::chrono::milliseconds timeout) { return peer->recv(timeout); }
    void pump(std::chrono::milliseconds timeout) {
        auto e = recv(timeout);
        if (!e) return;
        if (e->type == msg::Output::type) {
            auto o = e->as<msg::Output>();
            if (o.fd == 1) {
                jobs[o.nspace].out[o.rank] += o.data;
                // A message holds whole lines, maybe several.
                for (std::size_t at = 0; at < o.data.size();) {
                    if (o.data.compare(at, 5, "ready") == 0) ++jobs[o.nspace].ready;
                    const auto nl = o.data.find('\n', at);
                    at = nl == std::string::npos ? o.data.size() : nl + 1;
                }
            } else {
                BOOST_TEST_MESSAGE(o.nspace << ":" << o.rank << " stderr: " << o.data);
            }
        } else if (e->type == msg::JobEnded::type) {
            auto j = e->as<msg::JobEnded>();
            jobs[j.nspace].ended = true;
            jobs[j.nspace].status = j.status;
        } else if (e->type == msg::LaunchReply::type) {
            launched.push_back(e->as<msg::LaunchReply>().nspace);
        } else if (e->type == msg::EventResent::type) {
            resent[e->id] = e->as<msg::EventResent>().events;
        } else if (e->type == msg::Ok::type) {
            replies[e->id] = 0;
        } else if (e->type == msg::ErrorReply::type) {
            replies[e->id] = e->as<msg::ErrorReply>().status;
        }
    }
    // Pumps until pred holds; false at the deadline.
    template <class Pred>
    bool until(Pred pred, std::chrono::seconds limit = 30s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!pred()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            pump(100ms);
        }
        return true;
    }
    std::string launch(const std::string &mode, std::uint32_t np, std::string arg = "") {
        msg::Launch l;
        l.argv = {kProg, mode};
        if (!arg.empty()) l.argv.push_back(std::move(arg));
        l.np = np;
        l.timeout_s = 60;
        // A rank of "exit" leaves without PMIx_Finalize so that the others see it end: a
        // recoverable job (PMIX_JOB_RECOVERABLE), which that does not fail.
        l.recoverable = true;
        send(l);
        const std::size_t before = launched.size();
        BOOST_REQUIRE(until([&] { return launched.size() > before; }));
        return launched.back();
    }
    std::int32_t notify(std::int32_t code, msg::Range range, msg::Proc source,
                        std::vector<msg::Proc> custom = {}, bool enviro = false) {
        msg::NotifyEvent n;
        n.event.status = code;
        n.event.range = static_cast<std::uint8_t>(range);
        n.event.source = std::move(source);
        n.event.custom_range = std::move(custom);
        n.event.enviro = enviro;
        const auto id = send(n);
        BOOST_REQUIRE(until([&] { return replies.contains(id); }));
        return replies[id];
    }
    // "rank N got a b c end" -> {a, b, c}
    static std::vector<int> codes(const std::string &out) {
        std::vector<int> got;
        auto at = out.find("got");
        if (at == std::string::npos) return got;
        std::istringstream in(out.substr(at + 3));
        std::string w;
        while (in >> w && w != "end") got.push_back(std::stoi(w));
        return got;
    }
};

using Codes = std::vector<int>;

}  // namespace

BOOST_AUTO_TEST_CASE(each_range_reaches_exactly_its_processes) {
    Runner r;
    const std::string a = r.launch("listen", 4);
    const std::string b = r.launch("listen", 4);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 4 && r.jobs[b].ready == 4; }));
    const msg::Proc tool{"tool", 0};
    BOOST_TEST(r.notify(-1, msg::Range::nspace, {a, 0}) == 0);                  // a's ranks
    BOOST_TEST(r.notify(-2, msg::Range::custom, tool, {{b, 2}, {a, 3}}) == 0);  // b:2, a:3
    BOOST_TEST(r.notify(-3, msg::Range::custom, tool, {{b, PMIX_RANK_WILDCARD}}) == 0);  // b
    BOOST_TEST(r.notify(-4, msg::Range::local, tool) == 0);                              // everyone
    BOOST_TEST(r.notify(-5, msg::Range::session, tool) == 0);                            // everyone
    BOOST_TEST(r.notify(-6, msg::Range::rm, tool) == 0);                                 // nobody
    BOOST_TEST(r.notify(-7, msg::Range::global, tool, {}, true) ==
               0);  // environment: everyone asked
    BOOST_TEST(r.notify(-9999, msg::Range::global, tool) == 0);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended && r.jobs[b].ended; }));
    BOOST_TEST(r.jobs[a].status == 0);
    BOOST_TEST(r.jobs[b].status == 0);
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        Codes want_a = {-1, -4, -5, -7, -9999};
        if (rank == 3) want_a = {-1, -2, -4, -5, -7, -9999};
        Codes want_b = {-3, -4, -5, -7, -9999};
        if (rank == 2) want_b = {-2, -3, -4, -5, -7, -9999};
        BOOST_TEST_INFO(a << ":" << rank << " printed " << r.jobs[a].out[rank]);
        BOOST_TEST(Runner::codes(r.jobs[a].out[rank]) == want_a, boost::test_tools::per_element());
        BOOST_TEST_INFO(b << ":" << rank << " printed " << r.jobs[b].out[rank]);
        BOOST_TEST(Runner::codes(r.jobs[b].out[rank]) == want_b, boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(client_notifications_reach_their_range) {
    Runner r;
    const std::string other = r.launch("listen", 2);
    BOOST_REQUIRE(r.until([&] { return r.jobs[other].ready == 2; }));
    const std::string a = r.launch("notify", 3);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 3; }));
    // rank 0 of `a` notified -500 (namespace) and -501 (global) right after its registration:
    // the other ranks of `a` may register later and then get them from the cache.
    BOOST_TEST(r.notify(-9999, msg::Range::global, {"tool", 0}) == 0);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended && r.jobs[other].ended; }));
    for (std::uint32_t rank = 0; rank < 3; ++rank) {
        BOOST_TEST_INFO(a << ":" << rank << " printed " << r.jobs[a].out[rank]);
        BOOST_TEST(Runner::codes(r.jobs[a].out[rank]) == (Codes{-500, -501, -9999}),
                   boost::test_tools::per_element());
    }
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
        BOOST_TEST_INFO(other << ":" << rank << " printed " << r.jobs[other].out[rank]);
        BOOST_TEST(Runner::codes(r.jobs[other].out[rank]) == (Codes{-501, -9999}),
                   boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(a_late_registrant_gets_cached_events) {
    Runner r;
    // Before any process exists, events for the session are cached; each rank registers later.
    BOOST_TEST(r.notify(-11, msg::Range::session, {"tool", 0}) == 0);
    BOOST_TEST(r.notify(-12, msg::Range::session, {"tool", 0}) == 0);
    const std::string a = r.launch("listen", 2);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 2; }));
    BOOST_TEST(r.notify(-9999, msg::Range::global, {"tool", 0}) == 0);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    for (std::uint32_t rank = 0; rank < 2; ++rank)
        BOOST_TEST(Runner::codes(r.jobs[a].out[rank]) == (Codes{-11, -12, -9999}),
                   boost::test_tools::per_element());
}

// A job event past the ring stays cached until every local rank of the job has it: the ranks'
// libraries must acknowledge it (they acknowledge only what the broker says it keeps).
BOOST_AUTO_TEST_CASE(ranks_acknowledge_the_job_events_the_broker_keeps) {
    Runner r({.config = "[events]\ncache_size = 1\n"});
    const std::string a = r.launch("listen", 2);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 2; }));
    BOOST_TEST(r.notify(-31, msg::Range::nspace, {a, 0}) == 0);
    BOOST_TEST(r.notify(-32, msg::Range::global, {"tool", 0}) == 0);  // -31 leaves the ring
    const std::string stream = msg::topic::stream(msg::topic::nspace(a), false);
    auto cached = [&] {  // whether the broker still keeps -31
        const auto id = r.send(msg::EventResend{stream, 1, 1000});
        BOOST_REQUIRE(r.until([&] { return r.resent.contains(id); }));
        return std::any_of(r.resent[id].begin(), r.resent[id].end(),
                           [](const msg::Event &e) { return e.status == -31; });
    };
    BOOST_TEST(r.until([&] { return !cached(); }, 10s));  // both ranks' acknowledgements came
    BOOST_TEST(r.notify(-9999, msg::Range::global, {"tool", 0}) == 0);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    for (std::uint32_t rank = 0; rank < 2; ++rank)
        BOOST_TEST(Runner::codes(r.jobs[a].out[rank]) == (Codes{-31, -32, -9999}),
                   boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dropped_events_are_recovered_in_order) {
    Runner r({.config = "[events]\ntest_drop_every = 2\n",
              .kill_grace_ms = 500});  // every second event of a stream is not sent
    const std::string a = r.launch("listen", 2);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 2; }));
    for (int i = 1; i <= 6; ++i)
        BOOST_TEST(r.notify(-20 - i, msg::Range::global, {"tool", 0}) == 0);
    BOOST_TEST(r.notify(-9999, msg::Range::global, {"tool", 0}) == 0);  // #7: sent
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
        // Order holds within a stream: the other rank's termination (namespace stream) may come
        // while this rank still waits for a resend of the global one.
        Codes global = Runner::codes(r.jobs[a].out[rank]);
        std::erase(global, PMIX_EVENT_PROC_TERMINATED);
        BOOST_TEST_INFO(a << ":" << rank << " printed " << r.jobs[a].out[rank]);
        BOOST_TEST(global == (Codes{-21, -22, -23, -24, -25, -26, -9999}),
                   boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(a_slow_handler_does_not_delay_the_others) {
    Runner r;
    // The slow process's first handler call blocks until this test writes to the FIFO, which it
    // does only once the other job got every event and ended.
    const std::string fifo = r.tmp.path + "/release";
    BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int release = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // keeps the FIFO open
    BOOST_REQUIRE(release >= 0);
    const std::string slow = r.launch("slow", 1, fifo);
    const std::string fast = r.launch("listen", 3);
    BOOST_REQUIRE(r.until([&] { return r.jobs[slow].ready == 1 && r.jobs[fast].ready == 3; }));
    for (int i = 1; i <= 5; ++i)
        BOOST_TEST(r.notify(-30 - i, msg::Range::global, {"tool", 0}) == 0);
    BOOST_TEST(r.notify(-9999, msg::Range::global, {"tool", 0}) == 0);
    BOOST_REQUIRE(r.until([&] { return r.jobs[fast].ended; }));
    BOOST_TEST(!r.jobs[slow].ended);  // still blocked in its first handler
    for (std::uint32_t rank = 0; rank < 3; ++rank)
        BOOST_TEST(Runner::codes(r.jobs[fast].out[rank]) == (Codes{-31, -32, -33, -34, -35, -9999}),
                   boost::test_tools::per_element());
    BOOST_REQUIRE(::write(release, "x", 1) == 1);
    BOOST_REQUIRE(r.until([&] { return r.jobs[slow].ended; }));
    ::close(release);
    BOOST_TEST(r.jobs[slow].status == 0);
    BOOST_TEST(Runner::codes(r.jobs[slow].out[0]) == (Codes{-31, -32, -33, -34, -35, -9999}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_process_exit_reaches_the_rest_of_its_job) {
    Runner r;
    const std::string a = r.launch("exit", 3);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    BOOST_TEST(r.jobs[a].status == 0);
    for (std::uint32_t rank : {0u, 2u}) {
        BOOST_TEST_INFO(a << ":" << rank << " printed " << r.jobs[a].out[rank]);
        BOOST_TEST(Runner::codes(r.jobs[a].out[rank]) == (Codes{PMIX_EVENT_PROC_TERMINATED}),
                   boost::test_tools::per_element());
        BOOST_TEST(r.jobs[a].out[rank].find("affected 1\n") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(an_abort_reaches_the_rest_of_its_job) {
    // A long grace: the survivors ignore SIGTERM and leave by themselves once they printed.
    Runner r({.config = "", .kill_grace_ms = 20000});
    const std::string a = r.launch("abort", 3);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    BOOST_TEST(r.jobs[a].status == 7);
    for (std::uint32_t rank : {0u, 2u}) {
        const std::string &out = r.jobs[a].out[rank];
        BOOST_TEST_INFO(a << ":" << rank << " printed " << out);
        BOOST_TEST(Runner::codes(out) == (Codes{PMIX_ERR_PROC_REQUESTED_ABORT}),
                   boost::test_tools::per_element());
        BOOST_TEST(out.find("affected 1\n") != std::string::npos);
        BOOST_TEST(out.find("exit_code 7\n") != std::string::npos);
    }
}

namespace {

// Waits (inotify, with a deadline) until `dir` holds the files `names`.
bool wait_files(const std::string &dir, const std::vector<std::string> &names,
                std::chrono::seconds limit) {
    const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0 || ::inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0)
        return false;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto all = [&] {
        for (const auto &n : names)
            if (!fs::exists(dir + "/" + n)) return false;
        return true;
    };
    bool ok = all();
    while (!ok) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) == 1) {
            char buf[4096];
            while (::read(fd, buf, sizeof buf) > 0) {
            }
        }
        ok = all();
    }
    ::close(fd);
    return ok;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_broker_death_is_a_lost_connection_event) {
    Runner r({.config = "", .kill_grace_ms = 500, .standalone = true});
    const std::string results = r.tmp.path + "/results";
    fs::create_directory(results);
    const std::string a = r.launch("lost", 2, results);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ready == 2; }));
    r.kill_broker();
    // Each rank's default handler got PMIX_ERR_LOST_CONNECTION; rank 0's pending fence failed
    // with it instead of hanging (the ranks give up after 20 s, the test at 15).
    BOOST_REQUIRE(wait_files(results, {"0.out", "1.out"}, 15s));
    BOOST_TEST(slurp(results + "/0.out") == fmt::format("event {} call {}\n",
                                                        PMIX_ERR_LOST_CONNECTION,
                                                        PMIX_ERR_LOST_CONNECTION));
    BOOST_TEST(slurp(results + "/1.out") ==
               fmt::format("event {} call {}\n", PMIX_ERR_LOST_CONNECTION, PMIX_SUCCESS));
}

BOOST_AUTO_TEST_CASE(a_second_library_declares_its_model) {
    Runner r;
    const std::string a = r.launch("hybrid", 1);
    BOOST_REQUIRE(r.until([&] { return r.jobs[a].ended; }));
    BOOST_TEST(r.jobs[a].status == 0);
    BOOST_TEST(r.jobs[a].out[0] == "model OpenMP\n");
}

// The same events under the test host (tests/server/host.c, a resource manager on pmix_server.h
// that embeds zpmix's server library): its one job of events_prog ranks, events injected into
// its server as above (found by the PMIX_SERVER_URI the host reports), and across its two nodes
// the clients' own events carried by its notify_event upcall. Not under the host: the cases of
// two jobs at once (the host runs one), the broker's configuration (cache size, dropped events:
// the host passes none), a slow handler (two jobs), the broker's death (the host's own process),
// a rank's exit (below).
namespace {

struct HostedJob {
    LaunchedJob job;
    std::vector<std::unique_ptr<LauncherPeer>> servers;  // by node

    // Once every rank is ready (none say so in "hybrid").
    HostedJob(const std::string &mode, int np, int nodes = 1)
        : job(JobLauncher::server_host, {.argv = {kProg, mode}, .np = np, .nodes = nodes}) {
        const std::size_t ready = mode == "hybrid" ? 0 : std::size_t(np);
        BOOST_REQUIRE_MESSAGE(job.child.read_until([&](const std::string &o) {
            return count(o, "ready\n") == ready && count(o, "server uri") == std::size_t(nodes);
        }),
                              "the job did not start: " << job.out() << job.err());
        const std::string out = job.out();
        const std::regex uri("node(\\d): server uri (\\S+)");
        servers.resize(std::size_t(nodes));
        for (std::sregex_iterator it(out.begin(), out.end(), uri), end; it != end; ++it)
            servers.at(std::stoul((*it)[1])) = std::make_unique<LauncherPeer>((*it)[2]);
        for (const auto &s : servers) BOOST_REQUIRE_MESSAGE(s, "no server uri in " << out);
    }
    // An event injected into node's server; its answer (0: published).
    std::int32_t notify(std::int32_t code, msg::Range range, msg::Proc source,
                        std::vector<msg::Proc> custom = {}, bool enviro = false, int node = 0) {
        msg::NotifyEvent n;
        n.event.status = code;
        n.event.range = static_cast<std::uint8_t>(range);
        n.event.source = std::move(source);
        n.event.custom_range = std::move(custom);
        n.event.enviro = enviro;
        LauncherPeer &peer = *servers.at(std::size_t(node));
        const auto id = peer.send(n);
        for (;;) {
            auto e = peer.recv(10s);
            BOOST_REQUIRE_MESSAGE(e, "no answer to the event");
            if (e->id != id) continue;
            if (e->type == msg::Ok::type) return 0;
            if (e->type == msg::ErrorReply::type) return e->as<msg::ErrorReply>().status;
        }
    }
    int end() {
        const int code = job.exit_code();
        BOOST_TEST_MESSAGE("stdout:\n" << job.out() << "stderr:\n" << job.err());
        return code;
    }
    // What "rank N got ... end" said.
    Codes codes(std::uint32_t rank) const {
        const std::string tag = "rank " + std::to_string(rank) + " got";
        const auto at = job.out().find(tag);
        return at == std::string::npos ? Codes{} : Runner::codes(job.out().substr(at + 5));
    }
};

const std::string kHostJob = "host-job";  // the test host's namespace

}  // namespace

BOOST_AUTO_TEST_CASE(under_the_test_host_each_range_reaches_exactly_its_processes) {
    HostedJob h("listen", 4);
    const msg::Proc tool{"tool", 0};
    BOOST_TEST(h.notify(-1, msg::Range::nspace, {kHostJob, 0}) == 0);                        // all
    BOOST_TEST(h.notify(-2, msg::Range::custom, tool, {{"other", 2}, {kHostJob, 3}}) == 0);  // 3
    BOOST_TEST(h.notify(-3, msg::Range::custom, tool, {{"other", PMIX_RANK_WILDCARD}}) == 0);
    BOOST_TEST(h.notify(-4, msg::Range::local, tool) == 0);
    BOOST_TEST(h.notify(-5, msg::Range::session, tool) == 0);
    BOOST_TEST(h.notify(-6, msg::Range::rm, tool) == 0);  // nobody
    BOOST_TEST(h.notify(-7, msg::Range::global, tool, {}, true) == 0);
    BOOST_TEST(h.notify(-9999, msg::Range::global, tool) == 0);
    BOOST_TEST(h.end() == 0);
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        Codes want = {-1, -4, -5, -7, -9999};
        if (rank == 3) want = {-1, -2, -4, -5, -7, -9999};
        BOOST_TEST_INFO("rank " << rank);
        BOOST_TEST(h.codes(rank) == want, boost::test_tools::per_element());
    }
}

// Rank 0 (node0) notifies its namespace and everyone: node1's ranks get both through the host's
// notify_event upcall and PMIx_Notify_event on node1.
BOOST_AUTO_TEST_CASE(under_the_test_host_client_notifications_reach_the_other_node) {
    HostedJob h("notify", 4, 2);
    for (int node : {0, 1})
        BOOST_TEST(h.notify(-9999, msg::Range::global, {"tool", 0}, {}, false, node) == 0);
    BOOST_TEST(h.end() == 0);
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        BOOST_TEST_INFO("rank " << rank);
        BOOST_TEST(h.codes(rank) == (Codes{-500, -501, -9999}), boost::test_tools::per_element());
    }
}

// As an_abort_reaches_the_rest_of_its_job. (Not a_process_exit_reaches_the_rest_of_its_job: the
// library does not know a hosted rank's exit status; when the connection of a rank that ends
// without PMIx_Finalize drops before the host's PMIx_server_deregister_client, it reports exit
// status 1, PMIX_ERR_EXIT_NONZERO_TERM before PMIX_EVENT_PROC_TERMINATED, where the rank exited 0.)
BOOST_AUTO_TEST_CASE(under_the_test_host_an_abort_reaches_the_rest_of_its_job) {
    HostedJob h("abort", 3);
    BOOST_TEST(h.end() == 7);
    for (std::uint32_t rank : {0u, 2u}) {
        BOOST_TEST_INFO("rank " << rank);
        BOOST_TEST(h.codes(rank) == (Codes{PMIX_ERR_PROC_REQUESTED_ABORT}),
                   boost::test_tools::per_element());
    }
    BOOST_TEST(count(h.job.out(), "affected 1\n") == 2u);
    BOOST_TEST(count(h.job.out(), "exit_code 7\n") == 2u);
}

BOOST_AUTO_TEST_CASE(under_the_test_host_a_second_library_declares_its_model) {
    HostedJob h("hybrid", 1);
    BOOST_TEST(h.end() == 0);
    BOOST_TEST(count(h.job.out(), "model OpenMP\n") == 1u, h.job.out());
}
