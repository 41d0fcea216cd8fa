#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts the contributions of this node's participants (FenceCount; once the broker tree
// exists, its child brokers' reports too); when all are in, the root completes the fence: with
// collect it asks `modex` once for the participants' data, then encodes ONE FenceDone and sends
// those bytes to every local participant. Where that data waits for its readers, and how FenceDone
// hands it over (inline, a region of the set's arena, a file), is the SegmentStore's.
//
// Invariants and limits:
// - A client contributes only as itself (msg::acting_proc, checked before any handler runs), and
//   once per fence: a second contribution is refused with PMIX_ERR_EXISTS.
// - A participant that ends before contributing fails the fence for the others
//   (PMIX_ERR_PROC_TERM_WO_SYNC), also when it ended before the fence began.
// - A fence with a timeout fails with PMIX_ERR_TIMEOUT when it is not complete by then.
// - Segments are released only once every local participant has contributed to a later fence
//   over the same set, below the least `done_through` they report (the fence ids over that set
//   they have finished with): with blocking fences, fence k's segment goes with fence k+1 (k+2
//   for an arena region, which the client reads until fence k+1's data replaces it). A
//   cross-node tree keeps this shape: each broker writes its own node's segment from the result
//   that flows down to it.
// - A job whose ranks are all on this node fences its whole namespace on its fence board
//   (fence_board.hpp), without this actor; the reducer maps the board to fail those fences when
//   a rank ends. Its ranks never fence their namespace by message: such a contribution comes from
//   a process that fences without the board, which the board's fence cannot count. It is
//   refused, and the board fails, so no rank waits for that process.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/fence/fence_board.hpp"
#include "actors/fence/fence_count.hpp"
#include "actors/fence/segment_store.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/namespace_table.hpp"

namespace zpmix {

class FenceReducer : public Actor {
  public:
    FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces);

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
        bool gathering = false;  // complete, waiting for modex's data
    };

    const NamespaceTable &namespaces_;
    std::unordered_map<std::string, Fence> fences_;   // by fence_key
    std::map<std::uint64_t, std::string> gathering_;  // modex request id -> fence key
    std::uint64_t next_request_ = 1;
    std::unordered_map<std::string, std::unique_ptr<FenceBoard>> boards_;  // mapped, by nspace
    SegmentStore store_;  // the collected data, in its namespaces' session directories

    void contribute(const Envelope &env, msg::FenceContribute &m);
    void collected(const Envelope &env, msg::ModexCollected &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);

    FenceBoard *board_of(const std::string &nspace);
    // A participant that ended before contributing, if any.
    std::optional<msg::Proc> missing_for_good(const Fence &f) const;
    void maybe_complete(const std::string &key, Fence &f);
    // Sends every local contributor its FenceDone and forgets the fence; with a collecting
    // fence's `segment`.
    void finish(const std::string &key, std::int32_t status,
                const FenceSegmentWriter *segment = nullptr);
};

}  // namespace zpmix
