#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts the contributions of this node's participants (FenceCount). A fence whose
// participants are all on this node completes here once they are all in: with collect it asks
// `modex` once for the participants' data, then encodes ONE FenceDone and sends those bytes to
// every local participant. Where that data waits for its readers, and how FenceDone hands it over
// (inline, a region of the set's arena, a file), is the SegmentStore's.
//
// A fence whose participants are on several brokers' nodes (BrokerMap) is a reduction over the
// broker tree, run by a tree::Gather (actors/tree/gather.hpp) that this actor owns and feeds:
// - Its plan, the same on every broker: the brokers hosting a participant (from the fence key's
//   participants and the hostnames in the namespace table) take part, this one with a local part
//   when it hosts one, and each child whose subtree hosts one. A broker hosting none relays.
// - Once this node's participants are all in, their part goes to the Gather: with collect, their
//   data as a reader on another node sees it (modex's remote view), as a msg::FencePart. The
//   Gather sends each subtree's parts up (FenceUp to the parent's `fence`); the root's verdict
//   comes down (FenceDown) with every broker's part.
// - With the verdict, each broker writes its own node's segment: the other nodes' parts plus its
//   own participants' data as its readers see it (modex's local view), and delivers it to its
//   local contributors exactly as for a node-local fence.
// - Failure on any broker (a local participant ended, this broker's timeout, a lost broker the
//   fence waits on) goes to the Gather, which fails the fence on every broker: each local
//   contributor gets the root's status. A broker knows only its own node's ends, so when a rank
//   of a job on several nodes ends, its broker tells the root (msg::FenceProcEnded), which every
//   reduction reaches: it fails the pending fences that rank had not contributed to, and every
//   later one it takes part in (one message per rank's end, whatever the number of brokers).
//
// Invariants and limits:
// - A client contributes only as itself (msg::acting_proc, checked before any handler runs), and
//   once per fence: a second contribution is refused with PMIX_ERR_EXISTS.
// - A participant that ends before contributing fails the fence for the others
//   (PMIX_ERR_PROC_TERM_WO_SYNC), also when it ended before the fence began.
// - A fence with a timeout fails with PMIX_ERR_TIMEOUT when it is not complete by then (over
//   several nodes: when any broker's contributors' timeout passes first).
// - A fence over several nodes fails with PMIX_ERR_UNREACH when a broker hosting participants is
//   lost (msg::TreeLost), and needs every participant's namespace registered on every broker;
//   one naming a namespace or node the tree does not know is refused (PMIX_ERR_NOT_FOUND).
//   Its data is collected when any broker's contributors ask for it, but each broker sends its
//   own node's data only when its own contributors asked: a node whose contributors all fence
//   without PMIX_COLLECT_DATA gives the others none of its data.
//   A contributor that comes after the fence failed on the tree gets its status (that of the
//   last kRecentFailures such fences; of an older one, PMIX_ERROR once its node's part is in).
// - Segments are released only once every local participant has contributed to a later fence
//   over the same set, below the least `done_through` they report (the fence ids over that set
//   they have finished with): with blocking fences, fence k's segment goes with fence k+1 (k+2
//   for an arena region, which the client reads until fence k+1's data replaces it). Over
//   several nodes the same holds per broker: each writes its own node's segment.
// - A job whose ranks are all on this node fences its whole namespace on its fence board
//   (fence_board.hpp), without this actor; the reducer maps the board to fail those fences when
//   a rank ends. Its ranks never fence their namespace by message: such a contribution comes from
//   a process that fences without the board, which the board's fence cannot count. It is
//   refused, and the board fails, so no rank waits for that process.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/fence/fence_count.hpp"
#include "actors/fence/segment_store.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/shm/fence_board.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/reduction.hpp"

namespace zpmix {

class FenceReducer : public Actor {
  public:
    FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                 const BrokerMap &brokers);

