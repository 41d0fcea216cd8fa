#define BOOST_TEST_MODULE tree_link_connection
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/reactor.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/link.hpp"
#include "actors/tree/link_connection.hpp"
#include "actors/tree/link_listener.hpp"

// The tree's own ZMTP/CURVE connections (actors/tree/link_connection.*, link_listener.*): both
// ends of ours, each end against libzmq's CURVE (a libzmq DEALER on our listener, our child on a
// libzmq ROUTER), and the bounds before and after authentication; and a TreeLink child whose
// parent's port turned its connection away trying again, or whose parent is not up yet holding
// what it sends up until it is.
using namespace zpmix;
using namespace zpmix::tree;
using namespace std::chrono_literals;

namespace {

struct Keys {
    CurveKeypair z85;
    CurveKey pub{}, sec{};
    Keys() : z85(CurveKeypair::generate()) {
        pub = *CurveKeypair::decode(z85.public_key);
        sec = *CurveKeypair::decode(z85.secret_key);
    }
};

spdlog::logger &quiet() {
    static auto log =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
    return *log;
}

// A reactor on a thread of its own; run() posts to it and waits for the result.
struct Loop {
    Reactor reactor;
    std::thread thread;
    Loop() : thread([this] { reactor.run(); }) {}
    ~Loop() {
        reactor.stop();
        thread.join();
    }
    template <class F>
    auto run(F f) -> decltype(f()) {
        std::packaged_task<decltype(f())()> task(std::move(f));
        auto result = task.get_future();
        reactor.post([&task] { task(); });
        return result.get();
    }
};

// What a callback saw, waited for from the test's thread.
struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::vector<std::string>> messages;
    std::vector<std::string> closed;
    bool ready = false;

    void message(const std::vector<std::string_view> &frames) {
        std::lock_guard l(mu);
        messages.emplace_back(frames.begin(), frames.end());
        cv.notify_all();
    }
    void close(const std::string &why) {
        std::lock_guard l(mu);
        closed.push_back(why);
        cv.notify_all();
    }
    void set_ready() {
        std::lock_guard l(mu);
        ready = true;
        cv.notify_all();
    }
    std::size_t count() {
        std::lock_guard l(mu);
        return messages.size();
    }
    bool is_ready() {
        std::lock_guard l(mu);
        return ready;
    }
    bool wait(const std::function<bool()> &pred, std::chrono::milliseconds limit = 10s) {
        std::unique_lock l(mu);
        return cv.wait_for(l, limit, pred);
    }
};

int connect_local(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    const int rc = ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa);
    BOOST_REQUIRE(rc == 0 || errno == EINPROGRESS);
    return fd;
}

// A port of 127.0.0.1 nothing listens on (the kernel's pick, released).
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    socklen_t len = sizeof sa;
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0);
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
    ::close(fd);
    return ntohs(sa.sin_port);
}

// A blocking socket to 127.0.0.1:port, for raw bytes.
int raw_connect(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0);
    return fd;
}

// Whether the peer closed `fd` within `limit` (reading and dropping what it sent).
bool closed_within(int fd, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return true;
    }
}

LinkConnection::Settings settings_for(const Keys &k, LinkConnection::Side side) {
    LinkConnection::Settings s;
    s.side = side;
    s.public_key = k.pub;
    s.secret_key = k.sec;
    s.peer_key = k.pub;
    s.handshake_timeout = 2000ms;
    s.write_timeout = 2000ms;
    return s;
}

struct Parent {
    Loop loop;
    Inbox inbox;
    std::unique_ptr<LinkListener> listener;
    std::atomic<LinkListener::Id> last{0};
    int port = 0;

