#define BOOST_TEST_MODULE iof_actor
#include <boost/test/unit_test.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <pmix_common.h>

#include "actors/iof/iof_actor.hpp"

// The iof actor alone: the test feeds it output as the launcher does and pulls as a tool does,
// through a puller actor on the same bus, and checks what comes: the job's cache (bounded, the
// oldest dropped and counted), a pull's window and its bounded queue (oldest or newest dropped),
// buffering by size and time, the flush at deregistration, and the output kept for a tool.
using namespace zpmix;
using namespace std::chrono_literals;

namespace {

// Sends as a tool would and records every delivery, reply and error it gets.
class Puller : public Actor {
  public:
    Puller(Reactor &r, Bus &b) : Actor("puller", r, b) {
        on(&Puller::delivered, Access::internal);
        on(&Puller::pulled, Access::internal);
        on(&Puller::ok, Access::internal);
        on(&Puller::error, Access::internal);
    }
    template <class M>
    void to_iof(const M &m, std::uint64_t id) {
        reactor().post([this, m, id] { send("iof", m, id); });
    }
    // Waits (5 s at most) until pred() holds over what came.
    template <class Pred>
    bool wait(Pred pred) {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, 5s, [&] { return pred(); });
    }
    std::mutex mu;
    std::condition_variable cv;
    std::vector<msg::IofDeliver> deliveries;
    std::vector<std::uint64_t> pulled_ids, ok_ids;
    std::vector<std::int32_t> errors;

  private:
    void record(std::function<void()> fn) {
        std::lock_guard lock(mu);
        fn();
        cv.notify_all();
    }
    void delivered(const Envelope &, msg::IofDeliver &m) {
        record([&] { deliveries.push_back(m); });
    }
    void pulled(const Envelope &env, msg::IofPulled &) {
        record([&] { pulled_ids.push_back(env.id); });
    }
    void ok(const Envelope &env, msg::Ok &) {
        record([&] { ok_ids.push_back(env.id); });
    }
    void error(const Envelope &, msg::ErrorReply &e) {
        record([&] { errors.push_back(e.status); });
    }
};

// The launcher the output comes from: records the acknowledgements iof sends it.
class LauncherStub : public Actor {
  public:
    LauncherStub(Reactor &r, Bus &b) : Actor("launcher", r, b) {
        on(&LauncherStub::acked, Access::internal);
    }
    std::uint64_t last() {
        std::lock_guard lock(mu);
        return acks.empty() ? 0 : acks.back();
    }
    // Waits (5 s at most) until the last acknowledgement is `bytes`.
    bool wait_for(std::uint64_t bytes) {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, 5s, [&] { return !acks.empty() && acks.back() == bytes; });
    }
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::uint64_t> acks;

  private:
    void acked(const Envelope &, msg::OutputAck &m) {
        std::lock_guard lock(mu);
        if (m.nspace == "job1" && m.broker == 0) acks.push_back(m.bytes);
        cv.notify_all();
    }
};

struct Fixture {
    Bus bus;
    Reactor reactor;
    NamespaceTable namespaces;
    BrokerMap brokers{"nodeA"};
    IofActor iof{reactor, bus, namespaces, brokers, IofActor::Settings{.cache_bytes = 100}};
    Puller puller{reactor, bus};
    LauncherStub launcher{reactor, bus};
    std::thread thread;

    Fixture() {
        bus.add(iof);
        bus.add(puller);
        bus.add(launcher);
        thread = std::thread([this] { reactor.run(); });
    }
    ~Fixture() {
        reactor.stop();
        thread.join();
    }
    // A line of rank 0 of job1 on stdout: 20 bytes, numbered.
    void line(int n, std::uint8_t fd = 1) {
        puller.to_iof(msg::Output{"job1", 0, fd, fmt::format("line {:014}\n", n)}, 0);
    }
    std::size_t delivered() {
        std::lock_guard lock(puller.mu);
        return puller.deliveries.size();
    }
    msg::IofDeliver delivery(std::size_t i) {
        std::lock_guard lock(puller.mu);
        return puller.deliveries.at(i);
    }
    msg::IofPull pull_all() {
        msg::IofPull p;
        p.procs = {{"job1", msg::kWildcardRank}};
        return p;
    }
};

std::string text(const msg::IofDeliver &d) {
    std::string s;
    for (const auto &c : d.chunks) s += c.data;
    return s;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(iof_actor, Fixture)

// The job's cache keeps its last 100 bytes: a pull gets them first, with the count of what the
// cache dropped; then the output as it comes.
BOOST_AUTO_TEST_CASE(a_pull_gets_the_cache_then_live_output) {
    for (int i = 0; i < 10; ++i) line(i);
    puller.to_iof(pull_all(), 7);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 1; }));
    const auto first = delivery(0);
    BOOST_TEST(first.dropped == 100u);  // lines 0-4
    BOOST_TEST(text(first) == fmt::format("line {:014}\nline {:014}\nline {:014}\nline "
                                          "{:014}\nline {:014}\n",
                                          5, 6, 7, 8, 9));
    BOOST_TEST(first.chunks.at(0).source.nspace == "job1");
    BOOST_TEST(first.chunks.at(0).channel == msg::kIofStdout);
    line(10, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 2; }));
    BOOST_TEST(delivery(1).chunks.at(0).channel == msg::kIofStderr);
    BOOST_TEST(puller.pulled_ids == std::vector<std::uint64_t>{7});
}

