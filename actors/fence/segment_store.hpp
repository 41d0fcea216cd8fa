#pragma once
// SegmentStore: where a node's collected fence data waits for its readers, and how FenceDone
// hands it to them. The FenceReducer gives it each collecting fence's segment (fence_segment.hpp)
// and tells it which segments no reader needs any more; it knows nothing of who contributed.
//
// Above kInlineMax bytes, a segment is delivered once per node, not once per client: it is written
// ONCE into the participant set's segment arena (segment_arena.hpp), a file in the session
// directory of the set's namespaces that every participant maps once, and FenceDone carries only
// the region. When the arena has no free region large enough (participants still read the older
// segments), the segment gets an immutable file of its own. Smaller segments travel as bytes in
// FenceDone (faster, measured), as do segments whose session directory is unknown or cannot be
// written (logged).
//
// When a segment goes: the reducer releases a set's segments below the fence ids every local
// participant has finished with (an arena region becomes free, a file is removed). A set's
// segments go with the last of its namespaces (drop_orphans), and all of them with the store.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "actors/protocol/fence.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"

namespace zpmix {

class SegmentStore {
  public:
    // The session directory of a namespace, empty when it has none (any more).
    using SessionDir = std::function<std::string(const std::string &nspace)>;

    // A segment up to this size travels inline in FenceDone. Measured against the arena
    // (docs/fences.md): even at 2 and 4 KiB, the arena faster from 8 KiB.
    static constexpr std::size_t kInlineMax = 4 * 1024;
    // A set's arena holds at least four of its segments (a client reads two at most in steady
    // state), and never less than this.
    static constexpr std::uint64_t kArenaMin = 1 << 20;

    SegmentStore(spdlog::logger &log, SessionDir session_dir)
        : log_(log), session_dir_(std::move(session_dir)) {}
    ~SegmentStore();  // removes the segment files still there (the arenas remove theirs)
    SegmentStore(const SegmentStore &) = delete;
    SegmentStore &operator=(const SegmentStore &) = delete;

    // The FenceDone fields that hand fence `fence_id`'s `segment` to its readers: a region of
    // the set's arena, else (no room there) a file of its own, else the bytes. `set` and
    // `participants` (canonical) name the fence's participant set; `key`, the fence in log lines.
    msg::FenceDone deliver(const std::string &key, const std::string &set, std::uint64_t fence_id,
                           const std::vector<msg::Proc> &participants,
                           const FenceSegmentWriter &segment);
    // Frees the segments of `set` of fences below `below`.
    void release(const std::string &set, std::uint64_t below);
    // Removes every set's segments none of whose namespaces has a session directory any more:
    // until the last goes, a participant of another namespace may still be about to map one.
    void drop_orphans();

  private:
    // The live segments of one participant set.
    struct SetSegments {
        std::vector<std::string> nspaces;                     // of the set
        std::map<std::uint64_t, std::string> paths;           // fence id -> segment file
        std::unique_ptr<SegmentArena> arena;                  // where its segments go first
        std::vector<std::unique_ptr<SegmentArena>> outgrown;  // until their regions are freed
    };

    spdlog::logger &log_;
    SessionDir session_dir_;
    std::unordered_map<std::string, SetSegments> segments_;  // by participant set (its key)
    std::uint64_t next_segment_ = 1;

    // The live segments of `set` (made as needed) and, in `dir`, the session directory of its
    // namespaces; nullptr when none of them has one.
    SetSegments *set_segments(const std::string &set, const std::vector<msg::Proc> &participants,
                              std::string &dir);
    // Writes the segment into the set's arena (made, or outgrown for a bigger one, as needed);
    // its offset, or nullopt (logged when not merely full) when it must go elsewhere.
    std::optional<std::uint64_t> place_in_arena(const std::string &key, SetSegments &s,
                                                const std::string &dir, std::uint64_t fence_id,
                                                const FenceSegmentWriter &segment);
    // Writes the segment into a new file; returns its path, or empty (logged) when it should
    // travel inline.
    std::string write_segment(const std::string &key, SetSegments &s, const std::string &dir,
                              std::uint64_t fence_id, const FenceSegmentWriter &segment);
};

}  // namespace zpmix
