#pragma once
// An in-process broker tree: N brokers, each a Reactor on its own thread, a Bus, a
// NamespaceTable and a BrokerMap (rank r of N, the given radix, node "node<r>"), with the actors
// a test adds to it. Their remote sinks deliver to each other as the tree link does: the envelope
// is decoded (and owned), its sender becomes "@<sender's rank>/<from>", its session a
// PeerSession with Role::broker, and it is dispatched by the target actor ("@<rank>/<actor>") on
// that actor's reactor, whatever its handler's access class. Delivery is FIFO per pair of
// brokers. Fake clients: a test sends a message to an actor as a client of one broker (a routing
// id and a session), and reads what that broker sent to the routing id, with deadlines. A lost
// broker (lose()) sends and receives nothing more, and its parent and children are told, by a
// msg::TreeLost, as their links would tell them. Needs zpmix_runtime and Boost.Test.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/topology.hpp"

namespace zpmix::test {

class BrokerTree {
  public:
    struct Broker {
        Reactor reactor;
        Bus bus;
        NamespaceTable namespaces;
        BrokerMap brokers;
        std::vector<std::unique_ptr<Actor>> actors;
        std::thread thread;
        std::atomic<bool> lost{false};
        explicit Broker(std::string node) : brokers(std::move(node)) {}
    };

    BrokerTree(std::uint32_t size, std::uint32_t radix) : radix_(radix) {
        std::vector<std::string> nodes;
        for (std::uint32_t r = 0; r < size; ++r) nodes.push_back(node(r));
        for (std::uint32_t r = 0; r < size; ++r) {
            auto b = std::make_unique<Broker>(node(r));
            b->brokers.set(BrokerView{r, radix, nodes});
            b->bus.set_peer_sink(b->reactor,
                                 [this, r](const std::string &peer, zmq::message_t msg) {
                                     Envelope env = decode(msg);
                                     std::lock_guard lock(mu_);
                                     inbox_[{r, peer}].push_back(std::move(env));
                                     cv_.notify_all();
                                 });
            b->bus.set_remote_sink(b->reactor,
                                   [this, r](const std::string &to, zmq::message_t msg) {
                                       deliver_remote(r, to, msg);
                                   });
            brokers_.push_back(std::move(b));
        }
    }
    ~BrokerTree() {
        for (auto &b : brokers_) b->reactor.stop();
        for (auto &b : brokers_)
            if (b->thread.joinable()) b->thread.join();
    }
    BrokerTree(const BrokerTree &) = delete;
    BrokerTree &operator=(const BrokerTree &) = delete;

    static std::string node(std::uint32_t rank) { return "node" + std::to_string(rank); }
    std::uint32_t size() const { return static_cast<std::uint32_t>(brokers_.size()); }
    Broker &broker(std::uint32_t rank) { return *brokers_.at(rank); }
    // Messages the tree carried so far.
    std::uint64_t carried() const { return carried_; }

    // Constructs A(reactor, bus, args...) on broker `rank` (before start()).
    template <class A, class... Args>
    A &add(std::uint32_t rank, Args &&...args) {
        Broker &b = broker(rank);
        auto actor = std::make_unique<A>(b.reactor, b.bus, std::forward<Args>(args)...);
        A &ref = *actor;
        b.bus.add(ref);
        b.actors.push_back(std::move(actor));
        return ref;
    }
    void start() {
        for (auto &b : brokers_) b->thread = std::thread([r = &b->reactor] { r->run(); });
    }

    // A job whose rank i runs on broker placement[i]'s node: registered on every broker (as the
    // launcher does before any rank starts), each rank spawned on its own broker only.
    void add_job(const std::string &nspace, const std::vector<std::uint32_t> &placement) {
        msg::JobInfo job;
        job.nspace = nspace;
        job.size = static_cast<std::uint32_t>(placement.size());
        for (std::uint32_t i = 0; i < placement.size(); ++i) {
            msg::ProcInfo p;
            p.rank = i;
            p.hostname = node(placement[i]);
            job.procs.push_back(p);
        }
        for (auto &b : brokers_) b->namespaces.add(job, "secret", {});
        for (std::uint32_t i = 0; i < placement.size(); ++i)
            broker(placement[i]).namespaces.spawned(nspace, i, 1000 + i);
    }
    // Rank `rank` of `nspace`, on broker `on`, ended: its table says so, then its actors are told,
    // as the registry does.
    void end_proc(std::uint32_t on, const std::string &nspace, std::uint32_t rank) {
        Broker &b = broker(on);
        b.namespaces.ended(nspace, rank, 1, 0);
        b.bus.broadcast(msg::ProcEnded::type,
                        encode(msg::ProcEnded::type, 0, msg::ProcEnded{nspace, rank, 1, 0}));
    }

