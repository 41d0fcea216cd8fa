#include "broker/zmtp_listener.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix {

namespace {

constexpr std::size_t kReadChunk = 65536;
constexpr std::size_t kReadPerWake = 4 * kReadChunk;  // then other peers get their turn
constexpr int kMaxIov = 64;

bool peer_type_ok(ZmtpListener::Kind kind, std::string_view type) {
    if (kind == ZmtpListener::Kind::router) return type == "DEALER";
    return type == "SUB" || type == "XSUB";
}

}  // namespace

ZmtpListener::ZmtpListener(Reactor &reactor, Settings settings)
    : reactor_(reactor),
      settings_(std::move(settings)),
      log_(spdlog::default_logger()->clone(settings_.kind == Kind::router ? "router" : "xpub")) {}

ZmtpListener::~ZmtpListener() {
    close();
}

void ZmtpListener::listen() {
    sockaddr_un a{};
    if (settings_.path.size() >= sizeof a.sun_path)
        throw std::runtime_error("ipc path too long: " + settings_.path);
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, settings_.path.c_str(), settings_.path.size() + 1);
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    ::unlink(settings_.path.c_str());  // a dead broker's: the caller made sure none is alive
    if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, SOMAXCONN) != 0) {
        const int e = errno;
        ::close(listen_fd_);
        listen_fd_ = -1;
        throw std::system_error(e, std::generic_category(), "bind " + settings_.path);
    }
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    reactor_.watch_fd(listen_fd_, [this] { accept_peers(); });
}

void ZmtpListener::close(std::chrono::milliseconds linger) {
    if (listen_fd_ < 0) return;
    const auto deadline = std::chrono::steady_clock::now() + linger;
    for (auto &[fd, p] : peers_) {
        while (!p->closing && !p->out.empty()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd pf{fd, POLLOUT, 0};
            if (left.count() <= 0 || ::poll(&pf, 1, static_cast<int>(left.count())) <= 0) break;
            flush(*p);  // may drop it: drop only marks it
        }
    }
    for (auto &[fd, p] : peers_) {
        reactor_.unwatch_fd(fd);
        ::close(fd);
    }
    peers_.clear();
    by_id_.clear();
    if (accept_pause_)
        reactor_.cancel(std::exchange(accept_pause_, 0));
    else
        reactor_.unwatch_fd(listen_fd_);
    ::close(listen_fd_);
    listen_fd_ = -1;
    if (spare_fd_ >= 0) ::close(std::exchange(spare_fd_, -1));
    ::unlink(settings_.path.c_str());
}

// --- connections -----------------------------------------------------------------------------

void ZmtpListener::accept_peers() {
    for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                return out_of_descriptors(errno);
            if (errno != EAGAIN) log_->error("accept on {}: {}", settings_.path, strerror(errno));
            return;
        }
        auto peer = std::make_unique<Peer>();
        Peer &p = *peer;
        p.fd = fd;
        ucred cred{};
        socklen_t len = sizeof cred;
        p.cred.ipc = true;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            p.cred.pid = cred.pid;
            p.cred.uid = cred.uid;
        }
        const std::uint32_t n = ++next_id_;
        p.id = {'\x01', static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                static_cast<char>(n >> 8), static_cast<char>(n)};
        peers_.emplace(fd, std::move(peer));
        by_id_.emplace(p.id, &p);
        reactor_.watch_fd(fd, [this, fd] {
            if (auto it = peers_.find(fd); it != peers_.end()) on_readable(*it->second);
        });
        // Our half of the handshake goes at once: the peer's may already be in the socket
        // (our own clients pipeline their first request behind it).
        char g[zmtp::kGreetingSize];
        zmtp::greeting(g);
        const bool own_uid = p.cred.uid == settings_.uid ||
                             (settings_.also_uid >= 0 && p.cred.uid == settings_.also_uid);
        const bool room = settings_.max_peers == 0 || peers_.size() <= settings_.max_peers;
        const std::string cmd =
            !own_uid ? zmtp::error("wrong uid")
            : !room  ? zmtp::error("too many connections")
                     : zmtp::ready(settings_.kind == Kind::router ? "ROUTER" : "XPUB");
        // A refusal is logged before it is sent: whoever sees it can find the line.
        if (!own_uid)
            log_peer(p, spdlog::level::warn,
                     "refused an ipc connection from uid {} pid {}: the broker serves uid {} only",
                     p.cred.uid, p.cred.pid, settings_.uid);
        else if (!room)
            note_refusal(fmt::format("{} connections, the limit ([broker] max_connections)",
                                     settings_.max_peers));
        if (write(p, {std::string_view(g, sizeof g)}, false, true) != Sent::ok) continue;
        if (write(p, {cmd}, true) != Sent::ok) continue;
        if (!own_uid || !room) drop(p, "");
    }
}

