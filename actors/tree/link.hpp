#pragma once
// TreeLink (`tree`): this broker's links to the other brokers of its allocation, joined in a k-ary
// tree (topology.hpp). It carries the actors' "@<rank>/<address>" and "@*/<address>" messages
// (actors/runtime/address.hpp), boots the tree at the root (boot.hpp) and watches its neighbours.
// Wire: a DEALER to the parent's ROUTER over TCP with CURVE (one keypair per allocation, admitted
// by a ZAP handler); frames "H" hello, answered "W" or "X" (why not), "B" heartbeat, "S" shutdown,
// "M" an envelope. No frame is over zmtp::kTcpFrameLimit: a larger envelope goes in pieces,
// rejoined by the next broker, and a TcpGate bounds the connections that have not authenticated
// on the listening ROUTER. The whole story: docs/tree.md.
//
// Invariants and limits:
// - FIFO per pair of neighbours, delivered with env.from = "@<sender>/<from>" and a broker
//   session; "@*" reaches every broker, the sender included, through the root.
// - Actors on the link's reactor receive in arrival order, before the next frame is read.
// - A neighbour silent for `lost_after` is lost: TreeLost to the actors, TreeLostElsewhere to every
//   other broker, once per broker. A broker that lost its parent shuts down; no reconnection.
// - A standing tree (LinkSettings.standing): the members are known at start and nobody boots
//   anyone; a broker waits for its parent as long as it takes, and one restarted after a loss
//   joins again (tree.joined, told to every broker).
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/log_throttle.hpp"
#include "actors/runtime/tcp_gate.hpp"
#include "actors/tree/boot.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/topology.hpp"

namespace zpmix::tree {

struct LinkSettings {
    Rank rank = 0, size = 1, radix = 2;
    std::vector<std::string> parent;     // the parent's tree addresses, tried in order
    std::string node;                    // this broker's node (as the allocation names it)
    std::string tcp_if;                  // listen on this interface (name or CIDR) only; "" = all
    std::string public_key, secret_key;  // the allocation's CURVE keypair (Z85)
    std::chrono::milliseconds heartbeat{1000}, lost_after{10000}, boot_timeout{60000};
    BootSettings boot;  // root only: how the other brokers are started
    std::size_t max_message = std::size_t{64} << 20;
    bool standing = false;  // a standing tree's member; `port` is where it listens
    int port = 0;
    // Failed handshakes on the port from one address: this many at once, then these a minute.
    unsigned failures_burst = 16, failures_per_minute = 60;
};

using BrokerOnline = msg::TreeOnline;
using Members = msg::TreeMembers;

class TreeLink : public Actor {
  public:
    TreeLink(Reactor &reactor, Bus &bus, LinkSettings settings, BrokerMap &brokers,
             std::function<void(bool lost)> on_parent_gone);
    ~TreeLink() override;

    // Before the reactor runs: listens (the addresses it tells its children), connects to the
    // parent. Throws std::runtime_error with why.
    void open();
    // Blocks until every broker is up and the members are known (empty), or the boot failed
    // (why, naming the node). Thread-safe; not from the reactor thread.
    std::string wait_ready(std::chrono::milliseconds limit);
    // Reactor thread: tells the children to stop, stops the agents (the root). Idempotent.
    void shutdown();
    // After the reactor stopped: closes the sockets and reaps the agents (bounded).
    void close();

    const std::vector<std::string> &addresses() const { return addresses_; }

  private:
    struct Child {
        std::string rid;  // routing id on the ROUTER
        Reactor::Clock::time_point last_heard;
    };

    LinkSettings s_;
    Topology topology_;
    BrokerMap &brokers_;
    std::function<void(bool lost)> on_parent_gone_;  // lost, or it stopped (its Stop came)
    std::shared_ptr<const PeerSession> session_;     // attached to every message from a broker
    zmq::context_t ctx_;
    zmq::socket_t zap_, down_, up_;
    std::unique_ptr<TcpGate> gate_;  // on down_ (after ctx_: its monitor closes first)
    LogThrottle refusals_;           // of connections without the allocation's key
    std::vector<std::string> addresses_;
    std::map<Rank, Child> children_;  // joined children, by rank
    std::set<Rank> lost_;             // brokers known lost (told to the actors once)
    Reactor::Clock::time_point parent_heard_;
    bool parent_lost_ = false, stopping_ = false;
    bool welcomed_ = false;                            // the parent answered our Hello
    Reactor::Clock::time_point waiting_said_;          // standing: when we last said we wait for it
    std::unique_ptr<Boot> boot_;                       // root only
    std::map<Rank, std::vector<std::string>> online_;  // root: brokers up, with their addresses
    std::promise<std::string> ready_;
    bool ready_set_ = false, boot_failed_ = false;
    Reactor::TimerId heartbeat_timer_ = 0, boot_timer_ = 0;

    void online(const Envelope &env, BrokerOnline &m);
    void members(const Envelope &env, Members &m);
    void lost_elsewhere(const Envelope &env, msg::TreeLostElsewhere &m);
    void joined(const Envelope &env, msg::TreeJoinedElsewhere &m);
    // TreeLost to this broker's actors, with the lost brokers' nodes.
    void tell_lost(std::vector<Rank> lost, bool parent);

    void on_zap();
    // A bounded batch of frames per wake-up; a malformed one is dropped with a log line.
    void on_down();
    void on_up();
    void from_child(std::vector<zmq::message_t> &parts);   // [routing id, frame, payload...]
    void from_parent(std::vector<zmq::message_t> &parts);  // [frame, payload...]
    void send_pieces(zmq::socket_t &s, const std::vector<zmq::message_t *> &frames);
    void beat();
    // A message for `to` ("@<rank>/<address>" or "@*/<address>"), from an actor of this broker.
    void send_remote(const std::string &to, zmq::message_t msg);
    // Routes a message (its envelope frame) from broker `from` that came down from the parent,
    // or else from a child or this broker's actors.
    void route(Rank to, Rank from, const std::string &address, zmq::message_t &payload,
               bool from_parent);
    void deliver(Rank from, const std::string &address, zmq::message_t &payload);
    void send_down(Rank child, const std::vector<zmq::message_t *> &frames);
    void send_up(const std::vector<zmq::message_t *> &frames);
    void child_lost(Rank child, const std::string &why);
    void parent_gone(const std::string &why);
    void set_ready(std::string error);
    void start_children_of(Rank parent, const std::vector<std::string> &addresses);
};

}  // namespace zpmix::tree
