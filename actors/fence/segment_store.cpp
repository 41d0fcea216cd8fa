#include "actors/fence/segment_store.hpp"

#include <unistd.h>

#include <algorithm>

namespace zpmix {

namespace {

// The smallest power of two of at least n.
std::uint64_t power_of_two_above(std::uint64_t n) {
    std::uint64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

}  // namespace

SegmentStore::~SegmentStore() {
    for (const auto &[set, s] : segments_)
        for (const auto &[id, path] : s.paths) ::unlink(path.c_str());
}

msg::FenceDone SegmentStore::deliver(const std::string &key, const std::string &set,
                                     std::uint64_t fence_id,
                                     const std::vector<msg::Proc> &participants,
                                     const FenceSegmentWriter &segment) {
    msg::FenceDone done;
    if (segment.size() > kInlineMax) {
        std::string dir;
        if (SetSegments *s = set_segments(set, participants, dir)) {
            if (auto at = place_in_arena(key, *s, dir, fence_id, segment)) {
                done.arena = s->arena->path();
                done.arena_offset = *at;
                done.arena_length = segment.size();
                return done;
            }
            done.segment = write_segment(key, *s, dir, fence_id, segment);
        }
    }
    if (done.segment.empty()) done.segment_bytes = segment.bytes();
    return done;
}

SegmentStore::SetSegments *SegmentStore::set_segments(const std::string &set,
                                                      const std::vector<msg::Proc> &participants,
                                                      std::string &dir) {
    dir.clear();
    std::vector<std::string> nspaces;
    for (const auto &p : participants) {
        if (!nspaces.empty() && nspaces.back() == p.nspace) continue;
        nspaces.push_back(p.nspace);
        if (dir.empty()) dir = session_dir_(p.nspace);
    }
    if (dir.empty()) return nullptr;  // namespaces the launcher did not register
    SetSegments &s = segments_[set];
    if (s.nspaces.empty()) s.nspaces = std::move(nspaces);
    return &s;
}

std::optional<std::uint64_t> SegmentStore::place_in_arena(const std::string &key, SetSegments &s,
                                                          const std::string &dir,
                                                          std::uint64_t fence_id,
                                                          const FenceSegmentWriter &segment) {
    std::string error;
    if (!s.arena || s.arena->size() < 4 * segment.size()) {
        const std::uint64_t size = std::max(kArenaMin, power_of_two_above(4 * segment.size()));
        auto bigger =
            SegmentArena::create(dir + "/arena." + std::to_string(next_segment_++), size, error);
        if (!bigger) {
            log_.warn("fence {}: no segment arena: {}", key, error);
            return std::nullopt;
        }
        if (s.arena && !s.arena->empty()) s.outgrown.push_back(std::move(s.arena));
        s.arena = std::move(bigger);
    }
    return s.arena->place(fence_id, segment);
}

std::string SegmentStore::write_segment(const std::string &key, SetSegments &s,
                                        const std::string &dir, std::uint64_t fence_id,
                                        const FenceSegmentWriter &segment) {
    const std::string path = dir + "/fence." + std::to_string(next_segment_++);
    if (auto err = segment.write(path); !err.empty()) {
        log_.warn("fence {}: its data goes inline: {}", key, err);
        return {};
    }
    s.paths.emplace(fence_id, path);
    return path;
}

void SegmentStore::release(const std::string &set, std::uint64_t below) {
    auto s = segments_.find(set);
    if (s == segments_.end()) return;
    auto &paths = s->second.paths;
    for (auto it = paths.begin(); it != paths.end() && it->first < below;) {
        ::unlink(it->second.c_str());
        it = paths.erase(it);
    }
    if (s->second.arena) s->second.arena->release(below);
    auto &outgrown = s->second.outgrown;
    for (auto &a : outgrown) a->release(below);
    std::erase_if(outgrown, [](const auto &a) { return a->empty(); });
}

void SegmentStore::drop_orphans() {
    std::vector<std::string> dead;
    for (const auto &[set, s] : segments_)
        if (std::none_of(s.nspaces.begin(), s.nspaces.end(),
                         [&](const std::string &ns) { return !session_dir_(ns).empty(); }))
            dead.push_back(set);
    for (const auto &set : dead) {
        release(set, UINT64_MAX);
        segments_.erase(set);  // and its arenas
    }
}

}  // namespace zpmix