    explicit Parent(const Keys &k,
                    const std::function<void(LinkListener::Settings &)> &tweak = {}) {
        LinkListener::Settings ls;
        ls.ip = "127.0.0.1";
        ls.connection = settings_for(k, LinkConnection::Side::parent);
        if (tweak) tweak(ls);
        port = loop.run([&] {
            listener = std::make_unique<LinkListener>(
                loop.reactor, ls,
                LinkListener::Callbacks{
                    .message =
                        [this](LinkListener::Id id, const std::vector<std::string_view> &f) {
                            last = id;
                            inbox.message(f);
                        },
                    .closed = [this](LinkListener::Id,
                                     const std::string &why) { inbox.close(why); }},
                quiet());
            return listener->listen();
        });
    }
    ~Parent() {
        loop.run([this] {
            listener->close_all(Reactor::Clock::now());
            listener.reset();
            return 0;
        });
    }
    LinkListener::Stats stats() {
        return loop.run([this] { return listener->stats(); });
    }
    // Whether the listener's counts come to satisfy `pred` within `limit` (a connection's end
    // reaches them on a later turn of the reactor than the one that saw it).
    bool stats_become(const std::function<bool(const LinkListener::Stats &)> &pred,
                      std::chrono::milliseconds limit = 5s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        for (;;) {
            if (pred(stats())) return true;
            if (std::chrono::steady_clock::now() >= deadline) return false;
            std::this_thread::sleep_for(1ms);
        }
    }
};

struct Child {
    Loop loop;
    Inbox inbox;
    std::unique_ptr<LinkConnection> link;

    Child(const Keys &k, int port, const CurveKey *server = nullptr) {
        auto s = settings_for(k, LinkConnection::Side::child);
        if (server) s.peer_key = *server;
        loop.run([&] {
            link = std::make_unique<LinkConnection>(
                loop.reactor, connect_local(port), "parent", s,
                LinkConnection::Callbacks{
                    .ready = [this] { inbox.set_ready(); },
                    .message = [this](const std::vector<std::string_view> &f) { inbox.message(f); },
                    .closed = [this](const std::string &why) { inbox.close(why); }},
                quiet());
            link->start();
            return 0;
        });
    }
    ~Child() {
        loop.run([this] {
            link.reset();
            return 0;
        });
    }
    bool send(std::vector<std::string> frames) {
        return loop.run([&] {
            std::vector<std::string_view> v(frames.begin(), frames.end());
            return link->send(v);
        });
    }
};

zmq::socket_t curve_dealer(zmq::context_t &ctx, const Keys &server, const Keys &client, int port) {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::curve_serverkey, server.z85.public_key);
    s.set(zmq::sockopt::curve_publickey, client.z85.public_key);
    s.set(zmq::sockopt::curve_secretkey, client.z85.secret_key);
    s.connect("tcp://127.0.0.1:" + std::to_string(port));
    return s;
}

