#pragma once
// LinkListener: a broker's tree port, where its children connect (LinkConnection, the parent's
// side). It accepts on the broker's reactor and bounds what peers that have not authenticated
// hold (docs/access.md, "tcp"):
// - a frame over LinkConnection::kHandshakeFrame before authentication is refused at its header,
//   and the handshake must end within the connection's `handshake_timeout`;
// - at most `max_per_address` unauthenticated connections from one address (one more is closed
//   at once, and accepting pauses for kRefusalPause: a peer reconnecting in a loop costs little)
//   and `max_unauthenticated` in all (accepting pauses until one authenticates or ends, so a
//   flood waits in the kernel's backlog rather than costing CPU);
// - an accepted descriptor at or above the reserve kept for local clients (the soft
//   RLIMIT_NOFILE less max(128, soft/4)), or none left, pauses accepting for kDescriptorPause;
// - failed handshakes (LinkConnection::handshake_failed: each cost Curve25519 work, and a
//   stranger with the wrong keys retries forever) are limited per address, `failures_burst` then
//   `failures_per_minute`: an address out of them has at most as many handshakes under way as it
//   may still fail, the rest closed as they are accepted (before a byte is read) with accepting
//   paused for kRefusalPause. No kernel filter as TcpGate has (libzmq's accept is out of its
//   reach; this one costs an accept and a close). At most kMaxBudgets addresses are remembered.
// Refusals are logged at most 10 lines every 10 s. Authenticated connections are never shed.
// Single-threaded: the reactor's.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "actors/runtime/log_throttle.hpp"
#include "actors/runtime/reactor.hpp"
#include "actors/tree/link_connection.hpp"

namespace zpmix::tree {

class LinkListener {
  public:
    using Id = std::uint64_t;
    static constexpr std::chrono::milliseconds kRefusalPause{20}, kDescriptorPause{100};
    static constexpr std::size_t kMaxBudgets = 1024;

    struct Settings {
        std::string ip = "0.0.0.0";
        int port = 0;  // 0: any free port
        std::size_t max_unauthenticated = 16, max_per_address = 8;
        std::size_t reserve = 0;  // descriptors kept for local clients: 0 for max(128, soft/4)
        // Failed handshakes from one address: this many at once, then these a minute.
        unsigned failures_burst = 16, failures_per_minute = 60;
        LinkConnection::Settings connection;  // its side is the parent's
    };
    struct Callbacks {
        // A message on an authenticated connection (frames as LinkConnection gives them).
        std::function<void(Id, const std::vector<std::string_view> &frames)> message;
        // An authenticated connection ended (after its last message).
        std::function<void(Id, const std::string &why)> closed;
    };
    struct Stats {
        std::size_t unauthenticated = 0, authenticated = 0;
        std::uint64_t accepted = 0, refused = 0, pauses = 0, ended_unauthenticated = 0;
        std::uint64_t failed_handshakes = 0, rate_limited = 0;
    };

    LinkListener(Reactor &reactor, Settings settings, Callbacks callbacks, spdlog::logger &log);
    ~LinkListener();
    LinkListener(const LinkListener &) = delete;
    LinkListener &operator=(const LinkListener &) = delete;

    // Binds and listens; throws std::runtime_error with why. The port it got.
    int listen();
    // A message to connection `id`; false when it is gone.
    bool send(Id id, const std::vector<std::string_view> &frames);
    void close(Id id, const std::string &why);
    // The connection's peer ("ip:port"), "" when gone.
    std::string peer(Id id) const;
    // The connection's peer's IP (what the log limit of a peer goes by), "" when gone.
    std::string address(Id id) const;
    // After the reactor stopped: offers every connection's output to the kernel until
    // `deadline`, then closes everything.
    void close_all(LinkConnection::Clock::time_point deadline);

    Stats stats() const;

  private:
    struct Conn {
        std::unique_ptr<LinkConnection> link;
        std::string address;  // the peer's IP, for the per-address cap
        bool authenticated = false;
    };
    // An address's failed handshakes, a token bucket: `room` failures it may have now.
    struct Budget {
        double room = 0;
        Reactor::Clock::time_point refilled;
    };

    Reactor &reactor_;
    Settings s_;
    Callbacks cb_;
    spdlog::logger &log_;
    int fd_ = -1;
    bool accepting_ = false;
    Reactor::TimerId pause_timer_ = 0;
    std::size_t ceiling_ = 0;  // an accepted descriptor this high eats the reserve
    Id next_id_ = 1;
    std::map<Id, Conn> conns_;
    std::map<std::string, std::size_t> pending_;  // unauthenticated, by address
    std::map<std::string, Budget> budgets_;       // addresses that failed, until forgiven
    std::size_t unauthenticated_ = 0;
    Stats stats_;
    LogThrottle refusals_, limits_logged_;

    void accept_peers();
    void resume();                                       // accepting again, if it paused
    void pause(std::chrono::milliseconds for_how_long);  // 0: until a slot frees
    void refused(const std::string &why);
    void authenticated(Id id);
    void ended(Id id, const std::string &why);
    // A failed handshake from `address`.
    void failed(const std::string &address);
    // The failures `address` may still have now (failures_burst if it has none on record).
    double room(const std::string &address);
};

}  // namespace zpmix::tree
