#include "broker/dispatcher.hpp"

#include <pmix_common.h>

namespace zpmix {

std::string peer_name(const std::string &rid) {
    std::string out;
    for (unsigned char c : rid) out += fmt::format("{:02x}", c);
    return out;
}

namespace {

const char *class_name(Access who) {
    switch (who) {
        case Access::session:
            return "a client";
        case Access::operator_:
            return "a tool";
        default:
            return "a peer without a session";
    }
}

}  // namespace

Dispatcher::Dispatcher(Reactor &reactor, Bus &bus, DecodeLimits limits)
    : Actor("broker", reactor, bus), limits_(limits) {
    on(&Dispatcher::session_open, Access::internal);
    on(&Dispatcher::namespace_ended, Access::internal);
}

void Dispatcher::refuse(const std::string &peer, const PeerCredentials &cred, std::uint64_t id,
                        std::int32_t status, const std::string &why) {
    // A peer that repeats what is refused writes a few lines per interval (PeerLogLimit).
    std::uint64_t suppressed = 0;
    if (bus().peer_log().allow(peer_key(cred, peer), suppressed))
        log().warn("peer {} ({}): {}{}", peer_name(peer), peer_key(cred, peer), why,
                   PeerLogLimit::suffix(suppressed));
    bus().send(peer, encode(msg::ErrorReply::type, id, msg::ErrorReply{status, why}, name()));
}

void Dispatcher::route(const std::string &peer, const std::vector<std::string_view> &frames,
                       const PeerCredentials &cred) {
    if (frames.size() != 1)
        return refuse(peer, cred, 0, PMIX_ERR_BAD_PARAM,
                      "expected one message frame, got " + std::to_string(frames.size()));
    Envelope env;
    try {
        env = decode(frames[0].data(), frames[0].size(), limits_);
    } catch (const DecodeError &e) {
        return refuse(peer, cred, 0, PMIX_ERR_BAD_PARAM, e.what());
    }
    // A peer of another protocol version is refused, its Hello as any message, before anything
    // reads a body it may lay out otherwise (but for the release a Hello states).
    if (env.version != kProtocolVersion)
        return refuse(
            peer, cred, env.id, PMIX_ERR_NOT_SUPPORTED,
            msg::other_protocol(env.version,
                                env.type == msg::Hello::type ? msg::release_in(env) : std::string(),
                                "peer", "broker"));
    const auto s = sessions_.find(peer);
    if (s != sessions_.end()) env.session = s->second;
    const Bus::Route to = bus().route(env.type);
    if (!to.actor)
        return refuse(peer, cred, env.id, PMIX_ERR_NOT_SUPPORTED,
                      fmt::format("'{}' is not served by this broker (zpmix {}; the peer runs "
                                  "zpmix {})",
                                  env.type, msg::kRelease,
                                  env.session ? env.session->features.release()
                                              : std::string("of an unknown release")));
    const Access who = !env.session               ? Access::anyone
                       : env.session->is_client() ? Access::session
                                                  : Access::operator_;
    if (!allows(to.access, who)) {
        const std::string why =
            to.access == Access::internal ? "'" + env.type + "' is internal to the broker"
            : who == Access::anyone       ? "'" + env.type + "' needs a session: send hello first"
                                    : "'" + env.type + "' may not be sent by " + class_name(who);
        return refuse(peer, cred, env.id, PMIX_ERR_NO_PERMISSIONS, why);
    }
    env.from = peer;
    env.peer = cred;
    // An actor on another of the broker's reactors (the launcher) handles it on its own thread.
    if (&to.actor->reactor() != &reactor()) {
        to.actor->reactor().post(
            [actor = to.actor, env = std::move(env)] { actor->dispatch(env); });
        return;
    }
    to.actor->dispatch(env);
}

void Dispatcher::peer_gone(const std::string &peer) {
    limited_.erase(peer);
    if (sessions_.erase(peer)) broadcast(msg::SessionClosed{peer});
}

std::optional<zmq::message_t> Dispatcher::outgoing(const std::string &peer, zmq::message_t &msg) {
    if (limited_.empty() || !limited_.contains(peer)) return std::nullopt;
    const auto s = sessions_.find(peer);
    if (s == sessions_.end()) return std::nullopt;
    Envelope env;
    try {
        env = decode(msg.data(), msg.size(), limits_);
    } catch (const DecodeError &) {
        return std::nullopt;
    }
    const msg::PeerFeatures &f = s->second->features;
    if (f.serves(env.type)) return std::nullopt;
    // Its release cannot read it: an answer becomes a refusal it can, anything else is dropped.
    std::uint64_t suppressed = 0;
    if (bus().peer_log().allow(peer_key({}, peer), suppressed))
        log().warn("peer {} runs zpmix {}, which lacks '{}' (this broker zpmix {}): {} '{}'{}",
                   peer_name(peer), f.release(), msg::feature_of(env.type), msg::kRelease,
                   env.id ? "refused the request with" : "did not send it", env.type,
                   PeerLogLimit::suffix(suppressed));
    if (!env.id) return zmq::message_t();
    return encode(
        msg::ErrorReply::type, env.id,
        msg::ErrorReply{PMIX_ERR_NOT_SUPPORTED,
                        fmt::format("the answer needs '{}', which zpmix {} lacks (the "
                                    "broker runs zpmix {})",
                                    msg::feature_of(env.type), f.release(), msg::kRelease)},
        name());
}

void Dispatcher::session_open(const Envelope &, msg::SessionOpen &m) {
    auto s = std::make_shared<PeerSession>();
    s->role = m.role == "client" ? PeerSession::Role::client
              : m.role == "tool" ? PeerSession::Role::tool
                                 : PeerSession::Role::launcher;
    s->nspace = std::move(m.nspace);
    s->rank = m.rank;
    s->features = msg::PeerFeatures(std::move(m.release), std::move(m.features));
    if (!s->features.missing().empty()) limited_.insert(m.peer);
    sessions_[m.peer] = std::move(s);
    zmq::message_t welcome(m.welcome.data(), m.welcome.size());
    bus().send(m.peer, std::move(welcome));
}

void Dispatcher::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    std::erase_if(sessions_, [&](const auto &kv) {
        const bool ended = kv.second->is_client() && kv.second->nspace == m.nspace;
        if (ended) limited_.erase(kv.first);
        return ended;
    });
}

}  // namespace zpmix
