#include "client/zmtp_connection.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "actors/protocol/rendezvous.hpp"
#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::client {

namespace {

using zmtp::kCommand;
using zmtp::kMore;
constexpr std::size_t kPiece = zmtp::kTcpFrameBytes;  // the most of a message one box carries

int ms_until(ZmtpConnection::Clock::time_point deadline) {
    // Rounded up: a wait that ends finds its deadline passed.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - ZmtpConnection::Clock::now());
    return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

bool wait_for(int fd, short events, ZmtpConnection::Clock::time_point deadline) {
    pollfd p{fd, events, 0};
    for (;;) {
        const int rc = ::poll(&p, 1, ms_until(deadline));
        if (rc > 0) return true;
        if (rc == 0) return false;
        if (errno != EINTR) return false;
    }
}

std::chrono::milliseconds write_timeout_from_env() {
    const char *v = std::getenv("ZPMIX_WRITE_TIMEOUT_MS");
    if (v == nullptr || *v == '\0') return ZmtpConnection::kDefaultWriteTimeout;
    char *end = nullptr;
    const unsigned long ms = std::strtoul(v, &end, 10);
    if (*end != '\0' || ms == 0) return ZmtpConnection::kDefaultWriteTimeout;
    return std::chrono::milliseconds(std::min<unsigned long>(ms, 1ul << 30));
}

int connect_to(const std::string &uri, ZmtpConnection::Clock::time_point deadline) {
    int fd = -1;
    int rc = -1;
    if (uri.starts_with("ipc://")) {
        const std::string path = uri.substr(6);
        sockaddr_un a{};
        if (path.size() >= sizeof a.sun_path) throw ZmtpError("ipc path too long: " + path);
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
        fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) throw ZmtpError(std::string("socket: ") + std::strerror(errno));
        rc = ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    } else if (uri.starts_with("tcp://")) {
        const std::string hostport = uri.substr(6);
        const auto colon = hostport.rfind(':');
        if (colon == std::string::npos) throw ZmtpError("no port in " + uri);
        std::string host = hostport.substr(0, colon);
        if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
        addrinfo hints{}, *res = nullptr;
        hints.ai_socktype = SOCK_STREAM;
        if (int e = ::getaddrinfo(host.c_str(), hostport.substr(colon + 1).c_str(), &hints, &res);
            e != 0)
            throw ZmtpError("cannot resolve " + uri + ": " + gai_strerror(e));
        fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0) {
            rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        ::freeaddrinfo(res);
        if (fd < 0) throw ZmtpError(std::string("socket: ") + std::strerror(errno));
    } else {
        throw ZmtpError("unsupported address " + uri);
    }
    if (rc != 0 && errno == EINPROGRESS) {
        int err = ETIMEDOUT;
        socklen_t len = sizeof err;
        if (wait_for(fd, POLLOUT, deadline)) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
    }
    if (rc != 0) {
        const int err = errno;
        ::close(fd);
        throw ZmtpError("cannot connect to " + uri + ": " + std::strerror(err), false, err);
    }
    // Before a byte is written: another user's process listening there gets nothing of ours.
    if (uri.starts_with("ipc://"))
        if (const std::string problem = ipc_peer_problem(fd); !problem.empty()) {
            ::close(fd);
            throw ZmtpError("refusing " + uri.substr(6) + ": " + problem, true);
        }
    return fd;
}

}  // namespace

class ZmtpConnection::Turn {
  public:
    // Waits for the turn until `deadline`; `wait` false: takes it only if it is free.
    Turn(ZmtpConnection &c, Clock::time_point deadline, bool wait = true) : c_(c) {
        std::unique_lock lock(c_.turn_mu_);
        held_ = wait ? c_.turn_free_.wait_until(lock, deadline, [this] { return !c_.writing_; })
                     : !c_.writing_;
        if (held_) c_.writing_ = true;
    }
    ~Turn() {
        if (!held_) return;
        {
            std::lock_guard lock(c_.turn_mu_);
            c_.writing_ = false;
        }
        c_.turn_free_.notify_one();
    }
    Turn(const Turn &) = delete;
    Turn &operator=(const Turn &) = delete;
    bool held() const { return held_; }

