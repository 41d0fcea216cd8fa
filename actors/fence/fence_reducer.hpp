#pragma once
// FenceReducer (`fence`): PMIx_Fence as a reduction keyed by the participant set and fence id.
// It counts the contributions of this node's participants (and, once the broker tree exists, of
// its child brokers); when all are in, the root completes the fence: with collect it asks `modex`
// once for the participants' data, then encodes ONE FenceDone and sends those bytes to every
// local participant. A participant that ends before contributing fails the fence for the others.
// A client contributes only as itself (msg::acting_proc, checked before any handler runs).
//
// Collected data is laid out as a fence segment (fence_segment.hpp): an index of proc -> data,
// then each proc's data, so a client decodes a participant's data only on its first Get of it.
// Above kInlineMax bytes, the segment is delivered once per node, not once per client: the
// reducer writes it ONCE into the participant set's segment arena (segment_arena.hpp), a file in
// the session directory of the set's namespaces that every participant maps once, and FenceDone
// carries only the region. When the arena has no free region large enough (participants still
// read the older segments), the segment gets an immutable file of its own. Smaller segments
// travel as bytes in FenceDone (faster, measured), as do segments whose session directory is
// unknown or cannot be written (logged).
//
// When a segment goes: a participant maps a segment before its fence returns, and reports in
// each contribution (`done_through`) the fence ids over that set it has finished with. So once
// every local participant has contributed to a later fence over the same set, the set's segments
// below every contributor's `done_through` are freed (an arena region becomes free, a file is
// removed): with blocking fences, fence k's segment goes with fence k+1 (k+2 for an arena
// region, which the client reads until fence k+1's data replaces it). Segments of a set that
// never fences again go when the last of its namespaces is deregistered, and all of them when the
// broker stops. A cross-node tree keeps this shape: each broker writes its own node's segment
// from the result that flows down to it.
//
// A job whose ranks are all on this node fences its whole namespace on its fence board
// (fence_board.hpp), without this actor; the reducer maps the board to fail those fences when a
// rank ends. Its ranks never fence their namespace by message: such a contribution comes from a
// process that fences without the board, which the board's fence cannot count. It is refused, and
// the board fails, so no rank waits for that process.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/fence/fence_board.hpp"
#include "actors/fence/fence_segment.hpp"
#include "actors/fence/segment_arena.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/namespace_table.hpp"

namespace zpmix {

class FenceReducer : public Actor {
  public:
    FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces);
    ~FenceReducer() override;  // removes the segments still there

    // A segment up to this size travels inline in FenceDone. Measured against the arena
    // (DEVELOPERS.md, "Fence segments"): even at 2 and 4 KiB, the arena faster from 8 KiB.
    static constexpr std::size_t kInlineMax = 4 * 1024;
    // A set's arena holds at least four of its segments (a client reads two at most in steady
    // state), and never less than this.
    static constexpr std::uint64_t kArenaMin = 1 << 20;

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
        std::size_t pending_children = 0;            // child brokers yet to report (no tree yet)
        Reactor::TimerId timer = 0;
        bool gathering = false;  // complete, waiting for modex's data
    };

    // The live segments of one participant set.
    struct SetSegments {
        std::vector<std::string> nspaces;                     // of the set
        std::map<std::uint64_t, std::string> paths;           // fence id -> segment file
        std::unique_ptr<SegmentArena> arena;                  // where its segments go first
        std::vector<std::unique_ptr<SegmentArena>> outgrown;  // until their regions are freed
    };

    const NamespaceTable &namespaces_;
    std::unordered_map<std::string, Fence> fences_;   // by fence_key
    std::map<std::uint64_t, std::string> gathering_;  // modex request id -> fence key
    std::uint64_t next_request_ = 1;
    std::unordered_map<std::string, SetSegments> segments_;  // by participant set (its key)
    std::unordered_map<std::string, std::unique_ptr<FenceBoard>> boards_;  // mapped, by nspace
    std::uint64_t next_segment_ = 1;

    void contribute(const Envelope &env, msg::FenceContribute &m);
    void collected(const Envelope &env, msg::ModexCollected &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);

    FenceBoard *board_of(const std::string &nspace);

    // How many of this node's processes take part, or -1 while a wildcard's size is unknown.
    long expected_local(const Fence &f) const;
    // A participant that ended before contributing, if any.
    std::optional<msg::Proc> missing_for_good(const Fence &f) const;
    void maybe_complete(const std::string &key, Fence &f);
    // The live segments of the fence's set (made as needed) and, in `dir`, the session directory
    // of its namespaces; nullptr when none of them has one.
    SetSegments *set_segments(const Fence &f, std::string &dir);
    // Where FenceDone hands `segment` to its readers: a region of the set's arena, else (no room
    // there) its own file, else bytes.
    msg::FenceDone delivery(const std::string &key, const Fence &f,
                            const FenceSegmentWriter &segment);
    // Writes the segment into the set's arena (made, or outgrown for a bigger one, as needed);
    // its offset, or nullopt (logged when not merely full) when it must go elsewhere.
    std::optional<std::uint64_t> place_in_arena(const std::string &key, const Fence &f,
                                                const FenceSegmentWriter &segment);
    // Writes the fence's segment into a new file; returns its path, or empty (logged) when it
    // should travel inline.
    std::string write_segment(const std::string &key, const Fence &f,
                              const FenceSegmentWriter &segment);
    // Sends every local contributor its FenceDone and forgets the fence; with a collecting
    // fence's `segment`.
    void finish(const std::string &key, std::int32_t status,
                const FenceSegmentWriter *segment = nullptr);
    // Frees the segments of `set` of fences below `below`.
    void release(const std::string &set, std::uint64_t below);
};

}  // namespace zpmix