// A pull of stderr only gets nothing of stdout; another job's output is not its.
BOOST_AUTO_TEST_CASE(a_pull_gets_its_channels_and_procs_only) {
    auto p = pull_all();
    p.channels = msg::kIofStderr;
    puller.to_iof(p, 1);
    line(1);
    puller.to_iof(msg::Output{"job2", 0, 2, "other job\n"}, 0);
    line(2, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 1; }));
    BOOST_TEST(text(delivery(0)) == fmt::format("line {:014}\n", 2));
}

// Beyond the window, output waits in the pull's queue (40 bytes): with DROP_NEWEST what does not
// fit is dropped; an acknowledgement lets the rest go, with the count.
BOOST_AUTO_TEST_CASE(a_full_queue_drops_the_newest_when_asked) {
    auto p = pull_all();
    p.cache_bytes = 40;
    p.policy = msg::kIofDropNewest;
    puller.to_iof(p, 1);
    for (unsigned i = 0; i < IofActor::kWindow; ++i) line(static_cast<int>(i));
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow; }));
    for (int i = 100; i < 105; ++i) line(i);
    puller.to_iof(msg::IofAck{1}, 0);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow + 1; }));
    const auto d = delivery(IofActor::kWindow);
    BOOST_TEST(text(d) == fmt::format("line {:014}\nline {:014}\n", 100, 101));
    BOOST_TEST(d.dropped == 60u);
}

// The same with DROP_OLDEST: the oldest go.
BOOST_AUTO_TEST_CASE(a_full_queue_drops_the_oldest_when_asked) {
    auto p = pull_all();
    p.cache_bytes = 40;
    p.policy = msg::kIofDropOldest;
    puller.to_iof(p, 1);
    for (unsigned i = 0; i < IofActor::kWindow; ++i) line(static_cast<int>(i));
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow; }));
    for (int i = 100; i < 105; ++i) line(i);
    puller.to_iof(msg::IofAck{1}, 0);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow + 1; }));
    const auto d = delivery(IofActor::kWindow);
    BOOST_TEST(text(d) == fmt::format("line {:014}\nline {:014}\n", 103, 104));
    BOOST_TEST(d.dropped == 60u);
}

// By default a pull loses nothing: once its queue holds its size (128 KiB here) beyond the
// deliveries in flight, iof stops acknowledging the job's output to its launcher (which then stops
// reading the ranks' pipes), and acknowledges it all once the puller caught up.
BOOST_AUTO_TEST_CASE(a_lossless_pull_holds_the_job_until_the_puller_catches_up) {
    auto p = pull_all();
    p.cache_bytes = 128 * 1024;
    puller.to_iof(p, 1);
    const std::string piece(64 * 1024 - 1, 'x');
    auto send = [&](int n) {
        for (int i = 0; i < n; ++i) puller.to_iof(msg::Output{"job1", 0, 1, piece + "\n"}, 0);
    };
    send(IofActor::kWindow);  // 512 KiB, all delivered at once: acknowledged
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow; }));
    BOOST_REQUIRE(launcher.wait_for(512 * 1024));
    send(4);  // 256 KiB more: the window is full, they wait in the queue, over its size
    // A later request's answer: iof has handled the output before it.
    puller.to_iof(msg::IofPull{{{"job2", msg::kWildcardRank}}}, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.pulled_ids.size() == 2; }));
    BOOST_TEST(launcher.last() == 512 * 1024u);  // held
    for (unsigned i = 0; i < IofActor::kWindow; ++i) puller.to_iof(msg::IofAck{1}, 0);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == IofActor::kWindow + 4; }));
    BOOST_REQUIRE(launcher.wait_for(768 * 1024));
    std::size_t bytes = 0, dropped = 0;
    for (std::size_t i = 0; i < delivered(); ++i) {
        bytes += text(delivery(i)).size();
        dropped += delivery(i).dropped;
    }
    BOOST_TEST(bytes == 768 * 1024u);
    BOOST_TEST(dropped == 0u);
}