  private:
    ZmtpConnection &c_;
    bool held_ = false;
};

ZmtpConnection::ZmtpConnection(const std::string &uri, Role role, Clock::time_point deadline,
                               std::size_t max_message, bool pipeline,
                               const std::optional<CurveKeypair> &curve)
    : fd_(connect_to(uri, deadline)),
      max_message_(max_message),
      write_timeout_(write_timeout_from_env()),
      tcp_(uri.starts_with("tcp://")) {
    if (curve) {
        const auto pub = CurveKeypair::decode(curve->public_key);
        const auto sec = CurveKeypair::decode(curve->secret_key);
        if (!pub || !sec) {
            ::close(fd_);
            throw ZmtpError("the CURVE keys are not two 40-character Z85 keys");
        }
        curve_ = std::make_unique<CurveClient>(*pub, *pub, *sec);
    }
    try {
        send_handshake(role);
    } catch (const std::exception &e) {
        ::close(fd_);
        throw ZmtpError(e.what());
    }
    if (!curve_ && (role == Role::sub || pipeline)) return;
    if (!complete_handshake(deadline)) {
        ::close(fd_);
        // libzmq closes on a failed CURVE handshake without a word: say what it means.
        if (refused_ && refusal_.empty() && tcp_)
            refusal_ = curve_ ? "the CURVE handshake failed (not the broker's tcp keys?)"
                              : "tcp needs the broker's CURVE keys ($ZPMIX_TCP_KEYS)";
        throw ZmtpError(refused_ ? "the broker refused the connection" +
                                       (refusal_.empty() ? std::string() : ": " + refusal_)
                                 : "handshake failed",
                        refused_);
    }
}

bool ZmtpConnection::complete_handshake(Clock::time_point deadline) {
    while (!handshake_read()) {
        if (broken_ || !wait_readable(deadline) || !fill()) return false;
    }
    return true;
}

ZmtpConnection::~ZmtpConnection() {
    ::close(fd_);
}

void ZmtpConnection::send_handshake(Role role) {
    // Greeting, then READY with our socket type, which the broker's ROUTER/XPUB checks.
    // With CURVE: HELLO, and our READY's property goes in INITIATE (curve_handshake_read).
    char greeting[zmtp::kGreetingSize];
    zmtp::greeting(greeting, curve_ ? "CURVE" : "NULL");
    socket_type_ = role == Role::dealer ? "DEALER" : "SUB";
    const std::string ready = curve_ ? curve_->hello() : zmtp::ready(socket_type_);
    unsigned char h[zmtp::kMaxHeader];
    const std::size_t hlen = zmtp::put_header(h, kCommand, ready.size());
    iovec iov[3] = {
        {greeting, sizeof greeting}, {h, hlen}, {const_cast<char *>(ready.data()), ready.size()}};
    // Nothing else writes yet: a few bytes into an empty socket.
    Turn turn(*this, Clock::now() + write_timeout_);
    // A broker that turned us away may have closed before our half was written: what it sent
    // first (its half, an ERROR with the reason) is still to be read, so only writing ends here.
    if (write_all(iov, 3, Clock::now() + write_timeout_) != Write::ok) write_broken_ = true;
}

