#define BOOST_TEST_MODULE event_broker
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <pmix_common.h>

#include "actors/events/event_broker.hpp"
#include "broker/zmtp_listener.hpp"
#include "client/events/stream_tracker.hpp"

// The broker's events actor in one process: the broker's publisher (a ZmtpListener on ipc), a test
// actor making the client's requests over the bus, and libzmq SUB sockets standing for the
// subscribers (so these tests also check that libzmq peers understand the listener).
using namespace zpmix;
using namespace std::chrono_literals;

namespace {

// Sends requests to "events" and hands each reply to the test thread.
class Requester : public Actor {
  public:
    Requester(Reactor &r, Bus &b) : Actor("req", r, b) {
        on(&Requester::registered, Access::internal);
        on(&Requester::resent, Access::internal);
        on(&Requester::ok, Access::internal);
        on(&Requester::error, Access::internal);
    }
    template <class M>
    void ask(const M &m) {
        reactor().post([this, m] { send("events", m, ++id_); });
    }
    // Request id 0: no answer wanted.
    template <class M>
    void tell(const M &m) {
        reactor().post([this, m] { send("events", m, 0); });
    }
    std::promise<msg::EventRegistered> on_registered;
    std::promise<msg::EventResent> on_resent;
    std::promise<std::int32_t> on_status;

  private:
    std::uint64_t id_ = 0;
    void registered(const Envelope &, msg::EventRegistered &m) { on_registered.set_value(m); }
    void resent(const Envelope &, msg::EventResent &m) { on_resent.set_value(m); }
    void ok(const Envelope &, msg::Ok &) { on_status.set_value(0); }
    void error(const Envelope &, msg::ErrorReply &e) { on_status.set_value(e.status); }
};

template <class T>
T await(std::promise<T> &p) {
    auto f = p.get_future();
    BOOST_REQUIRE(f.wait_for(5s) == std::future_status::ready);
    T v = f.get();
    p = {};
    return v;
}

struct Fixture {
    std::string dir = [] {
        char tmpl[] = "/tmp/zpmix-evb-XXXXXX";
        return std::string(::mkdtemp(tmpl));
    }();
    std::string uri = "ipc://" + dir + "/events.sock";
    zmq::context_t ctx;
    Bus bus;
    Reactor reactor;
    NamespaceTable namespaces;  // the fixture is the registry: it writes it and tells of ends
    std::unique_ptr<ZmtpListener> xpub;
    std::unique_ptr<EventBroker> events;
    Requester req{reactor, bus};
    std::thread thread;

    explicit Fixture(EventOptions opts = {}, std::size_t sndhwm = 1000) {
        xpub = std::make_unique<ZmtpListener>(
            reactor, ZmtpListener::Settings{.path = dir + "/events.sock",
                                            .kind = ZmtpListener::Kind::publisher,
                                            .uid = ::getuid(),
                                            .sndhwm = sndhwm});
        xpub->listen();
        opts.session = "s1";
        opts.host = "nodeA";
        opts.self = {"broker", 0};
        events = std::make_unique<EventBroker>(reactor, bus, namespaces,
                                               std::vector<TopicPublisher *>{xpub.get()}, opts);
        bus.add(*events);
        bus.add(req);
        thread = std::thread([this] { reactor.run(); });
    }
    // As the registry does on the launcher's reports.
    void rank_ended(const std::string &nspace, std::uint32_t rank, std::int32_t code,
                    std::int32_t sig) {
        BOOST_REQUIRE(namespaces.ended(nspace, rank, code, sig));
        req.ask(msg::ProcEnded{nspace, rank, code, sig});
    }
    void job_ended(const std::string &nspace, std::int32_t status, std::string message) {
        const auto job = namespaces.find(nspace);
        BOOST_REQUIRE(job);
        namespaces.remove(nspace);
        req.ask(
            msg::NamespaceEnded{nspace, true, status, std::move(message), job->notify_completion});
    }
    ~Fixture() {
        reactor.stop();
        thread.join();
        xpub->close();
        std::filesystem::remove_all(dir);
    }

