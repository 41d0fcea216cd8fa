#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts this node's contributions (FenceCount). A fence over this node alone completes here:
// with collect it asks `modex` once for the data and sends one FenceDone to every local
// participant. A fence over several nodes goes through a tree::Gather fed by a tree::Reduction
// (FenceUp, FenceDown; actors/tree/reduction.hpp, shared with the group tracker), and
// each broker writes its own node's segment. Where data waits for its readers is the
// SegmentStore's. The whole story: docs/fences.md.
//
// Invariants and limits:
// - A client contributes only as itself, and once per fence (PMIX_ERR_EXISTS).
// - A participant that ends before contributing fails the fence (PMIX_ERR_PROC_TERM_WO_SYNC), also
//   when it ended before the fence began, even when its job is gone from this broker already (the
//   last NamespaceTable::kEndedKept jobs that ended); over several nodes its broker tells the root
//   (msg::FenceProcEnded), one message per rank's end.
// - PMIX_ERR_TIMEOUT when any broker's contributors' timeout passes first; PMIX_ERR_UNREACH when a
//   broker the fence waits on is lost; PMIX_ERR_NOT_FOUND for a namespace or node the tree does
//   not know.
// - A broker sends its node's data only when its own contributors asked for it.
// - A latecomer to a failed fence gets its status (the last 1024: tree::RecentFailures; older:
//   PMIX_ERROR).
// - A set's segments are freed below the least `done_through` of its local participants, once
//   every one has contributed to a later fence over the set.
// - Under a host (the server library): a fence over a hosted job whose ranks run on other nodes of
//   the host's goes, once this node's participants are in, to the host's fence_nb (msg::HostFence)
//   as one part, and the host's answer is its verdict. A failure here ends it here only: the
//   other nodes' participants are the host's to release.
// - A job whose ranks all run on this node fences its namespace on its fence board, without this
//   actor: the reducer marks the board when a rank ends, and refuses (failing the board) a
//   contribution over that namespace by message.
#include <cstdint>
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
#include "actors/protocol/host.hpp"
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
        // Over several of a host's nodes (the server library): the host's fence_nb gathers the
        // nodes' parts; `self` names this node's part among them.
        bool host = false;
        std::uint32_t self = 0;
        std::uint32_t timeout_ms = 0;  // its contributors', for the host
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
    std::uint64_t ended_board_fences_ = 0;  // completed on the boards of jobs that ended
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
    // later.
    tree::RecentFailures failed_;

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
    void host_done(const Envelope &env, msg::HostFenceDone &m);
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

    // The tree's side: this node's part handed to the Gather, the brokers hosting a key's
    // participants (its plan) and its verdict.
    void contribute_part(const std::string &key, const msg::FencePart &part);
    // This node's part's name in a fence: its broker rank on the tree, its node's for a host.
    std::uint32_t part_id(const Fence &f);
    std::optional<std::vector<std::uint32_t>> hosts(const std::string &key,
                                                    const BrokerView &view) const;
    void verdict(const std::string &key, std::int32_t status, const tree::Bytes &result);
};

}  // namespace zpmix
