#pragma once
// The broker's events over tcp: a libzmq XPUB with CURVE (the broker's tcp keypair, admitted by
// the broker's ZAP handler as its tcp ROUTER is), for tools and clients that reach the broker
// over tcp and so cannot subscribe to its ipc XPUB. The events actor publishes on it beside the
// ipc one and hears its subscriptions (the sync topics of registrations among them).
//
// Limits: libzmq drops a slow subscriber's events at the high-water mark without saying so
// (publish() counts none); their stream numbers show the gap and the library asks for the events
// again, as after any drop. A subscriber that stops answering heartbeats is dropped. Only
// subscriptions come in: no frame over zmtp::kTcpFrameLimit.
#include <string>

#include <zmq.hpp>

#include "actors/runtime/reactor.hpp"
#include "actors/runtime/topic_publisher.hpp"

namespace zpmix {

class TcpPublisher : public TopicPublisher {
  public:
    struct Settings {
        int sndhwm = 100000;  // messages per subscriber
        int heartbeat_ivl_ms = 5000, heartbeat_timeout_ms = 30000;
        int handshake_timeout_ms = 5000;  // ZMQ_HANDSHAKE_IVL
    };
    TcpPublisher(Reactor &reactor, zmq::context_t &ctx, Settings settings);

    // Binds on the host of `tcp` (the broker's "tcp://host:port"), on a port of its own, with
    // the CURVE secret key; returns the endpoint bound ("tcp://host:port"). Before the reactor
    // runs; throws zmq::error_t.
    std::string bind(const std::string &tcp, const std::string &secret_key);
    // After the reactor stopped.
    void close();
    // For a TcpGate to watch, before bind().
    zmq::socket_t &socket() { return xpub_; }

    std::size_t publish(std::string_view topic, std::string_view body) override;
    void on_subscription(SubscriptionFn fn) override { on_subscription_ = std::move(fn); }

  private:
    Reactor &reactor_;
    Settings settings_;
    zmq::socket_t xpub_;
    SubscriptionFn on_subscription_;

    void on_readable();  // (un)subscriptions: a bounded batch per wake-up
};

}  // namespace zpmix
