#pragma once
// Reduction: an actor's tree::Gather (gather.hpp) wired to the broker tree; the part the actors
// that reduce over the tree (fence, group) share. The Gather is made on first use (the broker
// map is complete once the tree is up). Its parts go up and its verdicts down through the
// owner's `up`/`down` functions, which send the owner's own message types to the address given
// (`@<parent>/<owner>`, `@<child>/<owner>`). What arrives over the tree reaches the Gather only
// from a broker (from_child) or from this broker's parent (from_parent), else it is logged and
// dropped; a tree.lost tells the Gather of lost children and a lost parent.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/tree.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/gather.hpp"

namespace zpmix::tree {

// The parts this broker takes in an operation whose participants are on the brokers `hosts`:
// its own when it is one of them, and each child whose subtree holds one.
Parts parts_over(const std::vector<std::uint32_t> &hosts, const BrokerView &view);

// Whether a loss, as tree.lost tells it, cuts this broker off from any of `hosts` (every broker
// when the parent is lost: each reduction goes through the root).
bool loss_reaches(const msg::TreeLost &lost, const std::vector<std::uint32_t> &hosts);

class Reduction {
  public:
    using Send =
        std::function<void(const std::string &to, const std::string &key, Status, const Bytes &)>;
    struct Wiring {
        std::string owner;  // the actor's name, the same on every broker
        Send up, down;
        std::function<void(const std::string &key, Status, const Bytes &result)> complete;
        std::function<void(std::string_view)> log;
        Gather::Reduce reduce = Gather::concatenate;
        Gather::Plan plan;
    };
    Reduction(const BrokerMap &brokers, Wiring wiring);

    Gather &gather();
    // A child's part or failure (GroupUp, FenceUp); none when its sender is not a broker.
    std::optional<Outcome> from_child(std::string_view from, const std::string &key, Status status,
                                      Bytes part);
    // The root's verdict (GroupDown, FenceDown), taken only from this broker's parent.
    void from_parent(std::string_view from, const std::string &key, Status status,
                     const Bytes &result);
    // tree.lost: the Gather fails what waits on a lost child, or everything when the parent is.
    void lost(const msg::TreeLost &m);
    // tree.joined: a lost child is reached again.
    void joined(const msg::TreeJoined &m);

  private:
    const BrokerMap &brokers_;
    Wiring wiring_;
    std::unique_ptr<Gather> gather_;
};

}  // namespace zpmix::tree