    // A subscriber that registered (sync handshake included) for `prefixes`.
    zmq::socket_t subscriber(const std::vector<std::string> &prefixes, const std::string &sync,
                             msg::EventRegistered *out = nullptr) {
        zmq::socket_t sub(ctx, zmq::socket_type::sub);
        sub.connect(uri);
        msg::EventRegister r{{"job1", 0}, sync, {}};
        for (const auto &p : prefixes) {
            sub.set(zmq::sockopt::subscribe, p);
            r.streams.push_back(p);
        }
        sub.set(zmq::sockopt::subscribe, msg::topic::sync(sync));
        req.ask(r);
        auto reg = await(req.on_registered);
        if (out) *out = reg;
        return sub;
    }

    std::int32_t notify(msg::Event ev, bool no_cache = false) {
        req.ask(msg::NotifyEvent{std::move(ev), no_cache});
        return await(req.on_status);
    }
};

std::optional<std::pair<std::string, msg::Event>> next_event(zmq::socket_t &sub,
                                                             std::chrono::milliseconds wait = 2s) {
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
    zmq::message_t topic, body;
    BOOST_REQUIRE(sub.recv(topic));
    BOOST_REQUIRE(sub.recv(body));
    return std::pair{topic.to_string(), decode(body).as<msg::Event>()};
}

msg::Event event(std::int32_t code, msg::Range range, msg::Proc source = {"job1", 0}) {
    msg::Event ev;
    ev.status = code;
    ev.range = static_cast<std::uint8_t>(range);
    ev.source = source;
    return ev;
}

}  // namespace

BOOST_AUTO_TEST_CASE(registration_waits_for_the_sync_subscription) {
    Fixture f;
    msg::EventRegister r{{"job1", 0}, "late-sub", {"ev/g/j/"}};
    f.req.ask(r);
    auto fut = f.req.on_registered.get_future();
    // No sync subscription yet: the broker must not answer.
    BOOST_TEST((fut.wait_for(100ms) == std::future_status::timeout));
    zmq::socket_t sub(f.ctx, zmq::socket_type::sub);
    sub.connect(f.uri);
    sub.set(zmq::sockopt::subscribe, "ev/g/j/");
    sub.set(zmq::sockopt::subscribe, msg::topic::sync("late-sub"));
    BOOST_REQUIRE(fut.wait_for(5s) == std::future_status::ready);
    BOOST_TEST(fut.get().heads.at("ev/g/j/") == 0u);
}

BOOST_AUTO_TEST_CASE(ranges_map_to_topics_and_streams_count) {
    Fixture f;
    auto sub = f.subscriber({"ev/"}, "all");
    BOOST_TEST(f.notify(event(-1, msg::Range::global)) == 0);
    BOOST_TEST(f.notify(event(-2, msg::Range::nspace)) == 0);
    BOOST_TEST(f.notify(event(-3, msg::Range::session)) == 0);
    BOOST_TEST(f.notify(event(-4, msg::Range::local)) == 0);
    auto custom = event(-5, msg::Range::custom);
    custom.custom_range = {{"job2", 3}, {"job3", PMIX_RANK_WILDCARD}};
    BOOST_TEST(f.notify(custom) == 0);
    BOOST_TEST(f.notify(event(-6, msg::Range::rm)) == 0);
    BOOST_TEST(f.notify(event(-7, msg::Range::global)) == 0);
    const std::vector<std::string> expected = {
        "ev/g/j/-1/",      "ev/n/job1/j/-2/",   "ev/s/s1/j/-3/", "ev/node/nodeA/j/-4/",
        "ev/n/job3/j/-5/", "ev/p/job2/3/j/-5/", "ev/rm/j/-6/",   "ev/g/j/-7/"};
    std::vector<std::string> got;
    std::uint64_t last_global = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        auto e = next_event(sub);
        BOOST_REQUIRE(e);
        got.push_back(e->first);
        BOOST_TEST(e->first.starts_with(e->second.stream));
        if (e->second.stream == "ev/g/j/") {
            BOOST_TEST(e->second.seq == last_global + 1);
            last_global = e->second.seq;
        }
    }
    std::sort(got.begin(), got.end());
    auto want = expected;
    std::sort(want.begin(), want.end());
    BOOST_TEST(got == want, boost::test_tools::per_element());
    BOOST_TEST(!next_event(sub, 50ms));
}

