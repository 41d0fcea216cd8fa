#pragma once
// A client's end of one connection to its broker, speaking ZMTP 3.0 (the ZeroMQ wire protocol,
// NULL mechanism) directly on the socket: to the broker it is an ordinary DEALER (on its ROUTER)
// or SUB (on its XPUB). Why not a libzmq socket: libzmq moves every message through its I/O
// thread, two extra thread wake-ups per message on each side. On a node where ranks outnumber
// cores those wake-ups are most of a fence's and an event's latency (DEVELOPERS.md, "Client
// transport", has the measurements). Here the calling thread writes to the kernel and the thread
// that waits for an answer reads it.
//
// Writes are thread-safe. Reading is not: one reader at a time (the ClientActor arbitrates).
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::client {

// Handshake or address failures; `refused` when the broker turned the peer away.
struct ZmtpError : std::runtime_error {
    bool refused = false;
    ZmtpError(const std::string &what, bool refused_ = false)
        : std::runtime_error(what), refused(refused_) {}
};

class ZmtpConnection {
  public:
    enum class Role { dealer, sub };
    using Clock = std::chrono::steady_clock;

    // Connects to ipc://PATH or tcp://HOST:PORT and handshakes before `deadline`. A SUB only
    // sends its half: the broker's half is read before its first subscription (libzmq drops a
    // peer whose first message comes before the end of the handshake), so opening it costs
    // PMIx_Init no round trip. `pipeline`: a DEALER does the same, and its first message
    // follows its half at once; only for a broker that speaks ZMTP itself (ZmtpListener, ipc),
    // as libzmq's ROUTER with a ZAP handler (tcp) drops such a message. A refusal then
    // shows on the first read (refused()).
    // max_message bounds every incoming frame (a larger one ends the connection).
    ZmtpConnection(const std::string &uri, Role role, Clock::time_point deadline,
                   std::size_t max_message, bool pipeline = false);
    ~ZmtpConnection();
    ZmtpConnection(const ZmtpConnection &) = delete;
    ZmtpConnection &operator=(const ZmtpConnection &) = delete;

    int fd() const { return fd_; }

    // Thread-safe: one message of the given frames, written before returning (blocking while
    // the kernel's buffer is full). False once the connection is gone.
    bool send(std::initializer_list<std::string_view> frames);
    // SUB only, reader: (un)subscribes to a topic prefix (first ending the handshake).
    bool subscribe(std::string_view topic, bool on);

    // Reader: the next complete message already read, as frames (views into the read buffer,
    // valid until the next fill()); false when none is buffered.
    bool next(std::vector<std::string_view> &frames);
    // Reader: reads what the socket has without blocking. False when the connection is gone
    // (end of stream, error, a bad handshake, or a frame over the limit).
    bool fill();
    // The broker turned us away in the handshake (its ZAP handler refused the connection).
    bool refused() const { return refused_; }
    bool broken() const { return broken_; }
    // Reader: waits until the socket is readable; false at the deadline.
    bool wait_readable(Clock::time_point deadline) const;

  private:
    int fd_ = -1;
    std::size_t max_message_;
    std::mutex write_mu_;
    // Bytes read and not yet consumed: [in_pos_, in_end_) of in_ (grown, never zero-filled).
    std::unique_ptr<char[]> in_;
    std::size_t in_cap_ = 0, in_pos_ = 0, in_end_ = 0;

    bool peer_greeted_ = false;  // its greeting was read
    bool peer_ready_ = false;    // its READY was read: frames are messages from here on
    bool broken_ = false;        // a bad handshake or an oversized frame: the stream is over
    bool refused_ = false;

    using Frame = zmtp::FrameHeader;
    // The frame starting at pos, if it is all in; a frame over max_message breaks the stream.
    bool frame_at(std::size_t pos, Frame &f);
    void send_handshake(Role role);
    bool handshake_read();  // consumes the broker's greeting and READY; true once both are in
    bool complete_handshake(Clock::time_point deadline);  // reads until handshake_read()
    bool write_all(const iovec *iov, int n);
};

}  // namespace zpmix::client
