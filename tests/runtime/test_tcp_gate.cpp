#define BOOST_TEST_MODULE tcp_gate
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "actors/runtime/reactor.hpp"
#include "actors/runtime/tcp_gate.hpp"

using namespace zpmix;
using namespace std::chrono_literals;

namespace {

struct Keypair {
    std::string public_key, secret_key;
    Keypair() {
        char pub[41], sec[41];
        BOOST_REQUIRE(zmq_curve_keypair(pub, sec) == 0);
        public_key = pub;
        secret_key = sec;
    }
};

// A CURVE server on 127.0.0.1 (libzmq's ROUTER, no ZAP: any client key that knows the server's
// public key gets in) watched by a TcpGate, on a reactor thread of its own; every message it gets
// authenticates its connection, as the broker's does.
struct Server {
    Keypair keys;
    zmq::context_t ctx;
    Reactor reactor;
    std::shared_ptr<spdlog::logger> log = spdlog::default_logger()->clone("gate");
    std::unique_ptr<TcpGate> gate;
    zmq::socket_t router{ctx, zmq::socket_type::router};
    int port = 0;
    std::promise<void> got_message;
    bool said = false;
    std::thread thread;

    explicit Server(TcpGate::Settings s) {
        gate = std::make_unique<TcpGate>(reactor, ctx, *log, s);
        router.set(zmq::sockopt::linger, 0);
        router.set(zmq::sockopt::curve_server, 1);
        router.set(zmq::sockopt::curve_secretkey, keys.secret_key);
        router.set(zmq::sockopt::handshake_ivl, 2000);
        gate->watch(router);
        router.bind("tcp://127.0.0.1:*");
        const std::string ep = router.get(zmq::sockopt::last_endpoint);
        port = std::stoi(ep.substr(ep.rfind(':') + 1));
        reactor.watch(router, [this] {
            zmq::message_t id, body;
            while (router.recv(id, zmq::recv_flags::dontwait)) {
                (void)router.recv(body);
                if (const int fd = zmq_msg_get(body.handle(), ZMQ_SRCFD); fd >= 0)
                    gate->authenticated(fd);
                if (!std::exchange(said, true)) got_message.set_value();
            }
        });
        thread = std::thread([this] { reactor.run(); });
    }
    ~Server() {
        reactor.post([this] {
            gate->close();
            reactor.unwatch(router);
            reactor.stop();
        });
        thread.join();
    }
    TcpGate::Stats stats() {
        std::promise<TcpGate::Stats> p;
        reactor.post([&] { p.set_value(gate->stats()); });
        return p.get_future().get();
    }
};

// Whether a TCP connection from `source` to 127.0.0.1:port completes within `limit` (a dropped
// SYN leaves it pending: the kernel retries it only after a second).
bool connects(const char *source, int port, std::chrono::milliseconds limit) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&from), sizeof from) == 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) == 0;
    if (!ok && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int err = -1;
        socklen_t len = sizeof err;
        ok = ::poll(&p, 1, static_cast<int>(limit.count())) == 1 &&
             ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    ::close(fd);
    return ok;
}

template <class F>
bool within(std::chrono::milliseconds limit, F done) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

}  // namespace

// Clients retrying CURVE with a server key that is not the server's (each fails at its HELLO):
// after the address's 4 failures the kernel drops its new connections, for as long as it has no
// failure left (12 a minute: 5 s); a client of another address with the right key is served
// meanwhile, and the address is let in again once it may fail again.
BOOST_AUTO_TEST_CASE(an_address_that_keeps_failing_its_handshakes_is_dropped_by_the_kernel) {
    Server server({.failures_burst = 4, .failures_per_minute = 12});
    zmq::context_t ctx;
    const Keypair wrong, mine;
    std::vector<zmq::socket_t> strangers;
    for (int i = 0; i < 8; ++i) {
        zmq::socket_t s(ctx, zmq::socket_type::dealer);
        s.set(zmq::sockopt::linger, 0);
        s.set(zmq::sockopt::reconnect_ivl, 10);
        s.set(zmq::sockopt::curve_serverkey, wrong.public_key);
        s.set(zmq::sockopt::curve_publickey, mine.public_key);
        s.set(zmq::sockopt::curve_secretkey, mine.secret_key);
        s.connect("tcp://127.0.0.1:" + std::to_string(server.port));
        strangers.push_back(std::move(s));
    }
    BOOST_REQUIRE(within(10s, [&] { return server.stats().blocked == 1; }));
    // The handshakes it did: its budget, and those already under way when the budget ran out.
    const TcpGate::Stats blocked = server.stats();
    BOOST_TEST(blocked.failed_handshakes >= 4u);
    BOOST_TEST(blocked.failed_handshakes <= 4u + 8u);
    // For a second (its first SYN and no retry yet) no connection from there completes...
    BOOST_TEST(!connects("127.0.0.1", server.port, 900ms));
    // ...while one from another address with the right key is served.
    zmq::socket_t friendly(ctx, zmq::socket_type::dealer);
    friendly.set(zmq::sockopt::linger, 0);
    friendly.set(zmq::sockopt::curve_serverkey, server.keys.public_key);
    friendly.set(zmq::sockopt::curve_publickey, mine.public_key);
    friendly.set(zmq::sockopt::curve_secretkey, mine.secret_key);
    friendly.connect("tcp://127.0.0.2:0;127.0.0.1:" + std::to_string(server.port));
    friendly.send(zmq::str_buffer("hello"), zmq::send_flags::none);
    BOOST_TEST((server.got_message.get_future().wait_for(10s) == std::future_status::ready));
    // The strangers go on trying; few of their handshakes get to the server.
    std::this_thread::sleep_for(3s);
    BOOST_TEST(server.stats().failed_handshakes <= blocked.failed_handshakes + 8u);
    strangers.clear();
    // Once the address may fail again (5 s after its last failure), it is let in.
    BOOST_TEST(within(10s, [&] { return server.stats().blocked == 0; }));
    BOOST_TEST(connects("127.0.0.1", server.port, 2000ms));
}