// Monitors read the published envelope's "v" as the event schema version, documented as 1
// (docs/events.md) whatever the internal protocol's version.
BOOST_AUTO_TEST_CASE(published_events_carry_the_documented_schema_version) {
    Fixture f;
    auto sub = f.subscriber({"ev/g/"}, "schema");
    BOOST_TEST(f.notify(event(-10, msg::Range::global)) == 0);
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE(zmq::poll(&item, 1, 2s) == 1);
    zmq::message_t topic, body;
    BOOST_REQUIRE(sub.recv(topic));
    BOOST_REQUIRE(sub.recv(body));
    const Envelope env = decode(body);
    BOOST_TEST(env.version == 1u);
    BOOST_TEST(env.version == msg::kEventSchemaVersion);
    BOOST_TEST(env.as<msg::Event>().status == -10);
}

BOOST_AUTO_TEST_CASE(bad_ranges_are_refused) {
    Fixture f;
    BOOST_TEST(f.notify(event(-1, msg::Range::custom)) == PMIX_ERR_BAD_PARAM);  // no members
    BOOST_TEST(f.notify(event(-1, msg::Range::proc_local)) == PMIX_ERR_BAD_PARAM);
    BOOST_TEST(f.notify(event(-1, static_cast<msg::Range>(42))) == PMIX_ERR_BAD_PARAM);
    // What a client checks before it notifies without asking for an answer agrees.
    BOOST_TEST(!msg::routable(event(-1, msg::Range::custom)));
    BOOST_TEST(!msg::routable(event(-1, msg::Range::proc_local)));
    BOOST_TEST(!msg::routable(event(-1, static_cast<msg::Range>(42))));
    BOOST_TEST(!msg::routable(event(-1, msg::Range::nspace, {"", 0})));
    auto custom = event(-1, msg::Range::custom);
    custom.custom_range = {{"", 3}};
    BOOST_TEST(!msg::routable(custom));
    custom.custom_range.push_back({"job1", 3});
    BOOST_TEST(msg::routable(custom));
    for (auto r : {msg::Range::rm, msg::Range::local, msg::Range::nspace, msg::Range::session,
                   msg::Range::global})
        BOOST_TEST(msg::routable(event(-1, r)));
}

BOOST_AUTO_TEST_CASE(an_unanswered_notification_is_published) {
    Fixture f;
    auto sub = f.subscriber({"ev/g/"}, "quiet");
    f.req.tell(msg::NotifyEvent{event(-8, msg::Range::global), true});
    auto got = next_event(sub);
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST(got->second.status == -8);
    // No answer came: the next one the requester gets is for its next request.
    BOOST_TEST(f.notify(event(-9, msg::Range::global), true) == 0);
    auto on_status = f.req.on_status.get_future();
    BOOST_TEST((on_status.wait_for(50ms) == std::future_status::timeout));
}

BOOST_AUTO_TEST_CASE(a_late_registrant_gets_the_cached_events_and_heads) {
    Fixture f;
    BOOST_TEST(f.notify(event(-1, msg::Range::nspace)) == 0);
    BOOST_TEST(f.notify(event(-2, msg::Range::nspace), true) == 0);  // DO_NOT_CACHE
    BOOST_TEST(f.notify(event(-3, msg::Range::nspace)) == 0);
    auto enviro = event(-4, msg::Range::nspace);
    enviro.enviro = true;
    BOOST_TEST(f.notify(enviro) == 0);
    msg::EventRegistered reg;
    auto sub = f.subscriber({"ev/n/job1/j/"}, "late", &reg);
    BOOST_TEST(reg.heads.at("ev/n/job1/j/") == 3u);
    BOOST_REQUIRE(reg.replay.size() == 2u);  // not the uncached one, not the environment one
    BOOST_TEST(reg.replay[0].status == -1);
    BOOST_TEST(reg.replay[1].status == -3);
    BOOST_TEST(reg.replay[1].seq == 3u);
}