    // `proc`, a client of broker `on` with routing id `rid`, sends m to `actor` (request id `id`).
    template <class M>
    void client_send(std::uint32_t on, const std::string &rid, const msg::Proc &proc,
                     const std::string &actor, const M &m, std::uint64_t id = 1) {
        Broker &b = broker(on);
        Envelope env = decode(encode(M::type, id, m));
        env.from = rid;
        env.session = std::make_shared<PeerSession>(
            PeerSession{PeerSession::Role::client, proc.nspace, proc.rank, {}});
        Actor *a = b.bus.find(actor);
        BOOST_REQUIRE_MESSAGE(a, "no actor " + actor);
        a->reactor().post([a, env] { a->dispatch(env); });
    }
    // The next message broker `on` sent to routing id `rid`, or nullopt after `timeout`.
    std::optional<Envelope> next(std::uint32_t on, const std::string &rid,
                                 std::chrono::milliseconds timeout) {
        std::unique_lock lock(mu_);
        auto &q = inbox_[{on, rid}];
        if (!cv_.wait_for(lock, timeout, [&] { return !q.empty(); })) return std::nullopt;
        Envelope env = std::move(q.front());
        q.pop_front();
        return env;
    }

    // Broker `rank` is gone: nothing more goes to or from it, and the brokers beside it in the
    // tree learn it as their links would (its parent loses its subtree, its children their
    // parent).
    void lose(std::uint32_t rank) {
        broker(rank).lost = true;
        const tree::Topology topology(size(), radix_);
        if (auto parent = topology.parent(rank))
            tell_lost(*parent, msg::TreeLost{topology.subtree(rank), false});
        for (std::uint32_t c : topology.children(rank)) tell_lost(c, msg::TreeLost{{}, true});
    }

  private:
    std::uint32_t radix_;
    std::vector<std::unique_ptr<Broker>> brokers_;
    std::atomic<std::uint64_t> carried_{0};
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::pair<std::uint32_t, std::string>, std::deque<Envelope>> inbox_;

    void tell_lost(std::uint32_t rank, const msg::TreeLost &m) {
        Broker &b = broker(rank);
        if (!b.lost) b.bus.broadcast(msg::TreeLost::type, encode(msg::TreeLost::type, 0, m));
    }

    // On the sender's reactor: "@<rank>/<actor>" or "@*/<actor>".
    void deliver_remote(std::uint32_t src, const std::string &to, const zmq::message_t &msg) {
        const auto slash = to.find('/');
        if (slash == std::string::npos) return;
        const std::string rank = to.substr(1, slash - 1), name = to.substr(slash + 1);
        std::vector<std::uint32_t> targets;
        if (rank == "*") {
            for (std::uint32_t r = 0; r < size(); ++r)
                if (r != src) targets.push_back(r);
        } else {
            std::uint32_t r = 0;
            std::from_chars(rank.data(), rank.data() + rank.size(), r);
            targets.push_back(r);
        }
        if (broker(src).lost) return;
        Envelope env = decode(msg);
        env.from = "@" + std::to_string(src) + "/" + env.from;
        env.session =
            std::make_shared<PeerSession>(PeerSession{PeerSession::Role::broker, {}, 0, {}});
        for (std::uint32_t dst : targets) {
            if (dst >= size()) continue;
            Broker &b = broker(dst);
            Actor *a = b.bus.find(name);
            if (!a) continue;  // not an actor: the link hands it to a peer, none here
            ++carried_;
            a->reactor().post([a, env, &b, &s = broker(src)] {
                if (!b.lost && !s.lost) a->dispatch(env);
            });
        }
    }
};

}  // namespace zpmix::test
