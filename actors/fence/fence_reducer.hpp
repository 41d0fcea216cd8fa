#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts the contributions of this node's participants (and, once the broker tree exists, of
// its child brokers); when all are in, the root completes the fence: with collect it asks `modex`
// once for the participants' data, then encodes ONE FenceDone and sends those bytes to every
// local participant. A participant that ends before contributing fails the fence for the others.
// A contribution in the name of a rank this broker launched, from another process, is refused
// (PMIX_ERR_NO_PERMISSIONS; see LaunchedRanks).
//
// Collected data is laid out as a fence segment (fence_segment.hpp): an index of proc -> data,
// then each proc's data, so a client decodes a participant's data only on its first Get of it.
// Above kInlineMax bytes, the segment is delivered once per node, not once per client: the
// reducer writes it ONCE into an immutable file in the session directory of the set's
// namespaces and FenceDone carries only its path; every participant maps the file before its
// fence call returns. Smaller segments travel as bytes in FenceDone (faster, measured), as do
// segments whose session directory is unknown or cannot be written (logged).
//
// When a segment goes: a participant maps a segment before its fence returns, and reports in
// each contribution (`done_through`) the fence ids over that set it has finished with. So a
// later fence over the same set, once complete, removes the set's segments below every local
// contributor's `done_through`: with blocking fences, fence k's segment goes when fence k+1
// completes. Segments of a set that never fences again go when the last of its namespaces is
// deregistered, and all of them when the broker stops. A cross-node tree keeps this shape: each
// broker writes its own node's segment from the result that flows down to it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/fence/fence_segment.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/server/launched_ranks.hpp"

namespace zpmix {

class FenceReducer : public Actor {
  public:
    FenceReducer(Reactor &reactor, Bus &bus);
    ~FenceReducer() override;  // removes the segments still there

    // A segment up to this size travels inline in FenceDone. Measured (DEVELOPERS.md, "Fence
    // segments"): bytes are as fast or faster at 16 KiB, a file wins at 32 KiB from 8 ranks.
    static constexpr std::size_t kInlineMax = 24 * 1024;

  private:
    struct Fence {
        std::string set;                      // msg::fence_set of the participants
        std::vector<msg::Proc> participants;  // canonical
        std::uint64_t fence_id = 0;
        std::uint64_t done_through = UINT64_MAX;  // the least of the contributors'
        bool collect = false;
        std::map<std::string, std::uint32_t> sizes;  // of the namespaces named by a wildcard
        std::set<msg::Proc> arrived;                 // local contributors so far
        std::vector<std::string> routes;             // their routing ids, to answer
        std::vector<std::string> legacy_routes;      // those of protocol < 3: data, no segment
        std::size_t pending_children = 0;            // child brokers yet to report (no tree yet)
        Reactor::TimerId timer = 0;
        bool gathering = false;  // complete, waiting for modex's data
    };

    // The live segments of one participant set.
    struct SetSegments {
        std::vector<std::string> nspaces;            // of the set
        std::map<std::uint64_t, std::string> paths;  // fence id -> segment
    };

    std::unordered_map<std::string, Fence> fences_;   // by fence_key
    std::map<std::uint64_t, std::string> gathering_;  // modex request id -> fence key
    std::set<msg::Proc> exited_;                      // until their namespace is deregistered
    LaunchedRanks ranks_;
    std::uint64_t next_request_ = 1;
    std::unordered_map<std::string, std::string> session_dirs_;  // registered nspace -> its dir
    std::unordered_map<std::string, SetSegments> segments_;      // by participant set (its key)
    std::uint64_t next_segment_ = 1;

    void contribute(const Envelope &env, msg::FenceContribute &m);
    void collected(const Envelope &env, msg::ModexCollected &m);
    void proc_exit(const Envelope &env, msg::ProcExit &m);
    void ns_register(const Envelope &env, msg::RegisterNamespace &m);
    void rank_spawned(const Envelope &env, msg::RankSpawned &m);
    void namespace_gone(const Envelope &env, msg::DeregisterNamespace &m);

    // How many of this node's processes take part, or -1 while a wildcard's size is unknown.
    long expected_local(const Fence &f) const;
    // A participant that ended before contributing, if any.
    const msg::Proc *missing_for_good(const Fence &f) const;
    void maybe_complete(const std::string &key, Fence &f);
    // Writes the fence's segment into a new file; returns its path, or empty (logged) when it
    // should travel inline.
    std::string write_segment(const std::string &key, const Fence &f,
                              const FenceSegmentWriter &segment);
    // Sends one FenceDone to every local contributor and forgets the fence.
    // `data` is for the contributors of protocol < 3 only, which read no segment.
    void finish(const std::string &key, std::int32_t status, std::string segment = {},
                msg::Blob segment_bytes = {}, std::vector<msg::ProcData> data = {});
    // Removes the segments of `set` of fences below `below`.
    void release(const std::string &set, std::uint64_t below);
};

}  // namespace zpmix