std::vector<std::string> recv_all(zmq::socket_t &s, std::chrono::milliseconds limit) {
    std::vector<std::string> out;
    s.set(zmq::sockopt::rcvtimeo, static_cast<int>(limit.count()));
    zmq::message_t m;
    while (s.recv(m)) {
        out.push_back(m.to_string());
        if (!m.more()) break;
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ours_both_ends_in_order_and_in_pieces) {
    Keys k;
    Parent parent(k);
    Child child(k, parent.port);
    // Sent before the handshake ends: it waits for it.
    BOOST_REQUIRE(child.send({"hello"}));
    BOOST_REQUIRE(child.inbox.wait([&] { return child.inbox.ready; }));
    const std::string big(3 * zmtp::kTcpFrameBytes + 17, 'x');
    for (int i = 0; i < 100; ++i) BOOST_REQUIRE(child.send({"m", std::to_string(i)}));
    BOOST_REQUIRE(child.send({"big", big}));
    BOOST_REQUIRE(parent.inbox.wait([&] { return parent.inbox.messages.size() == 102; }));
    BOOST_TEST(parent.inbox.messages[0] == std::vector<std::string>{"hello"});
    for (int i = 0; i < 100; ++i) BOOST_TEST(parent.inbox.messages[1 + i][1] == std::to_string(i));
    // The payload came in pieces of kTcpFrameBytes, contiguous: rejoined, it is the whole.
    const auto &pieces = parent.inbox.messages[101];
    BOOST_TEST(pieces.size() == 5u);
    std::string joined;
    for (std::size_t i = 1; i < pieces.size(); ++i) joined += pieces[i];
    BOOST_TEST((joined == big));
    // And back down.
    const LinkListener::Id id = parent.last;
    BOOST_TEST(parent.loop.run([&] { return parent.listener->send(id, {"down", big}); }));
    BOOST_REQUIRE(child.inbox.wait([&] { return !child.inbox.messages.empty(); }));
    BOOST_TEST(child.inbox.messages[0][0] == "down");
    BOOST_TEST(parent.stats().authenticated == 1u);
}

BOOST_AUTO_TEST_CASE(libzmq_curve_client_on_our_server) {
    Keys k;
    Parent parent(k);
    zmq::context_t ctx;
    auto dealer = curve_dealer(ctx, k, k, parent.port);
    dealer.send(zmq::str_buffer("from"), zmq::send_flags::sndmore);
    dealer.send(zmq::str_buffer("libzmq"), zmq::send_flags::none);
    BOOST_REQUIRE(parent.inbox.wait([&] { return !parent.inbox.messages.empty(); }));
    BOOST_TEST((parent.inbox.messages[0] == std::vector<std::string>{"from", "libzmq"}));
    const LinkListener::Id id = parent.last;
    const std::string big(2 * zmtp::kTcpFrameBytes, 'y');
    BOOST_TEST(parent.loop.run([&] { return parent.listener->send(id, {"to", big}); }));
    const auto got = recv_all(dealer, 5s);
    BOOST_REQUIRE(got.size() == 3u);  // "to" and the payload's two pieces
    BOOST_TEST(got[0] == "to");
    BOOST_TEST((got[1] + got[2] == big));
}

BOOST_AUTO_TEST_CASE(libzmq_client_with_another_key_is_refused) {
    Keys k, other;
    Parent parent(k);
    zmq::context_t ctx;
    auto dealer = curve_dealer(ctx, k, other, parent.port);  // knows the server, not its key
    dealer.send(zmq::str_buffer("let me in"), zmq::send_flags::none);
    BOOST_TEST(recv_all(dealer, 500ms).empty());
    BOOST_TEST(parent.inbox.count() == 0u);
    BOOST_TEST(parent.stats().authenticated == 0u);
}

BOOST_AUTO_TEST_CASE(our_client_on_a_libzmq_curve_router) {
    Keys k;
    zmq::context_t ctx;
    zmq::socket_t router(ctx, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    router.set(zmq::sockopt::curve_server, 1);
    router.set(zmq::sockopt::curve_secretkey, k.z85.secret_key);
    router.bind("tcp://127.0.0.1:0");
    const std::string ep = router.get(zmq::sockopt::last_endpoint);
    Child child(k, std::stoi(ep.substr(ep.rfind(':') + 1)));
    const std::string big(zmtp::kTcpFrameBytes + 1, 'z');
    BOOST_REQUIRE(child.send({"up", big}));
    const auto got = recv_all(router, 5s);  // routing id, "up", two pieces
    BOOST_REQUIRE(got.size() == 4u);
    BOOST_TEST(got[1] == "up");
    BOOST_TEST((got[2] + got[3] == big));
    // Its ready callback runs on the child's reactor, maybe after the router got the message.
    BOOST_TEST(child.inbox.wait([&] { return child.inbox.ready; }));
    router.send(zmq::buffer(got[0]), zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("from"), zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("a router"), zmq::send_flags::none);
    BOOST_REQUIRE(child.inbox.wait([&] { return !child.inbox.messages.empty(); }));
    BOOST_TEST((child.inbox.messages[0] == std::vector<std::string>{"from", "a router"}));
}

BOOST_AUTO_TEST_CASE(our_client_refuses_a_server_of_another_key) {
    Keys k, other;
    Parent parent(other);
    Child child(k, parent.port, &k.pub);  // expects k's server; other's answers
    BOOST_REQUIRE(child.inbox.wait([&] { return !child.inbox.closed.empty(); }));
    BOOST_TEST(!child.inbox.is_ready());
}

BOOST_AUTO_TEST_CASE(a_frame_over_the_limit_before_authentication_is_refused_at_its_header) {
    Keys k;
    Parent parent(k);
    const int fd = raw_connect(parent.port);
    char g[zmtp::kGreetingSize];
    zmtp::greeting(g, "CURVE");
    std::string claim(g, sizeof g);
    claim += std::string("\x06\x00\x00\x00\x00\x03\xc0\x00\x00", 9);  // a 60 MiB command
    claim += std::string(4096, '\0');
    BOOST_REQUIRE(::send(fd, claim.data(), claim.size(), MSG_NOSIGNAL) > 0);
    BOOST_TEST(closed_within(fd, 2000ms));
    ::close(fd);
    BOOST_TEST(parent.stats_become([](const auto &st) { return st.unauthenticated == 0; }));
}

BOOST_AUTO_TEST_CASE(a_silent_connection_is_closed_at_the_handshake_deadline) {
    Keys k;
    Parent parent(k, [](LinkListener::Settings &ls) { ls.connection.handshake_timeout = 300ms; });
    const int fd = raw_connect(parent.port);
    const auto t0 = std::chrono::steady_clock::now();
    BOOST_TEST(closed_within(fd, 5000ms));
    BOOST_TEST((std::chrono::steady_clock::now() - t0 >= 250ms));
    ::close(fd);
}

BOOST_AUTO_TEST_CASE(unauthenticated_connections_are_capped_per_address_and_in_all) {
    Keys k;
    Parent parent(k, [](LinkListener::Settings &ls) {
        ls.max_per_address = 3;
        ls.max_unauthenticated = 4;
    });
    std::vector<int> fds;
    for (int i = 0; i < 6; ++i) fds.push_back(raw_connect(parent.port));
    // Three held, the rest closed (or left in the backlog): never more than the caps.
    int closed = 0;
    for (int fd : fds) closed += closed_within(fd, 300ms) ? 1 : 0;
    const auto st = parent.stats();
    BOOST_TEST(st.unauthenticated <= 3u);
    BOOST_TEST(closed >= 2);
    BOOST_TEST(st.refused >= 1u);
    for (int fd : fds) ::close(fd);
    // A broker of the allocation still gets in once they are gone.
    BOOST_REQUIRE(parent.stats_become([](const auto &st) { return st.unauthenticated == 0; }));
    Child child(k, parent.port);
    BOOST_TEST(child.inbox.wait([&] { return child.inbox.ready; }));
}

BOOST_AUTO_TEST_CASE(failed_handshakes_are_limited_per_address) {
    Keys k;
    Parent parent(k, [](LinkListener::Settings &ls) {
        ls.failures_burst = 3;
        ls.failures_per_minute = 0;  // never forgiven within the test
    });
    char g[zmtp::kGreetingSize];
    zmtp::greeting(g, "NULL");  // not CURVE: a failed handshake
    for (std::uint64_t i = 1; i <= 8; ++i) {
        const int fd = raw_connect(parent.port);
        ::send(fd, g, sizeof g, MSG_NOSIGNAL);  // may fail: closed at accept
        BOOST_TEST(closed_within(fd, 2000ms));
        ::close(fd);
        BOOST_REQUIRE(parent.stats_become(
            [&](const auto &st) { return st.failed_handshakes + st.rate_limited == i; }));
    }
    // Three went through their handshake; the rest were closed as they were accepted.
    const auto st = parent.stats();
    BOOST_TEST(st.failed_handshakes == 3u);
    BOOST_TEST(st.rate_limited == 5u);
}

BOOST_AUTO_TEST_CASE(a_peer_that_does_not_read_is_dropped_by_the_output_bound_or_deadline) {
    Keys k;
    Parent parent(k, [](LinkListener::Settings &ls) {
        ls.connection.max_output = 64 << 20;
        ls.connection.write_timeout = 300ms;
    });
    Child child(k, parent.port);
    BOOST_REQUIRE(child.send({"hello"}));
    BOOST_REQUIRE(parent.inbox.wait([&] { return !parent.inbox.messages.empty(); }));
    const LinkListener::Id id = parent.last;
    // The child's reactor stops reading: its thread waits here.
    std::promise<void> release;
    auto blocked = release.get_future().share();
    child.loop.reactor.post([blocked] { blocked.wait(); });
    const std::string chunk(1 << 20, 'o');
    const bool all_taken = parent.loop.run([&] {
        bool ok = true;
        for (int i = 0; i < 32 && ok; ++i) ok = parent.listener->send(id, {"fill", chunk});
        return ok;
    });
    BOOST_TEST(all_taken);  // 32 MiB queued, under the bound
    // No progress for write_timeout: the connection ends.
    BOOST_TEST(parent.inbox.wait([&] { return !parent.inbox.closed.empty(); }, 5s));
    release.set_value();
    // Over the bound: a second child that does not read, 100 MiB at once.
    Child other(k, parent.port);
    BOOST_REQUIRE(other.send({"hello"}));
    BOOST_REQUIRE(parent.inbox.wait([&] { return parent.inbox.messages.size() == 2; }));
    const LinkListener::Id id2 = parent.last;
    std::promise<void> release2;
    auto blocked2 = release2.get_future().share();
    other.loop.reactor.post([blocked2] { blocked2.wait(); });
    const bool kept = parent.loop.run([&] {
        bool ok = true;
        for (int i = 0; i < 100 && ok; ++i) ok = parent.listener->send(id2, {"fill", chunk});
        return ok;
    });
    BOOST_TEST(!kept);
    release2.set_value();
}

BOOST_AUTO_TEST_CASE(a_child_turned_away_before_its_handshake_tries_again) {
    Keys k;
    Parent parent(k, [](LinkListener::Settings &ls) { ls.max_per_address = 1; });
    // A connection from this address that never authenticates holds the address's only slot.
    const int holder = raw_connect(parent.port);
    BOOST_REQUIRE(parent.stats_become([](const auto &st) { return st.unauthenticated == 1; }));
    Reactor reactor;
    Bus bus;
    BrokerMap brokers("n1");
    LinkSettings ls;
    ls.rank = 1;
    ls.size = 2;
    ls.radix = 8;
    ls.parent = {"tcp://127.0.0.1:" + std::to_string(parent.port)};
    ls.node = "n1";
    ls.public_key = k.z85.public_key;
    ls.secret_key = k.z85.secret_key;
    std::atomic<bool> gone{false};
    TreeLink child(reactor, bus, ls, brokers, [&](bool) { gone = true; });
    child.open();  // its connection is turned away at once
    std::thread loop([&] { reactor.run(); });
    BOOST_TEST(parent.stats_become([](const auto &st) { return st.refused >= 1; }));
    ::close(holder);  // the slot frees: a later try gets in and says hello
    BOOST_TEST(parent.inbox.wait([&] { return !parent.inbox.messages.empty(); }));
    if (parent.inbox.count() > 0)
        BOOST_TEST(parent.inbox.messages[0][0].find("tree.hello") != std::string::npos);
    BOOST_TEST(!gone);
    reactor.post([&] {
        child.shutdown();
        reactor.stop();
    });
    loop.join();
}

BOOST_AUTO_TEST_CASE(what_a_child_sends_before_its_parent_is_up_waits_for_it) {
    Keys k;
    const int port = free_port();
    Reactor reactor;
    Bus bus;
    BrokerMap brokers("n1");
    LinkSettings ls;
    ls.rank = 1;
    ls.size = 2;
    ls.radix = 8;
    ls.standing = true;  // it tries its parent every second until the parent is up
    ls.parent = {"tcp://127.0.0.1:" + std::to_string(port)};
    ls.node = "n1";
    ls.boot.nodes = {"n0", "n1"};
    ls.public_key = k.z85.public_key;
    ls.secret_key = k.z85.secret_key;
    TreeLink child(reactor, bus, ls, brokers, [](bool) {});
    child.open();
    std::thread loop([&] { reactor.run(); });
    // For the root's link, while nothing listens there.
    bus.send("@0/tree", encode(msg::TreeBeat::type, 0, msg::TreeBeat{1}, "test"));
    Parent parent(k, [&](LinkListener::Settings &s) { s.port = port; });
    // Its hello, then what it sent meanwhile, in a hop.
    BOOST_TEST(parent.inbox.wait([&] { return parent.inbox.messages.size() >= 2; }, 10s));
    if (parent.inbox.count() >= 2) {
        const auto &hop = parent.inbox.messages[1];
        BOOST_TEST(parent.inbox.messages[0][0].find("tree.hello") != std::string::npos);
        BOOST_TEST(hop[0].find("tree.hop") != std::string::npos);
        BOOST_TEST((hop.size() >= 2 && hop[1].find("tree.beat") != std::string::npos));
    }
    reactor.post([&] {
        child.shutdown();
        reactor.stop();
    });
    loop.join();
}