ZmtpConnection::Write ZmtpConnection::write_all(const iovec *iov_in, int n,
                                                Clock::time_point deadline) {
    if (write_broken_) return Write::lost;
    iovec small[8];
    std::vector<iovec> many;  // a message in many frames (tcp)
    iovec *iov = small;
    if (n <= 8) {
        std::memcpy(small, iov_in, sizeof(iovec) * static_cast<std::size_t>(n));
    } else {
        many.assign(iov_in, iov_in + n);
        iov = many.data();
    }
    iovec *cur = iov;
    bool partial = false;
    while (n > 0) {
        msghdr m{};
        m.msg_iov = cur;
        m.msg_iovlen = static_cast<std::size_t>(std::min(n, UIO_MAXIOV));
        const ssize_t sent = ::sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                // Backpressure from a busy broker, or a stopped one: wait for room until the
                // deadline; the broker's death ends the wait (POLLERR/POLLHUP).
                if (wait_for(fd_, POLLOUT, deadline)) continue;
                if (!partial) return Write::timeout;
                // The broker would read the next message as the rest of this one: no more
                // writes (the caller ends the stream).
                write_broken_ = true;
                return Write::timeout;
            }
            write_broken_ = true;
            return Write::lost;
        }
        partial = true;
        auto left = static_cast<std::size_t>(sent);
        while (n > 0 && left >= cur->iov_len) {
            left -= cur->iov_len;
            ++cur;
            --n;
        }
        if (n > 0) {
            cur->iov_base = static_cast<char *>(cur->iov_base) + left;
            cur->iov_len -= left;
        }
    }
    return Write::ok;
}

ZmtpConnection::Write ZmtpConnection::send(std::initializer_list<std::string_view> frames,
                                           Clock::time_point deadline) {
    if (frames.size() == 0 || frames.size() > 4) return Write::lost;
    if (curve_) {
        Turn turn(*this, deadline);
        if (!turn.held()) return write_broken_ ? Write::lost : Write::timeout;
        return write_sealed(frames, 0, deadline);
    }
    unsigned char headers[4][zmtp::kMaxHeader];
    iovec iov[8];
    int n = 0;
    std::size_t i = 0;
    for (auto f : frames) {
        const std::size_t hlen =
            zmtp::put_header(headers[i], i + 1 < frames.size() ? kMore : 0, f.size());
        iov[n++] = {headers[i], hlen};
        if (!f.empty()) iov[n++] = {const_cast<char *>(f.data()), f.size()};
        ++i;
    }
    // Behind a writer stuck on a full buffer, wait no longer than our own deadline.
    Turn turn(*this, deadline);
    if (!turn.held()) return write_broken_ ? Write::lost : Write::timeout;
    return write_all(iov, n, deadline);
}

bool ZmtpConnection::send(std::initializer_list<std::string_view> frames) {
    const Write w = send(frames, Clock::now() + write_timeout_);
    if (write_broken_) end();
    return w == Write::ok;
}

void ZmtpConnection::pong(std::string_view ping) {
    // PING: its TTL (2 bytes) and a context the PONG returns.
    std::string_view data;
    if (zmtp::command_name(ping, data) != "PING") return;
    command_if_idle(zmtp::command("PONG", data.size() > 2 ? data.substr(2) : ""));
}

void ZmtpConnection::ping() {
    command_if_idle(zmtp::command("PING", std::string_view("\0\0", 2)));  // TTL: none
}

ZmtpConnection::Write ZmtpConnection::write_sealed(std::initializer_list<std::string_view> frames,
                                                   unsigned char flags,
                                                   Clock::time_point deadline) {
    // A frame over kTcpFrameBytes goes as several, each its own box: the broker's libzmq takes
    // no larger frame (zmtp_wire.hpp), and rejoins them.
    std::size_t boxes = 0;
    for (auto f : frames) boxes += std::max<std::size_t>(1, (f.size() + kPiece - 1) / kPiece);
    std::vector<std::string> sealed(boxes);
    std::vector<std::array<unsigned char, zmtp::kMaxHeader>> headers(boxes);
    std::vector<iovec> iov;
    iov.reserve(2 * boxes);
    std::size_t b = 0, i = 0;
    for (auto f : frames) {
        const bool last_frame = ++i == frames.size();
        std::size_t at = 0;
        do {
            const std::string_view piece = f.substr(at, kPiece);
            at += piece.size();
            const bool more = !last_frame || at < f.size();
            sealed[b] = curve_->seal(flags | (more ? CurveClient::kMore : 0), piece);
            // A MESSAGE travels in a data frame; the frame's own flags are inside the box.
            iov.push_back(
                {headers[b].data(), zmtp::put_header(headers[b].data(), 0, sealed[b].size())});
            iov.push_back({sealed[b].data(), sealed[b].size()});
            ++b;
        } while (at < f.size());
    }
    return write_all(iov.data(), static_cast<int>(iov.size()), deadline);
}

