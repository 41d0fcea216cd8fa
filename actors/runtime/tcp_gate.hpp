#pragma once
// TcpGate: bounds what peers that have not authenticated hold of a broker's tcp listeners (libzmq
// sockets with CURVE: the broker's ROUTER and events XPUB), in memory and in file descriptors.
// (The tree's port is the broker's own listener, actors/tree/link_listener.hpp, with the same
// bounds enforced before a byte is buffered.) libzmq accepts every connection and has no hook
// before the handshake, so the gate watches each socket's monitor and sheds connections with
// shutdown(2) (libzmq then reads their end and closes them itself; a descriptor is never closed
// under it).
//
// - A connection is unauthenticated from its ACCEPTED event until its first message (the owner
//   calls authenticated() with the message's ZMQ_SRCFD), or until it outlives the handshake's
//   time limit (ZMQ_HANDSHAKE_IVL, which the owner sets to `handshake_timeout`): libzmq drops an
//   unfinished handshake by then, so what is left finished it (an XPUB subscriber sends no
//   message that names its connection).
// - Unauthenticated connections are capped per address (`max_per_address`: the new one is shed)
//   and in total (`max_unauthenticated`: the oldest is shed, so that a slow one cannot hold out a
//   new one).
// - Descriptors: an accepted descriptor at or above the ceiling (the soft RLIMIT_NOFILE less a
//   reserve of max(128, soft/4) for local clients and the broker's own work) means the reserve
//   is being eaten: every unauthenticated connection is shed. So is it when libzmq fails to
//   accept for want of descriptors, or the owner says so (shed_all).
// - Failed handshakes are limited per address: a peer that fails CURVE (not the broker's public
//   key, not CURVE at all) or whose credentials the ZAP handler refuses (refused_credentials)
//   spends the CPU of a handshake each time (several Curve25519 operations), and a client retrying
//   with the wrong keys does so forever. Each address has `failures_burst` failures, then
//   `failures_per_minute`; an address out of them has at most as many handshakes under way as it
//   has failures left (the rest are shed as they are accepted), and its new connections are
//   dropped by the kernel before they are accepted (a classic BPF filter on the listening socket
//   of each watched socket, which drops their SYNs: the peer's kernel backs off by itself) until
//   it has one again. So strangers cost the broker a few handshakes a second, and its own
//   traffic (local clients, the tree, tcp peers that hold the keys) keeps the CPU. A handshake a
//   peer leaves or lets time out is not counted (the tree's children probe every address of
//   their parent and close what they do not use): the caps above bound those.
// - Sheds and refused credentials (CURVE, ZAP) are logged at most 10 lines every 10 s
//   (LogThrottle); connections libzmq dropped before they authenticated (a frame over the limit,
//   a handshake left unfinished, a probe of the port), failed handshakes and connections shed
//   for their address's failures are counted in an info line every 10 s at most.
// Limits: events arrive after the fact (libzmq's I/O thread accepts while the reactor catches
// up), so a burst can exceed the caps for as long as the monitor lags; descriptors are told apart
// by their socket's inode, so a descriptor reused meanwhile is never shut down by mistake unless
// it is another connection of the same listener. Authenticated peers are never shed. A failed
// CURVE handshake is told from the DISCONNECTED event that follows it at once, which holds with
// the context's one I/O thread. The kernel filter knows IPv4 addresses, at most kMaxFiltered of
// them (IPv6 ones and the rest are shed as they are accepted); a legitimate client behind the
// address of a stranger that keeps failing waits with it (a few seconds: SYN retries). A peer
// that abandons the handshake after the broker's WELCOME costs it one handshake uncounted.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <zmq.hpp>

#include "actors/runtime/log_throttle.hpp"
#include "actors/runtime/reactor.hpp"

