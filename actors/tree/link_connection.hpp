#pragma once
// LinkConnection: one TCP connection between two brokers of a tree, read and written by the
// broker's reactor itself (no libzmq I/O thread between the kernel and the tree's actors). It
// speaks ZMTP 3.0 with CURVE (rfc.zeromq.org/spec/23 and 26; actors/runtime/zmtp_curve.hpp): the
// child's end is a DEALER and CURVE client, the parent's a ROUTER and CURVE server, so a libzmq
// peer on either end interoperates (tests/tree/test_link_connection.cpp). docs/tree.md, "The
// link".
//
// Invariants and limits:
// - Before the handshake ends nothing is delivered and no frame over kHandshakeFrame bytes is
//   read: a larger one is refused at its header. The handshake must end within
//   `handshake_timeout`. The parent's end admits only `peer_key` (the allocation's public key).
// - After it every frame is one MESSAGE box of at most zmtp::kTcpFrameBytes of payload
//   (kTcpFrameLimit on the wire; larger frames are refused at the header), and a message, all its
//   frames, at most `max_message` bytes; the sender cuts larger payloads in pieces (send()), and
//   the receiver gets a message's frames contiguous in one buffer, so the pieces are whole again.
// - Sending never blocks: what the kernel does not take is queued, at most `max_output` bytes
//   (beyond, the connection ends: the peer is not reading), and output that makes no progress for
//   `write_timeout` ends the connection too. What is sent before the handshake ends waits for it.
// - The owner learns of the end once (`closed`, on a later reactor turn), never from inside its
//   own call; it may destroy the connection from then on. Single-threaded: the reactor's.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/logger.h>

#include "actors/runtime/reactor.hpp"
#include "actors/runtime/zmtp_buffer.hpp"
#include "actors/runtime/zmtp_curve.hpp"

namespace zpmix::tree {

class LinkConnection {
  public:
    using Clock = Reactor::Clock;
    // child: this broker connected (DEALER, CURVE client); parent: it accepted (ROUTER, server).
    enum class Side { child, parent };
    // The largest frame taken before the handshake ends (an INITIATE with its metadata).
    static constexpr std::size_t kHandshakeFrame = CurveServer::kMaxInitiate;
    static constexpr std::size_t kMaxFrames = 4096;  // in one message
    // The reason `closed` gives when the peer closed the connection.
    static constexpr const char *kPeerClosed = "the peer closed the connection";

    struct Settings {
        Side side = Side::child;
        CurveKey public_key{}, secret_key{};  // ours: the allocation's keypair
        // child: the parent's long-term public key; parent: the only client key admitted.
        CurveKey peer_key{};
        std::size_t max_message = std::size_t{64} << 20;
        std::size_t max_output = std::size_t{256} << 20;
        std::chrono::milliseconds handshake_timeout{10000}, write_timeout{10000};
    };
    struct Callbacks {
        std::function<void()> ready;  // the handshake ended: messages flow both ways
        // One message's frames: views into one buffer, in order and contiguous, valid during the
        // call only.
        std::function<void(const std::vector<std::string_view> &frames)> message;
        std::function<void(const std::string &why)> closed;
    };

    // `fd`: a TCP socket, non-blocking; connected (the parent's side) or with its connect() in
    // progress (the child's); owned from here on. `peer` names it in the log ("ip:port").
    LinkConnection(Reactor &reactor, int fd, std::string peer, Settings settings,
                   Callbacks callbacks, spdlog::logger &log);
    ~LinkConnection();
    LinkConnection(const LinkConnection &) = delete;
    LinkConnection &operator=(const LinkConnection &) = delete;

    // Starts the handshake (on the reactor's thread, or before it runs).
    void start();
    // One message of these frames; each is cut in boxes of zmtp::kTcpFrameBytes, every piece
    // after the first frame's being one more frame to the receiver (which rejoins them). False
    // when the connection is over (or ends here: its output bound).
    bool send(std::initializer_list<std::string_view> frames);
    bool send(const std::vector<std::string_view> &frames);
    // Ends it (idempotent); `closed` follows on a later turn.
    void close(const std::string &why);
    // After the reactor stopped: offers what is queued to the kernel until `deadline`.
    void flush_until(Clock::time_point deadline);

    // Reads what the socket has and handles it: the reactor calls it when the socket is
    // readable (and the fuzzer, tests/fuzz/fuzz_link_connection.cpp, directly).
    void read_input();

    bool ready() const { return state_ == State::ready; }
    bool is_closed() const { return state_ == State::closed; }
    // The parent's side: the peer failed the handshake (not CURVE, not sealed for this tree's
    // key, a key not proven or not the allocation's), which cost this broker Curve25519 work.
    bool handshake_failed() const { return handshake_failed_; }
    const std::string &peer() const { return peer_; }
    std::size_t queued() const { return out_.size() - out_pos_; }

  private:
    enum class State { connecting, greeting, handshake, ready, closed };

    Reactor &reactor_;
    int fd_;
    std::string peer_;
    Settings s_;
    Callbacks cb_;
    spdlog::logger &log_;
    State state_;
    std::unique_ptr<CurveClient> client_;  // the child's side
    std::unique_ptr<CurveServer> server_;  // the parent's side
    bool welcomed_ = false;                // child: WELCOME read, INITIATE sent
    bool helloed_ = false;                 // parent: HELLO read, WELCOME sent
    bool handshake_failed_ = false;
    zmtp::ReadBuffer in_;
    std::string msg_;                                         // the message in progress, opened
    std::vector<std::pair<std::size_t, std::size_t>> parts_;  // its frames in msg_
    std::vector<std::string_view> views_;
    std::string out_;  // sealed and framed, not yet taken by the kernel
    std::size_t out_pos_ = 0;
    std::vector<std::vector<std::string>> early_;  // sent before the handshake ended
    std::size_t early_bytes_ = 0;
    bool want_write_ = false;
    Clock::time_point progress_;  // the last write that moved output along
    Reactor::TimerId handshake_timer_ = 0, stall_timer_ = 0;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for posted callbacks

    void connected();
    void parse();
    // One frame while handshaking; false when the connection ended.
    bool handshake(bool is_command, std::string_view body);
    void became_ready();
    bool on_message_frame(std::string_view body);
    bool seal_into_out(const std::vector<std::string_view> &frames);
    void put_command(std::string_view body);  // a clear command (greeting stage, ERROR)
    void put_raw(std::string_view bytes);
    void refuse(const std::string &reason);  // ERROR to the peer, then close
    void flush();
    void check_stall();
};

}  // namespace zpmix::tree
