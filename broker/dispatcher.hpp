#pragma once
// Dispatcher (`broker`): where every message from a peer enters the broker, and the one place
// that decides whether its sender may send it. It decodes the message, finds the actor whose
// handler table has its type (Bus::route), checks the handler's access class against the
// sender's session, attaches the session to the envelope, and hands it to that actor.
//
// Sessions: a peer has none until the registry accepts its Hello; the registry then sends
// `session.open` here, and the dispatcher records the session before it forwards the Welcome, so
// no message the peer sends after reading its Welcome is judged without it. A peer without a
// session may send only `hello` (Access::anyone); a client session only handlers open to
// sessions, acting for its own proc (Actor::on); a tool or launcher only operator handlers;
// nobody an internal one. A session ends when its connection does (ipc) or when its namespace
// is deregistered. Refusals are answered with a PMIx status and logged, and say nothing of other
// jobs.
//
// Releases (docs/compatibility.md): a peer of another protocol version is refused, naming both
// releases; a session records the release and features its peer stated, and outgoing() keeps a
// peer from being sent a message of a feature its release lacks.
//
// Limits: refusals are logged within the broker's limit per peer (PeerLogLimit); an ipc peer is of
// the broker's uid (the listener admits no other), a tcp peer holds the broker's CURVE keypair (a
// tool) or proved its job's secret in its Hello (a client).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/envelope.hpp"

namespace zpmix {

// A peer's routing id as short hex, for log lines.
std::string peer_name(const std::string &rid);

class Dispatcher : public Actor {
  public:
    Dispatcher(Reactor &reactor, Bus &bus, DecodeLimits limits);

    // A message from a peer: one frame, valid during the call. On the broker's reactor thread.
    void route(const std::string &peer, const std::vector<std::string_view> &frames,
               const PeerCredentials &cred);
    // The peer's connection ended: its session goes.
    void peer_gone(const std::string &peer);
    std::size_t sessions() const { return sessions_.size(); }
    // A message about to go to `peer`: nothing when the peer's release reads it; else what goes
    // instead (a PMIX_ERR_NOT_SUPPORTED ErrorReply to a request, or an empty message: nothing),
    // logged. One test per message while every peer has all of this release's features.
    std::optional<zmq::message_t> outgoing(const std::string &peer, zmq::message_t &msg);

  private:
    DecodeLimits limits_;
    std::unordered_map<std::string, std::shared_ptr<const PeerSession>> sessions_;  // by peer
    std::unordered_set<std::string> limited_;  // peers lacking some of this release's features

    void refuse(const std::string &peer, const PeerCredentials &cred, std::uint64_t id,
                std::int32_t status, const std::string &why);
    void session_open(const Envelope &env, msg::SessionOpen &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
};

}  // namespace zpmix
