#include "actors/client/zmtp_connection.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::client {

namespace {

using zmtp::kCommand;
using zmtp::kMore;

int ms_until(ZmtpConnection::Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - ZmtpConnection::Clock::now());
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
        const std::string why = std::strerror(errno);
        ::close(fd);
        throw ZmtpError("cannot connect to " + uri + ": " + why);
    }
    return fd;
}

}  // namespace

ZmtpConnection::ZmtpConnection(const std::string &uri, Role role, Clock::time_point deadline,
                               std::size_t max_message, bool pipeline)
    : fd_(connect_to(uri, deadline)), max_message_(max_message) {
    send_handshake(role);
    if (role == Role::sub || pipeline) return;
    if (!complete_handshake(deadline)) {
        ::close(fd_);
        throw ZmtpError(refused_ ? "the broker refused the connection" : "handshake failed",
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
    char greeting[zmtp::kGreetingSize];
    zmtp::greeting(greeting);
    const std::string ready = zmtp::ready(role == Role::dealer ? "DEALER" : "SUB");
    unsigned char h[zmtp::kMaxHeader];
    const std::size_t hlen = zmtp::put_header(h, kCommand, ready.size());
    iovec iov[3] = {
        {greeting, sizeof greeting}, {h, hlen}, {const_cast<char *>(ready.data()), ready.size()}};
    std::lock_guard lock(write_mu_);
    if (!write_all(iov, 3)) broken_ = true;  // the first read reports it
}

bool ZmtpConnection::write_all(const iovec *iov_in, int n) {
    iovec iov[8];
    std::memcpy(iov, iov_in, sizeof(iovec) * static_cast<std::size_t>(n));
    iovec *cur = iov;
    while (n > 0) {
        msghdr m{};
        m.msg_iov = cur;
        m.msg_iovlen = static_cast<std::size_t>(n);
        const ssize_t sent = ::sendmsg(fd_, &m, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                // Backpressure from a busy broker; its death ends the wait (POLLERR/POLLHUP).
                pollfd p{fd_, POLLOUT, 0};
                if (::poll(&p, 1, -1) < 0 && errno != EINTR) return false;
                continue;
            }
            return false;
        }
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
    return true;
}

bool ZmtpConnection::send(std::initializer_list<std::string_view> frames) {
    if (frames.size() == 0 || frames.size() > 4) return false;
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
    std::lock_guard lock(write_mu_);
    return write_all(iov, n);
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
    for (;;) {
        if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
        if (in_cap_ - in_end_ < kChunk) {
            // Room for a chunk: move the unconsumed bytes to the front, or grow.
            const std::size_t used = in_end_ - in_pos_;
            const std::size_t cap = std::max(in_cap_, used + kChunk);
            std::unique_ptr<char[]> fresh(cap == in_cap_ ? nullptr : new char[cap]);
            char *to = fresh ? fresh.get() : in_.get();
            if (used > 0) std::memmove(to, in_.get() + in_pos_, used);
            if (fresh) in_ = std::move(fresh);
            in_cap_ = cap;
            in_pos_ = 0;
            in_end_ = used;
        }
        const ssize_t got = ::recv(fd_, in_.get() + in_end_, in_cap_ - in_end_, MSG_DONTWAIT);
        if (got > 0) {
            in_end_ += static_cast<std::size_t>(got);
            if (static_cast<std::size_t>(got) < kChunk) return true;
            continue;
        }
        if (got == 0) {
            // Closed before the handshake ended: how libzmq turns away a ZMTP 3.0 peer.
            if (!peer_ready_) refused_ = true;
            return false;
        }
        if (errno == EINTR) continue;
        return errno == EAGAIN;
    }
}

bool ZmtpConnection::frame_at(std::size_t pos, Frame &f) {
    const auto h = zmtp::read_header(in_.get() + pos, in_end_ - pos);
    if (!h) return false;
    f = *h;
    if (f.size > max_message_) {
        broken_ = true;
        return false;
    }
    return in_end_ - pos - f.header >= f.size;
}

bool ZmtpConnection::handshake_read() {
    if (broken_) return false;
    if (!peer_greeted_) {
        if (in_end_ - in_pos_ < zmtp::kGreetingSize) return false;
        if (!zmtp::greeting_ok(in_.get() + in_pos_)) {
            broken_ = true;  // not a ZMTP 3 peer with the NULL mechanism
            return false;
        }
        in_pos_ += zmtp::kGreetingSize;
        peer_greeted_ = true;
    }
    if (peer_ready_) return true;
    // The handshake's end: a READY command, or ERROR when the broker refused us.
    Frame f;
    if (!frame_at(in_pos_, f)) return false;
    if (!(f.flags & kCommand)) broken_ = true;
    if (broken_) return false;
    const std::string_view cmd(in_.get() + in_pos_ + f.header, f.size);
    in_pos_ += f.header + f.size;
    peer_ready_ = cmd.starts_with("\x05READY");
    if (!peer_ready_) {
        refused_ =
            cmd.starts_with(std::string_view("\x05"
                                             "ERROR"));
        broken_ = true;
    }
    return peer_ready_;
}

bool ZmtpConnection::next(std::vector<std::string_view> &frames) {
    frames.clear();
    if (!handshake_read()) return false;
    std::size_t pos = in_pos_;
    for (;;) {
        Frame f;
        if (!frame_at(pos, f)) return false;
        const std::string_view body(in_.get() + pos + f.header, f.size);
        pos += f.header + f.size;
        if (f.flags & kCommand) {  // PING and the like: nothing a client acts on
            if (frames.empty()) in_pos_ = pos;
            continue;
        }
        frames.emplace_back(body);
        if (!(f.flags & kMore)) {
            in_pos_ = pos;
            return true;
        }
    }
}

bool ZmtpConnection::wait_readable(Clock::time_point deadline) const {
    return wait_for(fd_, POLLIN, deadline);
}

}  // namespace zpmix::client