// Buffering: nothing goes before 50 bytes wait, then all of it in one delivery; what is left
// goes when the buffering time is over; a deregistration flushes what waits, then answers.
BOOST_AUTO_TEST_CASE(buffering_by_size_and_time_and_the_flush_at_deregistration) {
    auto p = pull_all();
    p.buffering_bytes = 50;
    p.buffering_ms = 50;
    puller.to_iof(p, 1);
    line(1);
    line(2);
    line(3);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 1; }));
    BOOST_TEST(delivery(0).chunks.size() == 3u);
    line(4);  // 20 bytes: held back, then delivered by the timer
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 2; }));
    BOOST_TEST(text(delivery(1)) == fmt::format("line {:014}\n", 4));

    puller.to_iof(msg::IofDeregister{1}, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.ok_ids.size() == 1; }));

    p.buffering_ms = 0;            // no time limit: only the deregistration lets it go
    p.channels = msg::kIofStderr;  // none in the job's cache
    puller.to_iof(p, 3);
    line(5, 2);
    puller.to_iof(msg::IofDeregister{3}, 4);
    BOOST_REQUIRE(puller.wait([&] { return puller.ok_ids.size() == 2; }));
    BOOST_REQUIRE_EQUAL(delivered(), 3u);  // before its answer
    BOOST_TEST(text(delivery(2)) == fmt::format("line {:014}\n", 5));
}

// A deregistered pull gets nothing more; an unknown one is PMIX_ERR_NOT_FOUND.
BOOST_AUTO_TEST_CASE(nothing_after_deregistration) {
    puller.to_iof(pull_all(), 1);
    line(1);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 1; }));
    puller.to_iof(msg::IofDeregister{1}, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.ok_ids.size() == 1; }));
    line(2);
    puller.to_iof(msg::IofDeregister{1}, 3);
    BOOST_REQUIRE(puller.wait([&] { return puller.errors.size() == 1; }));
    BOOST_TEST(puller.errors.at(0) == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(delivered() == 1u);  // line 2 came before the second deregistration's answer
}

// A job kept for the tool that spawned it (iof.keep): its cache outlives its end, for any pull,
// until that tool's session closes; another job's goes with its end.
BOOST_AUTO_TEST_CASE(a_kept_job_s_output_outlives_its_end_until_its_tool_goes) {
    puller.to_iof(msg::IofKeep{"job1", "tool-a"}, 0);
    line(1);
    puller.to_iof(msg::Output{"job2", 0, 1, "other\n"}, 0);
    puller.to_iof(msg::NamespaceEnded{"job1"}, 0);
    puller.to_iof(msg::NamespaceEnded{"job2"}, 0);
    puller.to_iof(pull_all(), 1);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 1; }));
    BOOST_TEST(text(delivery(0)) == fmt::format("line {:014}\n", 1));
    msg::IofPull other;
    other.procs = {{"job2", msg::kWildcardRank}};
    puller.to_iof(other, 2);
    BOOST_REQUIRE(puller.wait([&] { return puller.pulled_ids.size() == 2; }));

    puller.to_iof(msg::SessionClosed{"tool-b"}, 0);  // another tool's end changes nothing
    puller.to_iof(pull_all(), 3);
    BOOST_REQUIRE(puller.wait([&] { return puller.deliveries.size() == 2; }));
    puller.to_iof(msg::SessionClosed{"tool-a"}, 0);
    puller.to_iof(pull_all(), 4);
    BOOST_REQUIRE(puller.wait([&] { return puller.pulled_ids.size() == 4; }));
    puller.to_iof(msg::IofDeregister{4}, 5);  // answered after anything the pull had
    BOOST_REQUIRE(puller.wait([&] { return puller.ok_ids.size() == 1; }));
    BOOST_TEST(delivered() == 2u);  // job2's pull and the last one got nothing
}

// At most kMaxKept ended jobs are kept: the oldest goes first.
BOOST_AUTO_TEST_CASE(kept_jobs_are_bounded_the_oldest_going_first) {
    const std::size_t n = IofActor::kMaxKept + 1;
    for (std::size_t j = 0; j < n; ++j) {
        const std::string job = fmt::format("kept{}", j);
        puller.to_iof(msg::IofKeep{job, "tool-a"}, 0);
        puller.to_iof(msg::Output{job, 0, 1, job + "\n"}, 0);
        puller.to_iof(msg::NamespaceEnded{job}, 0);
    }
    for (std::size_t j : {std::size_t{0}, std::size_t{1}, n - 1}) {
        msg::IofPull p;
        p.procs = {{fmt::format("kept{}", j), msg::kWildcardRank}};
        puller.to_iof(p, 10 + j);
    }
    puller.to_iof(msg::IofDeregister{10 + n - 1}, 1);
    BOOST_REQUIRE(puller.wait([&] { return puller.ok_ids.size() == 1; }));
    BOOST_REQUIRE_EQUAL(delivered(), 2u);  // not kept0's
    BOOST_TEST(text(delivery(0)) == "kept1\n");
    BOOST_TEST(text(delivery(1)) == fmt::format("kept{}\n", n - 1));
}

BOOST_AUTO_TEST_SUITE_END()
