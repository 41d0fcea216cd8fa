#include "actors/runtime/tcp_gate.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix {

namespace {

constexpr std::size_t kMinReserve = 128;
constexpr int kEventsPerWake = 256;  // then the reactor's other work gets its turn
constexpr auto kSweepEvery = std::chrono::seconds(1);
constexpr auto kEndedEvery = std::chrono::seconds(10);  // the count of those that never got in
// A handshake that failed without detail (the peer left, or ran out of time: a probe of the
// address, a flood) is not logged apart: it is counted with those that ended before they
// authenticated.
constexpr int kEvents = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_ACCEPT_FAILED | ZMQ_EVENT_DISCONNECTED |
                        ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// The soft descriptor limit (1024 when it cannot be read; 2^20 when unlimited).
std::size_t soft_limit() {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
    return rl.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : rl.rlim_cur;
}

// The port of a "tcp://host:port" endpoint; 0 if none.
int port_of(const std::string &endpoint) {
    const auto colon = endpoint.rfind(':');
    return colon == std::string::npos ? 0 : std::atoi(endpoint.c_str() + colon + 1);
}

// The peer's address (without its port) and the local port of a tcp socket; false when fd is not
// one (any more).
bool tcp_ends(int fd, std::string &peer, int &local_port) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) return false;
    char buf[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&a)->sin_addr, buf, sizeof buf);
    else if (a.ss_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&a)->sin6_addr, buf, sizeof buf);
    else
        return false;
    peer = buf;
    len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) return false;
    local_port = ntohs(a.ss_family == AF_INET ? reinterpret_cast<sockaddr_in *>(&a)->sin_port
                                              : reinterpret_cast<sockaddr_in6 *>(&a)->sin6_port);
    return true;
}

ino_t inode_of(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}

// A classic BPF program for a listening socket that drops the packets (SYNs: a connection's
// first) of these IPv4 sources (host order) and takes every other. The kernel runs a socket's
// filter before TCP sees the packet; an accepted connection keeps the filter it was born with.
std::vector<sock_filter> drop_sources(const std::vector<std::uint32_t> &sources) {
    std::vector<sock_filter> p;
    auto op = [&](std::uint16_t code, std::uint8_t jt, std::uint8_t jf, std::uint32_t k) {
        p.push_back(sock_filter{code, jt, jf, k});
    };
    op(BPF_LD | BPF_B | BPF_ABS, 0, 0, static_cast<std::uint32_t>(SKF_NET_OFF));  // version
    op(BPF_ALU | BPF_AND | BPF_K, 0, 0, 0xf0);
    op(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0x40);  // IPv4: on to its source
    op(BPF_RET | BPF_K, 0, 0, 0xffffffff);      // else taken whole
    op(BPF_LD | BPF_W | BPF_ABS, 0, 0, static_cast<std::uint32_t>(SKF_NET_OFF + 12));
    for (std::uint32_t a : sources) {
        op(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, a);
        op(BPF_RET | BPF_K, 0, 0, 0);  // dropped
    }
    op(BPF_RET | BPF_K, 0, 0, 0xffffffff);
    return p;
}

// Takes the filter off a listening socket: 0, also when it had none.
int detach_filter(int fd) {
    const int unused = 0;  // the kernel wants an int's worth of value, which it ignores
    if (::setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof unused) == 0) return 0;
    return errno == ENOENT ? 0 : -1;
}

}  // namespace

TcpGate::TcpGate(Reactor &reactor, zmq::context_t &ctx, spdlog::logger &log, Settings settings)
    : reactor_(reactor), ctx_(ctx), log_(log), s_(std::move(settings)) {
    const std::size_t soft = soft_limit();
    const std::size_t reserve = s_.reserve ? s_.reserve : std::max(kMinReserve, soft / 4);
    ceiling_ = soft > reserve ? soft - reserve : soft / 2;
}

TcpGate::~TcpGate() {
    close();
}

void TcpGate::watch(zmq::socket_t &socket) {
    static std::atomic<unsigned> next{0};
    const std::string endpoint = "inproc://zpmix-tcp-gate-" + std::to_string(next++);
    auto m = std::make_unique<Monitor>();
    m->socket = &socket;
    if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), kEvents) != 0) throw zmq::error_t();
    m->pair = zmq::socket_t(ctx_, zmq::socket_type::pair);
    m->pair.set(zmq::sockopt::linger, 0);
    m->pair.connect(endpoint);
    const std::size_t index = monitors_.size();
    reactor_.watch(m->pair, [this, index] { on_events(index); });
    monitors_.push_back(std::move(m));
    if (!sweep_) sweep_ = reactor_.every(kSweepEvery, [this] { sweep(); });
}

