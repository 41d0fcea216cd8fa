#pragma once
// Reduction: an actor's tree::Gather (gather.hpp) wired to the broker tree, the part the actors
// that reduce over the tree (fence, group) share. The owner names its messages between brokers
// (Messages<Up, Down>: Up {key, status, part} to its parent's owner, Down {key, status, result}
// to its children's), the brokers hosting an operation's participants (`hosts`, from the key:
// the same on every broker), how parts combine (`reduce`) and what a verdict does (`complete`).
// The Reduction:
// - makes the Gather on first use (the broker map is complete once the tree is up); its plan of
//   a key is the part of this broker's subtree among the key's hosts (parts_over);
// - sends the Gather's parts up (`@<parent>/<owner>`) and its verdicts down (`@<child>/<owner>`);
// - hands the Gather this node's part, packed (contribute), and failures (fail): the root
//   decides, and its verdict reaches `complete` on every broker that takes part;
// - takes what arrives over the tree only from a broker (from_child) or from this broker's
//   parent (from_parent), else logs and drops it;
// - on tree.lost (lost): the Gather fails what waits on a lost child, or everything when the
//   parent is lost, and the owner's operations whose hosts the loss cuts off fail with
//   PMIX_ERR_UNREACH; on tree.joined (joined), a lost child takes part again;
// - decodes a verdict into the parts of every broker (parts_of).
// The owner keeps its operations: who contributed here, their timeouts (which fail them), what it
// answers its local participants, and an operation whose participants are all on this node,
// which never reaches the Reduction.
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <msgpack.hpp>

#include "actors/protocol/common.hpp"
#include "actors/protocol/map.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/address.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/gather.hpp"

namespace zpmix::tree {

// The brokers whose nodes host `procs` (a wildcard rank: every rank of its namespace), ascending.
// A process in a namespace not registered here, or on a node no broker serves, is placed on
// `fallback`, or with none, the answer is none.
std::optional<std::vector<std::uint32_t>> hosting_brokers(
    const std::vector<msg::Proc> &procs, const NamespaceTable::Snapshot &namespaces,
    const BrokerView &view, std::optional<std::uint32_t> fallback = std::nullopt);

// The parts this broker takes in an operation whose participants are on the brokers `hosts`:
// its own when it is one of them, and each child whose subtree holds one.
Parts parts_over(const std::vector<std::uint32_t> &hosts, const BrokerView &view);

// Whether a loss, as tree.lost tells it, cuts this broker off from any of `hosts` (every broker
// when the parent is lost: each reduction goes through the root).
bool loss_reaches(const msg::TreeLost &lost, const std::vector<std::uint32_t> &hosts);

// The statuses of the operations that failed lately (the last `max`; the first status of each),
// for participants that come after.
class RecentFailures {
  public:
    explicit RecentFailures(std::size_t max = 1024) : max_(max) {}
    void add(const std::string &key, Status status);
    std::optional<Status> find(const std::string &key) const;

  private:
    const std::size_t max_;
    std::unordered_map<std::string, Status> status_;
    std::deque<std::string> order_;  // oldest first
};

class Reduction {
  public:
    struct Wiring {
        std::string owner;  // the actor's name, the same on every broker
        // The brokers of `view` hosting the participants of `key`, ascending; none refuses the
        // key.
        std::function<std::optional<std::vector<std::uint32_t>>(const std::string &key,
                                                                const BrokerView &view)>
            hosts;
        std::function<void(const std::string &key, Status, const Bytes &result)> complete;
        Gather::Reduce reduce = Gather::concatenate;
    };
    // The owner's messages: Up {key, status, part}, Down {key, status, result}.
    template <class Up, class Down>
    struct Messages {};

    template <class Up, class Down>
    Reduction(Messages<Up, Down>, Bus &bus, spdlog::logger &log, const BrokerMap &brokers,
              Wiring wiring)
        : Reduction(bus, log, brokers, std::move(wiring), &message<Up>, &message<Down>) {}

    Gather &gather();