bool ZmtpConnection::write_command(const std::string &body) {
    unsigned char h[zmtp::kMaxHeader];
    const std::size_t hlen = zmtp::put_header(h, kCommand, body.size());
    iovec iov[2] = {{h, hlen}, {const_cast<char *>(body.data()), body.size()}};
    Turn turn(*this, Clock::now() + write_timeout_);
    return turn.held() && write_all(iov, 2, Clock::now() + write_timeout_) == Write::ok;
}

void ZmtpConnection::command_if_idle(const std::string &body) {
    if (curve_) {
        Turn turn(*this, Clock::now(), false);
        if (turn.held() && wait_for(fd_, POLLOUT, Clock::now()))
            write_sealed({body}, CurveClient::kCommand, Clock::now() + write_timeout_);
        return;
    }
    unsigned char h[zmtp::kMaxHeader];
    const std::size_t hlen = zmtp::put_header(h, kCommand, body.size());
    iovec iov[2] = {{h, hlen}, {const_cast<char *>(body.data()), body.size()}};
    Turn turn(*this, Clock::now(), false);
    // Nor when the socket is full (the peer is not reading): the caller must not wait. When it
    // is writable, the kernel takes these few bytes whole.
    if (turn.held() && wait_for(fd_, POLLOUT, Clock::now()))
        write_all(iov, 2, Clock::now() + write_timeout_);
}

void ZmtpConnection::end() {
    ::shutdown(fd_, SHUT_RDWR);
}

bool ZmtpConnection::subscribe(std::string_view topic, bool on) {
    // libzmq drops a peer whose first message comes before the end of the handshake.
    if (!peer_ready_ && !complete_handshake(Clock::now() + std::chrono::seconds(10))) return false;
    // ZMTP 3.0: a subscription is a message whose first byte is 1 (subscribe) or 0 (cancel).
    std::string m(1, on ? '\1' : '\0');
    m += topic;
    return send({m});
}

bool ZmtpConnection::fill() {
    constexpr std::size_t kChunk = 65536;
    if (broken_) return false;
    opened_.clear();
    for (;;) {
        in_.reserve(kChunk);
        const std::size_t room = in_.room();
        const ssize_t got = ::recv(fd_, in_.tail(), room, MSG_DONTWAIT);
        if (got > 0) {
            in_.wrote(static_cast<std::size_t>(got));
            if (static_cast<std::size_t>(got) < room) return true;
            continue;
        }
        if (got == 0) {
            // Closed before the handshake ended: how libzmq turns away a ZMTP 3.0 peer.
            if (!peer_ready_) refused_ = true;
            return false;
        }
        if (errno == EINTR) continue;
        // A reset before the handshake ended: libzmq closed on our unread half (a refusal too).
        if (errno == ECONNRESET && !peer_ready_) refused_ = true;
        return errno == EAGAIN;
    }
}

bool ZmtpConnection::frame_at(std::size_t pos, Frame &f) {
    const auto h = zmtp::read_header(in_.data() + pos, in_.size() - pos);
    if (!h) return false;
    f = *h;
    if (f.size > max_message_) {
        broken_ = true;
        return false;
    }
    return in_.size() - pos - f.header >= f.size;
}