BOOST_AUTO_TEST_CASE(the_ring_evicts_the_oldest_unretained_events) {
    EventOptions opts;
    opts.ring_size = 4;
    Fixture f(opts);
    for (int i = 1; i <= 10; ++i) BOOST_TEST(f.notify(event(-i, msg::Range::global)) == 0);
    msg::EventRegistered reg;
    auto sub = f.subscriber({"ev/g/j/"}, "ring", &reg);
    BOOST_REQUIRE(reg.replay.size() == 4u);
    BOOST_TEST(reg.replay.front().seq == 7u);
    BOOST_TEST(reg.replay.back().seq == 10u);
    // Asking for evicted numbers gets only what is left.
    f.req.ask(msg::EventResend{"ev/g/j/", 5, 8});
    auto resent = await(f.req.on_resent);
    BOOST_REQUIRE(resent.events.size() == 2u);
    BOOST_TEST(resent.events[0].seq == 7u);
}

BOOST_AUTO_TEST_CASE(job_events_stay_past_the_ring_until_every_local_rank_acks) {
    EventOptions opts;
    opts.ring_size = 2;
    Fixture f(opts);
    msg::JobInfo job;
    job.nspace = "job1";
    job.procs.resize(3);
    for (std::uint32_t r = 0; r < 3; ++r) {
        job.procs[r].rank = r;
        job.procs[r].hostname = r < 2 ? "nodeA" : "nodeB";
    }
    f.namespaces.add(job, "", {});
    BOOST_TEST(f.notify(event(-100, msg::Range::nspace)) == 0);
    for (int i = 1; i <= 5; ++i) BOOST_TEST(f.notify(event(-i, msg::Range::global)) == 0);
    // Ranks 0 and 1 (rank 2 is on another node) have not acknowledged it: still cached.
    f.req.ask(msg::EventResend{"ev/n/job1/j/", 1, 1});
    BOOST_TEST(await(f.req.on_resent).events.size() == 1u);
    f.req.ask(msg::EventAck{{"job1", 0}, {{"ev/n/job1/j/", 1}}});
    f.req.ask(msg::EventResend{"ev/n/job1/j/", 1, 1});
    BOOST_TEST(await(f.req.on_resent).events.size() == 1u);
    // Rank 1 exits instead of acknowledging: nobody else needs it, and it leaves the cache. Its
    // exit is itself a job event, which ranks 0 must acknowledge.
    f.rank_ended("job1", 1, 0, 0);
    f.req.ask(msg::EventResend{"ev/n/job1/j/", 1, 2});
    auto left = await(f.req.on_resent).events;
    BOOST_REQUIRE(left.size() == 1u);
    BOOST_TEST(left[0].seq == 2u);
    BOOST_TEST(left[0].status == PMIX_EVENT_PROC_TERMINATED);
}

// Clients acknowledge only what the broker keeps for them: the flag must be set on
// exactly the events the cache retains for local ranks.
BOOST_AUTO_TEST_CASE(events_say_whether_the_broker_keeps_them_for_acknowledgement) {
    Fixture f;
    msg::JobInfo job;
    job.nspace = "job1";
    job.procs.resize(2);
    for (std::uint32_t r = 0; r < 2; ++r) {
        job.procs[r].rank = r;
        job.procs[r].hostname = "nodeA";
    }
    f.namespaces.add(job, "", {});
    auto sub = f.subscriber({"ev/n/job1/", "ev/n/job9/"}, "kept");
    BOOST_TEST(f.notify(event(-1, msg::Range::nspace)) == 0);
    BOOST_TEST(f.notify(event(-2, msg::Range::nspace), true) == 0);  // PMIX_EVENT_DO_NOT_CACHE
    auto enviro = event(-3, msg::Range::nspace);
    enviro.enviro = true;
    BOOST_TEST(f.notify(enviro) == 0);
    BOOST_TEST(f.notify(event(-4, msg::Range::nspace, {"job9", 0})) == 0);  // no local ranks
    std::map<std::int32_t, bool> retained;
    for (int i = 0; i < 4; ++i) {
        auto e = next_event(sub);
        BOOST_REQUIRE(e);
        retained[e->second.status] = e->second.retained;
    }
    BOOST_TEST(retained.at(-1));
    BOOST_TEST(!retained.at(-2));
    BOOST_TEST(!retained.at(-3));
    BOOST_TEST(!retained.at(-4));
}