void TcpGate::close() {
    if (sweep_) reactor_.cancel(std::exchange(sweep_, 0));
    for (auto &m : monitors_) {
        // No address stays dropped by a socket that outlives the gate.
        if (m->listener >= 0 && inode_of(m->listener) == m->listener_inode)
            detach_filter(m->listener);
        if (!m->pair) continue;
        reactor_.unwatch(m->pair);
        // The monitor stops before its PAIR closes (libzmq would otherwise send to a closed one).
        zmq_socket_monitor(m->socket->handle(), nullptr, 0);
        m->pair.close();
    }
    monitors_.clear();
    conns_.clear();
    pending_.clear();
    budgets_.clear();
    unauthenticated_ = 0;
}

TcpGate::Stats TcpGate::stats() const {
    Stats s = stats_;
    s.unauthenticated = unauthenticated_;
    for (const auto &[address, b] : budgets_) s.blocked += b.filtered;
    return s;
}

void TcpGate::on_events(std::size_t socket) {
    Monitor &m = *monitors_.at(socket);
    for (int n = 0; n < kEventsPerWake; ++n) {
        zmq::message_t ev, endpoint;
        if (!m.pair.recv(ev, zmq::recv_flags::dontwait)) return;
        if (ev.more()) (void)m.pair.recv(endpoint);
        if (ev.size() < 6) continue;
        std::uint16_t event = 0;
        std::uint32_t value = 0;
        std::memcpy(&event, ev.data(), 2);
        std::memcpy(&value, static_cast<const char *>(ev.data()) + 2, 4);
        // libzmq's I/O thread says DISCONNECTED right after a CURVE handshake fails, with
        // nothing between: that connection is the one that failed.
        const bool after_failure = std::exchange(m.after_failure, false);
        switch (event) {
            case ZMQ_EVENT_ACCEPTED:
                accepted(socket, static_cast<int>(value));
                break;
            case ZMQ_EVENT_DISCONNECTED:
                gone(socket, static_cast<int>(value), after_failure);
                break;
            case ZMQ_EVENT_ACCEPT_FAILED:
                if (value == EMFILE || value == ENFILE)
                    shed_all(std::string("out of descriptors: ") +
                             strerror(static_cast<int>(value)));
                break;
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
                m.after_failure = true;
                refused(
                    value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
                        ? std::string("it does not speak CURVE (a client needs $ZPMIX_TCP_KEYS)")
                        : fmt::format("its CURVE handshake failed (error 0x{:x}: not the "
                                      "broker's keys?)",
                                      value));
                break;
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:  // counted by refused_credentials()
                refused(fmt::format("its credentials were refused (ZAP status {})", value));
                break;
            default:
                break;
        }
    }
}

void TcpGate::accepted(std::size_t socket, int fd) {
    ++stats_.accepted;
    if (auto old = conns_.find(fd); old != conns_.end()) forget(old);  // its end not seen yet
    std::string address;
    int port = 0;
    const ino_t inode = inode_of(fd);
    Monitor &m = *monitors_[socket];
    if (m.port == 0) m.port = port_of(m.socket->get(zmq::sockopt::last_endpoint));
    // Gone already, or the descriptor is someone else's by now: nothing to count.
    if (inode == 0 || !tcp_ends(fd, address, port) || port != m.port) return;
    auto it = conns_.emplace(fd, Conn{socket, inode, address, Reactor::Clock::now(), false}).first;
    ++unauthenticated_;
    const std::size_t from_there = ++pending_[address];
    if (static_cast<std::size_t>(fd) >= ceiling_) {
        shed_all(fmt::format("descriptor {} reached the reserve kept for local clients (from {})",
                             fd, ceiling_));
        return;
    }
    if (from_there > s_.max_per_address)
        return shed(it, fmt::format("over {} unauthenticated connections from {}",
                                    s_.max_per_address, address));
    // An address that failed its handshakes lately: no more under way than it may still fail.
    if (auto b = budgets_.find(address); b != budgets_.end()) {
        const Budget &budget = refilled(b->second, Reactor::Clock::now());
        if (static_cast<double>(from_there) > budget.room) {
            ++stats_.rate_limited;
            if (!budget.filtered && budget.room < 1) update_filters();
            return shed(it, fmt::format("it failed its handshakes, {} at once then {} a minute",
                                        s_.failures_burst, s_.failures_per_minute));
        }
    }
    if (unauthenticated_ > s_.max_unauthenticated)
        shed(oldest_unauthenticated(),
             fmt::format("over {} unauthenticated connections", s_.max_unauthenticated));
}

