#pragma once
// A launcher-role peer of a broker, as `zpmix run` is to it: one DEALER, a Hello answered by a
// Welcome, then messages sent and received with deadlines. The tests that drive the broker's
// launcher directly (events, wire-up) start their jobs through it. Needs the zpmix libraries
// (link zpmix_broker or zpmix_runtime).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <zmq.hpp>

#include "actors/protocol/job.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/envelope.hpp"

namespace zpmix::test {

class LauncherPeer {
  public:
    // Connects (ZeroMQ retries until the broker listens) and says hello; fails the test without
    // a Welcome within 10 s.
    explicit LauncherPeer(const std::string &uri) {
        s_.set(zmq::sockopt::linger, 0);
        s_.connect(uri);
        msg::Hello h;
        h.role = "launcher";
        h.pid = ::getpid();
        send(h);
        auto env = recv(std::chrono::seconds(10));
        BOOST_REQUIRE_MESSAGE(env, "no Welcome from the broker at " + uri);
        BOOST_REQUIRE_EQUAL(env->type, msg::Welcome::type);
    }
    LauncherPeer(const LauncherPeer &) = delete;
    LauncherPeer &operator=(const LauncherPeer &) = delete;

    // Sends m; the request id its reply will carry.
    template <class M>
    std::uint64_t send(const M &m) {
        s_.send(encode(M::type, next_id_, m), zmq::send_flags::none);
        return next_id_++;
    }
    // The next message, or nullopt after timeout. Output is acknowledged as it is received, as
    // `zpmix run` does once it has written it, so that the ranks never wait for this peer.
    std::optional<Envelope> recv(std::chrono::milliseconds timeout) {
        zmq::pollitem_t item{s_.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
        zmq::message_t m;
        (void)s_.recv(m);
        Envelope env = decode(m);
        if (env.type == msg::Output::type) {
            const auto out = env.as<msg::Output>();
            std::uint64_t &done = received_[{out.broker, out.nspace}];
            done += out.data.size();
            send(msg::OutputAck{out.nspace, out.broker, done});
        }
        return env;
    }

  private:
    zmq::context_t ctx_;
    zmq::socket_t s_{ctx_, zmq::socket_type::dealer};
    std::uint64_t next_id_ = 1;
    std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> received_;
};

}  // namespace zpmix::test
