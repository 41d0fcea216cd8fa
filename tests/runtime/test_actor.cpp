#define BOOST_TEST_MODULE actor
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <future>
#include <iterator>
#include <string>
#include <thread>

#include <time.h>
#include <unistd.h>

#include <pmix_common.h>
#include <zmq.hpp>

#include "actors/protocol/map.hpp"
#include "actors/runtime/actor.hpp"

using namespace zpmix;
using namespace std::chrono_literals;

namespace {

struct Add {
    static constexpr const char *type = "add";
    std::int64_t value = 0;
    ZPMIX_MSG_MAP(value);
};
struct Total {
    static constexpr const char *type = "total";
    std::int64_t value = 0;
    ZPMIX_MSG_MAP(value);
};

// Keeps a running total; answers each Add with the new Total.
class Counter : public Actor {
  public:
    Counter(Reactor &r, Bus &b) : Actor("counter", r, b) { on(&Counter::add, Access::session); }

  private:
    std::int64_t total_ = 0;
    void add(const Envelope &env, Add &m) {
        if (m.value < 0) throw std::runtime_error("negative");
        total_ += m.value;
        reply(env, Total{total_});
    }
};

// Collects whatever reaches it (replies and errors) and hands them to the test thread.
class Probe : public Actor {
  public:
    Probe(Reactor &r, Bus &b) : Actor("probe", r, b) {
        on(&Probe::total, Access::internal);
        on(&Probe::error, Access::internal);
    }
    std::promise<std::pair<std::string, std::int64_t>> next;
    void ask(const std::string &to, const Add &m) { send(to, m, 9); }
    template <class M>
    void ask_as(const std::string &to, const M &m) {
        send(to, m, 9);
    }

