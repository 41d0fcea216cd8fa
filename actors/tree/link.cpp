#include "actors/tree/link.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <pmix_common.h>

#include "actors/runtime/zmq_frames.hpp"

namespace zpmix::tree {

namespace {

constexpr Rank kEveryone = 0xffffffffu;
// A child's CURVE handshake with its parent's ROUTER (ZMQ_HANDSHAKE_IVL there).
constexpr std::chrono::milliseconds kHandshakeTimeout{10000};

using Beat = msg::TreeBeat;
using Hop = msg::TreeHop;
using Stop = msg::TreeStop;
using Hello = msg::TreeHello;
using Welcome = msg::TreeWelcome;

template <class M>
zmq::message_t frame(const M &m) {
    return encode(M::type, 0, m, "tree");
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
// tried at once, as Open MPI's daemons do); "" when none does.
std::string first_answering(const std::vector<std::string> &uris, std::chrono::milliseconds limit) {
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
    std::string winner;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (winner.empty() && !tries.empty()) {
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
            if (err == 0 && winner.empty()) winner = tries[i].uri;
            ::close(tries[i].fd);
            tries[i].fd = -1;
        }
        std::erase_if(tries, [](const Try &t) { return t.fd < 0; });
    }
    for (auto &t : tries) ::close(t.fd);
    return winner;
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
    auto session = std::make_shared<PeerSession>();
    session->role = PeerSession::Role::broker;
    session_ = std::move(session);
}

TreeLink::~TreeLink() {
    close();
}

void TreeLink::open() {
    if (s_.public_key.size() != 40 || s_.secret_key.size() != 40)
        throw std::runtime_error("the tree needs the allocation's CURVE keypair (Z85, 40 chars)");
    if (!zmq_has("curve")) throw std::runtime_error("this libzmq has no CURVE security");
    // Only brokers holding the allocation's key get in.
    zap_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
    zap_.set(zmq::sockopt::linger, 0);
    zap_.bind("inproc://zeromq.zap.01");
    const auto secure = [&](zmq::socket_t &s) {
        s.set(zmq::sockopt::linger, 0);
        // Larger messages go in pieces (send_pieces): a peer that has not authenticated makes
        // this broker hold little.
        s.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(zmtp::kTcpFrameLimit));
        s.set(zmq::sockopt::sndhwm, 0);  // a broker's messages are never dropped
        s.set(zmq::sockopt::rcvhwm, 0);
    };
    if (!topology_.children(s_.rank).empty()) {
        down_ = zmq::socket_t(ctx_, zmq::socket_type::router);
        secure(down_);
        down_.set(zmq::sockopt::router_mandatory, 1);
        // A child that starts again (a standing tree's) takes its old connection's place.
        down_.set(zmq::sockopt::router_handover, 1);
        down_.set(zmq::sockopt::curve_server, 1);
        down_.set(zmq::sockopt::curve_secretkey, s_.secret_key);
        down_.set(zmq::sockopt::zap_domain, "zpmix-tree");
        down_.set(zmq::sockopt::handshake_ivl, static_cast<int>(kHandshakeTimeout.count()));
        // Children connect from their nodes, or all from one (brokers on one host, as in tests):
        // a parent's children may be unauthenticated at once from one address.
        gate_ = std::make_unique<TcpGate>(
            reactor(), ctx_, log(),
            TcpGate::Settings{.name = "tree",
                              .max_unauthenticated = std::max<std::size_t>(16, 2 * s_.radix),
                              .max_per_address = std::max<std::size_t>(8, s_.radix),
                              .handshake_timeout = kHandshakeTimeout,
                              .failures_burst = s_.failures_burst,
                              .failures_per_minute = s_.failures_per_minute});
        gate_->watch(down_);
        std::string ip = "0.0.0.0";
        if (!s_.tcp_if.empty()) {
            ip = interface_address(s_.tcp_if);
            if (ip.empty())
                throw std::runtime_error("tcp_if '" + s_.tcp_if +
                                         "': no up IPv4 interface of that name or network");
        }
        down_.bind("tcp://" + ip + ":" + std::to_string(s_.standing ? s_.port : 0));
        const std::string bound = down_.get(zmq::sockopt::last_endpoint);
        const std::string port = bound.substr(bound.rfind(':') + 1);
        for (const auto &a : ip == "0.0.0.0" ? all_addresses() : std::vector<std::string>{ip})
            addresses_.push_back("tcp://" + a + ":" + port);
        reactor().watch(down_, [this] { on_down(); });
        reactor().watch(zap_, [this] { on_zap(); });
    }
    if (s_.rank != 0) {
        // A standing tree's parent may start later: libzmq connects when it is up.
        const std::string parent =
            s_.standing ? s_.parent.at(0)
                        : first_answering(s_.parent, std::chrono::milliseconds(10000));
        if (parent.empty())
            throw std::runtime_error("no address of the parent broker answers (tried " +
                                     std::to_string(s_.parent.size()) + ")");
        up_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
        secure(up_);
        up_.set(zmq::sockopt::curve_serverkey, s_.public_key);
        up_.set(zmq::sockopt::curve_publickey, s_.public_key);
        up_.set(zmq::sockopt::curve_secretkey, s_.secret_key);
        up_.set(zmq::sockopt::routing_id, "b" + std::to_string(s_.rank));
        up_.connect(parent);
        up_.send(frame(Hello{s_.rank, s_.node, addresses_}), zmq::send_flags::none);
        parent_heard_ = waiting_said_ = Reactor::Clock::now();
        reactor().watch(up_, [this] { on_up(); });
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

void TreeLink::on_zap() {
    // version, request id, domain, address, routing id, mechanism, client key
    auto req = next_message(zap_);
    if (req.size() < 6) return;
    std::string status = "400", text = "not a broker of this allocation";
    if (req[5].to_string() == "CURVE" && req.size() >= 7 && req[6].size() == 32) {
        char z85[41] = {};
        zmq_z85_encode(z85, static_cast<const std::uint8_t *>(req[6].data()), 32);
        if (s_.public_key == z85) status = "200", text = "OK";
    }
    if (status != "200" && gate_) gate_->refused_credentials(req[3].to_string());
    std::uint64_t left_out = 0;
    if (status != "200" && refusals_.allow(left_out))
        log().warn("refused a tree connection from {}: not the allocation's key{}",
                   req[3].to_string(), LogThrottle::suffix(left_out));
    zap::reply(zap_, req[1], status, text, "broker");
}

void TreeLink::on_down() {
    for (int n = 0; n < 256; ++n) {
        auto parts = next_message(down_);
        if (parts.empty()) return;
        try {
            if (parts.size() >= 2) from_child(parts);
        } catch (const DecodeError &e) {
            log_peer(peer_key({}, parts[0].to_string_view()), spdlog::level::warn,
                     "dropped a malformed frame from a child: {}", e.what());
        }
    }
}

void TreeLink::from_child(std::vector<zmq::message_t> &parts) {
    const std::string rid = parts[0].to_string();
    if (const int fd = zmq_msg_get(parts[1].handle(), ZMQ_SRCFD); fd >= 0 && gate_)
        gate_->authenticated(fd);
    const Envelope env = decode(parts[1], DecodeLimits{.max_message = s_.max_message});
    if (env.type == Hello::type) {
        const auto h = env.as<Hello>();
        std::string why;
        if (env.version != kProtocolVersion)
            why = fmt::format(
                "protocol version {} is not this broker's ({}): run the same zpmix release on "
                "every node",
                env.version, kProtocolVersion);
        else if (h.rank >= s_.size || topology_.parent(h.rank) != s_.rank)
            why = fmt::format("rank {} is not a child of broker {}", h.rank, s_.rank);
        down_.send(zmq::buffer(rid), zmq::send_flags::sndmore);
        down_.send(frame(Welcome{why.empty(), why}), zmq::send_flags::none);
        if (!why.empty())
            return log_peer(peer_key({}, rid), spdlog::level::err, "refused broker {} on {}: {}",
                            h.rank, h.node, why);
        // A child that started again: what ran under its old self is gone.
        if (children_.contains(h.rank)) child_lost(h.rank, "it started again");
        children_[h.rank] = {rid, Reactor::Clock::now()};
        send(remote_address(0, "tree"), BrokerOnline{h.rank, h.addresses});
        return;
    }
    // Anything else from a child that never said hello is dropped.
    auto child = std::find_if(children_.begin(), children_.end(),
                              [&](const auto &c) { return c.second.rid == rid; });
    if (child == children_.end()) return;
    child->second.last_heard = Reactor::Clock::now();
    if (env.type == Hop::type && parts.size() >= 3) {
        const auto h = env.as<Hop>();
        auto payload = zpmix::joined(parts, 2, s_.max_message);
        if (!payload)
            return log_peer(fmt::format("broker {}", child->first), spdlog::level::warn,
                            "dropped a message from broker {} over {} bytes", child->first,
                            s_.max_message);
        route(h.to, h.from, h.address, *payload, false);
    }
}

void TreeLink::on_up() {
    for (int n = 0; n < 256 && !parent_lost_; ++n) {
        auto parts = next_message(up_);
        if (parts.empty()) return;
        parent_heard_ = Reactor::Clock::now();
        try {
            from_parent(parts);
        } catch (const DecodeError &e) {
            log_peer("the parent broker", spdlog::level::warn,
                     "dropped a malformed frame from the parent: {}", e.what());
        }
    }
}

void TreeLink::from_parent(std::vector<zmq::message_t> &parts) {
    const Envelope env = decode(parts[0], DecodeLimits{.max_message = s_.max_message});
    if (env.type == Welcome::type) {
        const auto w = env.as<Welcome>();
        if (w.ok) {
            welcomed_ = true;
            if (s_.standing) log().info("joined the tree as broker {} of {}", s_.rank, s_.size);
            return;
        }
        log().critical("the parent broker refused this one: {}", w.why);
        set_ready(w.why);
        parent_gone("refused: " + w.why);
    } else if (env.type == Stop::type) {
        log().info("the allocation is stopping");
        parent_gone({});
    } else if (env.type == Hop::type && parts.size() >= 2) {
        const auto h = env.as<Hop>();
        auto payload = zpmix::joined(parts, 1, s_.max_message);
        if (!payload)
            return log_peer("the parent broker", spdlog::level::warn,
                            "dropped a message from the parent over {} bytes", s_.max_message);
        route(h.to, h.from, h.address, *payload, true);
    }
}

void TreeLink::beat() {
    const auto now = Reactor::Clock::now();
    zmq::message_t b = frame(Beat{s_.rank});
    if (up_ && !parent_lost_ && s_.standing && !welcomed_) {
        // Its parent may not be up yet: waited for, said every 10 s, no beats queued for it.
        if (now - waiting_said_ >= std::chrono::seconds(10)) {
            waiting_said_ = now;
            log().info("waiting for the parent broker at {}", s_.parent.at(0));
        }
        parent_heard_ = now;
    } else if (up_ && !parent_lost_) {
        if (now - parent_heard_ > s_.lost_after)
            return parent_gone(
                fmt::format("the parent broker was silent for {} ms", s_.lost_after.count()));
        zmq::message_t copy;
        copy.copy(b);
        std::vector<zmq::message_t *> f{&copy};
        send_up(f);
    }
    std::vector<Rank> silent;
    for (auto &[r, c] : children_) {
        if (now - c.last_heard > s_.lost_after) {
            silent.push_back(r);
            continue;
        }
        zmq::message_t copy;
        copy.copy(b);
        std::vector<zmq::message_t *> f{&copy};
        send_down(r, f);
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
    route(dest, s_.rank, address, msg, false);
}

void TreeLink::route(Rank to, Rank from, const std::string &address, zmq::message_t &payload,
                     bool from_parent) {
    zmq::message_t header = frame(Hop{to, from, address});
    auto forward_down = [&](Rank child) {
        zmq::message_t h, p;
        h.copy(header);
        p.copy(payload);
        std::vector<zmq::message_t *> f{&h, &p};
        send_down(child, f);
    };
    if (to == kEveryone) {
        // Up to the root first, then down to everyone, so that all see one order.
        if (s_.rank != 0 && !from_parent) {
            std::vector<zmq::message_t *> f{&header, &payload};
            return send_up(f);
        }
        for (const auto &[r, c] : children_) forward_down(r);
        return deliver(from, address, payload);
    }
    if (to == s_.rank) return deliver(from, address, payload);
    if (auto child = topology_.child_toward(s_.rank, to)) {
        if (!children_.contains(*child)) {
            log().info("broker {} is not reachable: message to {} dropped", to, address);
            return;
        }
        return forward_down(*child);
    }
    if (s_.rank == 0) {
        log().warn("no broker {}: message to {} dropped", to, address);
        return;
    }
    std::vector<zmq::message_t *> f{&header, &payload};
    send_up(f);
}

void TreeLink::deliver(Rank from, const std::string &address, zmq::message_t &payload) {
    Actor *actor = bus().find(address);
    if (!actor) {  // a peer of this broker (a routing id): the bytes go as they are
        zmq::message_t copy;
        copy.copy(payload);
        bus().send(address, std::move(copy));
        return;
    }
    Envelope env;
    try {
        env = decode(payload, DecodeLimits{.max_message = s_.max_message});
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

void TreeLink::send_down(Rank child, const std::vector<zmq::message_t *> &frames) {
    auto it = children_.find(child);
    if (it == children_.end()) return;
    try {
        down_.send(zmq::buffer(it->second.rid), zmq::send_flags::sndmore);
        send_pieces(down_, frames);
    } catch (const zmq::error_t &e) {  // EHOSTUNREACH: its connection is gone
        // Later: the caller may be going through children_.
        reactor().post([this, child, why = std::string(e.what())] { child_lost(child, why); });
    }
}

void TreeLink::send_up(const std::vector<zmq::message_t *> &frames) {
    if (!up_ || parent_lost_) return;
    send_pieces(up_, frames);
}

// The frames as one message, each in pieces of at most zmtp::kTcpFrameBytes (the largest frame
// a broker's tree socket takes); only a Hop's payload is ever that large, and comes last.
void TreeLink::send_pieces(zmq::socket_t &s, const std::vector<zmq::message_t *> &frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const bool more = i + 1 < frames.size();
        if (frames[i]->size() > zmtp::kTcpFrameBytes)
            send_in_pieces(s, frames[i]->data(), frames[i]->size(), zmq::send_flags::none, more);
        else
            s.send(*frames[i], more ? zmq::send_flags::sndmore : zmq::send_flags::none);
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
    if (parent_lost_) return;
    parent_lost_ = true;
    if (!why.empty()) log().error("lost the parent broker: {}; stopping", why);
    tell_lost({}, true);
    on_parent_gone_(!why.empty());
}

void TreeLink::shutdown() {
    if (stopping_) return;
    stopping_ = true;
    for (const auto &[r, c] : children_) {
        zmq::message_t s = frame(Stop{"the allocation is stopping"});
        std::vector<zmq::message_t *> f{&s};
        send_down(r, f);
    }
    if (heartbeat_timer_) reactor().cancel(heartbeat_timer_);
    heartbeat_timer_ = 0;
}

void TreeLink::close() {
    // After a failed boot an agent may hang (a node that does not answer): no wait for it.
    if (boot_) boot_->reap(std::chrono::milliseconds(boot_failed_ ? 0 : 5000));
    boot_.reset();
    // The children's Stop must leave before the socket goes (bounded: a dead child takes none).
    if (down_) down_.set(zmq::sockopt::linger, 1000);
    if (gate_) gate_->close();
    for (zmq::socket_t *s : {&up_, &down_, &zap_})
        if (*s) s->close();
    ctx_.close();
}

}  // namespace zpmix::tree
