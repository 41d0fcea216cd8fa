#include "actors/runtime/actor.hpp"

#include "actors/runtime/address.hpp"

#include <stdexcept>

#include <pmix_common.h>

namespace zpmix {

void Bus::add(Actor &actor) {
    for (const auto &[type, handler] : actor.handlers()) {
        auto route = routes_.find(type);
        if (route != routes_.end() || (handler.access != Access::internal && types_.count(type)))
            throw std::logic_error("message type '" + type + "' is handled by '" + actor.name() +
                                   "' and by another actor, and peers may send it");
        if (handler.access != Access::internal) routes_[type] = {&actor, handler.access};
    }
    actors_[actor.name()] = &actor;
    for (const auto &[type, handler] : actor.handlers()) types_[type].push_back(&actor);
}

void Bus::set_peer_sink(Reactor &reactor, PeerSink sink) {
    peer_reactor_ = &reactor;
    peer_sink_ = std::move(sink);
}

void Bus::set_remote_sink(Reactor &reactor, PeerSink sink) {
    remote_reactor_ = &reactor;
    remote_sink_ = std::move(sink);
}

Bus::Route Bus::route(const std::string &type) const {
    if (auto it = routes_.find(type); it != routes_.end()) return it->second;
    if (auto it = types_.find(type); it != types_.end())
        return {it->second.front(), Access::internal};
    return {};
}

std::vector<std::pair<std::string, Bus::Route>> Bus::routes() const {
    std::vector<std::pair<std::string, Route>> out;
    for (const auto &[type, actors] : types_) out.emplace_back(type, route(type));
    return out;
}

void Bus::broadcast(std::string_view type, const zmq::message_t &msg) {
    auto it = types_.find(std::string(type));
    if (it == types_.end()) return;
    for (Actor *actor : it->second) {
        auto copy = std::make_shared<zmq::message_t>();
        copy->copy(const_cast<zmq::message_t &>(msg));  // shares the buffer, no byte copy
        actor->reactor().post([actor, copy] { actor->deliver(copy); });
    }
}

Actor *Bus::find(std::string_view name) const {
    auto it = actors_.find(std::string(name));
    return it == actors_.end() ? nullptr : it->second;
}

void Bus::send(const std::string &to, zmq::message_t msg) {
    if (is_remote_address(to)) {
        if (!remote_sink_) {
            spdlog::warn("bus: no tree link for '{}', message dropped", to);
            return;
        }
        return to_sink(remote_reactor_, remote_sink_, to, std::move(msg));
    }
    if (Actor *actor = find(to)) {
        // Always through the mailbox, even on the same thread: a handler never re-enters.
        auto shared = std::make_shared<zmq::message_t>(std::move(msg));
        actor->reactor().post([actor, shared] { actor->deliver(shared); });
        return;
    }
    if (!peer_sink_) {
        spdlog::warn("bus: no route to '{}', message dropped", to);
        return;
    }
    to_sink(peer_reactor_, peer_sink_, to, std::move(msg));
}

void Bus::to_sink(Reactor *reactor, const PeerSink &sink, const std::string &to,
                  zmq::message_t msg) {
    if (reactor->on_reactor_thread()) {
        sink(to, std::move(msg));
    } else {
        auto shared = std::make_shared<zmq::message_t>(std::move(msg));
        reactor->post([&sink, to, shared] { sink(to, std::move(*shared)); });
    }
}

Actor::Actor(std::string name, Reactor &reactor, Bus &bus)
    : name_(std::move(name)), reactor_(reactor), bus_(bus) {
    log_ = spdlog::default_logger()->clone(name_);
}

void Actor::dispatch(const Envelope &env) {
    auto it = handlers_.find(env.type);
    if (it == handlers_.end()) {
        log_peer(env, spdlog::level::warn, "unknown message type '{}' from {}", env.type,
                 spdlog::to_hex(env.from));
        reply_error(env, PMIX_ERR_NOT_SUPPORTED, "unknown message type '" + env.type + "'");
        return;
    }
    try {
        it->second.fn(env);
    } catch (const DecodeError &e) {
        log_peer(env, spdlog::level::warn, "{}", e.what());
        reply_error(env, PMIX_ERR_BAD_PARAM, e.what());
    } catch (const std::exception &e) {
        log_peer(env, spdlog::level::err, "handler for '{}' failed: {}", env.type, e.what());
        reply_error(env, PMIX_ERROR, e.what());
    }
}

void Actor::deliver(std::shared_ptr<const zmq::message_t> msg) {
    try {
        dispatch(decode_in_place(std::move(msg)));
    } catch (const DecodeError &e) {
        log_->error("dropped a malformed internal message: {}", e.what());
    }
}

void Actor::refuse_impostor(const Envelope &env, const msg::Proc &p) {
    log_peer(env, spdlog::level::warn, "refused '{}' from {}:{} (pid {}): it names {}:{}", env.type,
             env.session->nspace, env.session->rank, env.peer.pid, p.nspace, p.rank);
    reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                "'" + env.type + "' may act only for the sender's own process");
}

void Actor::reply_error(const Envelope &req, std::int32_t status, std::string message) {
    if (req.from.empty()) return;  // nobody to answer
    bus_.send(req.from, encode(msg::ErrorReply::type, req.id,
                               msg::ErrorReply{status, std::move(message)}, name_));
}

}  // namespace zpmix
