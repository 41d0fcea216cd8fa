#pragma once
// Where the events actor publishes events and hears subscriptions: the broker's XPUB on ipc
// (ZmtpListener, its own ZMTP) and, when the broker serves tcp, a libzmq XPUB with CURVE
// (broker/tcp_publisher.hpp). Both on the events actor's reactor.
#include <cstddef>
#include <functional>
#include <string_view>

namespace zpmix {

class TopicPublisher {
  public:
    using SubscriptionFn = std::function<void(bool subscribe, std::string_view topic)>;
    virtual ~TopicPublisher() = default;
    // Sends [topic][body] to every subscriber of a prefix of topic; returns the copies dropped
    // for subscribers at their high-water mark (as far as the publisher can tell).
    virtual std::size_t publish(std::string_view topic, std::string_view body) = 0;
    virtual void on_subscription(SubscriptionFn fn) = 0;
};

}  // namespace zpmix