  private:
    void total(const Envelope &, Total &t) { next.set_value({"total", t.value}); }
    void error(const Envelope &env, msg::ErrorReply &e) {
        BOOST_TEST(env.id == 9u);
        next.set_value({"error", e.status});
    }
};

struct Unknown {
    static constexpr const char *type = "no-such-type";
    int x = 0;
    ZPMIX_MSG_MAP(x);
};
struct BadAdd {
    static constexpr const char *type = "add";
    std::string value = "seven";
    ZPMIX_MSG_MAP(value);
};

// Two reactors on two threads, one actor each: messages cross threads only through mailboxes.
struct TwoThreads {
    Bus bus;
    Reactor r1, r2;
    Counter counter{r1, bus};
    Probe probe{r2, bus};
    std::thread t1, t2;
    TwoThreads() {
        bus.add(counter);
        bus.add(probe);
        t1 = std::thread([this] { r1.run(); });
        t2 = std::thread([this] { r2.run(); });
    }
    ~TwoThreads() {
        r1.stop();
        r2.stop();
        t1.join();
        t2.join();
    }
    std::pair<std::string, std::int64_t> roundtrip(auto send) {
        probe.next = {};
        auto f = probe.next.get_future();
        r2.post([&] { send(); });
        BOOST_REQUIRE(f.wait_for(5s) == std::future_status::ready);
        return f.get();
    }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(dispatch_by_type_and_reply, TwoThreads) {
    BOOST_TEST(roundtrip([&] { probe.ask("counter", Add{5}); }).second == 5);
    auto r = roundtrip([&] { probe.ask("counter", Add{6}); });
    BOOST_TEST(r.first == "total");
    BOOST_TEST(r.second == 11);
    BOOST_TEST(bus.route("add").actor == &counter);
    BOOST_TEST(allows(bus.route("add").access, Access::session));
    BOOST_TEST(!allows(bus.route("add").access, Access::operator_));
    BOOST_TEST(!allows(bus.route("total").access, Access::session));  // internal
    BOOST_TEST(bus.route("nothing").actor == nullptr);
}

// A type peers may send goes to exactly one actor: a second handler of it is refused at
// registration, whichever comes first, so no actor's safety depends on the order.
BOOST_AUTO_TEST_CASE(a_peer_type_has_one_handler) {
    Reactor r;
    Bus bus;
    Counter first(r, bus);
    Counter second(r, bus);  // same name and type: registered on its own bus below
    bus.add(first);
    BOOST_CHECK_THROW(bus.add(second), std::logic_error);
    Bus other;
    Probe probe(r, other);  // handles "total" internally
    other.add(probe);
    class TotalForPeers : public Actor {
      public:
        TotalForPeers(Reactor &r, Bus &b) : Actor("peers", r, b) {
            on(&TotalForPeers::total, Access::session);
        }
        void total(const Envelope &, Total &) {}
    } peers(r, other);
    BOOST_CHECK_THROW(other.add(peers), std::logic_error);
}

BOOST_FIXTURE_TEST_CASE(unknown_type_gets_not_supported, TwoThreads) {
    auto r = roundtrip([&] { probe.ask_as("counter", Unknown{}); });
    BOOST_TEST(r.first == "error");
    BOOST_TEST(r.second == PMIX_ERR_NOT_SUPPORTED);
}

BOOST_FIXTURE_TEST_CASE(malformed_body_gets_bad_param_and_actor_keeps_serving, TwoThreads) {
    auto r = roundtrip([&] { probe.ask_as("counter", BadAdd{}); });
    BOOST_TEST(r.first == "error");
    BOOST_TEST(r.second == PMIX_ERR_BAD_PARAM);
    auto failed = roundtrip([&] { probe.ask("counter", Add{-1}); });
    BOOST_TEST(failed.second == PMIX_ERROR);
    BOOST_TEST(roundtrip([&] { probe.ask("counter", Add{1}); }).second == 1);
}

BOOST_AUTO_TEST_CASE(timers_fire_in_order_and_cancel) {
    Reactor r;
    std::vector<int> fired;
    r.after(30ms, [&] { fired.push_back(3); });
    r.after(10ms, [&] { fired.push_back(1); });
    auto never = r.after(20ms, [&] { fired.push_back(2); });
    r.cancel(never);
    int ticks = 0;
    r.every(5ms, [&] {
        if (++ticks == 3) r.post([&] { fired.push_back(0); });
    });
    r.after(50ms, [&] { r.stop(); });
    r.run();
    // The one-shot timers in deadline order, the cancelled one never; the periodic timer's third
    // tick lands anywhere among them on a loaded machine.
    std::vector<int> one_shots;
    std::copy_if(fired.begin(), fired.end(), std::back_inserter(one_shots),
                 [](int f) { return f != 0; });
    BOOST_TEST(one_shots == (std::vector<int>{1, 3}));
    BOOST_TEST(std::count(fired.begin(), fired.end(), 0) == 1);
    BOOST_TEST(ticks >= 3);
}

// epoll refuses regular files; the reactor treats one as always readable, as poll(2) does (a
// rank's stdin may be a file).
BOOST_AUTO_TEST_CASE(a_regular_file_is_always_readable) {
    char path[] = "/tmp/zpmix-test-reactor-XXXXXX";
    const int fd = ::mkstemp(path);
    BOOST_REQUIRE(fd >= 0);
    ::unlink(path);
    BOOST_REQUIRE(::write(fd, "abc", 3) == 3);
    ::lseek(fd, 0, SEEK_SET);
    Reactor r;
    std::string read;
    r.watch_fd(fd, [&] {
        char buf[2];
        const auto n = ::read(fd, buf, sizeof buf);
        if (n > 0) return read.append(buf, static_cast<std::size_t>(n)), void();
        r.unwatch_fd(fd);
        r.stop();
    });
    bool late = false;
    r.after(5s, [&] { late = true, r.stop(); });
    r.run();
    ::close(fd);
    BOOST_TEST(read == "abc");
    BOOST_TEST(!late);
}

// A ZeroMQ socket's ZMQ_FD signals once per change, and a send on the socket may take that signal
// (it processes the socket's pending commands): the message that arrived must still be read,
// whether the send was made by a timer or by what a timer posted.
BOOST_AUTO_TEST_CASE(a_socket_is_read_after_a_send_took_its_signal) {
    for (const bool posted : {false, true}) {
        zmq::context_t ctx;
        zmq::socket_t a(ctx, zmq::socket_type::pair), b(ctx, zmq::socket_type::pair);
        a.bind("inproc://reactor-signal");
        b.connect("inproc://reactor-signal");
        Reactor r;
        int got = 0;
        r.watch(a, [&] {
            zmq::message_t m;
            while (a.recv(m, zmq::recv_flags::dontwait)) ++got;
            if (got > 0) r.stop();
        });
        // Long after a's last look at its commands, so that its send looks at them (libzmq
        // throttles that to once a millisecond): b's message is announced and taken there.
        auto send_both = [&] {
            b.send(zmq::str_buffer("to a"), zmq::send_flags::none);
            a.send(zmq::str_buffer("to b"), zmq::send_flags::none);
        };
        r.after(20ms, [&] {
            if (posted)
                r.post(send_both);
            else
                send_both();
        });
        bool late = false;  // seen only when the deadline woke the loop
        r.after(5s, [&] { late = true, r.stop(); });
        r.run();
        BOOST_TEST((got == 1 && !late),
                   "sent " << (posted ? "by a posted callback" : "by a timer"));
    }
}

// Watching sockets and descriptors with nothing to read, the loop sleeps until its timer.
BOOST_AUTO_TEST_CASE(an_idle_reactor_sleeps) {
    zmq::context_t ctx;
    zmq::socket_t a(ctx, zmq::socket_type::pair);
    a.bind("inproc://reactor-idle");
    int p[2];
    BOOST_REQUIRE(::pipe(p) == 0);
    Reactor r;
    r.watch(a, [] {});
    r.watch_fd(p[0], [] {});
    r.after(300ms, [&] { r.stop(); });
    timespec t0{}, t1{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    r.run();
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    r.unwatch_fd(p[0]);
    ::close(p[0]);
    ::close(p[1]);
    const double cpu_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    BOOST_TEST(cpu_ms < 100.0);  // a busy loop spends the whole 300 ms
}
