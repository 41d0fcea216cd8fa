#include "actors/tree/link_listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace zpmix::tree {

namespace {

std::size_t descriptor_ceiling(std::size_t reserve) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1 << 30;
    const auto soft = static_cast<std::size_t>(rl.rlim_cur);
    if (reserve == 0) reserve = std::max<std::size_t>(128, soft / 4);
    return soft > reserve ? soft - reserve : 0;
}

}  // namespace

LinkListener::LinkListener(Reactor &reactor, Settings settings, Callbacks callbacks,
                           spdlog::logger &log)
    : reactor_(reactor), s_(std::move(settings)), cb_(std::move(callbacks)), log_(log) {
    s_.connection.side = LinkConnection::Side::parent;
}

LinkListener::~LinkListener() {
    if (pause_timer_) reactor_.cancel(pause_timer_);
    conns_.clear();
    if (fd_ >= 0) {
        if (accepting_) reactor_.unwatch_fd(fd_);
        ::close(fd_);
    }
}

int LinkListener::listen() {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(s_.port));
    if (::inet_pton(AF_INET, s_.ip.c_str(), &sa.sin_addr) != 1)
        throw std::runtime_error("not an IPv4 address: " + s_.ip);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 || ::listen(fd_, 128) != 0)
        throw std::runtime_error(
            fmt::format("cannot listen on {}:{}: {}", s_.ip, s_.port, std::strerror(errno)));
    socklen_t len = sizeof sa;
    ::getsockname(fd_, reinterpret_cast<sockaddr *>(&sa), &len);
    ceiling_ = descriptor_ceiling(s_.reserve);
    resume();
    return ntohs(sa.sin_port);
}

void LinkListener::resume() {
    if (accepting_ || fd_ < 0 || pause_timer_) return;
    accepting_ = true;
    reactor_.watch_fd(fd_, [this] { accept_peers(); });
}

void LinkListener::pause(std::chrono::milliseconds for_how_long) {
    if (accepting_) {
        accepting_ = false;
        reactor_.unwatch_fd(fd_);
        ++stats_.pauses;
    }
    if (for_how_long.count() > 0 && !pause_timer_)
        pause_timer_ = reactor_.after(for_how_long, [this] {
            pause_timer_ = 0;
            if (unauthenticated_ < s_.max_unauthenticated) resume();
        });
}

void LinkListener::accept_peers() {
    for (;;) {
        // Full: the rest wait in the backlog until a slot frees (ended()).
        if (unauthenticated_ >= s_.max_unauthenticated) return pause({});
        sockaddr_in sa{};
        socklen_t len = sizeof sa;
        const int fd =
            ::accept4(fd_, reinterpret_cast<sockaddr *>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                refused(std::string("out of descriptors: ") + std::strerror(errno));
                return pause(kDescriptorPause);
            }
            if (errno != EAGAIN) log_.error("accept on the tree port: {}", std::strerror(errno));
            return;
        }
        ++stats_.accepted;
        char ip[INET_ADDRSTRLEN] = "?";
        ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        const std::string address = ip;
        if (static_cast<std::size_t>(fd) >= ceiling_) {
            ::close(fd);
            refused(
                fmt::format("a connection from {}: the descriptors left are kept for local "
                            "clients",
                            address));
            return pause(kDescriptorPause);
        }
        if (auto p = pending_.find(address);
            p != pending_.end() && p->second >= s_.max_per_address) {
            ::close(fd);
            refused(fmt::format("a connection from {}: {} from there have not authenticated",
                                address, p->second));
            return pause(kRefusalPause);
        }
        // An address that failed its handshakes lately: no more under way than it may still fail.
        const std::size_t from_there = pending_.contains(address) ? pending_[address] : 0;
        if (budgets_.contains(address) && static_cast<double>(from_there + 1) > room(address)) {
            ::close(fd);
            ++stats_.rate_limited;
            refused(
                fmt::format("a connection from {}: it failed its handshakes, {} at once then "
                            "{} a minute",
                            address, s_.failures_burst, s_.failures_per_minute));
            return pause(kRefusalPause);
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const Id id = next_id_++;
        ++pending_[address];
        ++unauthenticated_;
        auto link = std::make_unique<LinkConnection>(
            reactor_, fd, fmt::format("{}:{}", address, ntohs(sa.sin_port)), s_.connection,
            LinkConnection::Callbacks{
                .ready = [this, id] { authenticated(id); },
                .message =
                    [this, id](const std::vector<std::string_view> &frames) {
                        if (cb_.message) cb_.message(id, frames);
                    },
                .closed = [this, id](const std::string &why) { ended(id, why); }},
            log_);
        LinkConnection &l = *link;
        conns_.emplace(id, Conn{std::move(link), address, false});
        l.start();
    }
}