    // This node's part of `key` (msgpack of `part`); false, and logged, when the tree no longer
    // takes it (the operation failed there before this node's part was in).
    template <class Part>
    bool contribute(const std::string &key, const Part &part) {
        msgpack::sbuffer buf;
        msgpack::pack(buf, part);
        return contribute_bytes(key, Bytes(buf.data(), buf.size()));
    }
    // The operation cannot succeed here: the root's verdict comes back through `complete`.
    void fail(const std::string &key, Status status) { gather().fail(key, status); }

    // A child's part or failure (Up); none when its sender is not a broker.
    template <class Up>
    std::optional<Outcome> from_child(const Envelope &env, const Up &m) {
        return from_child(env.from, m.key, m.status, Bytes(m.part.begin(), m.part.end()));
    }
    // The root's verdict (Down), taken only from this broker's parent.
    template <class Down>
    void from_parent(const Envelope &env, const Down &m) {
        from_parent(env.from, m.key, m.status, Bytes(m.result.begin(), m.result.end()));
    }

    // tree.lost: the Gather fails what waits on a lost child, or everything when the parent is;
    // then each of the owner's operations `ops` (by key, each with the brokers hosting its
    // participants in `brokers`, none when they are all on this node) that the loss cuts off
    // fails with PMIX_ERR_UNREACH, if it is still there.
    template <class Ops>
    void lost(const msg::TreeLost &m, const Ops &ops) {
        if (brokers_.view()->alone()) return;
        std::vector<std::string> reached;
        for (const auto &[key, op] : ops)
            if (loss_reaches(m, op.brokers)) reached.push_back(key);
        lost(m);
        for (const auto &key : reached) {
            log_.info("{} {} fails: a broker hosting participants is lost", wiring_.owner, key);
            if (ops.contains(key)) fail(key, kUnreachable);
        }
    }
    // tree.joined: a lost child, or the lost parent, is reached again.
    void joined(const msg::TreeJoined &m);

    // The parts of a verdict's result (Gather::concatenate's array), each a Part; none, and
    // logged, when it does not decode.
    template <class Part>
    std::optional<std::vector<Part>> parts_of(const std::string &key, const Bytes &result) {
        std::vector<Part> out;
        try {
            auto handle = unpack_bounded(result.data(), result.size(), {}, true);
            const msgpack::object &parts = handle.get();
            if (parts.type != msgpack::type::ARRAY) throw DecodeError("not an array of parts");
            for (const msgpack::object &bin : parts.via.array) {
                if (bin.type != msgpack::type::BIN) throw DecodeError("a part is not a bin");
                Part &part = out.emplace_back();
                msg::Reader r(bin.via.bin.ptr, bin.via.bin.size);
                msg::read(r, part);
                if (!r.at_end()) throw DecodeError("trailing bytes after a part");
            }
        } catch (const std::exception &e) {
            log_.error("{} {}: the tree's result does not decode: {}", wiring_.owner, key,
                       e.what());
            return std::nullopt;
        }
        return out;
    }

  private:
    using Encode = zmq::message_t (*)(const std::string &owner, const std::string &key, Status,
                                      const Bytes &);
    template <class M>
    static zmq::message_t message(const std::string &owner, const std::string &key, Status status,
                                  const Bytes &bytes) {
        return encode(M::type, 0, M{key, status, msg::Blob(bytes.begin(), bytes.end())}, owner);
    }

    Reduction(Bus &bus, spdlog::logger &log, const BrokerMap &brokers, Wiring wiring, Encode up,
              Encode down);
    bool contribute_bytes(const std::string &key, Bytes part);
    std::optional<Outcome> from_child(std::string_view from, const std::string &key, Status status,
                                      Bytes part);
    void from_parent(std::string_view from, const std::string &key, Status status,
                     const Bytes &result);
    void lost(const msg::TreeLost &m);

    Bus &bus_;
    spdlog::logger &log_;
    const BrokerMap &brokers_;
    Wiring wiring_;
    Encode up_, down_;
    std::unique_ptr<Gather> gather_;
};

}  // namespace zpmix::tree
