#pragma once
// Gather: one broker's part of the tree's reductions (fences; groups later). An operation, named
// by a key (a fence's "set#id"), gathers up the tree and its result is broadcast down: each
// broker waits for the parts its subtree owes (its own local part, handed in by its node-local
// stage, and one per child broker that takes part), combines them with `reduce` and sends one
// message to its parent; the root completes the operation and sends the result down, and every
// broker completes it with what comes down. It knows no transport: the owner delivers what the
// callbacks send, and hands in what arrives.
//
// Invariants and limits:
// - Every operation completes exactly once on every broker that takes part, with the root's
//   status and result. The one exception is a lost parent: then a broker completes its pending
//   operations itself (and tells its children), as nothing can come down any more.
// - Which parts an operation takes is the `plan`'s (asked once, when a key is first seen): by
//   default its local part and every child. An input from a child that does not take part, or
//   for a key the plan refuses, is refused.
// - A second local part, or a second part (or failure) from one child, is refused and never
//   counted. An input for a key this broker completed lately is ignored and logged (the last
//   `recent` keys are remembered; beyond those a late input opens a new operation, which the
//   owner's timeout ends).
// - fail(): at the root the operation completes with that status at once; elsewhere the failure
//   goes up, the root decides, and the verdict comes down (a success the root already sent wins
//   over a failure on its way up: everyone sees the same outcome).
// - A lost child fails every operation still waiting for it (by default PMIX_ERR_UNREACH, the
//   standard's status for a peer that cannot be reached), and every later one that plans it.
// - An operation waits until its parts, or a failure, come: timeouts are the owner's (fail()).
// - Single-threaded: owned by one actor. Callbacks may call back into the engine.
// - Memory: the pending operations, the `recent` keys, the lost children; nothing else.
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
