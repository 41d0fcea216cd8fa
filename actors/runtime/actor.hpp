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
#include "actors/runtime/peer_log_limit.hpp"
#include "actors/runtime/reactor.hpp"

namespace zpmix {

class Actor;

// Who may send a message type to its handler, stated in each actor's handler table (flux-core's
// rolemask is the model). The broker's dispatcher (broker/dispatcher.hpp) checks it for every
// message from a peer before any handler runs; actors' messages to each other are not checked,
// and a peer can never send an internal one. A bit set: `session | operator_` lets both in.
enum class Access : std::uint8_t {
    internal = 0,   // this broker's own actors only
    session = 1,    // a client whose Hello was accepted, acting only as its own proc
    operator_ = 2,  // a tool or launcher of the broker's uid (zpmix run, ctl, ps, events)
    anyone = 4,     // a peer without a session: only "session.hello"
};
constexpr Access operator|(Access a, Access b) {
    return static_cast<Access>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
// Whether a handler of access `a` takes a message from a sender of class `who`.
constexpr bool allows(Access a, Access who) {
    return (static_cast<std::uint8_t>(a) & static_cast<std::uint8_t>(who)) != 0;
}

// Routes envelopes by address: an actor's name, or else a peer (the broker's sink for routing
// ids). Actors are registered before the reactors start and stay for the Bus's lifetime.
class Bus {
  public:
    using PeerSink = std::function<void(const std::string &peer, zmq::message_t msg)>;

    // Throws std::logic_error when a type peers may send would have two handlers (a peer's
    // message goes to exactly one actor, whatever the order of registration).
    void add(Actor &actor);
    // Where messages to non-actor addresses go, and the reactor that sink runs on.
    void set_peer_sink(Reactor &reactor, PeerSink sink);
    // Where messages to other brokers' addresses ("@<rank>/...", address.hpp) go: the tree
    // link. Without it they are dropped with a log line.
    void set_remote_sink(Reactor &reactor, PeerSink sink);

    // Thread-safe. To an actor: queued in its mailbox. To a peer: sent on the sink's thread.
    void send(const std::string &to, zmq::message_t msg);
    // Queues msg in the mailbox of every actor that handles `type` (internal notifications such
    // as a process's exit, which several actors follow).
    void broadcast(std::string_view type, const zmq::message_t &msg);
    // The actor a peer's message of `type` goes to, and who may send it; actor is nullptr when
    // no actor handles the type.
    struct Route {
        Actor *actor = nullptr;
        Access access = Access::internal;
    };
    Route route(const std::string &type) const;  // by reference: no copy per peer message
    // Every message type an actor handles, with its route (the access class of its handler).
    std::vector<std::pair<std::string, Route>> routes() const;
    Actor *find(std::string_view name) const;
    // How much of the log each peer may cause, for every actor and the broker's sockets.
    PeerLogLimit &peer_log() { return peer_log_; }

  private:
    PeerLogLimit peer_log_;
    std::unordered_map<std::string, Actor *> actors_;
    std::unordered_map<std::string, std::vector<Actor *>> types_;  // every handler, for broadcast
    std::unordered_map<std::string, Route> routes_;                // types peers may send
    Reactor *peer_reactor_ = nullptr, *remote_reactor_ = nullptr;
    PeerSink peer_sink_, remote_sink_;

    static void to_sink(Reactor *reactor, const PeerSink &sink, const std::string &to,
                        zmq::message_t msg);
};

class Actor {
  public:
    struct Handler {
        std::function<void(const Envelope &)> fn;
        Access access = Access::internal;
    };

    Actor(std::string name, Reactor &reactor, Bus &bus);
    virtual ~Actor() = default;
    Actor(const Actor &) = delete;
    Actor &operator=(const Actor &) = delete;

    const std::string &name() const { return name_; }
    Reactor &reactor() { return reactor_; }
    const std::unordered_map<std::string, Handler> &handlers() const { return handlers_; }

    // Runs the handler for env.type on the calling (the actor's own) thread. An unknown type, a
    // body that does not decode, or a handler that throws is answered with an ErrorReply.
    void dispatch(const Envelope &env);
    // Mailbox entry: decodes bytes (in place: the envelope keeps them) and dispatches; malformed
    // bytes are logged and dropped.
    void deliver(std::shared_ptr<const zmq::message_t> msg);

  protected:
    // Registers `fn` for messages of type Msg::type, which senders of class `access` may send.
    // A client's message that acts for a proc (msg::acting_proc) must name the client's own.
    template <class Msg, class Self>
    void on(void (Self::*fn)(const Envelope &, Msg &), Access access) {
        handlers_[Msg::type] = {[this, fn](const Envelope &env) {
                                    Msg m = env.as<Msg>();
                                    using msg::acting_proc;  // the default; overloads by ADL
                                    if (const msg::Proc *p = acting_proc(m);
                                        p && env.session && !acts_as_itself(*env.session, *p))
                                        return refuse_impostor(env, *p);
                                    (static_cast<Self *>(this)->*fn)(env, m);
                                },
                                access};
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
    // A line that a peer's message caused (its refusal, its malformed body...), within the
    // broker's limit per peer (PeerLogLimit): a peer that repeats it does not fill the log.
    template <class... Args>
    void log_peer(const Envelope &env, spdlog::level::level_enum level,
                  fmt::format_string<Args...> f, Args &&...args) {
        log_peer(peer_key(env.peer, env.from), level, f, std::forward<Args>(args)...);
    }
    // The same for a peer named by its key (peer_key, or "broker N" over the tree).
    template <class... Args>
    void log_peer(std::string_view peer, spdlog::level::level_enum level,
                  fmt::format_string<Args...> f, Args &&...args) {
        std::uint64_t suppressed = 0;
        if (!bus_.peer_log().allow(peer, suppressed)) return;
        log_->log(level, "{}{}", fmt::format(f, std::forward<Args>(args)...),
                  PeerLogLimit::suffix(suppressed));
    }
    template <class... Args>
    void warn_peer(const Envelope &env, fmt::format_string<Args...> f, Args &&...args) {
        log_peer(env, spdlog::level::warn, f, std::forward<Args>(args)...);
    }

  private:
    static bool acts_as_itself(const PeerSession &s, const msg::Proc &p) {
        return !s.is_client() || (p.nspace == s.nspace && p.rank == s.rank);
    }
    void refuse_impostor(const Envelope &env, const msg::Proc &p);

    std::string name_;
    Reactor &reactor_;
    Bus &bus_;
    std::shared_ptr<spdlog::logger> log_;
    std::unordered_map<std::string, Handler> handlers_;
};

}  // namespace zpmix