void LinkListener::authenticated(Id id) {
    auto it = conns_.find(id);
    if (it == conns_.end() || it->second.authenticated) return;
    it->second.authenticated = true;
    if (auto p = pending_.find(it->second.address); p != pending_.end() && --p->second == 0)
        pending_.erase(p);
    --unauthenticated_;
    resume();
}

void LinkListener::ended(Id id, const std::string &why) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    const bool was_authenticated = it->second.authenticated;
    if (!was_authenticated && it->second.link->handshake_failed()) failed(it->second.address);
    if (!was_authenticated) {
        if (auto p = pending_.find(it->second.address); p != pending_.end() && --p->second == 0)
            pending_.erase(p);
        --unauthenticated_;
        ++stats_.ended_unauthenticated;
        // A probe of the port (a child checking which of its parent's addresses answers) says
        // nothing: not worth a line.
        std::uint64_t left_out = 0;
        if (why != LinkConnection::kPeerClosed && refusals_.allow(left_out))
            log_.info("a tree connection from {} ended before it authenticated: {}{}",
                      it->second.link->peer(), why, LogThrottle::suffix(left_out));
    }
    conns_.erase(it);
    if (!pause_timer_ && unauthenticated_ < s_.max_unauthenticated) resume();
    if (was_authenticated && cb_.closed) cb_.closed(id, why);
}

double LinkListener::room(const std::string &address) {
    auto it = budgets_.find(address);
    if (it == budgets_.end()) return s_.failures_burst;
    Budget &b = it->second;
    const auto now = Reactor::Clock::now();
    const double minutes = std::chrono::duration<double, std::ratio<60>>(now - b.refilled).count();
    b.room = std::min<double>(s_.failures_burst, b.room + minutes * s_.failures_per_minute);
    b.refilled = now;
    // Forgiven: nothing on record, and nothing under way.
    if (b.room >= s_.failures_burst && !pending_.contains(address)) {
        budgets_.erase(it);
        return s_.failures_burst;
    }
    return b.room;
}

void LinkListener::failed(const std::string &address) {
    ++stats_.failed_handshakes;
    if (!budgets_.contains(address)) {
        if (budgets_.size() >= kMaxBudgets)  // forgive those that may fail again
            for (auto it = budgets_.begin(); it != budgets_.end();) {
                const std::string a = (it++)->first;
                room(a);
            }
        // Bounded: a flood from more addresses than this is bounded by the caps alone.
        if (budgets_.size() >= kMaxBudgets) return;
        budgets_.emplace(address,
                         Budget{static_cast<double>(s_.failures_burst), Reactor::Clock::now()});
    }
    const double left = room(address);
    auto &b = budgets_.at(address);  // room() keeps it: the failing connection is still pending
    b.room = std::max(0.0, left - 1);
    std::uint64_t left_out = 0;
    if (b.room < 1 && left >= 1 && limits_logged_.allow(left_out))
        log_.warn(
            "tree port: {} failed its handshakes, over {} at once then {} a minute: its "
            "connections are refused until it may fail again{}",
            address, s_.failures_burst, s_.failures_per_minute, LogThrottle::suffix(left_out));
}

void LinkListener::refused(const std::string &why) {
    ++stats_.refused;
    std::uint64_t left_out = 0;
    if (refusals_.allow(left_out))
        log_.warn("tree port: refused {}{}", why, LogThrottle::suffix(left_out));
}

bool LinkListener::send(Id id, const std::vector<std::string_view> &frames) {
    auto it = conns_.find(id);
    return it != conns_.end() && it->second.authenticated && it->second.link->send(frames);
}

void LinkListener::close(Id id, const std::string &why) {
    if (auto it = conns_.find(id); it != conns_.end()) it->second.link->close(why);
}

std::string LinkListener::peer(Id id) const {
    auto it = conns_.find(id);
    return it == conns_.end() ? std::string() : it->second.link->peer();
}

std::string LinkListener::address(Id id) const {
    auto it = conns_.find(id);
    return it == conns_.end() ? std::string() : it->second.address;
}

void LinkListener::close_all(LinkConnection::Clock::time_point deadline) {
    for (auto &[id, c] : conns_) c.link->flush_until(deadline);
    conns_.clear();
    if (pause_timer_) reactor_.cancel(std::exchange(pause_timer_, 0));
    if (fd_ >= 0) {
        if (accepting_) reactor_.unwatch_fd(fd_);
        accepting_ = false;
        ::close(std::exchange(fd_, -1));
    }
}

LinkListener::Stats LinkListener::stats() const {
    Stats s = stats_;
    s.unauthenticated = unauthenticated_;
    s.authenticated = conns_.size() - unauthenticated_;
    return s;
}

}  // namespace zpmix::tree