bool ZmtpConnection::handshake_read() {
    if (broken_) return false;
    if (!peer_greeted_) {
        if (in_.size() < zmtp::kGreetingSize) return false;
        if (!zmtp::greeting_ok(in_.data(), curve_ ? "CURVE" : "NULL")) {
            broken_ = true;  // not a ZMTP 3 peer with our mechanism
            // A ZMTP 3 broker with another mechanism (CURVE on tcp) will not serve us.
            if (zmtp::greeting_ok(in_.data(), curve_ ? "NULL" : "CURVE")) {
                refused_ = true;
                refusal_ = curve_ ? "the broker does not speak CURVE"
                                  : "tcp needs the broker's CURVE keys ($ZPMIX_TCP_KEYS)";
            }
            return false;
        }
        in_.consume(zmtp::kGreetingSize);
        peer_greeted_ = true;
    }
    if (peer_ready_) return true;
    if (curve_) return curve_handshake_read();
    // The handshake's end: a READY command, or ERROR when the broker refused us.
    Frame f;
    if (!frame_at(0, f)) return false;
    if (!(f.flags & kCommand)) broken_ = true;
    if (broken_) return false;
    const std::string_view cmd(in_.data() + f.header, f.size);
    in_.consume(f.header + f.size);
    peer_ready_ = cmd.starts_with("\x05READY");
    if (!peer_ready_) {
        std::string_view data;
        refused_ = zmtp::command_name(cmd, data) == "ERROR";
        // ERROR's data: one length byte, then the reason.
        if (refused_ && !data.empty())
            refusal_.assign(data.substr(1, static_cast<unsigned char>(data[0])));
        broken_ = true;
    }
    return peer_ready_;
}

bool ZmtpConnection::curve_handshake_read() {
    // WELCOME, to which we answer INITIATE; then READY, or ERROR when the broker refused us.
    for (;;) {
        Frame f;
        if (!frame_at(0, f)) return false;
        if (!(f.flags & kCommand)) {
            broken_ = true;
            return false;
        }
        const std::string_view cmd(in_.data() + f.header, f.size);
        std::string_view data;
        if (zmtp::command_name(cmd, data) == "ERROR") {
            refused_ = true;
            if (!data.empty()) refusal_.assign(data.substr(1, static_cast<unsigned char>(data[0])));
            broken_ = true;
            return false;
        }
        const bool ok = welcomed_ ? curve_->ready(cmd) : curve_->welcome(cmd);
        in_.consume(f.header + f.size);
        if (!ok) {
            refusal_ = welcomed_ ? "a READY not sealed by the broker's session key"
                                 : "a WELCOME not sealed by the broker's key";
            broken_ = true;
            return false;
        }
        if (welcomed_) return peer_ready_ = true;
        welcomed_ = true;
        const std::string initiate = curve_->initiate(zmtp::socket_type_property(socket_type_));
        if (initiate.empty() || !write_command(initiate)) {
            broken_ = true;
            return false;
        }
    }
}

bool ZmtpConnection::curve_next(std::vector<std::string_view> &frames) {
    for (;;) {
        Frame f;
        if (!frame_at(0, f)) return false;
        unsigned char flags = 0;
        std::string payload;
        // Anything but a MESSAGE sealed by the broker's session, in sequence, ends the stream.
        if (!curve_->open(std::string_view(in_.data() + f.header, f.size), flags, payload)) {
            broken_ = true;
            return false;
        }
        in_.consume(f.header + f.size);
        if (flags & CurveClient::kCommand) {
            if (partial_.empty()) pong(payload);
            continue;
        }
        partial_.push_back(std::move(payload));
        if (flags & CurveClient::kMore) continue;
        for (auto &p : partial_) {
            opened_.push_back(std::move(p));
            frames.emplace_back(opened_.back());
        }
        partial_.clear();
        return true;
    }
}

bool ZmtpConnection::next(std::vector<std::string_view> &frames) {
    frames.clear();
    if (!handshake_read()) return false;
    if (curve_) return curve_next(frames);
    std::size_t pos = 0;
    for (;;) {
        Frame f;
        if (!frame_at(pos, f)) return false;
        const std::string_view body(in_.data() + pos + f.header, f.size);
        pos += f.header + f.size;
        if (f.flags & kCommand) {
            // A PING from a libzmq peer with heartbeats on: answered once, when consumed (the
            // commands within a message are walked again until the message is complete).
            if (frames.empty()) {
                pong(body);
                in_.consume(pos);
                pos = 0;
            }
            continue;
        }
        frames.emplace_back(body);
        if (!(f.flags & kMore)) {
            in_.consume(pos);  // the bytes stay put until the next fill()
            return true;
        }
    }
}

bool ZmtpConnection::wait_readable(Clock::time_point deadline) const {
    return wait_for(fd_, POLLIN, deadline);
}

}  // namespace zpmix::client
