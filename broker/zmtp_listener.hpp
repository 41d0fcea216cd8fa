#pragma once
// The broker's end of its node-local sockets: a Unix socket on which the broker itself speaks
// ZMTP 3.0 (the ZeroMQ wire protocol, NULL mechanism) as a ROUTER (to DEALERs: clients, tools,
// `zpmix run`) or as an XPUB (to SUBs: event subscribers). Any ZeroMQ peer connects as it would
// to libzmq's sockets; our own clients speak ZMTP too (client/zmtp_connection.hpp).
//
// Why not libzmq's ROUTER and XPUB: libzmq moves every message through its I/O thread, two
// thread wake-ups per message on the broker's side, and on a node where ranks outnumber cores
// those wake-ups are most of a fence's and an event's latency. Here the reactor's thread reads
// and writes the kernel's sockets itself (docs/transport.md).
//
// Admission: the kernel's credentials of the connecting process (SO_PEERCRED); only the
// broker's own uid (and a host's clients' uid, `also_uid`) is let in, others get a ZMTP ERROR and
// are closed. What a peer's connections make it log is limited per process (PeerLogLimit): it may
// reconnect at will.
// Sending never blocks: output the kernel does not take is queued per peer, up to `max_output`
// bytes, beyond which the peer is disconnected (it is not reading). A router never drops a
// message for a slow peer: what may pile up for it is bounded by its senders (a job's output by
// the output window, docs/iof.md; answers by its requests). A publisher drops events beyond
// `sndhwm` messages for a subscriber (as libzmq's high-water mark does): they are numbered, and
// a subscriber that sees a gap asks for them again.
// Input is bounded per peer too: a message in progress (its frames, their headers, commands
// between them) may not exceed `max_message` (plus a little for headers and commands), nor have
// more than kMaxFrames frames; complete messages are handed on as they arrive.
// Single-threaded: every call is made on the reactor's thread.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/runtime/envelope.hpp"
#include "actors/runtime/peer_log_limit.hpp"
#include "actors/runtime/reactor.hpp"
#include "actors/runtime/topic_publisher.hpp"
#include "actors/runtime/zmtp_buffer.hpp"

namespace zpmix {

class ZmtpListener : public TopicPublisher {
  public:
    enum class Kind { router, publisher };
    struct Settings {
        std::string path;  // the Unix socket's path: made by listen(), removed by close()
        Kind kind = Kind::router;
        std::int64_t uid = 0;        // the uid admitted
        std::int64_t also_uid = -1;  // and this one (a host's clients' user), if set
        std::size_t max_message = std::size_t{64} << 20;  // a larger message ends the connection
        std::size_t sndhwm = 100000;  // a publisher's: messages queued for one subscriber beyond
                                      // which events to it drop
        std::size_t max_output = std::size_t{256}
                                 << 20;  // bytes queued for a peer: beyond, dropped
        // Connections at once; one more is turned away with a ZMTP ERROR saying so (0: no
        // limit but the process's file descriptors).
        std::size_t max_peers = 0;
        // Where lines about a peer (by its pid) are limited, the broker's for all its sockets
        // and actors; null: the listener's own.
        PeerLogLimit *peer_log = nullptr;
    };
    // A DEALER's message: `peer` is its routing id, `frames` are valid during the call only.
    using MessageFn =
        std::function<void(const std::string &peer, const std::vector<std::string_view> &frames,
                           const PeerCredentials &cred)>;
    // A SUB's (un)subscription to a topic prefix, as libzmq's XPUB reports them.
    using SubscriptionFn = TopicPublisher::SubscriptionFn;
    // A router peer's connection ended (after its last message).
    using DisconnectFn = std::function<void(const std::string &peer)>;
    enum class Sent { ok, gone, full };

    ZmtpListener(Reactor &reactor, Settings settings);
    ~ZmtpListener() override;  // close()
    ZmtpListener(const ZmtpListener &) = delete;
    ZmtpListener &operator=(const ZmtpListener &) = delete;

    // Binds and starts accepting (on the reactor once it runs). Throws std::system_error.
    void listen();
    // Offers what is queued to the kernel for at most `linger`, then closes every connection
    // and removes the socket's path. Idempotent; the reactor must be stopped or this its thread.
    void close(std::chrono::milliseconds linger = std::chrono::milliseconds(0));

    void on_message(MessageFn fn) { on_message_ = std::move(fn); }
    void on_subscription(SubscriptionFn fn) override { on_subscription_ = std::move(fn); }
    void on_disconnect(DisconnectFn fn) { on_disconnect_ = std::move(fn); }
    // Called when accepting fails for want of descriptors: it frees some (the broker sheds the
    // tcp peers that have not authenticated, TcpGate) and says how many are on their way; if
    // any, the connections wait a moment in the backlog instead of being turned away.
    void on_out_of_descriptors(std::function<std::size_t()> fn) {
        on_out_of_descriptors_ = std::move(fn);
    }