void TcpGate::gone(std::size_t socket, int fd, bool failed_handshake) {
    auto it = conns_.find(fd);
    if (it == conns_.end() || it->second.socket != socket) return;
    // Dropped by libzmq (a frame over the limit, a bad or unfinished handshake) or gone itself.
    if (!it->second.authenticated) {
        ++ended_unauthenticated_;
        if (failed_handshake) failed(it->second.address);
    }
    forget(it);
}

void TcpGate::refused_credentials(const std::string &address) {
    failed(address);
}

TcpGate::Budget &TcpGate::refilled(Budget &b, Reactor::Clock::time_point now) const {
    const double minutes = std::chrono::duration<double, std::ratio<60>>(now - b.refilled).count();
    b.room = std::min<double>(s_.failures_burst, b.room + minutes * s_.failures_per_minute);
    b.refilled = now;
    return b;
}

void TcpGate::failed(const std::string &address) {
    ++stats_.failed_handshakes;
    auto it = budgets_.find(address);
    if (it == budgets_.end()) {
        // Bounded: a flood from more addresses than this is bounded by the caps alone.
        if (budgets_.size() >= 4 * kMaxFiltered) return;
        it = budgets_
                 .emplace(address, Budget{static_cast<double>(s_.failures_burst),
                                          Reactor::Clock::now(), false})
                 .first;
    }
    Budget &b = refilled(it->second, Reactor::Clock::now());
    b.room = std::max(0.0, b.room - 1);
    if (b.room < 1 && !b.filtered) {
        std::uint64_t left_out = 0;
        if (limits_logged_.allow(left_out))
            log_.warn(
                "{}: {} failed its handshakes, over {} at once then {} a minute: its "
                "connections are refused until it may fail again{}",
                s_.name, address, s_.failures_burst, s_.failures_per_minute,
                LogThrottle::suffix(left_out));
        update_filters();
    }
}

void TcpGate::update_filters() {
    const auto now = Reactor::Clock::now();
    std::vector<std::uint32_t> sources;
    for (auto &[address, b] : budgets_) {
        b.filtered = false;
        if (refilled(b, now).room >= 1 || sources.size() >= kMaxFiltered) continue;
        // An IPv4 peer of an IPv6 socket is named "::ffff:a.b.c.d"; its packets are IPv4.
        const std::string v4 = address.starts_with("::ffff:") ? address.substr(7) : address;
        in_addr a{};
        if (::inet_pton(AF_INET, v4.c_str(), &a) != 1) continue;
        sources.push_back(ntohl(a.s_addr));
        b.filtered = true;
    }
    if (filter_failed_) return;
    const std::vector<sock_filter> program = drop_sources(sources);
    const sock_fprog fprog{static_cast<unsigned short>(program.size()),
                           const_cast<sock_filter *>(program.data())};
    for (auto &m : monitors_) {
        const int fd = listener_of(*m);
        if (fd < 0) continue;
        const int rc = sources.empty()
                           ? detach_filter(fd)
                           : ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog);
        if (rc != 0) {
            log_.info(
                "{}: the kernel takes no filter on port {} ({}): addresses out of "
                "failed handshakes are refused as they are accepted only",
                s_.name, m->port, strerror(errno));
            filter_failed_ = true;
            for (auto &[address, b] : budgets_) b.filtered = false;
            for (auto &other : monitors_)  // none keeps a filter: no address stays dropped
                if (other->listener >= 0) detach_filter(other->listener);
            return;
        }
    }
}

// libzmq's listening descriptor of a watched socket: the one socket of this process listening on
// its port (libzmq gives no way to it).
int TcpGate::listener_of(Monitor &m) {
    if (m.listener >= 0 && inode_of(m.listener) == m.listener_inode) return m.listener;
    m.listener = -1;
    if (m.port == 0) m.port = port_of(m.socket->get(zmq::sockopt::last_endpoint));
    if (m.port == 0) return -1;
    DIR *dir = ::opendir("/proc/self/fd");
    if (!dir) return -1;
    while (const dirent *e = ::readdir(dir)) {
        const int fd = std::atoi(e->d_name);
        if (fd <= 2 || fd == ::dirfd(dir)) continue;
        int listening = 0, type = 0;
        socklen_t len = sizeof listening;
        if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
            continue;
        len = sizeof type;
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
            continue;
        sockaddr_storage a{};
        len = sizeof a;
        if (::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) continue;
        int port = 0;
        if (a.ss_family == AF_INET)
            port = ntohs(reinterpret_cast<sockaddr_in *>(&a)->sin_port);
        else if (a.ss_family == AF_INET6)
            port = ntohs(reinterpret_cast<sockaddr_in6 *>(&a)->sin6_port);
        if (port != m.port) continue;
        m.listener = fd;
        m.listener_inode = inode_of(fd);
        break;
    }
    ::closedir(dir);
    return m.listener;
}