BOOST_AUTO_TEST_CASE(a_process_exit_becomes_termination_events_for_its_job) {
    Fixture f;
    auto sub = f.subscriber({"ev/n/job1/"}, "exit");
    msg::JobInfo job;
    job.nspace = "job1";
    job.procs.resize(4);
    f.namespaces.add(job, "", {});
    f.rank_ended("job1", 3, 0, 9);
    auto first = next_event(sub);
    auto second = next_event(sub);
    BOOST_REQUIRE(first);
    BOOST_REQUIRE(second);
    BOOST_TEST(first->second.status == PMIX_ERR_PROC_ABORTED_BY_SIG);
    BOOST_TEST(second->second.status == PMIX_EVENT_PROC_TERMINATED);
    BOOST_REQUIRE(first->second.affected.size() == 1u);
    BOOST_TEST(first->second.affected[0].rank == 3u);
    BOOST_TEST(first->second.source.nspace == "broker");
    BOOST_TEST(!first->second.info.empty());
}

// The registry's NamespaceEnded (after the job's last ProcEnded) is the end of a job: a
// NotifyCompletion's requester and the spawner named by the namespace's registration
// (PMIX_NOTIFY_COMPLETION of a PMIx_Spawn) each get PMIX_EVENT_JOB_END on their own stream, with
// the job's status.
BOOST_AUTO_TEST_CASE(job_end_goes_to_whoever_asked) {
    Fixture f;
    msg::JobInfo job;
    job.nspace = "job9";
    job.procs.resize(2);
    job.procs[1].rank = 1;
    f.namespaces.add(job, "", {{"parent", 2}});
    f.req.ask(msg::NotifyCompletion{{"tool", 0}, "job9"});
    BOOST_TEST(await(f.req.on_status) == 0);
    auto sub = f.subscriber({"ev/p/tool/0/", "ev/p/parent/2/"}, "end");
    f.rank_ended("job9", 0, 3, 0);
    f.rank_ended("job9", 1, 0, 0);
    BOOST_TEST(!next_event(sub, 100ms));  // the launcher has not said that the job is over
    f.job_ended("job9", 3, "rank 0 exited with status 3");
    std::set<std::string> topics;
    for (int i = 0; i < 2; ++i) {
        auto end = next_event(sub);
        BOOST_REQUIRE(end);
        topics.insert(end->first);
        const msg::Event &e = end->second;
        BOOST_TEST(e.status == PMIX_EVENT_JOB_END);
        BOOST_TEST(e.non_default);  // default handlers (Open MPI's aborts) do not get it
        BOOST_REQUIRE(e.affected.size() == 1u);
        BOOST_TEST(e.affected[0].nspace == "job9");
        BOOST_TEST(e.affected[0].rank == PMIX_RANK_WILDCARD);
        // info: [[key, flags, [type, value]], ...] with the job's status.
        auto info = msgpack::unpack(reinterpret_cast<const char *>(e.info.data()), e.info.size());
        std::map<std::string, std::int64_t> values;
        for (const auto &item : info.get().as<std::vector<msgpack::object>>()) {
            const auto kv = item.as<std::vector<msgpack::object>>();
            values[kv.at(0).as<std::string>()] =
                kv.at(2).as<std::vector<msgpack::object>>().at(1).as<std::int64_t>();
        }
        BOOST_TEST(values.at(PMIX_JOB_TERM_STATUS) == 3);
        BOOST_TEST(values.at(PMIX_EXIT_CODE) == 3);
    }
    const std::string code = std::to_string(PMIX_EVENT_JOB_END);
    BOOST_TEST((topics == std::set<std::string>{"ev/p/tool/0/j/" + code + "/",
                                                "ev/p/parent/2/j/" + code + "/"}));
    // Once: the NotifyCompletion's watcher is forgotten.
    f.req.ask(msg::NamespaceEnded{"job9", true, 3, "", {}});
    BOOST_TEST(!next_event(sub, 100ms));
}