    // Router: one single-frame message to a peer.
    Sent send(const std::string &peer, std::string_view body);
    // Publisher: [topic][body] to every subscriber with a subscription that prefixes `topic`.
    // Returns how many of them lost it at their high-water mark.
    std::size_t publish(std::string_view topic, std::string_view body) override;

    static constexpr std::size_t kMaxFrames = 256;        // per message
    static constexpr std::size_t kInputSlack = 64 << 10;  // headers and commands in a message

    // Whether a routing id is of the kind this class hands out (libzmq's begin with a 0 byte).
    static bool is_routing_id(std::string_view id) { return id.size() == 5 && id[0] == '\x01'; }
    std::size_t peers() const { return peers_.size(); }
    const Settings &settings() const { return settings_; }

  private:
    struct Peer {
        int fd = -1;
        std::string id;
        PeerCredentials cred;
        zmtp::ReadBuffer in;  // read and not yet consumed: from the message in progress on
        // The message in progress, parsed this far (offsets into in.data()): where its next
        // frame starts, its frames' bodies, and their bytes.
        std::size_t scan = 0;
        std::vector<std::pair<std::size_t, std::size_t>> parts;
        std::size_t part_bytes = 0;
        bool greeted = false, ready = false, closing = false;
        std::deque<std::string> out;  // whole messages the kernel has not taken (front: partly)
        std::size_t out_pos = 0;      // bytes of out.front() already written
        std::size_t out_bytes = 0;    // bytes in out not yet written
        std::vector<std::string> subscriptions;  // publisher: a multiset, as libzmq counts them
    };

    Reactor &reactor_;
    Settings settings_;
    int listen_fd_ = -1;
    std::uint32_t next_id_ = 0;
    std::unordered_map<int, std::unique_ptr<Peer>> peers_;  // by fd
    std::unordered_map<std::string, Peer *> by_id_;
    bool reap_posted_ = false;
    MessageFn on_message_;
    SubscriptionFn on_subscription_;
    DisconnectFn on_disconnect_;
    std::function<std::size_t()> on_out_of_descriptors_;
    std::shared_ptr<spdlog::logger> log_;
    PeerLogLimit own_peer_log_;  // without settings_.peer_log

    // A line about peer p, within its limit.
    template <class... Args>
    void log_peer(const Peer &p, spdlog::level::level_enum level, fmt::format_string<Args...> f,
                  Args &&...args) {
        PeerLogLimit &limit = settings_.peer_log ? *settings_.peer_log : own_peer_log_;
        std::uint64_t suppressed = 0;
        if (!limit.allow(peer_key(p.cred, p.id), suppressed)) return;
        log_->log(level, "{}{}", fmt::format(f, std::forward<Args>(args)...),
                  PeerLogLimit::suffix(suppressed));
    }

    // Accepting without descriptors: a connection left in the backlog keeps the listening socket
    // readable, and the reactor would call again at once, forever (a core at 100% and a log line
    // each time). One descriptor is kept spare to accept such a connection and turn it away with
    // the reason; without it, accepting pauses for kAcceptPause.
    static constexpr std::chrono::milliseconds kAcceptPause{100};
    // When on_out_of_descriptors freed some: long enough for libzmq to close them.
    static constexpr std::chrono::milliseconds kShedPause{20};
    int spare_fd_ = -1;
    Reactor::TimerId accept_pause_ = 0;
    // Refusals are logged at most every 10 s, with the count since the last line.
    std::chrono::steady_clock::time_point refusal_logged_{};
    std::uint64_t refusals_unlogged_ = 0;

    void accept_peers();
    void out_of_descriptors(int err);
    void pause_accepting(std::chrono::milliseconds pause);
    void note_refusal(const std::string &why);
    void on_readable(Peer &p);
    void parse(Peer &p);
    bool handshake(Peer &p);  // true once the peer's greeting and READY are in
    void command(Peer &p, std::string_view body);
    void message(Peer &p, const std::vector<std::string_view> &frames);
    // Writes (or queues) one message of frames; false when the peer is gone.
    // `raw`: the bytes as they are, unframed (the greeting).
    Sent write(Peer &p, std::initializer_list<std::string_view> frames, bool command = false,
               bool raw = false);
    void flush(Peer &p);
    // Stops using a peer at once; closes and frees it on a later reactor turn (a handler or a
    // loop over the peers may be on it, and its fd must not be reused meanwhile).
    void drop(Peer &p, std::string_view why);
    void reap();
};

}  // namespace zpmix