void TcpGate::authenticated(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end() || it->second.authenticated || inode_of(fd) != it->second.inode) return;
    Conn &c = it->second;
    c.authenticated = true;
    --unauthenticated_;
    if (--pending_[c.address] == 0) pending_.erase(c.address);
}

std::size_t TcpGate::shed_all(const std::string &why) {
    std::size_t n = 0;
    for (auto it = conns_.begin(); it != conns_.end();) {
        auto next = std::next(it);
        if (!it->second.authenticated) {
            shed(it, why);
            ++n;
        }
        it = next;
    }
    return n;
}

void TcpGate::shed(std::map<int, Conn>::iterator it, const std::string &why) {
    if (it == conns_.end()) return;
    const int fd = it->first;
    const Conn c = it->second;
    forget(it);
    if (inode_of(fd) != c.inode) return;  // closed meanwhile: its descriptor is another's
    ::shutdown(fd, SHUT_RDWR);
    ++stats_.shed;
    std::uint64_t left_out = 0;
    if (sheds_logged_.allow(left_out))
        log_.warn("{}: shed an unauthenticated connection from {}: {} ({} unauthenticated left){}",
                  s_.name, c.address, why, unauthenticated_, LogThrottle::suffix(left_out));
}

void TcpGate::forget(std::map<int, Conn>::iterator it) {
    const Conn &c = it->second;
    if (!c.authenticated) {
        --unauthenticated_;
        if (auto p = pending_.find(c.address); p != pending_.end() && --p->second == 0)
            pending_.erase(p);
    }
    conns_.erase(it);
}

std::map<int, TcpGate::Conn>::iterator TcpGate::oldest_unauthenticated() {
    auto oldest = conns_.end();
    for (auto it = conns_.begin(); it != conns_.end(); ++it)
        if (!it->second.authenticated &&
            (oldest == conns_.end() || it->second.since < oldest->second.since))
            oldest = it;
    return oldest;
}

void TcpGate::refused(const std::string &why) {
    ++stats_.refused_handshakes;
    std::uint64_t left_out = 0;
    if (refusals_logged_.allow(left_out))
        log_.warn("refused a {} connection: {}{}", s_.name, why, LogThrottle::suffix(left_out));
}

// libzmq ends a handshake unfinished after handshake_timeout: a connection still there later
// finished it, whether or not it has sent a message since (an XPUB subscriber's name none).
void TcpGate::sweep() {
    const auto now = Reactor::Clock::now();
    const std::uint64_t failed = stats_.failed_handshakes - said_.failed_handshakes;
    const std::uint64_t limited = stats_.rate_limited - said_.rate_limited;
    if ((ended_unauthenticated_ > 0 || limited > 0) && now - ended_said_ >= kEndedEvery) {
        std::size_t blocked = 0;
        for (const auto &[address, b] : budgets_) blocked += b.filtered;
        log_.info(
            "{}: {} connections ended before they authenticated (a frame over {} bytes, a "
            "failed or unfinished handshake, or they left), {} handshakes failed, {} "
            "connections shed at once for their address's failures ({} addresses dropped by "
            "the kernel now), since the last such line",
            s_.name, ended_unauthenticated_, zmtp::kTcpFrameLimit, failed, limited, blocked);
        ended_unauthenticated_ = 0;
        said_ = stats_;
        ended_said_ = now;
    }
    const auto limit = now - s_.handshake_timeout - std::chrono::seconds(1);
    for (auto &[fd, c] : conns_) {
        if (c.authenticated || c.since > limit) continue;
        c.authenticated = true;
        --unauthenticated_;
        if (auto p = pending_.find(c.address); p != pending_.end() && --p->second == 0)
            pending_.erase(p);
    }
    // Addresses that may fail again leave the kernel's filter; those with all their failures
    // back are forgotten.
    bool refilter = false;
    for (auto it = budgets_.begin(); it != budgets_.end();) {
        Budget &b = refilled(it->second, now);
        refilter |= b.filtered && b.room >= 1;
        if (!b.filtered && b.room >= s_.failures_burst && !pending_.contains(it->first))
            it = budgets_.erase(it);
        else
            ++it;
    }
    if (refilter) update_filters();
}

}  // namespace zpmix