  private:
    struct Fence {
        Fence(std::string set, std::uint64_t fence_id, std::vector<msg::Proc> participants)
            : set(std::move(set)), fence_id(fence_id), count(std::move(participants)) {}
        std::string set;  // msg::fence_set of the participants
        std::uint64_t fence_id;
        FenceCount count;                         // who of the participants contributed
        std::uint64_t done_through = UINT64_MAX;  // the least of the contributors'
        bool collect = false;
        std::vector<std::string> routes;  // the contributors' routing ids, to answer
        Reactor::TimerId timer = 0;
        bool gathering = false;  // every local participant is in: its data or the tree is next
        // Over several nodes: the brokers hosting participants (ascending); empty when all are
        // on this node.
        std::vector<std::uint32_t> brokers;
        std::vector<msg::ProcData> others;  // the verdict's data of the other nodes
        Reactor::Clock::time_point started = Reactor::Clock::now();  // its first contribution here
    };
    // What a ModexCollect asked of modex is for.
    struct Collecting {
        std::string key;
        bool part = false;  // this node's part for the tree (the remote view), else the segment
    };

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    std::unordered_map<std::string, Fence> fences_;  // by fence_key
    msg::FenceStats stats_;  // for `zpmix exporter`: counts and the latency histogram
    std::map<std::uint64_t, Collecting> collecting_;  // by modex request id
    std::uint64_t next_request_ = 1;
    std::unordered_map<std::string, std::unique_ptr<FenceBoard>> boards_;  // mapped, by nspace
    SegmentStore store_;  // the collected data, in its namespaces' session directories
    // The tree's reductions, its Gather made with the tree's view the first time a fence spans
    // nodes.
    tree::Reduction tree_;
    // At the root: the ranks of jobs on several nodes that ended (until their job ends), each
    // with the pending fences it had contributed to; and the keys of the tree's pending
    // operations that children opened here.
    std::map<msg::Proc, std::set<std::string>> ended_;
    std::set<std::string> open_;
    // Fences over several nodes that failed, with their status, for contributors that come
    // later (the last kRecentFailures).
    static constexpr std::size_t kRecentFailures = 1024;
    std::unordered_map<std::string, std::int32_t> failed_;
    std::deque<std::string> failed_order_;

    void contribute(const Envelope &env, msg::FenceContribute &m);
    void stats(const Envelope &env, msg::FenceStatsQuery &m);
    void collected(const Envelope &env, msg::ModexCollected &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void from_child(const Envelope &env, msg::FenceUp &m);
    void from_parent(const Envelope &env, msg::FenceDown &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void tree_joined(const Envelope &env, msg::TreeJoined &m);
    void proc_ended_elsewhere(const Envelope &env, msg::FenceProcEnded &m);
    // At the root: fails every pending fence the rank ended before contributing to.
    void ended(const msg::FenceProcEnded &m);
    // A rank of `participants` (fence `key`'s) that ended, at the root's knowledge, before
    // contributing to it.
    std::optional<msg::Proc> ended_before(const std::string &key,
                                          const std::vector<msg::Proc> &participants) const;

    FenceBoard *board_of(const std::string &nspace);
    // A participant that ended before contributing to fence `key`, if any.
    std::optional<msg::Proc> missing_for_good(const std::string &key, const Fence &f) const;
    void maybe_complete(const std::string &key, Fence &f);
    // The fence cannot succeed: finished here, or over several nodes failed on the tree.
    void fail(const std::string &key, std::int32_t status);
    // Sends every local contributor its FenceDone and forgets the fence; with a collecting
    // fence's `segment`.
    void relate_jobs(const std::vector<msg::Proc> &participants);
    void finish(const std::string &key, std::int32_t status,
                const FenceSegmentWriter *segment = nullptr);

    // The tree's side: this node's part handed to the Gather, the Gather's plan of a key and its
    // verdict.
    void contribute_part(const std::string &key, const msg::FencePart &part);
    std::optional<tree::Parts> plan(const std::string &key) const;
    void verdict(const std::string &key, std::int32_t status, const tree::Bytes &result);
};

}  // namespace zpmix
