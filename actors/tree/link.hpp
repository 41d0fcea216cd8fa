#pragma once
// TreeLink (`tree`): this broker's links to the other brokers of its allocation, joined in a k-ary
// tree (topology.hpp). It carries the actors' "@<rank>/<address>" and "@*/<address>" messages
// (actors/runtime/address.hpp), boots the tree at the root (boot.hpp) and watches its neighbours.
// Wire: ZMTP 3.0 with CURVE over TCP (one keypair per allocation), read and written on this
// broker's reactor (link_connection.hpp: the child's end a DEALER, the parent's a ROUTER, as
// libzmq would have them); messages (actors/protocol/tree.hpp) tree.hello, answered tree.welcome
// {ok, why}, tree.beat, tree.stop, and tree.hop {to, from, address} followed by the envelope it
// carries. No frame is over zmtp::kTcpFrameLimit: a larger envelope goes in pieces, rejoined by
// the next broker; the tree port bounds the connections that have not authenticated
// (link_listener.hpp). The whole story: docs/tree.md.
//
// Invariants and limits:
// - FIFO per pair of neighbours, delivered with env.from = "@<sender>/<from>" and a broker
//   session; "@*" reaches every broker, the sender included, through the root.
// - Actors on the link's reactor receive in arrival order, before the next frame is read.
// - A neighbour silent for `lost_after`, or whose output is not taken for as long, is lost:
//   TreeLost to the actors, TreeLostElsewhere to every other broker, once per broker. A booted
//   tree's broker that lost its parent shuts down; no reconnection once the handshake ended (a
//   connection its parent's port turned away before that is tried again, within the handshake
//   timeout).
// - A standing tree (LinkSettings.standing): the members are known at start and nobody boots
//   anyone; a broker waits for its parent as long as it takes (connecting again every second),
//   and one restarted after a loss joins again (tree.joined, told to every broker). A broker
//   that lost its parent stays up (TreeLost{parent} to its actors, said once in its log), tries
//   it again every second, and once welcomed again tells its actors the parent is back
//   (tree.joined of the parent) and its subtree that it rejoined (tree.rejoin: each broker of it
//   tells the root it is up, and its actors, tree.rejoined, tell the root what they hold). What
//   it sends up meanwhile waits (the same bound); what the lost connection had not delivered is
//   gone. A parent that stopped (tree.stop) stops it still.
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/boot.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/link_listener.hpp"
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
        LinkListener::Id conn = 0;  // its connection on down_
        Reactor::Clock::time_point last_heard;
        bool rejoins = true;  // its release has tree.rejoin
    };
    using Frames = std::vector<std::string_view>;

    LinkSettings s_;
    Topology topology_;
    BrokerMap &brokers_;
    std::function<void(bool lost)> on_parent_gone_;  // lost, or it stopped (its Stop came)
    std::shared_ptr<const PeerSession> session_;     // attached to every message from a broker
    CurveKey public_key_{}, secret_key_{};           // the allocation's
    std::unique_ptr<LinkListener> down_;             // where the children connect
    std::unique_ptr<LinkConnection> up_;             // to the parent
    std::string parent_uri_;                         // the parent's address it connects to
    Reactor::TimerId reconnect_timer_ = 0;           // the parent is to be tried again
    bool up_ready_ = false;                          // up_'s handshake ended
    // For the parent while no connection to it is past its handshake, in order.
    std::deque<std::vector<std::string>> up_queue_;
    std::size_t up_queue_bytes_ = 0;
    int retries_ = 0;                           // of a booted tree's connection to it
    Reactor::Clock::time_point join_deadline_;  // when a booted tree stops trying it
    std::vector<std::string> addresses_;
    std::map<Rank, Child> children_;             // joined children, by rank
    std::map<LinkListener::Id, Rank> child_of_;  // their connections
    std::set<Rank> lost_;                        // brokers known lost (told to the actors once)
    Reactor::Clock::time_point parent_heard_;
    bool parent_lost_ = false, stopping_ = false;
    bool welcomed_ = false;  // the parent answered our Hello
    bool away_ = false;      // standing: the parent was lost after it welcomed us; tried again
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
    // From the parent's link: `m.rank`, this broker or one above it, was welcomed again.
    void rejoin(const Envelope &env, msg::TreeRejoin &m);
    // Tells the root this broker is up, the children's links and this broker's actors that
    // broker `rank` (this one or one above it) rejoined.
    void rejoined(Rank rank);
    // TreeLost to this broker's actors, with the lost brokers' nodes.
    void tell_lost(std::vector<Rank> lost, bool parent);

    // What may wait for a neighbour, queued or unsent: max(4 x max_message, 256 MiB).
    std::size_t queue_bound() const;
    LinkConnection::Settings connection_settings() const;
    // Connects to parent_uri_ (or takes `fd`, connected there) and says hello (the Hello waits
    // for the handshake); false when the address cannot be used, with why.
    bool connect_parent(int fd, std::string &why);
    void parent_closed(const std::string &why);
    // A malformed frame is dropped with a log line.
    void from_child(LinkListener::Id conn, const Frames &frames);  // [frame, payload pieces...]
    void child_closed(LinkListener::Id conn, const std::string &why);
    void from_parent(const Frames &frames);  // [frame, payload pieces...]
    void beat();
    // A message for `to` ("@<rank>/<address>" or "@*/<address>"), from an actor of this broker.
    void send_remote(const std::string &to, zmq::message_t msg);
    // Routes a message (its envelope) from broker `from` that came down from the parent, or else
    // from a child or this broker's actors.
    void route(Rank to, Rank from, const std::string &address, std::string_view payload,
               bool from_parent);
    void deliver(Rank from, const std::string &address, std::string_view payload);
    void send_down(Rank child, const Frames &frames);
    // To the parent: sent, or held until a connection to it is past its handshake.
    void send_up(const Frames &frames);
    void flush_up_queue();
    void child_lost(Rank child, const std::string &why);
    void parent_gone(const std::string &why);
    // A standing tree's broker lost its parent: it stays up and tries it again every second.
    void parent_away(const std::string &why);
    void set_ready(std::string error);
    void start_children_of(Rank parent, const std::vector<std::string> &addresses);
};

}  // namespace zpmix::tree