BOOST_AUTO_TEST_CASE(dropped_events_are_recovered_from_the_cache) {
    EventOptions opts;
    opts.test_drop_every = 3;  // 3, 6, 9 are numbered and cached but never sent
    Fixture f(opts);
    auto sub = f.subscriber({"ev/g/j/"}, "drops");
    for (int i = 1; i <= 10; ++i) BOOST_TEST(f.notify(event(-i, msg::Range::global)) == 0);
    std::vector<std::uint64_t> seen;
    while (auto e = next_event(sub, 200ms)) seen.push_back(e->second.seq);
    BOOST_TEST(seen == (std::vector<std::uint64_t>{1, 2, 4, 5, 7, 8, 10}),
               boost::test_tools::per_element());
    f.req.ask(msg::EventResend{"ev/g/j/", 3, 3});
    auto got = await(f.req.on_resent);
    BOOST_REQUIRE(got.events.size() == 1u);
    BOOST_TEST(got.events[0].status == -3);
}

BOOST_AUTO_TEST_CASE(high_water_mark_drops_are_detected_and_replayed) {
    Fixture f({}, 1);  // the publisher queues at most one event per subscriber

    // A subscriber that does not read while 100 events are published: the publisher drops what
    // does not fit, as it would for a stuck process.
    zmq::socket_t sub(f.ctx, zmq::socket_type::sub);
    sub.set(zmq::sockopt::rcvhwm, 1);
    sub.connect(f.uri);
    sub.set(zmq::sockopt::subscribe, "ev/g/j/");
    sub.set(zmq::sockopt::subscribe, msg::topic::sync("hwm"));
    f.req.ask(msg::EventRegister{{"job1", 0}, "hwm", {"ev/g/j/"}});
    const auto reg = await(f.req.on_registered);
    client::StreamTracker tracker;
    std::optional<client::StreamTracker::Gap> gap;
    BOOST_TEST(tracker.start("ev/g/j/", reg.heads.at("ev/g/j/"), gap).empty());
    // 64 KiB each: more than the socket buffers between the two hold.
    for (int i = 1; i <= 100; ++i) {
        msg::Event ev = event(-i, msg::Range::global);
        ev.text.assign(64 * 1024, 'x');
        BOOST_TEST(f.notify(std::move(ev)) == 0);
    }

    std::vector<msg::Event> delivered;
    std::vector<client::StreamTracker::Gap> gaps;
    std::size_t received = 0;
    auto take = [&](std::chrono::milliseconds wait) {
        auto e = next_event(sub, wait);
        if (!e) return false;
        ++received;
        std::optional<client::StreamTracker::Gap> g;
        auto ready = tracker.accept(e->second, g);
        delivered.insert(delivered.end(), ready.begin(), ready.end());
        if (g) gaps.push_back(*g);
        return true;
    };
    while (take(200ms)) {
    }
    // A drop at a stream's end shows at its next event.
    BOOST_TEST(f.notify(event(-101, msg::Range::global)) == 0);
    BOOST_REQUIRE(take(5s));
    BOOST_TEST(received < 101u);  // the publisher did drop events
    BOOST_REQUIRE(!gaps.empty());
    for (const auto &g : gaps) {
        f.req.ask(msg::EventResend{g.stream, g.from, g.to});
        auto got = await(f.req.on_resent);
        auto ready = tracker.fill(g.stream, g.from, g.to, got.events);
        delivered.insert(delivered.end(), ready.begin(), ready.end());
    }
    BOOST_TEST(tracker.lost() == 0u);
    BOOST_REQUIRE(delivered.size() == 101u);
    for (std::size_t i = 0; i < delivered.size(); ++i) {
        BOOST_TEST(delivered[i].seq == i + 1);
        BOOST_TEST(delivered[i].status == -static_cast<int>(i + 1));
    }
}
