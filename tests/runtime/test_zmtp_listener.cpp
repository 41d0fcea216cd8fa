#define BOOST_TEST_MODULE zmtp_listener
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include <zmq.hpp>

#include "actors/client/zmtp_connection.hpp"
#include "actors/runtime/zmtp_listener.hpp"
#include "tests/support/log_capture.hpp"
#include "tests/support/process.hpp"

// The broker's own ROUTER and XPUB on a Unix socket, against libzmq's DEALER and SUB and against
// the client's ZmtpConnection: the listener must look like libzmq's sockets to both.
using namespace zpmix;
using namespace std::chrono_literals;
using zpmix::test::TempDir;

namespace {

// A listener on its reactor thread. Router kind: echoes each message back to its sender, with
// the frame count and the sender's pid prepended ("<frames>:<pid>:<first frame>").
struct Listening {
    TempDir dir;
    Reactor reactor;
    ZmtpListener listener;
    std::thread thread;
    std::promise<std::pair<bool, std::string>> subscription;  // publisher: the first one seen

    explicit Listening(ZmtpListener::Kind kind, std::size_t max_message = 1 << 20)
        : listener(reactor, {.path = dir.path + "/sock",
                             .kind = kind,
                             .uid = ::getuid(),
                             .max_message = max_message}) {
        listener.on_message([this](const std::string &peer,
                                   const std::vector<std::string_view> &frames,
                                   const PeerCredentials &cred) {
            listener.send(peer, std::to_string(frames.size()) + ":" + std::to_string(cred.pid) +
                                    ":" + std::string(frames.at(0)));
        });
        listener.on_subscription([this](bool on, std::string_view topic) {
            if (seen_subscriptions++ == 0) subscription.set_value({on, std::string(topic)});
        });
        listener.listen();
        thread = std::thread([this] { reactor.run(); });
    }
    ~Listening() {
        reactor.stop();
        thread.join();
        listener.close();
    }
    std::string uri() const { return "ipc://" + dir.path + "/sock"; }
    // Runs fn on the reactor's thread and waits for it.
    template <class F>
    auto on_loop(F fn) {
        std::packaged_task<decltype(fn())()> task(std::move(fn));
        auto f = task.get_future();
        reactor.post([&task] { task(); });
        return f.get();
    }
    int seen_subscriptions = 0;
};

std::optional<std::string> recv_for(zmq::socket_t &s, std::chrono::milliseconds wait) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
    zmq::message_t m;
    if (!s.recv(m)) return std::nullopt;
    return m.to_string();
}

// The client's connection: the next message's frames, waiting up to `wait`.
std::optional<std::vector<std::string>> next(client::ZmtpConnection &c,
                                             std::chrono::milliseconds wait) {
    const auto deadline = client::ZmtpConnection::Clock::now() + wait;
    std::vector<std::string_view> frames;
    while (!c.next(frames)) {
        if (!c.wait_readable(deadline) || !c.fill()) return std::nullopt;
    }
    return std::vector<std::string>(frames.begin(), frames.end());
}

