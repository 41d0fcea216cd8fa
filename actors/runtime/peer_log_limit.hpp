#pragma once
// PeerLogLimit: how much of the broker's log one peer can cause. Every line a peer's message or
// connection triggers (a refused or malformed message, a refused Hello, a connection turned away
// at the ipc socket) goes through the broker's one limiter, keyed by who the peer is as the kernel
// or libzmq vouch for it (peer_key: its pid on ipc, its address on tcp), not by its connection,
// which it can open anew at will. At most `lines` such lines every `interval` per peer; the next
// line it may cause ends with " (M more suppressed)", and sweep() (every interval, from the
// broker) says how many were left out of a peer that fell silent.
//
// Bounded: all peers together get at most `overall` lines an interval (many peers, or one under
// many pids), and at most `max_peers` are counted apart, the others together as "other peers".
// Thread-safe: actors on several reactors log through it. Refusals that concern no known peer (tcp
// handshakes, TcpGate) have their own LogThrottle.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <spdlog/logger.h>

#include "actors/runtime/envelope.hpp"

namespace zpmix {

class PeerLogLimit {
  public:
    using Clock = std::chrono::steady_clock;
    struct Settings {
        unsigned lines = 10;     // per peer and interval
        unsigned overall = 200;  // all peers together, per interval
        Clock::duration interval = std::chrono::seconds(10);
        std::size_t max_peers = 4096;
    };

    PeerLogLimit() = default;
    explicit PeerLogLimit(Settings s) : s_(s) {}
    void configure(Settings s);
    Clock::duration interval() const;

    // Whether a line `peer` caused may be logged now; if so, `suppressed` is how many of its lines
    // were left out since its last one.
    bool allow(std::string_view peer, std::uint64_t &suppressed);
    // For each peer whose interval is over and that has lines left out since its last line, a line
    // saying how many; forgets peers quiet for an interval.
    void sweep(spdlog::logger &log);
    // " (M more suppressed)", or nothing when none were.
    static std::string suffix(std::uint64_t suppressed);

  private:
    struct Count {
        Clock::time_point since;  // the start of its interval
        unsigned logged = 0;      // lines in this interval
        std::uint64_t suppressed = 0;
    };
    mutable std::mutex mu_;
    Settings s_;
    std::unordered_map<std::string, Count> peers_;
    Count all_;  // every peer's lines in the current interval
};

// Who a peer is, for PeerLogLimit: "pid N" over ipc (the kernel's; "pid 0" is every process outside
// the broker's pid namespace), "tcp ADDRESS" over tcp, else its routing id in hex (an actor, or a
// broker over the tree).
std::string peer_key(const PeerCredentials &cred, std::string_view routing_id);

}  // namespace zpmix
