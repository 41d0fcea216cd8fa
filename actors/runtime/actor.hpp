#pragma once
// An actor owns its state and a mailbox on one reactor, and handles messages through a table of
// handlers keyed by message type. Actors never touch each other's state: they send envelopes
// through the Bus, which delivers to another actor's mailbox or to a connected peer.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/fmt/bin_to_hex.h>
#include <spdlog/spdlog.h>

#include "actors/protocol/common.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/reactor.hpp"

namespace zpmix {

class Actor;

// Routes envelopes by address: an actor's name, or else a peer (the broker's sink for routing
// ids). Actors are registered before the reactors start and stay for the Bus's lifetime.
class Bus {
  public:
    using PeerSink = std::function<void(const std::string &peer, zmq::message_t msg)>;

    void add(Actor &actor);
    // Where messages to non-actor addresses go, and the reactor that sink runs on.
    void set_peer_sink(Reactor &reactor, PeerSink sink);

    // Thread-safe. To an actor: queued in its mailbox. To a peer: sent on the sink's thread.
    void send(const std::string &to, zmq::message_t msg);
    // Queues msg in the mailbox of every actor that handles `type` (internal notifications such
    // as a process's exit, which several actors follow).
    void broadcast(std::string_view type, const zmq::message_t &msg);
    // The first actor registered for a message type (the one peers' requests go to), or nullptr.
    Actor *handler_of(std::string_view type) const;
    Actor *find(std::string_view name) const;

  private:
    std::unordered_map<std::string, Actor *> actors_;
    std::unordered_map<std::string, std::vector<Actor *>> types_;
    Reactor *peer_reactor_ = nullptr;
    PeerSink peer_sink_;
};

class Actor {
  public:
    Actor(std::string name, Reactor &reactor, Bus &bus);
    virtual ~Actor() = default;
    Actor(const Actor &) = delete;
    Actor &operator=(const Actor &) = delete;

    const std::string &name() const { return name_; }
    Reactor &reactor() { return reactor_; }
    const std::unordered_map<std::string, std::function<void(const Envelope &)>> &handlers() const {
        return handlers_;
    }

    // Runs the handler for env.type on the calling (the actor's own) thread. An unknown type, a
    // body that does not decode, or a handler that throws is answered with an ErrorReply.
    void dispatch(const Envelope &env);
    // Mailbox entry: decodes bytes (in place: the envelope keeps them) and dispatches; malformed
    // bytes are logged and dropped.
    void deliver(std::shared_ptr<const zmq::message_t> msg);

  protected:
    // Registers `fn` for messages of type Msg::type.
    template <class Msg, class Self>
    void on(void (Self::*fn)(const Envelope &, Msg &)) {
        handlers_[Msg::type] = [this, fn](const Envelope &env) {
            Msg m = env.as<Msg>();
            (static_cast<Self *>(this)->*fn)(env, m);
        };
    }

    template <class Msg>
    void send(const std::string &to, const Msg &m, std::uint64_t id = 0) {
        bus_.send(to, encode(Msg::type, id, m, name_));
    }
    template <class Msg>
    void broadcast(const Msg &m) {
        bus_.broadcast(Msg::type, encode(Msg::type, 0, m, name_));
    }
    template <class Msg>
    void reply(const Envelope &req, const Msg &m) {
        bus_.send(req.from, encode(Msg::type, req.id, m, name_));
    }
    void reply_error(const Envelope &req, std::int32_t status, std::string message);

    Bus &bus() { return bus_; }
    spdlog::logger &log() { return *log_; }

  private:
    std::string name_;
    Reactor &reactor_;
    Bus &bus_;
    std::shared_ptr<spdlog::logger> log_;
    std::unordered_map<std::string, std::function<void(const Envelope &)>> handlers_;
};

}  // namespace zpmix
