#pragma once
// Gather: one broker's part of the tree's reductions (fences, groups). An operation, named by a
// key (a fence's "set#id"), waits for the parts its plan names (this node's part, one per child
// that takes part), combines them with `reduce`, sends one message up; the root's result comes
// down. No transport: the owner delivers what the callbacks send and hands in what arrives. The
// whole story: docs/tree.md, "The Gather".
//
// Invariants and limits:
// - Every operation completes exactly once on every broker that takes part, with the root's
//   status and result; a broker that lost its parent completes its pending operations itself.
// - A second part from one source, or a part the plan does not take, is refused; an input for one
//   of the last `recent` completed keys is ignored and logged.
// - A lost child fails what waits for it (PMIX_ERR_UNREACH by default) and every later plan of it.
// - Timeouts are the owner's (fail()). Single-threaded; callbacks may call back into the engine.
// - Memory: the pending operations, the `recent` keys, the lost children.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/tree/topology.hpp"

namespace zpmix::tree {

using Bytes = std::string;    // opaque: msgpack of a node's data, or empty for a barrier
using Status = std::int32_t;  // a pmix_status_t
inline constexpr Status kUnreachable = -25;  // PMIX_ERR_UNREACH (checked in gather.cpp)

// Which parts of a broker's subtree an operation waits for.
struct Parts {
    bool local = true;
    std::vector<Rank> children;  // children of this broker that take part
};

// What became of an input.
enum class Outcome {
    taken,      // counted (or, for a failure, acted on)
    duplicate,  // that part was already in: refused
    late,       // the operation is over here: ignored
    refused,    // not a part this operation takes, or not from a child
};

class Gather {
  public:
    struct Callbacks {
        std::function<void(Rank parent, const std::string &key, Status, const Bytes &)> send_up;
        std::function<void(Rank child, const std::string &key, Status, const Bytes &)> send_down;
        std::function<void(const std::string &key, Status, const Bytes &result)> complete;
        std::function<void(std::string_view)> log;
    };
    // Combines the local part (null when it takes no part) and each taking-part child's (in
    // ascending rank) into `out`; a status other than PMIX_SUCCESS fails the operation. It must
    // not call the engine.
    using Reduce = std::function<Status(const std::string &key, const Bytes *local,
                                        const std::vector<Bytes> &children, Bytes &out)>;
    // The parts `key` takes on this broker; none refuses the key.
    using Plan = std::function<std::optional<Parts>(const std::string &key)>;

    // The default reduce: a msgpack array of the local parts of every taking-part broker of the
    // subtree, each as a bin, in preorder (this broker's, then each child's array spliced in
    // order). At the root: every taking-part broker's local part exactly once. A child's part
    // that is not such an array fails the operation with PMIX_ERR_UNPACK_FAILURE.
    static Status concatenate(const std::string &key, const Bytes *local,
                              const std::vector<Bytes> &children, Bytes &out);

    Gather(Topology topology, Rank rank, Callbacks callbacks, Reduce reduce = concatenate,
           Plan plan = {}, std::size_t recent = 1024);

    Outcome contribute_local(const std::string &key, Bytes payload);
    // A child's combined part, or (status other than PMIX_SUCCESS) its subtree's failure.
    Outcome from_child(Rank child, const std::string &key, Status status, Bytes payload);
    // The root's verdict (not at the root).
    Outcome from_parent(const std::string &key, Status status, const Bytes &result);
    // The operation cannot succeed here (a local participant ended, a timeout).
    Outcome fail(const std::string &key, Status status);
    void child_lost(Rank child, Status status = kUnreachable);
    // A lost child joined again (a standing tree's): later operations wait for it again.
    void child_joined(Rank child) { lost_children_.erase(child); }
    void parent_lost(Status status = kUnreachable);
    // A standing tree's broker whose lost parent welcomed it again: later operations go up again
    // (those pending at the loss were failed then).
    void parent_joined() { parent_lost_.reset(); }

    std::size_t pending() const { return ops_.size(); }
    Rank rank() const { return rank_; }

  private:
    struct Op {
        Parts parts;
        std::optional<Bytes> local;
        std::map<Rank, Bytes> from_children;  // successes
        std::set<Rank> failed_children;
        bool sent_up = false;    // its parts, combined
        bool failed_up = false;  // a failure: waiting for the root's verdict
    };

    const Topology topology_;
    const Rank rank_;
    const std::optional<Rank> parent_;
    Callbacks cb_;
    Reduce reduce_;
    Plan plan_;
    std::unordered_map<std::string, Op> ops_;  // pending, by key
    std::deque<std::string> recent_order_;     // completed lately, oldest first
    std::unordered_set<std::string> recent_;
    const std::size_t recent_max_;
    std::map<Rank, Status> lost_children_;  // with the status their operations fail with
    std::optional<Status> parent_lost_;

    // The pending operation of `key`, opened (planned) when new; none, with why, when over or
    // refused.
    Op *open(const std::string &key, std::string_view what, Outcome &why);
    // Fails it when its parent or a child it waits for is lost; otherwise sends up (completes
    // at the root) once every part is in.
    void advance(const std::string &key);
    void fail_op(const std::string &key, Status status);
    // Completes the operation here, sends the verdict to its children and forgets it.
    void finish(const std::string &key, Status status, const Bytes &result);
    void log(std::string_view what, const std::string &key, std::string_view why);
};

}  // namespace zpmix::tree