void ZmtpListener::out_of_descriptors(int err) {
    // Descriptors being freed (libzmq closes what TcpGate shut down as it reads the end): the
    // connections wait in the backlog a moment, rather than being turned away.
    if (on_out_of_descriptors_ && on_out_of_descriptors_() > 0) return pause_accepting(kShedPause);
    note_refusal(std::string("out of file descriptors: ") + strerror(err));
    if (spare_fd_ >= 0) {
        ::close(std::exchange(spare_fd_, -1));
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            // Our half of the handshake and the reason, if the socket takes them at once.
            char g[zmtp::kGreetingSize];
            zmtp::greeting(g);
            const std::string body = zmtp::error("the broker is out of file descriptors");
            unsigned char h[zmtp::kMaxHeader];
            const std::size_t hn = zmtp::put_header(h, zmtp::kCommand, body.size());
            iovec iov[3] = {{g, sizeof g}, {h, hn}, {const_cast<char *>(body.data()), body.size()}};
            msghdr m{};
            m.msg_iov = iov;
            m.msg_iovlen = 3;
            (void)::sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
            ::close(fd);
        }
        spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && spare_fd_ >= 0) return;  // called again while more connections wait
    }
    pause_accepting(kAcceptPause);
}

void ZmtpListener::pause_accepting(std::chrono::milliseconds pause) {
    reactor_.unwatch_fd(listen_fd_);
    accept_pause_ = reactor_.after(pause, [this] {
        accept_pause_ = 0;
        if (spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        reactor_.watch_fd(listen_fd_, [this] { accept_peers(); });
    });
}

void ZmtpListener::note_refusal(const std::string &why) {
    ++refusals_unlogged_;
    const auto now = std::chrono::steady_clock::now();
    if (now - refusal_logged_ < std::chrono::seconds(10)) return;
    log_->error("refusing connections on {}: {} ({} refused since the last such line)",
                settings_.path, why, refusals_unlogged_);
    refusal_logged_ = now;
    refusals_unlogged_ = 0;
}

void ZmtpListener::drop(Peer &p, std::string_view why) {
    if (p.closing) return;
    p.closing = true;
    if (!why.empty()) log_peer(p, spdlog::level::info, "peer pid {}: {}", p.cred.pid, why);
    reactor_.unwatch_fd(p.fd);
    ::shutdown(p.fd, SHUT_RDWR);
    by_id_.erase(p.id);
    // As libzmq's XPUB: a subscriber's subscriptions end with it.
    if (on_subscription_)
        for (const auto &s : p.subscriptions) on_subscription_(false, s);
    if (on_disconnect_ && p.ready) on_disconnect_(p.id);
    if (!std::exchange(reap_posted_, true)) reactor_.post([this] { reap(); });
}

void ZmtpListener::reap() {
    reap_posted_ = false;
    std::erase_if(peers_, [](const auto &kv) {
        if (kv.second->closing) ::close(kv.first);
        return kv.second->closing;
    });
}

void ZmtpListener::on_readable(Peer &p) {
    std::size_t got_total = 0;
    bool eof = false;
    while (got_total < kReadPerWake) {
        p.in.reserve(kReadChunk);
        const std::size_t want = std::min(p.in.room(), kReadPerWake);
        const ssize_t got = ::recv(p.fd, p.in.tail(), want, 0);
        if (got > 0) {
            p.in.wrote(static_cast<std::size_t>(got));
            got_total += static_cast<std::size_t>(got);
            if (static_cast<std::size_t>(got) < want) break;  // the socket is drained
            continue;
        }
        if (got == 0) {
            eof = true;
            break;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) eof = true;
        break;
    }
    parse(p);  // what a peer sent before it left still counts
    if (eof) drop(p, "");
}

bool ZmtpListener::handshake(Peer &p) {
    if (!p.greeted) {
        if (p.in.size() < zmtp::kGreetingSize) return false;
        if (!zmtp::greeting_ok(p.in.data())) {
            drop(p, "not a ZMTP 3 peer with the NULL mechanism");
            return false;
        }
        p.in.consume(zmtp::kGreetingSize);
        p.greeted = true;
    }
    if (p.ready) return true;
    const auto f = zmtp::read_header(p.in.data(), p.in.size());
    if (!f) return false;
    if (!(f->flags & zmtp::kCommand) || f->size > 4096) {
        drop(p, "no READY command after the greeting");
        return false;
    }
    if (p.in.size() - f->header < f->size) return false;
    std::string_view data;
    const std::string_view body(p.in.data() + f->header, f->size);
    const std::string_view name = zmtp::command_name(body, data);
    p.in.consume(f->header + f->size);  // the bytes stay put until the next read
    const auto type = name == "READY" ? zmtp::property(data, "Socket-Type") : std::nullopt;
    if (!type) {
        drop(p, "bad handshake");
        return false;
    }
    if (!peer_type_ok(settings_.kind, *type)) {
        log_peer(p, spdlog::level::warn, "refused a {} socket (pid {}) on {}", *type, p.cred.pid,
                 settings_.path);
        write(p, {zmtp::error("incompatible socket type")}, true);
        drop(p, "");
        return false;
    }
    p.ready = true;
    return true;
}

void ZmtpListener::parse(Peer &p) {
    std::vector<std::string_view> frames;
    while (!p.closing && handshake(p)) {
        // On from where the last read left the message in progress: each byte is walked once.
        const auto f = zmtp::read_header(p.in.data() + p.scan, p.in.size() - p.scan);
        if (!f) return;
        const bool cmd = f->flags & zmtp::kCommand;
        if (f->size > settings_.max_message) {
            log_peer(p, spdlog::level::warn,
                     "peer pid {} sent a frame of {} bytes, over the limit of {}", p.cred.pid,
                     f->size, settings_.max_message);
            drop(p, "closed: oversized frame");
            return;
        }
        if ((!cmd && p.part_bytes + f->size > settings_.max_message) ||
            p.scan + f->header + f->size > settings_.max_message + kInputSlack ||
            (!cmd && p.parts.size() == kMaxFrames)) {
            log_peer(p, spdlog::level::warn,
                     "peer pid {} sent a message over the limit of {} bytes or {} frames",
                     p.cred.pid, settings_.max_message, kMaxFrames);
            drop(p, "closed: oversized message");
            return;
        }
        if (p.in.size() - p.scan - f->header < f->size) return;
        const std::size_t body = p.scan + f->header;
        p.scan = body + f->size;
        if (cmd) {
            command(p, std::string_view(p.in.data() + body, f->size));
            if (p.closing) return;
            if (p.parts.empty()) {
                p.in.consume(p.scan);
                p.scan = 0;
            }
            continue;
        }
        p.parts.emplace_back(body, f->size);
        p.part_bytes += f->size;
        if (f->flags & zmtp::kMore) continue;
        frames.clear();
        for (const auto &[offset, size] : p.parts) frames.emplace_back(p.in.data() + offset, size);
        // Consumed before the handler runs: the bytes stay where they are until the next read.
        p.in.consume(p.scan);
        p.scan = 0;
        p.parts.clear();
        p.part_bytes = 0;
        message(p, frames);
    }
}

void ZmtpListener::command(Peer &p, std::string_view body) {
    std::string_view data;
    const std::string_view name = zmtp::command_name(body, data);
    if (name == "PING") {  // a peer with ZMQ_HEARTBEAT_IVL: answer with its context
        const std::string_view context = data.size() > 2 ? data.substr(2) : std::string_view{};
        write(p, {zmtp::command("PONG", context)}, true);
    } else if (name == "SUBSCRIBE" || name == "CANCEL") {  // ZMTP 3.1 peers
        const std::string as_message = (name == "SUBSCRIBE" ? '\1' : '\0') + std::string(data);
        message(p, {as_message});
    }
}

void ZmtpListener::message(Peer &p, const std::vector<std::string_view> &frames) {
    if (settings_.kind == Kind::router) {
        if (on_message_) on_message_(p.id, frames, p.cred);
        return;
    }
    // A subscriber's message is a subscription (first byte 1) or a cancellation (0).
    if (frames.size() != 1 || frames[0].empty() || static_cast<unsigned char>(frames[0][0]) > 1)
        return;
    const bool on = frames[0][0] == 1;
    const std::string_view topic = frames[0].substr(1);
    if (on) {
        p.subscriptions.emplace_back(topic);
    } else {
        auto it = std::find(p.subscriptions.begin(), p.subscriptions.end(), topic);
        if (it == p.subscriptions.end()) return;
        p.subscriptions.erase(it);
    }
    if (on_subscription_) on_subscription_(on, topic);
}

// --- output ----------------------------------------------------------------------------------

ZmtpListener::Sent ZmtpListener::send(const std::string &peer, std::string_view body) {
    auto it = by_id_.find(peer);
    if (it == by_id_.end() || !it->second->ready) return Sent::gone;
    return write(*it->second, {body});
}

std::size_t ZmtpListener::publish(std::string_view topic, std::string_view body) {
    std::size_t lost = 0;
    for (auto &[fd, p] : peers_) {
        if (!p->ready || p->closing) continue;
        const bool match = std::any_of(p->subscriptions.begin(), p->subscriptions.end(),
                                       [&](const std::string &s) { return topic.starts_with(s); });
        // A full or gone peer loses it (it sees the gap).
        if (match && write(*p, {topic, body}) == Sent::full) ++lost;
    }
    return lost;
}

ZmtpListener::Sent ZmtpListener::write(Peer &p, std::initializer_list<std::string_view> frames,
                                       bool command, bool raw) {
    if (p.closing) return Sent::gone;
    unsigned char headers[4][zmtp::kMaxHeader];
    iovec iov[8];
    int n = 0;
    std::size_t i = 0, total = 0;
    for (auto f : frames) {
        if (!raw) {
            const unsigned char flags =
                (command ? zmtp::kCommand : 0) | (i + 1 < frames.size() ? zmtp::kMore : 0);
            const std::size_t h = zmtp::put_header(headers[i], flags, f.size());
            iov[n++] = {headers[i], h};
            total += h;
        }
        if (!f.empty()) iov[n++] = {const_cast<char *>(f.data()), f.size()};
        total += f.size();
        ++i;
    }
    std::size_t sent = 0;
    if (p.out.empty()) {
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<std::size_t>(n);
        ssize_t rc;
        do {
            rc = ::sendmsg(p.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        } while (rc < 0 && errno == EINTR);
        if (rc < 0 && errno != EAGAIN) {
            drop(p, std::string("gone: ") + strerror(errno));
            return Sent::gone;
        }
        sent = rc < 0 ? 0 : static_cast<std::size_t>(rc);
        if (sent == total) return Sent::ok;
    } else if (settings_.kind == Kind::publisher && p.out.size() >= settings_.sndhwm) {
        return Sent::full;
    } else if (p.out_bytes + (total - sent) > settings_.max_output) {
        log_peer(p, spdlog::level::warn,
                 "peer pid {} is not reading: {} bytes queued for it, over the limit of {}",
                 p.cred.pid, p.out_bytes, settings_.max_output);
        drop(p, "closed: too much output queued");
        return Sent::gone;
    }
    // Keep what the kernel did not take, and write it when the socket drains.
    std::string rest;
    rest.reserve(total - sent);
    for (int k = 0; k < n; ++k) {
        const auto *b = static_cast<const char *>(iov[k].iov_base);
        const std::size_t skip = std::min(sent, iov[k].iov_len);
        sent -= skip;
        rest.append(b + skip, iov[k].iov_len - skip);
    }
    if (p.out.empty())
        reactor_.when_writable(p.fd, [this, fd = p.fd] {
            if (auto it = peers_.find(fd); it != peers_.end()) flush(*it->second);
        });
    p.out_bytes += rest.size();
    p.out.push_back(std::move(rest));
    return Sent::ok;
}

void ZmtpListener::flush(Peer &p) {
    while (!p.out.empty() && !p.closing) {
        iovec iov[kMaxIov];
        int n = 0;
        for (auto it = p.out.begin(); it != p.out.end() && n < kMaxIov; ++it, ++n) {
            const std::size_t skip = n == 0 ? p.out_pos : 0;
            iov[n] = {it->data() + skip, it->size() - skip};
        }
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<std::size_t>(n);
        const ssize_t rc = ::sendmsg(p.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (rc < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) drop(p, std::string("gone: ") + strerror(errno));
            return;
        }
        auto left = static_cast<std::size_t>(rc);
        p.out_bytes -= left;
        while (!p.out.empty() && left >= p.out.front().size() - p.out_pos) {
            left -= p.out.front().size() - p.out_pos;
            p.out.pop_front();
            p.out_pos = 0;
        }
        p.out_pos += left;
    }
    if (p.out.empty() && !p.closing) reactor_.when_writable(p.fd, {});
}

}  // namespace zpmix
