#include "actors/tree/link.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <pmix_common.h>

#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/zmtp_wire.hpp"

namespace zpmix::tree {

namespace {

constexpr Rank kEveryone = 0xffffffffu;
// A child's CURVE handshake with its parent.
constexpr std::chrono::milliseconds kHandshakeTimeout{10000};
// Standing trees: how often a broker tries its parent again while it is not up.
constexpr std::chrono::milliseconds kReconnect{1000};
// A booted tree: the first wait before trying the parent's port again when it turned the
// connection away before the handshake (doubled each time, up to kReconnect).
constexpr std::chrono::milliseconds kFirstRetry{20};

using Beat = msg::TreeBeat;
using Hop = msg::TreeHop;
using Stop = msg::TreeStop;
using Hello = msg::TreeHello;
using Welcome = msg::TreeWelcome;

template <class M>
zmq::message_t frame(const M &m) {
    return encode(M::type, 0, m, "tree");
}

std::string_view view(const zmq::message_t &m) {
    return {static_cast<const char *>(m.data()), m.size()};
}

// A message's payload: its frames after the first, which a connection keeps contiguous.
std::string_view payload_of(const std::vector<std::string_view> &frames) {
    if (frames.size() < 2) return {};
    const char *begin = frames[1].data();
    return {begin, static_cast<std::size_t>(frames.back().data() + frames.back().size() - begin)};
}

// "tcp://host:port" as a connected-or-connecting non-blocking socket; -1 with why.
int connect_to(const std::string &uri, std::string &why) {
    const auto colon = uri.rfind(':');
    if (!uri.starts_with("tcp://") || colon == std::string::npos || colon < 6) {
        why = "not a tcp://host:port address: " + uri;
        return -1;
    }
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (const int e =
            ::getaddrinfo(uri.substr(6, colon - 6).c_str(), uri.c_str() + colon + 1, &hints, &res);
        e != 0) {
        why = "cannot resolve " + uri + ": " + gai_strerror(e);
        return -1;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (::connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
            why = "cannot connect to " + uri + ": " + std::strerror(errno);
            ::close(fd);
            ::freeaddrinfo(res);
            return -1;
        }
    } else {
        why = std::string("socket: ") + std::strerror(errno);
    }
    ::freeaddrinfo(res);
    return fd;
}

// The IPv4 address of interface `want` (a name, or a CIDR the address falls in); "" if none.
std::string interface_address(const std::string &want) {
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    std::string found;
    std::uint32_t net = 0, mask = 0;
    const bool cidr = want.find('/') != std::string::npos;
    if (cidr) {
        const auto slash = want.find('/');
        in_addr a{};
        if (::inet_pton(AF_INET, want.substr(0, slash).c_str(), &a) == 1) {
            const int bits = std::atoi(want.c_str() + slash + 1);
            mask = bits <= 0 ? 0 : htonl(0xffffffffu << (32 - std::min(bits, 32)));
            net = a.s_addr & mask;
        }
    }
    for (ifaddrs *i = list; i && found.empty(); i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        const auto *sin = reinterpret_cast<const sockaddr_in *>(i->ifa_addr);
        if (cidr ? (sin->sin_addr.s_addr & mask) != net : want != i->ifa_name) continue;
        char buf[INET_ADDRSTRLEN];
        ::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
        found = buf;
    }
    ::freeifaddrs(list);
    return found;
}

// Every IPv4 address of the up interfaces, loopback last.
std::vector<std::string> all_addresses() {
    std::vector<std::string> out, loop;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (ifaddrs *i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        char buf[INET_ADDRSTRLEN];
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr, buf,
                    sizeof buf);
        ((i->ifa_flags & IFF_LOOPBACK) ? loop : out).push_back(buf);
    }
    ::freeifaddrs(list);
    out.insert(out.end(), loop.begin(), loop.end());
    return out;
}

// The first of "tcp://ip:port" addresses that accepts a TCP connection within `limit` (all are
// tried at once, as Open MPI's daemons do): its connected socket, which becomes the link (the
// others are closed), and its address in `winner`; -1 when none does.
int first_answering(const std::vector<std::string> &uris, std::chrono::milliseconds limit,
                    std::string &winner) {
    struct Try {
        std::string uri;
        int fd = -1;
    };
    std::vector<Try> tries;
    for (const auto &uri : uris) {
        if (!uri.starts_with("tcp://")) continue;
        const auto colon = uri.rfind(':');
        if (colon == std::string::npos || colon < 6) continue;
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<std::uint16_t>(std::atoi(uri.c_str() + colon + 1)));
        if (::inet_pton(AF_INET, uri.substr(6, colon - 6).c_str(), &sa.sin_addr) != 1) continue;
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0 ||
            errno == EINPROGRESS)
            tries.push_back({uri, fd});
        else
            ::close(fd);
    }
    int found = -1;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (found < 0 && !tries.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        std::vector<pollfd> pfds;
        for (const auto &t : tries) pfds.push_back({t.fd, POLLOUT, 0});
        if (::poll(pfds.data(), pfds.size(), static_cast<int>(left.count())) <= 0) break;
        for (std::size_t i = 0; i < pfds.size(); ++i) {
            if (!pfds[i].revents) continue;
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(tries[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err == 0 && found < 0) {
                found = tries[i].fd;
                winner = tries[i].uri;
            } else {
                ::close(tries[i].fd);
            }
            tries[i].fd = -1;
        }
        std::erase_if(tries, [](const Try &t) { return t.fd < 0; });
    }
    for (auto &t : tries) ::close(t.fd);
    if (found >= 0) {
        const int one = 1;
        ::setsockopt(found, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return found;
}

}  // namespace

TreeLink::TreeLink(Reactor &reactor, Bus &bus, LinkSettings settings, BrokerMap &brokers,
                   std::function<void(bool lost)> on_parent_gone)
    : Actor("tree", reactor, bus),
      s_(std::move(settings)),
      topology_(s_.size, s_.radix),
      brokers_(brokers),
      on_parent_gone_(std::move(on_parent_gone)) {
    on(&TreeLink::online, Access::internal);
    on(&TreeLink::members, Access::internal);
    on(&TreeLink::lost_elsewhere, Access::internal);
    on(&TreeLink::joined, Access::internal);
    on(&TreeLink::rejoin, Access::internal);
    auto session = std::make_shared<PeerSession>();
    session->role = PeerSession::Role::broker;
    session_ = std::move(session);
}

TreeLink::~TreeLink() {
    close();
}

void TreeLink::open() {
    const auto pub = CurveKeypair::decode(s_.public_key);
    const auto sec = CurveKeypair::decode(s_.secret_key);
    if (!pub || !sec)
        throw std::runtime_error("the tree needs the allocation's CURVE keypair (Z85, 40 chars)");
    public_key_ = *pub;
    secret_key_ = *sec;
    if (!topology_.children(s_.rank).empty()) {
        std::string ip = "0.0.0.0";
        if (!s_.tcp_if.empty()) {
            ip = interface_address(s_.tcp_if);
            if (ip.empty())
                throw std::runtime_error("tcp_if '" + s_.tcp_if +
                                         "': no up IPv4 interface of that name or network");
        }
        // Children connect from their nodes, or all from one (brokers on one host, as in tests):
        // a parent's children may be unauthenticated at once from one address.
        LinkListener::Settings ls{.ip = ip,
                                  .port = s_.standing ? s_.port : 0,
                                  .max_unauthenticated = std::max<std::size_t>(16, 2 * s_.radix),
                                  .max_per_address = std::max<std::size_t>(8, s_.radix),
                                  .reserve = 0,
                                  .failures_burst = s_.failures_burst,
                                  .failures_per_minute = s_.failures_per_minute,
                                  .connection = connection_settings()};
        down_ = std::make_unique<LinkListener>(
            reactor(), std::move(ls),
            LinkListener::Callbacks{
                .message = [this](LinkListener::Id id, const Frames &f) { from_child(id, f); },
                .closed = [this](LinkListener::Id id,
                                 const std::string &why) { child_closed(id, why); }},
            log());
        const std::string port = std::to_string(down_->listen());
        for (const auto &a : ip == "0.0.0.0" ? all_addresses() : std::vector<std::string>{ip})
            addresses_.push_back("tcp://" + a + ":" + port);
    }
    if (s_.rank != 0) {
        // A standing tree's parent may start later: connected again until it is up. A booted
        // tree's parent is up: the first of its addresses to answer is the link.
        int fd = -1;
        if (s_.standing) {
            parent_uri_ = s_.parent.at(0);
        } else if (fd = first_answering(s_.parent, kHandshakeTimeout, parent_uri_); fd < 0) {
            throw std::runtime_error("no address of the parent broker answers (tried " +
                                     std::to_string(s_.parent.size()) + ")");
        }
        parent_heard_ = waiting_said_ = Reactor::Clock::now();
        join_deadline_ = parent_heard_ + kHandshakeTimeout;
        std::string why;
        if (!connect_parent(fd, why)) {
            if (!s_.standing) throw std::runtime_error(why);
            parent_closed({});
        }
    }
    heartbeat_timer_ = reactor().every(s_.heartbeat, [this] { beat(); });
    bus().set_remote_sink(reactor(), [this](const std::string &to, zmq::message_t msg) {
        send_remote(to, std::move(msg));
    });
    if (s_.size == 1) {
        brokers_.set(BrokerView{0, s_.radix, {s_.node}});
        set_ready({});
    } else if (s_.standing) {
        brokers_.set(BrokerView{s_.rank, s_.radix, s_.boot.nodes, true});
        if (s_.rank == 0) online_[0] = addresses_;
        set_ready({});
    } else if (s_.rank == 0) {
        boot_ = std::make_unique<Boot>(
            reactor(), s_.boot, s_.public_key, s_.secret_key,
            [this](std::uint32_t rank, const std::string &why) {
                if (!online_.contains(rank))
                    return set_ready(
                        fmt::format("the broker on {} (rank {}) did not start: its "
                                    "{} {}",
                                    boot_->node(rank), rank, boot_->how(), why));
                if (!stopping_) log().warn("the {} of {} {}", boot_->how(), boot_->node(rank), why);
            });
        online_[0] = addresses_;
        reactor().post([this] { start_children_of(0, addresses_); });
        boot_timer_ = reactor().after(s_.boot_timeout, [this] {
            boot_timer_ = 0;
            std::string missing;
            for (Rank r = 1; r < s_.size; ++r)
                if (!online_.contains(r))
                    missing += (missing.empty() ? "" : ", ") + s_.boot.nodes.at(r);
            set_ready(fmt::format("brokers did not join within {} ms on: {}",
                                  s_.boot_timeout.count(), missing));
        });
    }
}

std::size_t TreeLink::queue_bound() const {
    return std::max<std::size_t>(s_.max_message * 4, std::size_t{256} << 20);
}

LinkConnection::Settings TreeLink::connection_settings() const {
    // A neighbour whose output is not taken for lost_after is as lost as a silent one.
    return LinkConnection::Settings{.public_key = public_key_,
                                    .secret_key = secret_key_,
                                    .peer_key = public_key_,
                                    .max_message = s_.max_message,
                                    .max_output = queue_bound(),
                                    .handshake_timeout = kHandshakeTimeout,
                                    .write_timeout = s_.lost_after};
}

bool TreeLink::connect_parent(int fd, std::string &why) {
    if (fd < 0) fd = connect_to(parent_uri_, why);
    if (fd < 0) return false;
    auto settings = connection_settings();
    settings.side = LinkConnection::Side::child;
    up_ready_ = false;
    up_ = std::make_unique<LinkConnection>(
        reactor(), fd, parent_uri_.substr(6), settings,
        LinkConnection::Callbacks{.ready =
                                      [this] {
                                          up_ready_ = true;
                                          flush_up_queue();
                                      },
                                  .message =
                                      [this](const Frames &f) {
                                          if (parent_lost_) return;
                                          parent_heard_ = Reactor::Clock::now();
                                          from_parent(f);
                                      },
                                  .closed = [this](const std::string &why) { parent_closed(why); }},
        log());
    up_->start();
    const zmq::message_t hello = frame(Hello{s_.rank, s_.node, addresses_});
    up_->send({view(hello)});
    return true;
}

void TreeLink::parent_closed(const std::string &why) {
    up_.reset();
    if (stopping_ || parent_lost_ || reconnect_timer_) return;
    std::chrono::milliseconds again = kReconnect;
    if (!s_.standing) {
        // A connection that ended before its handshake did never reached the parent's link (its
        // port turns away connections beyond its bounds for the moment): tried again, sooner
        // each time at first, until the join deadline. Past the handshake, it is a loss.
        const auto now = Reactor::Clock::now();
        if (up_ready_ || welcomed_ || now >= join_deadline_)
            return parent_gone(why.empty() ? "its connection ended"
                                           : "its connection ended: " + why);
        again = std::min(kReconnect, kFirstRetry * (1 << std::min(retries_, 6)));
        ++retries_;
        log().info(
            "the parent broker ended the connection before the handshake ({}): trying "
            "again in {} ms",
            why.empty() ? "no reason" : why, again.count());
    } else if (welcomed_) {
        return parent_gone(why.empty() ? "its connection ended" : "its connection ended: " + why);
    }
    // A standing tree's parent that is not up yet (beat() says we wait), or a booted one whose
    // port turned us away: tried again.
    reconnect_timer_ = reactor().after(again, [this] {
        reconnect_timer_ = 0;
        std::string e;
        if (!connect_parent(-1, e)) parent_closed({});
    });
}

std::string TreeLink::wait_ready(std::chrono::milliseconds limit) {
    auto f = ready_.get_future();
    if (f.wait_for(limit) != std::future_status::ready)
        return "the broker tree was not up within " + std::to_string(limit.count()) + " ms";
    return f.get();
}

void TreeLink::set_ready(std::string error) {
    if (ready_set_) return;
    ready_set_ = true;
    boot_failed_ = !error.empty();
    if (boot_timer_) reactor().cancel(boot_timer_);
    boot_timer_ = 0;
    if (!error.empty()) log().error("{}", error);
    ready_.set_value(std::move(error));
}

// Root: broker `parent` is up at `addresses`; its children are started under it.
void TreeLink::start_children_of(Rank parent, const std::vector<std::string> &addresses) {
    for (Rank c : topology_.children(parent))
        if (auto error = boot_->start(c, s_.size, s_.radix, addresses); !error.empty())
            return set_ready(fmt::format("{} (rank {}): {}", s_.boot.nodes.at(c), c, error));
}

void TreeLink::online(const Envelope &, BrokerOnline &m) {
    if (s_.rank != 0) return;
    if (m.rank == 0 || m.rank >= s_.size || (online_.contains(m.rank) && !s_.standing)) return;
    log().debug("broker {} on {} joined", m.rank, s_.boot.nodes.at(m.rank));
    online_[m.rank] = m.addresses;
    if (s_.standing) return send(every_broker("tree"), msg::TreeJoinedElsewhere{m.rank});
    start_children_of(m.rank, m.addresses);
    if (online_.size() == s_.size) send(every_broker("tree"), Members{s_.radix, s_.boot.nodes});
}

void TreeLink::members(const Envelope &, Members &m) {
    if (m.nodes.size() != s_.size) return;
    brokers_.set(BrokerView{s_.rank, m.radix, m.nodes});
    set_ready({});
}

void TreeLink::joined(const Envelope &, msg::TreeJoinedElsewhere &m) {
    if (m.rank >= s_.size || m.rank == s_.rank) return;
    lost_.erase(m.rank);
    log().info("broker {} on {} joined the tree", m.rank, s_.boot.nodes.at(m.rank));
    broadcast(msg::TreeJoined{m.rank});
}

void TreeLink::from_child(LinkListener::Id conn, const Frames &frames) {
    try {
        const Envelope env =
            decode(frames[0].data(), frames[0].size(), DecodeLimits{.max_message = s_.max_message});
        if (env.type == Hello::type) {
            // A Hello of another protocol version may lay its body out otherwise: only its
            // release is read from it, if it can be, to say who was refused.
            if (env.version != kProtocolVersion) {
                const std::string why = msg::other_protocol(env.version, msg::release_in(env),
                                                            "child broker", "broker");
                const zmq::message_t answer = frame(Welcome{false, why});
                down_->send(conn, {view(answer)});
                return log_peer(down_->address(conn), spdlog::level::err, "refused a broker: {}",
                                why);
            }
            const auto h = env.as<Hello>();
            std::string why;
            if (h.rank >= s_.size || topology_.parent(h.rank) != s_.rank)
                why = fmt::format("rank {} is not a child of broker {}", h.rank, s_.rank);
            else if (child_of_.contains(conn))
                why = "a second hello";
            const zmq::message_t answer = frame(Welcome{why.empty(), why});
            down_->send(conn, {view(answer)});
            if (!why.empty())
                return log_peer(down_->address(conn), spdlog::level::err,
                                "refused broker {} on {}: {}", h.rank, h.node, why);
            // A child that started again: what ran under its old self is gone.
            if (auto old = children_.find(h.rank); old != children_.end()) {
                const LinkListener::Id old_conn = old->second.conn;
                child_lost(h.rank, "it started again");
                down_->close(old_conn, "replaced by a new connection of the same broker");
            }
            const msg::PeerFeatures peer(h.release, h.features);
            if (!peer.missing().empty() || peer.release() != msg::kRelease)
                log().info("broker {} on {} runs zpmix {} (this one {}){}{}", h.rank, h.node,
                           peer.release(), msg::kRelease,
                           peer.missing().empty() ? "" : "; it lacks ", peer.missing());
            children_[h.rank] = {conn, Reactor::Clock::now(), peer.serves(msg::TreeRejoin::type)};
            child_of_[conn] = h.rank;
            send(remote_address(0, "tree"), BrokerOnline{h.rank, h.addresses});
            return;
        }
        // Anything else from a child that never said hello is dropped.
        auto of = child_of_.find(conn);
        if (of == child_of_.end()) return;
        auto child = children_.find(of->second);
        if (child == children_.end()) return;
        child->second.last_heard = Reactor::Clock::now();
        if (env.type == Hop::type && frames.size() >= 2) {
            const auto h = env.as<Hop>();
            route(h.to, h.from, h.address, payload_of(frames), false);
        }
    } catch (const DecodeError &e) {
        log_peer(down_->address(conn), spdlog::level::warn,
                 "dropped a malformed frame from a child: {}", e.what());
    }
}

void TreeLink::child_closed(LinkListener::Id conn, const std::string &why) {
    auto of = child_of_.find(conn);
    if (of == child_of_.end()) return;
    const Rank r = of->second;
    child_of_.erase(of);
    if (auto c = children_.find(r); c != children_.end() && c->second.conn == conn)
        child_lost(r, why);
}

void TreeLink::from_parent(const Frames &frames) {
    try {
        const Envelope env =
            decode(frames[0].data(), frames[0].size(), DecodeLimits{.max_message = s_.max_message});
        if (env.type == Welcome::type) {
            const auto w = env.as<Welcome>();
            if (w.ok) {
                welcomed_ = true;
                const msg::PeerFeatures peer(w.release, w.features);
                if (!peer.missing().empty() || peer.release() != msg::kRelease)
                    log().info("the parent broker runs zpmix {} (this one {}){}{}", peer.release(),
                               msg::kRelease, peer.missing().empty() ? "" : "; it lacks ",
                               peer.missing());
                if (std::exchange(away_, false)) {
                    log().info("joined the tree again as broker {} of {}", s_.rank, s_.size);
                    return rejoined(s_.rank);
                }
                if (s_.standing) log().info("joined the tree as broker {} of {}", s_.rank, s_.size);
                return;
            }
            log().critical("the parent broker refused this one: {}", w.why);
            set_ready(w.why);
            parent_gone("refused: " + w.why);
        } else if (env.type == Stop::type) {
            log().info("the allocation is stopping");
            parent_gone({});
        } else if (env.type == Hop::type && frames.size() >= 2) {
            const auto h = env.as<Hop>();
            route(h.to, h.from, h.address, payload_of(frames), true);
        }
    } catch (const DecodeError &e) {
        log_peer("the parent broker", spdlog::level::warn,
                 "dropped a malformed frame from the parent: {}", e.what());
    }
}

void TreeLink::beat() {
    const auto now = Reactor::Clock::now();
    const zmq::message_t b = frame(Beat{s_.rank});
    if (s_.rank != 0 && !parent_lost_ && s_.standing && !welcomed_) {
        // Its parent may not be up yet: waited for, said every 10 s (once, when it was lost: at
        // the loss), no beats queued for it.
        if (!away_ && now - waiting_said_ >= std::chrono::seconds(10)) {
            waiting_said_ = now;
            log().info("waiting for the parent broker at {}", s_.parent.at(0));
        }
        parent_heard_ = now;
    } else if (up_ && !parent_lost_) {
        if (now - parent_heard_ > s_.lost_after)
            return parent_gone(
                fmt::format("the parent broker was silent for {} ms", s_.lost_after.count()));
        send_up({view(b)});
    }
    std::vector<Rank> silent;
    for (auto &[r, c] : children_) {
        if (now - c.last_heard > s_.lost_after) {
            silent.push_back(r);
            continue;
        }
        send_down(r, {view(b)});
    }
    for (Rank r : silent) child_lost(r, fmt::format("silent for {} ms", s_.lost_after.count()));
    // A child that never joined after its parent's boot deadline is the root's to report.
}

void TreeLink::send_remote(const std::string &to, zmq::message_t msg) {
    const auto slash = to.find('/');
    if (slash == std::string::npos || slash < 2) {
        log().warn("bad tree address '{}': message dropped", to);
        return;
    }
    const std::string who = to.substr(1, slash - 1);
    const std::string address = to.substr(slash + 1);
    Rank dest = kEveryone;
    if (who != "*") {
        char *end = nullptr;
        const unsigned long r = std::strtoul(who.c_str(), &end, 10);
        if (*end || r >= s_.size) {
            log().warn("no broker '{}' in the tree: message to {} dropped", who, address);
            return;
        }
        dest = static_cast<Rank>(r);
    }
    route(dest, s_.rank, address, view(msg), false);
}

void TreeLink::route(Rank to, Rank from, const std::string &address, std::string_view payload,
                     bool from_parent) {
    const zmq::message_t header = frame(Hop{to, from, address});
    const Frames frames{view(header), payload};
    if (to == kEveryone) {
        // Up to the root first, then down to everyone, so that all see one order.
        if (s_.rank != 0 && !from_parent) return send_up(frames);
        for (const auto &[r, c] : children_) send_down(r, frames);
        return deliver(from, address, payload);
    }
    if (to == s_.rank) return deliver(from, address, payload);
    if (auto child = topology_.child_toward(s_.rank, to)) {
        if (!children_.contains(*child)) {
            log().info("broker {} is not reachable: message to {} dropped", to, address);
            return;
        }
        return send_down(*child, frames);
    }
    if (s_.rank == 0) {
        log().warn("no broker {}: message to {} dropped", to, address);
        return;
    }
    send_up(frames);
}

void TreeLink::deliver(Rank from, const std::string &address, std::string_view payload) {
    Actor *actor = bus().find(address);
    if (!actor) {  // a peer of this broker (a routing id): the bytes go as they are
        bus().send(address, zmq::message_t(payload.data(), payload.size()));
        return;
    }
    Envelope env;
    try {
        env = decode(payload.data(), payload.size(), DecodeLimits{.max_message = s_.max_message});
    } catch (const DecodeError &e) {
        log_peer(fmt::format("broker {}", from), spdlog::level::warn,
                 "dropped a malformed message from broker {}: {}", from, e.what());
        return;
    }
    env.from = remote_address(from, env.from);
    env.session = session_;
    if (&actor->reactor() == &reactor()) return actor->dispatch(env);
    actor->reactor().post([actor, env = std::move(env)] { actor->dispatch(env); });
}

void TreeLink::send_down(Rank child, const Frames &frames) {
    auto it = children_.find(child);
    if (it == children_.end() || !down_) return;
    // A connection that is over reports its end itself (child_closed).
    down_->send(it->second.conn, frames);
}

void TreeLink::send_up(const Frames &frames) {
    if (parent_lost_) return;
    if (up_ && up_ready_) {
        up_->send(frames);
        return;
    }
    // No connection past its handshake yet (a standing tree's parent not up, a connection tried
    // again): held here, so that one that fails before its handshake loses none of it.
    std::size_t bytes = 0;
    for (auto f : frames) bytes += f.size();
    if (up_queue_bytes_ + bytes > queue_bound()) {
        log().warn("dropped a message for the parent broker: {} bytes wait for its connection",
                   up_queue_bytes_);
        return;
    }
    up_queue_bytes_ += bytes;
    up_queue_.emplace_back(frames.begin(), frames.end());
}

void TreeLink::flush_up_queue() {
    while (!up_queue_.empty() && up_ && up_ready_ && !parent_lost_) {
        const Frames frames(up_queue_.front().begin(), up_queue_.front().end());
        up_->send(frames);
        for (auto f : frames) up_queue_bytes_ -= f.size();
        up_queue_.pop_front();
    }
}

void TreeLink::child_lost(Rank child, const std::string &why) {
    if (!children_.erase(child)) return;
    const auto lost = topology_.subtree(child);
    lost_.insert(lost.begin(), lost.end());
    if (stopping_) return;
    log().error("lost broker {}{} and its subtree: {}", child,
                s_.rank == 0 && boot_ ? " on " + s_.boot.nodes.at(child) : std::string(), why);
    tell_lost(lost, false);
    // The others' fences, Gets, events and jobs wait on these brokers too.
    send(every_broker(name()), msg::TreeLostElsewhere{lost});
}

// Our own comes back too ("@*"): its brokers are in lost_ already.
void TreeLink::lost_elsewhere(const Envelope &, msg::TreeLostElsewhere &m) {
    if (stopping_) return;
    std::vector<Rank> fresh;
    for (Rank r : m.brokers)
        if (r < s_.size && r != s_.rank && lost_.insert(r).second) fresh.push_back(r);
    if (fresh.empty()) return;
    log().error("broker(s) {} lost elsewhere in the tree", fmt::join(fresh, ","));
    tell_lost(std::move(fresh), false);
}

void TreeLink::tell_lost(std::vector<Rank> lost, bool parent) {
    msg::TreeLost m{std::move(lost), parent, {}};
    const auto view = brokers_.view();
    for (Rank r : m.brokers)
        if (r < view->size()) m.nodes.push_back(view->nodes[r]);
    broadcast(m);
}

void TreeLink::parent_gone(const std::string &why) {
    if (parent_lost_ || away_) return;
    // A standing tree's parent that was lost (not one that stopped, nor refused us) may come
    // back, a restarted root as a site's service manager starts it again.
    if (s_.standing && welcomed_ && !why.empty() && !stopping_) return parent_away(why);
    parent_lost_ = true;
    if (!why.empty()) log().error("lost the parent broker: {}; stopping", why);
    tell_lost({}, true);
    on_parent_gone_(!why.empty());
}

void TreeLink::parent_away(const std::string &why) {
    away_ = true;
    welcomed_ = false;
    log().error(
        "lost the parent broker: {}; its ranks go on, and it tries the parent again every second",
        why);
    tell_lost({}, true);
    // The connection may still be open (a parent silent, its node unreachable): dropped, and a
    // new one tried in a second (parent_closed). Never from inside its own callbacks: a closed
    // connection is already reset (parent_closed), a silent one is found by the heartbeat timer.
    up_.reset();
    up_ready_ = false;
    parent_closed({});
}

void TreeLink::rejoin(const Envelope &env, msg::TreeRejoin &m) {
    const auto from = sender_broker(env.from);
    if (!from || topology_.parent(s_.rank) != *from) return;
    rejoined(m.rank);
}

void TreeLink::rejoined(Rank rank) {
    // The root hears of this one from its parent when it is the one that rejoined.
    if (s_.rank != 0 && rank != s_.rank)
        send(remote_address(0, name()), BrokerOnline{s_.rank, addresses_});
    for (const auto &[r, c] : children_)
        if (c.rejoins) send(remote_address(r, name()), msg::TreeRejoin{rank});
    if (const auto parent = topology_.parent(s_.rank); parent && rank == s_.rank)
        broadcast(msg::TreeJoined{*parent});
    broadcast(msg::TreeRejoined{rank});
}

void TreeLink::shutdown() {
    if (stopping_) return;
    stopping_ = true;
    const zmq::message_t stop = frame(Stop{"the allocation is stopping"});
    for (const auto &[r, c] : children_) send_down(r, {view(stop)});
    if (heartbeat_timer_) reactor().cancel(heartbeat_timer_);
    heartbeat_timer_ = 0;
    if (reconnect_timer_) reactor().cancel(std::exchange(reconnect_timer_, 0));
}

void TreeLink::close() {
    // After a failed boot an agent may hang (a node that does not answer): no wait for it.
    if (boot_) boot_->reap(std::chrono::milliseconds(boot_failed_ ? 0 : 5000));
    boot_.reset();
    // The children's Stop must leave before the connections go (bounded: a dead child takes
    // none).
    if (down_) down_->close_all(Reactor::Clock::now() + std::chrono::milliseconds(1000));
    down_.reset();
    up_.reset();
}

}  // namespace zpmix::tree
