#define BOOST_TEST_MODULE zmtp_listener
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include <zmq.hpp>

#include "actors/runtime/zmtp_buffer.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "broker/zmtp_listener.hpp"
#include "client/zmtp_connection.hpp"
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

    explicit Listening(ZmtpListener::Kind kind, std::size_t max_message = 1 << 20,
                       std::size_t max_output = std::size_t{256} << 20)
        : listener(reactor, {.path = dir.path + "/sock",
                             .kind = kind,
                             .uid = ::getuid(),
                             .max_message = max_message,
                             .max_output = max_output}) {
        listener.on_message([this](const std::string &peer,
                                   const std::vector<std::string_view> &frames,
                                   const PeerCredentials &cred) {
            last_peer = peer;
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
    std::string last_peer;  // the routing id of the last peer that sent (reactor thread)
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

// Reads `total` bytes into b in pieces of `piece` (as the kernel hands a trickling peer's bytes
// over), consuming a message whenever `message` bytes are in; returns the bytes copied.
std::size_t read_through(zmtp::ReadBuffer &b, std::size_t total, std::size_t piece,
                         std::size_t message) {
    std::size_t in = 0;
    while (in < total) {
        b.reserve(65536);
        const std::size_t n = std::min({piece, b.room(), total - in});
        std::memset(b.tail(), 'x', n);
        b.wrote(n);
        in += n;
        while (b.size() >= message) b.consume(message);
    }
    return b.copied();
}

BOOST_AUTO_TEST_CASE(a_large_frame_is_read_with_linear_copies) {
    // 16 MiB in 4 KiB pieces: doubling copies less than the frame twice over (growing by one
    // read chunk at a time copied 2 GiB here).
    const std::size_t size = std::size_t{16} << 20;
    zmtp::ReadBuffer one;
    BOOST_TEST(read_through(one, size, 4096, size) <= 2 * size);
    BOOST_TEST(one.grows() <= 10u);  // 64 KiB doubled up to 16 MiB
    BOOST_TEST(one.capacity() <= 2 * size + 65536);
    // Many messages, a partial one always behind the complete ones: copies stay linear and the
    // buffer stays about the size of a message.
    zmtp::ReadBuffer many;
    BOOST_TEST(read_through(many, 64 * size, 65536 + 7, 100000) <= 2 * 64 * size);
    BOOST_TEST(many.capacity() <= 4 * (100000 + 65536 + 7) + 2 * 65536);
}

BOOST_AUTO_TEST_CASE(a_large_message_both_ways) {
    Listening l(ZmtpListener::Kind::router, 32 << 20);
    client::ZmtpConnection c(l.uri(), client::ZmtpConnection::Role::dealer,
                             client::ZmtpConnection::Clock::now() + 5s, 32 << 20, true);
    const std::string big(16 << 20, 'y');
    BOOST_REQUIRE(c.send({big}));
    auto echo = next(c, 60s);
    BOOST_REQUIRE(echo.has_value());
    BOOST_TEST(echo->at(0).size() == big.size() + 2 + std::to_string(::getpid()).size() + 1);
}

BOOST_AUTO_TEST_CASE(a_message_is_bounded_in_total_and_in_frames) {
    auto log = zpmix::test::capture_log();
    Listening l(ZmtpListener::Kind::router, 1024);
    // Frames each under the limit, over it together.
    client::ZmtpConnection parts(l.uri(), client::ZmtpConnection::Role::dealer,
                                 client::ZmtpConnection::Clock::now() + 5s, 1 << 20, true);
    const std::string part(400, 'p');
    BOOST_REQUIRE(parts.send({part, part, part}));
    BOOST_TEST(closed_within(parts, 5s));
    BOOST_TEST(log->contains("a message over the limit of 1024 bytes"));

    // Empty frames, more than a message may have.
    zmq::context_t ctx;
    zmq::socket_t many(ctx, zmq::socket_type::dealer);
    many.set(zmq::sockopt::linger, 0);
    many.connect(l.uri());
    for (std::size_t i = 0; i <= ZmtpListener::kMaxFrames; ++i)
        many.send(zmq::message_t(), zmq::send_flags::sndmore);
    many.send(zmq::str_buffer("last"), zmq::send_flags::none);
    BOOST_TEST(zpmix::test::eventually([&] { return log->contains("or 256 frames"); }, 10s));

    // The others are still served, a message of as many frames as allowed too.
    zmq::socket_t good(ctx, zmq::socket_type::dealer);
    good.connect(l.uri());
    for (std::size_t i = 1; i < ZmtpListener::kMaxFrames; ++i)
        good.send(zmq::str_buffer("f"), zmq::send_flags::sndmore);
    good.send(zmq::str_buffer("f"), zmq::send_flags::none);
    BOOST_TEST(recv_for(good, 5s).value_or("") == "256:" + std::to_string(::getpid()) + ":f");
}

BOOST_AUTO_TEST_CASE(a_peer_that_does_not_read_is_dropped_at_its_output_bound) {
    auto log = zpmix::test::capture_log();
    Listening l(ZmtpListener::Kind::router, 1 << 20, 1 << 20);
    client::ZmtpConnection idle(l.uri(), client::ZmtpConnection::Role::dealer,
                                client::ZmtpConnection::Clock::now() + 5s, 1 << 20, true);
    // Each request's echo is 64 KiB: 64 of them fill its socket and the 1 MiB bound; it never
    // reads. Fewer than the message high-water mark, so the bytes are what bounds it.
    const std::string request(64 << 10, 'r');
    for (int i = 0; i < 64 && idle.send({request}); ++i) {  // fails once it is dropped
    }
    BOOST_TEST(zpmix::test::eventually([&] { return log->contains("is not reading"); }, 10s));
    BOOST_TEST(zpmix::test::eventually(
        [&] { return l.on_loop([&] { return l.listener.peers(); }) == 0u; }, 10s));
    // Its end: the kernel's buffer it never read, then the end of the stream.
    pollfd p{idle.fd(), POLLRDHUP, 0};
    BOOST_TEST(::poll(&p, 1, 5000) == 1);
}

// A router never drops a message for a slow peer (its senders pace what they send): 200,000
// messages queued for a peer that reads none of them yet, twice libzmq's high-water mark, all
// arrive, in order.
BOOST_AUTO_TEST_CASE(a_router_queues_every_message_for_a_slow_peer) {
    Listening l(ZmtpListener::Kind::router);
    client::ZmtpConnection c(l.uri(), client::ZmtpConnection::Role::dealer,
                             client::ZmtpConnection::Clock::now() + 5s, 1 << 20, true);
    BOOST_REQUIRE(c.send({std::string("hi")}));
    BOOST_REQUIRE(next(c, 5s));
    constexpr int kMessages = 200000;
    const bool all_sent = l.on_loop([&] {
        for (int i = 0; i < kMessages; ++i)
            if (l.listener.send(l.last_peer, std::to_string(i)) != ZmtpListener::Sent::ok)
                return false;
        return true;
    });
    BOOST_TEST(all_sent);
    int in_order = 0;
    while (in_order < kMessages) {
        auto m = next(c, 10s);
        if (!m || m->at(0) != std::to_string(in_order)) break;
        ++in_order;
    }
    BOOST_TEST(in_order == kMessages);
}

BOOST_AUTO_TEST_CASE(the_client_connection_answers_pings) {
    // A libzmq ROUTER with heartbeats: it drops a peer that does not answer its PINGs.
    TempDir dir;
    zmq::context_t ctx;
    zmq::socket_t router(ctx, zmq::socket_type::router);
    router.set(zmq::sockopt::heartbeat_ivl, 10);
    router.set(zmq::sockopt::heartbeat_timeout, 100);
    zmq::socket_t mon(ctx, zmq::socket_type::pair);
    BOOST_REQUIRE(zmq_socket_monitor(router.handle(), "inproc://rmon", ZMQ_EVENT_DISCONNECTED) ==
                  0);
    mon.connect("inproc://rmon");
    const std::string uri = "ipc://" + dir.path + "/r.sock";
    router.bind(uri);
    client::ZmtpConnection c(uri, client::ZmtpConnection::Role::dealer,
                             client::ZmtpConnection::Clock::now() + 5s, 1 << 20);
    // Reading (and so answering PINGs) for 400 ms: 40 PINGs, none left unanswered.
    const auto until = client::ZmtpConnection::Clock::now() + 400ms;
    std::vector<std::string_view> frames;
    while (c.wait_readable(until)) {
        BOOST_REQUIRE(c.fill());
        while (c.next(frames)) {
        }
    }
    BOOST_TEST(!recv_for(mon, 10ms).has_value());
    BOOST_REQUIRE(c.send({"still here"}));
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    BOOST_REQUIRE(zmq::poll(&item, 1, 5s) == 1);
    zmq::message_t id, body;
    BOOST_REQUIRE(router.recv(id));
    BOOST_REQUIRE(router.recv(body));
    BOOST_TEST(body.to_string() == "still here");
    // Stop the monitor while `c` is connected: its disconnection at the end would otherwise queue
    // an event for `mon`, which libzmq leaks when `mon` closes unread (LeakSanitizer saw it).
    zmq_socket_monitor(router.handle(), nullptr, 0);
}

// Over max_peers, a connection is turned away with the reason in its ZMTP ERROR (the client's
// error says it); once one leaves, the next is served again.
BOOST_AUTO_TEST_CASE(connections_over_the_limit_are_refused_with_the_reason) {
    auto log = zpmix::test::capture_log();
    TempDir dir;
    Reactor reactor;
    ZmtpListener listener(reactor, {.path = dir.path + "/sock",
                                    .kind = ZmtpListener::Kind::router,
                                    .uid = ::getuid(),
                                    .max_peers = 2});
    listener.listen();
    std::thread thread([&] { reactor.run(); });
    const std::string uri = "ipc://" + dir.path + "/sock";
    auto connect = [&] {
        return std::make_unique<client::ZmtpConnection>(uri, client::ZmtpConnection::Role::dealer,
                                                        client::ZmtpConnection::Clock::now() + 5s,
                                                        1 << 20);
    };
    auto a = connect();
    auto b = connect();
    try {
        connect();
        BOOST_FAIL("a third connection was admitted");
    } catch (const client::ZmtpError &e) {
        BOOST_TEST(e.refused);
        BOOST_TEST(std::string(e.what()).find("too many connections") != std::string::npos,
                   e.what());
    }
    BOOST_TEST(log->contains("refusing connections"));
    a.reset();
    // The listener notices a's end on its own thread: retry until it did (bounded).
    std::unique_ptr<client::ZmtpConnection> c;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!c && std::chrono::steady_clock::now() < deadline) {
        try {
            c = connect();
        } catch (const client::ZmtpError &) {
        }
    }
    BOOST_TEST(c != nullptr);
    reactor.stop();
    thread.join();
    listener.close();
}

// Out of file descriptors, the listener neither spins nor stops: each waiting connection is
// accepted on the spare descriptor and turned away with the reason, and once descriptors are
// free again connections are served. The listener runs in a child process whose descriptor
// limit is lowered.
BOOST_AUTO_TEST_CASE(out_of_descriptors_connections_are_refused_and_service_resumes) {
    TempDir dir;
    const std::string path = dir.path + "/sock";
    int to_child[2], from_child[2];
    BOOST_REQUIRE(::pipe(to_child) == 0 && ::pipe(from_child) == 0);
    const pid_t pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {  // the listener: reports "L" once listening, frees descriptors on "f"
        ::close(to_child[1]);
        ::close(from_child[0]);
        Reactor reactor;
        ZmtpListener listener(
            reactor, {.path = path, .kind = ZmtpListener::Kind::router, .uid = ::getuid()});
        listener.listen();
        rlimit rl{};
        ::getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_cur, 256);
        ::setrlimit(RLIMIT_NOFILE, &rl);
        std::vector<int> hogs;  // every descriptor left: the next accept fails with EMFILE
        for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) hogs.push_back(fd);
        if (::write(from_child[1], "L", 1) != 1) ::_exit(2);
        reactor.watch_fd(to_child[0], [&] {
            char c = 0;
            if (::read(to_child[0], &c, 1) != 1 || c == 'q') return reactor.stop();
            for (int i = 0; i < 8 && !hogs.empty(); ++i) {
                ::close(hogs.back());
                hogs.pop_back();
            }
            (void)!::write(from_child[1], "F", 1);
        });
        reactor.run();
        listener.close();
        ::_exit(0);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    char c = 0;
    BOOST_REQUIRE(::read(from_child[0], &c, 1) == 1 && c == 'L');
    const std::string uri = "ipc://" + path;
    auto connect = [&] {
        return std::make_unique<client::ZmtpConnection>(uri, client::ZmtpConnection::Role::dealer,
                                                        client::ZmtpConnection::Clock::now() + 5s,
                                                        1 << 20);
    };
    for (int i = 0; i < 3; ++i) {
        try {
            connect();
            BOOST_FAIL("admitted without a descriptor to serve it");
        } catch (const client::ZmtpError &e) {
            BOOST_TEST(std::string(e.what()).find("out of file descriptors") != std::string::npos,
                       e.what());
        }
    }
    BOOST_REQUIRE(::write(to_child[1], "f", 1) == 1);
    BOOST_REQUIRE(::read(from_child[0], &c, 1) == 1 && c == 'F');
    std::unique_ptr<client::ZmtpConnection> ok;
    BOOST_CHECK_NO_THROW(ok = connect());
    BOOST_REQUIRE(::write(to_child[1], "q", 1) == 1);
    int status = 0;
    BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
    BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    ::close(to_child[1]);
    ::close(from_child[0]);
}
