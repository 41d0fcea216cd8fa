#include "client/fences.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace zpmix::client {

std::string ClientFences::open(msg::FenceContribute &m, std::uint64_t id) {
    std::string set = msg::fence_set(m.participants);
    std::string key = set + '#' + std::to_string(m.fence_id);
    std::lock_guard lock(mu_);
    // Open before its done_through is taken: an earlier fence still open holds it down.
    auto &open = open_[set];
    open.insert(m.fence_id);
    m.done_through = *open.begin();
    // An arena segment the store may still read holds its region down too.
    if (auto a = arena_segments_.find(set); a != arena_segments_.end()) {
        std::erase_if(a->second, [](const auto &kv) { return kv.second.expired(); });
        if (a->second.empty())
            arena_segments_.erase(a);
        else
            m.done_through = std::min(m.done_through, a->second.begin()->first);
    }
    fences_[key] = Open{id, std::move(set), m.fence_id};
    return key;
}

std::uint64_t ClientFences::request(const std::string &key) {
    std::lock_guard lock(mu_);
    auto f = fences_.find(key);
    return f == fences_.end() ? 0 : f->second.request;
}

void ClientFences::close(const std::string &key) {
    std::lock_guard lock(mu_);
    auto f = fences_.find(key);
    if (f == fences_.end()) return;
    if (auto open = open_.find(f->second.set); open != open_.end()) {
        open->second.erase(f->second.fence_id);
        if (open->second.empty()) open_.erase(open);
    }
    fences_.erase(f);
}

pmix_status_t ClientFences::take(msg::FenceDone &done) {
    pmix_status_t status = done.status;
    if (status != PMIX_SUCCESS) return status;
    // Mapped before the fence completes: the broker may reuse or remove a segment once this
    // process contributes to a later fence over the same set.
    try {
        if (!done.arena.empty()) {
            auto segment =
                FenceSegment::in_arena(arena(done.arena), done.arena_offset, done.arena_length);
            {
                // Unless its fence was given up: then nothing holds the region for the store.
                std::lock_guard lock(mu_);
                auto f = fences_.find(done.key);
                if (f == fences_.end()) return PMIX_ERR_TIMEOUT;
                arena_segments_[f->second.set][f->second.fence_id] = segment;
            }
            store_.add_segment(std::move(segment));
        } else if (!done.segment.empty()) {
            store_.add_segment(FenceSegment::open(done.segment));
        } else if (!done.segment_bytes.empty()) {
            store_.add_segment(
                FenceSegment::parse({done.segment_bytes.data(), done.segment_bytes.size()}));
        }
    } catch (const SegmentError &e) {
        spdlog::error("pmix client: fence {}: {}", done.key, e.what());
        status = e.status;
    }
    return status;
}

std::shared_ptr<const ArenaMapping> ClientFences::arena(const std::string &path) {
    if (auto it = arenas_.find(path); it != arenas_.end())
        if (auto mapped = it->second.lock()) return mapped;
    std::erase_if(arenas_, [](const auto &kv) { return kv.second.expired(); });
    auto mapped = ArenaMapping::open(path);
    arenas_[path] = mapped;
    return mapped;
}

}  // namespace zpmix::client
