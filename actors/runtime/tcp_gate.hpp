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
// - Sheds and refused credentials (CURVE, ZAP) are logged at most 10 lines every 10 s
//   (LogThrottle); connections libzmq dropped before they authenticated (a frame over the limit,
//   a handshake left unfinished, a probe of the port) are counted in an info line every 10 s at
//   most.
// Limits: events arrive after the fact (libzmq's I/O thread accepts while the reactor catches
// up), so a burst can exceed the caps for as long as the monitor lags; descriptors are told apart
// by their socket's inode, so a descriptor reused meanwhile is never shut down by mistake unless
// it is another connection of the same listener. Authenticated peers are never shed.
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
    };
    struct Stats {
        std::size_t unauthenticated = 0;  // now
        std::uint64_t accepted = 0, shed = 0, refused_handshakes = 0;
    };

    TcpGate(Reactor &reactor, zmq::context_t &ctx, spdlog::logger &log, Settings settings);
    ~TcpGate();
    TcpGate(const TcpGate &) = delete;
    TcpGate &operator=(const TcpGate &) = delete;

    // Watches the connections of `socket` (a CURVE server on tcp) through a monitor; on the
    // reactor's thread, before it binds. The socket must outlive close().
    void watch(zmq::socket_t &socket);
    // A message came over the connection of descriptor `fd` (its ZMQ_SRCFD): it authenticated.
    void authenticated(int fd);
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
    };

    Reactor &reactor_;
    zmq::context_t &ctx_;
    spdlog::logger &log_;  // outlives the gate
    Settings s_;
    std::size_t ceiling_ = 0;  // an accepted descriptor this high eats the reserve
    std::vector<std::unique_ptr<Monitor>> monitors_;
    std::map<int, Conn> conns_;                   // by descriptor
    std::map<std::string, std::size_t> pending_;  // unauthenticated, by address
    std::size_t unauthenticated_ = 0;
    Stats stats_;
    Reactor::TimerId sweep_ = 0;
    std::uint64_t ended_unauthenticated_ = 0;  // since the last line that said how many
    Reactor::Clock::time_point ended_said_{};
    LogThrottle sheds_logged_, refusals_logged_;

    void on_events(std::size_t socket);
    void accepted(std::size_t socket, int fd);
    void gone(std::size_t socket, int fd);
    void refused(const std::string &why);
    void sweep();
    // Shuts the connection down (if its descriptor is still it) and forgets it.
    void shed(std::map<int, Conn>::iterator it, const std::string &why);
    void forget(std::map<int, Conn>::iterator it);
    std::map<int, Conn>::iterator oldest_unauthenticated();
};

}  // namespace zpmix
