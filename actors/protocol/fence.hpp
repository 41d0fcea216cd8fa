#pragma once
// PMIx_Fence: each participant contributes once; the broker's FenceReducer answers every local
// participant with one FenceDone, the same encoded bytes for all of them. A collecting fence's
// data is a fence segment (actors/protocol/shm/fence_segment.hpp): in the FenceDone when it is
// small, else in a file the FenceDone names. A fence over several nodes also passes
// FenceUp/FenceDown between the brokers' fences.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"

namespace zpmix::msg {

// Sorts the participants, drops duplicates and ranks a wildcard of their namespace already
// covers: two processes naming the same set in any order get the same list.
inline std::vector<Proc> canonical_participants(std::vector<Proc> procs) {
    std::sort(procs.begin(), procs.end());
    procs.erase(std::unique(procs.begin(), procs.end()), procs.end());
    std::vector<std::string> wild;
    for (const auto &p : procs)
        if (p.rank == kWildcardRank) wild.push_back(p.nspace);
    if (!wild.empty())
        std::erase_if(procs, [&](const Proc &p) {
            return p.rank != kWildcardRank &&
                   std::binary_search(wild.begin(), wild.end(), p.nspace);
        });
    return procs;
}

// The name of a participant set: the canonical participants as text ("ns:0,1;ns2:*").
inline std::string fence_set(const std::vector<Proc> &canonical) {
    std::string key;
    const std::string *ns = nullptr;
    for (const auto &p : canonical) {
        if (!ns || *ns != p.nspace) {
            if (ns) key += ';';
            key += p.nspace;
            key += ':';
            ns = &p.nspace;
        } else {
            key += ',';
        }
        if (p.rank == kWildcardRank)
            key += '*';
        else
            key += std::to_string(p.rank);
    }
    return key;
}

// The name of one fence: its participant set and the fence id ("ns:0,1;ns2:*#3"). Clients and
// the broker derive it the same way, so a FenceDone needs no per-client request id.
inline std::string fence_key(const std::vector<Proc> &canonical, std::uint64_t fence_id) {
    return fence_set(canonical) + '#' + std::to_string(fence_id);
}

// The canonical participants a fence key (or a set) names; none when it names none, or not in
// fence_set's own spelling (each namespace's name runs to the last ':' of its part, so a name
// holding ';' cannot be read back: such a key names no set).
inline std::optional<std::vector<Proc>> fence_key_participants(std::string_view key) {
    if (auto hash = key.rfind('#'); hash != std::string_view::npos) key = key.substr(0, hash);
    const std::string_view set = key;
    std::vector<Proc> procs;
    while (!key.empty()) {
        const auto end = std::min(key.find(';'), key.size());
        const std::string_view part = key.substr(0, end);
        key.remove_prefix(std::min(end + 1, key.size()));
        const auto colon = part.rfind(':');
        if (colon == std::string_view::npos || colon == 0) return std::nullopt;
        const std::string nspace(part.substr(0, colon));
        std::string_view ranks = part.substr(colon + 1);
        while (true) {
            const auto comma = std::min(ranks.find(','), ranks.size());
            const std::string_view r = ranks.substr(0, comma);
            std::uint32_t rank = kWildcardRank;
            if (r != "*") {
                auto [ptr, ec] = std::from_chars(r.data(), r.data() + r.size(), rank);
                if (r.empty() || ec != std::errc() || ptr != r.data() + r.size())
                    return std::nullopt;
            }
            procs.push_back({nspace, rank});
            if (comma == ranks.size()) break;
            ranks.remove_prefix(comma + 1);
        }
    }
    if (procs.empty() || fence_set(canonical_participants(procs)) != set) return std::nullopt;
    return procs;
}

// Client -> fence. `fence_id` is the client's sequence number of fences over this participant
// set (every participant calls its fences over one set in the same order, so the ids match up).
// `sizes` gives the size of each namespace the contributor knows (its own), so that a wildcard's
// count is known once anyone of that namespace has contributed.
// `done_through`: every fence over this set with a smaller id has completed or been given up at
// the contributor, and it reads no arena segment of theirs any more, so it needs none of their
// segments (0, the default, releases none).
struct FenceContribute {
    static constexpr const char *type = "fence.contribute";
    std::vector<Proc> participants;  // canonical
    std::uint64_t fence_id = 0;
    bool collect = false;
    std::uint32_t timeout_ms = 0;  // 0 = no limit
    Proc proc;                     // the contributor
    std::vector<std::pair<std::string, std::uint32_t>> sizes;
    std::uint64_t done_through = 0;
    ZPMIX_MSG_MAP(participants, fence_id, collect, timeout_ms, proc, sizes, done_through);
};
inline const Proc *acting_proc(const FenceContribute &m) {
    return &m.proc;
}

// fence -> each local participant (envelope id 0): the fence named `key` completed with `status`
// (PMIX_SUCCESS, PMIX_ERR_TIMEOUT, PMIX_ERR_PROC_TERM_WO_SYNC when a participant ended first),
// and with collect, every participant's data as a fence segment
// (actors/protocol/shm/fence_segment.hpp), which the participant maps before its fence returns:
// `arena_length` bytes at `arena_offset` of the segment arena at the path `arena`
// (actors/protocol/shm/segment_arena.hpp), or, when the arena has no room for it, the file at the
// path `segment`, or when small, the segment's bytes themselves in `segment_bytes`. Tool (`zpmix
// exporter`) -> fence: the broker's fence counters. Answered by FenceStats. Fences whose
// participants all meet on a node's fence board never reach the broker: they are counted apart,
// once complete, from the boards (untimed).
struct FenceStatsQuery {
    static constexpr const char *type = "fence.stats";
    std::string scraper;  // who asks, for the broker's debug log
    ZPMIX_MSG_MAP(scraper);
};
struct FenceStats {
    static constexpr const char *type = "fence.stats.reply";
    std::uint64_t completed = 0;  // fences answered PMIX_SUCCESS
    std::uint64_t failed = 0;     // fences answered with an error
    // From the first contribution here to the answer: counts[i] fences took at most bounds[i]
    // seconds and more than bounds[i-1]; the last count is those above every bound.
    std::vector<double> bounds;
    std::vector<std::uint64_t> counts;
    double sum_s = 0;
    std::uint64_t board_completed = 0;  // whole-namespace fences complete on this node's boards
    ZPMIX_MSG_MAP(completed, failed, bounds, counts, sum_s, board_completed);
};

struct FenceDone {
    static constexpr const char *type = "fence.done";
    std::string key;
    std::int32_t status = 0;
    std::string segment;
    Blob segment_bytes;
    std::string arena;
    std::uint64_t arena_offset = 0;
    std::uint64_t arena_length = 0;
    ZPMIX_MSG_MAP(key, status, segment, segment_bytes, arena, arena_offset, arena_length);
};
inline std::size_t payload_bytes(const FenceDone &m) {
    return m.segment_bytes.size();
}

// A fence whose participants are on several brokers' nodes is a reduction over the broker tree
// (actors/tree/gather.hpp): each broker's fence sends its subtree's part up to its parent's, the
// root's verdict comes down. `key` is the fence's; `status` PMIX_SUCCESS, or why the subtree's
// part cannot come (then `part` is empty). Between brokers only, addressed "@<rank>/fence".
struct FenceUp {
    static constexpr const char *type = "fence.up";
    std::string key;
    std::int32_t status = 0;
    Blob part;  // the subtree's parts (Gather::concatenate's array of FenceParts)
    ZPMIX_MSG_MAP(key, status, part);
};
struct FenceDown {
    static constexpr const char *type = "fence.down";
    std::string key;
    std::int32_t status = 0;
    Blob result;  // on success, every taking-part broker's FencePart
    ZPMIX_MSG_MAP(key, status, result);
};
inline std::size_t payload_bytes(const FenceUp &m) {
    return m.part.size();
}
inline std::size_t payload_bytes(const FenceDown &m) {
    return m.result.size();
}

// fence -> the root broker's fence: `proc`, of a job on several nodes, ended on the sender's
// node; it contributed, of the fences over several nodes still pending there, to `contributed`
// (their keys). The root fails every pending fence it takes part in but did not contribute to
// (PMIX_ERR_PROC_TERM_WO_SYNC), as every later one: other brokers know only their own node's
// ends, and every reduction reaches the root.
struct FenceProcEnded {
    static constexpr const char *type = "fence.proc_ended";
    Proc proc;
    std::vector<std::string> contributed;
    ZPMIX_MSG_MAP(proc, contributed);
};

// One broker's part of a fence that spans nodes (not a message: the bytes a FenceUp carries):
// whether its contributors asked for the data, and with collect, its node's participants' data
// as a reader on another node sees it (remote+global: PMIX_LOCAL data never leaves its node).
struct FencePart {
    std::uint32_t broker = 0;
    bool collect = false;
    std::vector<ProcData> data;
    ZPMIX_MSG_MAP(broker, collect, data);
};

}  // namespace zpmix::msg