// Whether the listener ends the connection before `wait` (not merely stays silent).
bool closed_within(client::ZmtpConnection &c, std::chrono::milliseconds wait) {
    const auto deadline = client::ZmtpConnection::Clock::now() + wait;
    std::vector<std::string_view> frames;
    for (;;) {
        while (c.next(frames)) {
        }
        if (!c.wait_readable(deadline)) return false;
        if (!c.fill()) return true;
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(libzmq_dealers_are_served_with_their_credentials) {
    Listening l(ZmtpListener::Kind::router);
    zmq::context_t ctx;
    zmq::socket_t a(ctx, zmq::socket_type::dealer), b(ctx, zmq::socket_type::dealer);
    a.connect(l.uri());
    b.connect(l.uri());
    a.send(zmq::str_buffer("from a"), zmq::send_flags::none);
    b.send(zmq::str_buffer("two"), zmq::send_flags::sndmore);
    b.send(zmq::str_buffer("frames"), zmq::send_flags::none);
    const std::string pid = std::to_string(::getpid());
    BOOST_TEST(recv_for(a, 5s).value_or("") == "1:" + pid + ":from a");
    BOOST_TEST(recv_for(b, 5s).value_or("") == "2:" + pid + ":two");
    BOOST_TEST(l.on_loop([&] { return l.listener.peers(); }) == 2u);
}

BOOST_AUTO_TEST_CASE(a_pipelined_client_and_large_messages) {
    Listening l(ZmtpListener::Kind::router, 8 << 20);
    // The request follows the handshake at once, before the listener has even accepted.
    client::ZmtpConnection c(l.uri(), client::ZmtpConnection::Role::dealer,
                             client::ZmtpConnection::Clock::now() + 5s, 8 << 20, true);
    BOOST_REQUIRE(c.send({"hello"}));
    const std::string big(3 << 20, 'x');  // several kernel buffers' worth, both ways
    BOOST_REQUIRE(c.send({big}));
    auto first = next(c, 5s);
    BOOST_REQUIRE(first.has_value());
    BOOST_TEST(first->at(0) == "1:" + std::to_string(::getpid()) + ":hello");
    auto second = next(c, 10s);
    BOOST_REQUIRE(second.has_value());
    BOOST_TEST(second->at(0).size() == big.size() + 2 + std::to_string(::getpid()).size() + 1);
    BOOST_TEST(second->at(0).ends_with("xxxx"));
}

BOOST_AUTO_TEST_CASE(bad_peers_are_closed_and_the_others_still_served) {
    auto log = zpmix::test::capture_log();
    Listening l(ZmtpListener::Kind::router, 1024);
    zmq::context_t ctx;
    zmq::socket_t good(ctx, zmq::socket_type::dealer);
    good.connect(l.uri());

    // Not ZMTP at all.
    int raw = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = l.dir.path + "/sock";
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    BOOST_REQUIRE(::connect(raw, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    const std::string junk(100, 'j');
    BOOST_REQUIRE(::write(raw, junk.data(), junk.size()) == 100);
    char buf[256];
    ssize_t n;
    while ((n = ::read(raw, buf, sizeof buf)) > 0) {  // our greeting and READY, then the end
    }
    BOOST_TEST(n == 0);
    ::close(raw);

    // A frame over the limit ends that connection only.
    client::ZmtpConnection huge(l.uri(), client::ZmtpConnection::Role::dealer,
                                client::ZmtpConnection::Clock::now() + 5s, 1 << 20, true);
    BOOST_REQUIRE(huge.send({std::string(2048, 'h')}));
    BOOST_TEST(closed_within(huge, 5s));
    BOOST_TEST(log->contains("over the limit of 1024"));

    // A SUB is not a ROUTER's peer: closed once its READY says so.
    client::ZmtpConnection sub(l.uri(), client::ZmtpConnection::Role::sub,
                               client::ZmtpConnection::Clock::now() + 5s, 1 << 20);
    BOOST_TEST(closed_within(sub, 5s));
    BOOST_TEST(log->contains("refused a SUB socket"));

    good.send(zmq::str_buffer("still here"), zmq::send_flags::none);
    BOOST_TEST(recv_for(good, 5s).value_or("").ends_with(":still here"));
}

BOOST_AUTO_TEST_CASE(heartbeats_of_a_libzmq_peer_are_answered) {
    Listening l(ZmtpListener::Kind::router);
    zmq::context_t ctx;
    zmq::socket_t d(ctx, zmq::socket_type::dealer);
    d.set(zmq::sockopt::heartbeat_ivl, 10);
    d.set(zmq::sockopt::heartbeat_timeout, 100);
    zmq::socket_t mon(ctx, zmq::socket_type::pair);
    BOOST_REQUIRE(zmq_socket_monitor(d.handle(), "inproc://mon", ZMQ_EVENT_DISCONNECTED) == 0);
    mon.connect("inproc://mon");
    d.connect(l.uri());
    d.send(zmq::str_buffer("ping"), zmq::send_flags::none);
    BOOST_REQUIRE(recv_for(d, 5s).has_value());
    // Unanswered PINGs would end the connection 100 ms after the first; 40 of them pass here.
    BOOST_TEST(!recv_for(mon, 400ms).has_value());
    d.send(zmq::str_buffer("pong"), zmq::send_flags::none);
    BOOST_TEST(recv_for(d, 5s).value_or("").ends_with(":pong"));
}

BOOST_AUTO_TEST_CASE(publisher_filters_by_prefix_and_reports_subscriptions) {
    Listening l(ZmtpListener::Kind::publisher);
    zmq::context_t ctx;
    zmq::socket_t s1(ctx, zmq::socket_type::sub), s2(ctx, zmq::socket_type::sub);
    s1.connect(l.uri());
    s2.connect(l.uri());
    s1.set(zmq::sockopt::subscribe, "ev/n/a/");
    auto first = l.subscription.get_future();
    BOOST_REQUIRE(first.wait_for(5s) == std::future_status::ready);
    const auto [on, topic] = first.get();
    BOOST_TEST(on);
    BOOST_TEST(topic == "ev/n/a/");
    s2.set(zmq::sockopt::subscribe, "ev/g/");
    s2.set(zmq::sockopt::subscribe, "sync/");
    // Publish only once both subscriptions are in: the last one names itself.
    zpmix::test::eventually([&] { return l.on_loop([&] { return l.seen_subscriptions; }) == 3; },
                            5s);
    l.on_loop([&] {
        l.listener.publish("ev/n/b/1", "not for anyone");
        l.listener.publish("ev/n/a/1", "for s1");
        l.listener.publish("ev/g/1", "for s2");
        return 0;
    });
    BOOST_TEST(recv_for(s1, 5s).value_or("") == "ev/n/a/1");
    BOOST_TEST(recv_for(s1, 5s).value_or("") == "for s1");
    BOOST_TEST(recv_for(s2, 5s).value_or("") == "ev/g/1");
    BOOST_TEST(recv_for(s2, 5s).value_or("") == "for s2");
    BOOST_TEST(!recv_for(s1, 50ms).has_value());

    // A subscriber's end cancels its subscriptions (the broker forgets its sync topics).
    s2.close();
    zpmix::test::eventually([&] { return l.on_loop([&] { return l.listener.peers(); }) == 1u; },
                            5s);
    BOOST_TEST(l.on_loop([&] { return l.seen_subscriptions; }) == 5);
}
