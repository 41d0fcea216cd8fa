#pragma once
// A client's end of one connection to its broker, speaking ZMTP 3.0 (the ZeroMQ wire protocol,
// NULL mechanism on ipc, CURVE on tcp: zmtp_curve.hpp) directly on the socket: to the broker it is
// an ordinary DEALER (on its ROUTER) or SUB (on its XPUB). Why not a libzmq socket: libzmq moves
// every message through its I/O thread, two extra thread wake-ups per message on each side. On a
// node where ranks outnumber cores those wake-ups are most of a fence's and an event's latency
// (docs/transport.md has the measurements). Here the calling thread writes to the kernel and the
// thread that waits for an answer reads it.
//
// Writes are thread-safe and bounded: a writer waits for the write lock and for room in the
// kernel's buffer only until its deadline (a stopped broker must not hang every sending thread).
// Reading is not thread-safe: one reader at a time (the Session arbitrates).
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/zmtp_buffer.hpp"
#include "actors/runtime/zmtp_curve.hpp"
#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::client {

// Handshake or address failures; `refused` when the broker turned the peer away; `error` the
// errno of a failed connect.
struct ZmtpError : std::runtime_error {
    bool refused = false;
    int error = 0;
    ZmtpError(const std::string &what, bool refused_ = false, int error_ = 0)
        : std::runtime_error(what), refused(refused_), error(error_) {}
    // The kernel would not let us open the socket (its mode, or a directory on its path): as
    // final as a refusal, unlike a socket not there yet (ENOENT) or not accepting (ECONNREFUSED),
    // which a broker being started is.
    bool denied() const { return error == EACCES || error == EPERM; }
};

class ZmtpConnection {
  public:
    enum class Role { dealer, sub };
    using Clock = std::chrono::steady_clock;
    // A write's outcome. `timeout`: the deadline passed; when part of the message was written
    // the connection takes no more writes (write_broken()), as the broker could not tell where
    // the next message begins, and its owner should end() it; else it is intact.
    enum class Write { ok, timeout, lost };
    // The deadline of writes that are given none: $ZPMIX_WRITE_TIMEOUT_MS (the launcher sets it
    // from the broker's client_write_timeout_ms), else this.
    static constexpr std::chrono::milliseconds kDefaultWriteTimeout{30000};

    // Connects to ipc://PATH or tcp://HOST:PORT and handshakes before `deadline`. A SUB only
    // sends its half: the broker's half is read before its first subscription (libzmq drops a
    // peer whose first message comes before the end of the handshake), so opening it costs
    // PMIx_Init no round trip. `pipeline`: a DEALER does the same, and its first message
    // follows its half at once; only for a broker that speaks ZMTP itself (ZmtpListener, ipc),
    // as libzmq's ROUTER with a ZAP handler (tcp) drops such a message. A refusal then
    // shows on the first read (refused()).
    // max_message bounds every incoming frame (a larger one ends the connection).
    // `curve`: the broker's keypair, to speak CURVE (tcp): the whole handshake is done here,
    // whatever the role; without it a broker on tcp turns us away.
    ZmtpConnection(const std::string &uri, Role role, Clock::time_point deadline,
                   std::size_t max_message, bool pipeline = false,
                   const std::optional<CurveKeypair> &curve = std::nullopt);
    ~ZmtpConnection();
    ZmtpConnection(const ZmtpConnection &) = delete;
    ZmtpConnection &operator=(const ZmtpConnection &) = delete;

    int fd() const { return fd_; }

    // Thread-safe: one message of the given frames, written before returning (waiting, until
    // the deadline, for the write lock and while the kernel's buffer is full).
    Write send(std::initializer_list<std::string_view> frames, Clock::time_point deadline);
    // The same within write_timeout(); false unless written (a write left half done ends the
    // stream).
    bool send(std::initializer_list<std::string_view> frames);
    std::chrono::milliseconds write_timeout() const { return write_timeout_; }
    // Thread-safe: a ZMTP PING, which keeps the connection alive at a libzmq peer with
    // heartbeats on (any traffic does), unless another thread is writing, which does as much.
    void ping();
    // SUB only, reader: (un)subscribes to a topic prefix (first ending the handshake).
    bool subscribe(std::string_view topic, bool on);

    // Reader: the next complete message already read, as frames (views into the read buffer,
    // valid until the next fill()); false when none is buffered.
    bool next(std::vector<std::string_view> &frames);
    // Reader: reads what the socket has without blocking. False when the connection is gone
    // (end of stream, error, a bad handshake, or a frame over the limit).
    bool fill();
    // The broker turned us away in the handshake (its ZAP handler refused the connection), and
    // the reason it gave, if any.
    bool refused() const { return refused_; }
    const std::string &refusal() const { return refusal_; }
    bool broken() const { return broken_; }
    bool write_broken() const { return write_broken_; }  // thread-safe
    // Thread-safe: ends the stream both ways; the reader then sees its end.
    void end();
    // Reader: waits until the socket is readable; false at the deadline.
    bool wait_readable(Clock::time_point deadline) const;

  private:
    int fd_ = -1;
    std::size_t max_message_;
    std::chrono::milliseconds write_timeout_;
    // The write turn, one writer at a time, waited for until a deadline (std::timed_mutex's
    // timed lock is pthread_mutex_clocklock, which ThreadSanitizer does not know).
    std::mutex turn_mu_;
    std::condition_variable turn_free_;
    bool writing_ = false;
    class Turn;                              // holds the write turn while it lives
    std::atomic<bool> write_broken_{false};  // a write stopped mid-message: the stream is over
    zmtp::ReadBuffer in_;                    // read and not yet consumed

    bool tcp_ = false;
    std::string socket_type_;             // DEALER or SUB
    std::unique_ptr<CurveClient> curve_;  // CURVE: the session's keys and nonces
    bool welcomed_ = false;               // CURVE: the server's WELCOME was read
    std::vector<std::string> partial_;    // CURVE: opened frames of a message still incomplete
    std::deque<std::string> opened_;      // CURVE: frames next() returned, kept until fill()

    bool peer_greeted_ = false;  // its greeting was read
    bool peer_ready_ = false;    // its READY was read: frames are messages from here on
    bool broken_ = false;        // a bad handshake or an oversized frame: the stream is over
    bool refused_ = false;
    std::string refusal_;  // the reason its ERROR command gave

    using Frame = zmtp::FrameHeader;
    // The frame starting at offset pos of the unconsumed bytes, if it is all in; a frame over
    // max_message breaks the stream.
    bool frame_at(std::size_t pos, Frame &f);
    void send_handshake(Role role);
    void pong(std::string_view ping);  // answers a PING command's body, if no one is writing
    // Writes a command unless another thread is writing or the socket is full.
    void command_if_idle(const std::string &body);
    bool handshake_read();        // consumes the broker's greeting and READY; true once both are in
    bool curve_handshake_read();  // the same with WELCOME, our INITIATE and an encrypted READY
    bool curve_next(std::vector<std::string_view> &frames);
    // Writes a command during the handshake (no one else writes yet).
    bool write_command(const std::string &body);
    // Seals each frame into a MESSAGE under the held write turn, then writes them.
    Write write_sealed(std::initializer_list<std::string_view> frames, unsigned char flags,
                       Clock::time_point deadline);
    bool complete_handshake(Clock::time_point deadline);  // reads until handshake_read()
    // Holds the write turn.
    Write write_all(const iovec *iov, int n, Clock::time_point deadline);
};

}  // namespace zpmix::client