namespace zpmix {

class TcpGate {
  public:
    struct Settings {
        std::string name = "tcp";  // in the log
        std::size_t max_unauthenticated = 256;
        std::size_t max_per_address = 128;
        std::chrono::milliseconds handshake_timeout{5000};
        // Descriptors kept from tcp peers that have not authenticated: 0 for max(128, soft/4).
        std::size_t reserve = 0;
        // Failed handshakes from one address: this many at once, then these a minute.
        unsigned failures_burst = 16;
        unsigned failures_per_minute = 60;
    };
    struct Stats {
        std::size_t unauthenticated = 0;  // now
        std::size_t blocked = 0;          // addresses the kernel drops now
        std::uint64_t accepted = 0, shed = 0, refused_handshakes = 0;
        std::uint64_t failed_handshakes = 0;  // counted against their address
        std::uint64_t rate_limited = 0;       // shed for their address's failures
    };
    static constexpr std::size_t kMaxFiltered = 256;  // addresses in the kernel's filter

    TcpGate(Reactor &reactor, zmq::context_t &ctx, spdlog::logger &log, Settings settings);
    ~TcpGate();
    TcpGate(const TcpGate &) = delete;
    TcpGate &operator=(const TcpGate &) = delete;

    // Watches the connections of `socket` (a CURVE server on tcp) through a monitor; on the
    // reactor's thread, before it binds. The socket must outlive close().
    void watch(zmq::socket_t &socket);
    // A message came over the connection of descriptor `fd` (its ZMQ_SRCFD): it authenticated.
    void authenticated(int fd);
    // The ZAP handler refused the credentials of a peer at `address` (its ZAP request's).
    void refused_credentials(const std::string &address);
    // Sheds every unauthenticated connection (the process is out of descriptors); how many.
    std::size_t shed_all(const std::string &why);
    // Stops watching: before the sockets close.
    void close();

    Stats stats() const;
    std::size_t ceiling() const { return ceiling_; }

  private:
    struct Conn {
        std::size_t socket = 0;  // index in monitors_
        ino_t inode = 0;
        std::string address;
        Reactor::Clock::time_point since;
        bool authenticated = false;
    };
    struct Monitor {
        zmq::socket_t *socket = nullptr;
        zmq::socket_t pair;
        int port = 0;  // the socket's, once bound
        // Its listening descriptor (libzmq's), found once a filter is needed; by its inode.
        int listener = -1;
        ino_t listener_inode = 0;
        bool after_failure = false;  // its last event was a failed handshake
    };
    // An address's failed handshakes, a token bucket: `room` failures it may have now.
    struct Budget {
        double room = 0;
        Reactor::Clock::time_point refilled;
        bool filtered = false;  // its SYNs are dropped by the kernel
    };

    Reactor &reactor_;
    zmq::context_t &ctx_;
    spdlog::logger &log_;  // outlives the gate
    Settings s_;
    std::size_t ceiling_ = 0;  // an accepted descriptor this high eats the reserve
    std::vector<std::unique_ptr<Monitor>> monitors_;
    std::map<int, Conn> conns_;                   // by descriptor
    std::map<std::string, std::size_t> pending_;  // unauthenticated, by address
    std::map<std::string, Budget> budgets_;       // addresses that failed, until forgiven
    std::size_t unauthenticated_ = 0;
    bool filter_failed_ = false;  // the kernel refused a filter: shed at accept only
    Stats stats_;
    Reactor::TimerId sweep_ = 0;
    std::uint64_t ended_unauthenticated_ = 0;  // since the last line that said how many
    Stats said_;                               // the counts as that line said them
    Reactor::Clock::time_point ended_said_{};
    LogThrottle sheds_logged_, refusals_logged_, limits_logged_;

    void on_events(std::size_t socket);
    void accepted(std::size_t socket, int fd);
    void gone(std::size_t socket, int fd, bool failed);
    // A failed handshake from `address`; its budget, refilled to now.
    void failed(const std::string &address);
    Budget &refilled(Budget &b, Reactor::Clock::time_point now) const;
    // The kernel's filters of every watched socket, to drop the addresses out of failures.
    void update_filters();
    int listener_of(Monitor &m);
    void refused(const std::string &why);
    void sweep();
    // Shuts the connection down (if its descriptor is still it) and forgets it.
    void shed(std::map<int, Conn>::iterator it, const std::string &why);
    void forget(std::map<int, Conn>::iterator it);
    std::map<int, Conn>::iterator oldest_unauthenticated();
};

}  // namespace zpmix
