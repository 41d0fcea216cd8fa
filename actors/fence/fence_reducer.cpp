#include "actors/fence/fence_reducer.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <pmix_common.h>

#include "actors/fence/fence_segment.hpp"

namespace zpmix {

namespace {

// The smallest power of two of at least n.
std::uint64_t power_of_two_above(std::uint64_t n) {
    std::uint64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

bool takes_part(const std::vector<msg::Proc> &participants, const msg::Proc &p) {
    return std::binary_search(participants.begin(), participants.end(), p) ||
           std::binary_search(participants.begin(), participants.end(),
                              msg::Proc{p.nspace, msg::kWildcardRank});
}

}  // namespace

FenceReducer::FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces)
    : Actor("fence", reactor, bus), namespaces_(namespaces) {
    on(&FenceReducer::contribute, Access::session);
    on(&FenceReducer::collected, Access::internal);
    on(&FenceReducer::proc_ended, Access::internal);
    on(&FenceReducer::namespace_ended, Access::internal);
}

FenceReducer::~FenceReducer() {
    for (const auto &[set, s] : segments_)
        for (const auto &[id, path] : s.paths) ::unlink(path.c_str());
}

void FenceReducer::contribute(const Envelope &env, msg::FenceContribute &m) {
    auto participants = msg::canonical_participants(std::move(m.participants));
    if (participants.empty() || !takes_part(participants, m.proc)) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "the contributor is not among the participants");
        return;
    }
    if (participants.size() == 1 && participants[0].rank == msg::kWildcardRank)
        if (FenceBoard *board = board_of(participants[0].nspace)) {
            log().warn(
                "{}:{} (pid {}) fences its namespace by message, but its job fences on "
                "its fence board: that job's whole-namespace fences fail",
                m.proc.nspace, m.proc.rank, env.peer.pid);
            board->fail_all(PMIX_ERR_NOT_SUPPORTED);
            return reply_error(env, PMIX_ERR_NOT_SUPPORTED,
                               "this job fences its namespace on its fence board, not by "
                               "message");
        }
    std::string set = msg::fence_set(participants);
    const std::string key = set + '#' + std::to_string(m.fence_id);
    auto [it, created] = fences_.try_emplace(key);
    Fence &f = it->second;
    if (created) {
        f.set = std::move(set);
        f.participants = std::move(participants);
        f.fence_id = m.fence_id;
        f.collect = m.collect;
        if (m.timeout_ms > 0)
            f.timer = reactor().after(std::chrono::milliseconds(m.timeout_ms), [this, key] {
                if (auto t = fences_.find(key); t != fences_.end()) {
                    t->second.timer = 0;
                    log().info("fence {} timed out", key);
                    finish(key, PMIX_ERR_TIMEOUT);
                }
            });
    }
    if (!f.arrived.insert(m.proc).second) {
        reply_error(env, PMIX_ERR_EXISTS, "this process already contributed to the fence");
        return;
    }
    f.collect = f.collect || m.collect;
    f.done_through = std::min(f.done_through, m.done_through);
    f.routes.push_back(env.from);
    for (const auto &[ns, size] : m.sizes)
        if (std::binary_search(f.participants.begin(), f.participants.end(),
                               msg::Proc{ns, msg::kWildcardRank}))
            f.sizes.emplace(ns, size);
    // Later exits are handled as they come; one that came before fails a new fence at once.
    if (created && missing_for_good(f)) {
        finish(key, PMIX_ERR_PROC_TERM_WO_SYNC);
        return;
    }
    maybe_complete(key, f);
}

long FenceReducer::expected_local(const Fence &f) const {
    long n = 0;
    for (const auto &p : f.participants) {
        if (p.rank != msg::kWildcardRank) {
            ++n;
            continue;
        }
        auto size = f.sizes.find(p.nspace);
        if (size == f.sizes.end()) return -1;
        n += size->second;
    }
    return n;
}

std::optional<msg::Proc> FenceReducer::missing_for_good(const Fence &f) const {
    const auto snapshot = namespaces_.snapshot();
    for (const auto &p : f.participants) {
        auto ns = snapshot->find(p.nspace);
        if (ns == snapshot->end()) continue;
        const NamespaceRecord &job = *ns->second;
        if (p.rank != msg::kWildcardRank) {
            if (job.ended(p.rank) && !f.arrived.contains(p)) return p;
            continue;
        }
        for (std::uint32_t r = 0; r < job.size(); ++r)
            if (job.ended(r) && !f.arrived.contains({p.nspace, r})) return msg::Proc{p.nspace, r};
    }
    return std::nullopt;
}

void FenceReducer::maybe_complete(const std::string &key, Fence &f) {
    if (f.gathering || f.pending_children > 0 ||
        static_cast<long>(f.arrived.size()) != expected_local(f))
        return;
    // Every local participant contributed, each after finishing the set's fences below its
    // done_through: none of them needs those fences' segments again, and their arena regions
    // may take this fence's.
    release(f.set, std::min(f.done_through, f.fence_id));
    if (!f.collect) {
        finish(key, PMIX_SUCCESS);
        return;
    }
    f.gathering = true;
    const std::uint64_t id = next_request_++;
    gathering_.emplace(id, key);
    send("modex", msg::ModexCollect{f.participants}, id);
}

void FenceReducer::collected(const Envelope &env, msg::ModexCollected &m) {
    auto node = gathering_.extract(env.id);
    if (!node) return;
    const std::string &key = node.mapped();
    auto f = fences_.find(key);
    if (f == fences_.end()) return;
    const FenceSegmentWriter segment(m.data);
    finish(key, PMIX_SUCCESS, &segment);
}

msg::FenceDone FenceReducer::delivery(const std::string &key, const Fence &f,
                                      const FenceSegmentWriter &segment) {
    msg::FenceDone done;
    if (segment.size() > kInlineMax) {
        if (auto at = place_in_arena(key, f, segment)) {
            done.arena = segments_[f.set].arena->path();
            done.arena_offset = *at;
            done.arena_length = segment.size();
            return done;
        }
        done.segment = write_segment(key, f, segment);
    }
    if (done.segment.empty()) done.segment_bytes = segment.bytes();
    return done;
}

FenceReducer::SetSegments *FenceReducer::set_segments(const Fence &f, std::string &dir) {
    dir.clear();
    std::vector<std::string> nspaces;
    for (const auto &p : f.participants) {
        if (!nspaces.empty() && nspaces.back() == p.nspace) continue;
        nspaces.push_back(p.nspace);
        if (dir.empty())
            if (auto ns = namespaces_.find(p.nspace)) dir = ns->job->session_tmpdir;
    }
    if (dir.empty()) return nullptr;  // namespaces the launcher did not register
    SetSegments &s = segments_[f.set];
    if (s.nspaces.empty()) s.nspaces = std::move(nspaces);
    return &s;
}

std::optional<std::uint64_t> FenceReducer::place_in_arena(const std::string &key, const Fence &f,
                                                          const FenceSegmentWriter &segment) {
    std::string dir;
    SetSegments *set = set_segments(f, dir);
    if (!set) return std::nullopt;
    SetSegments &s = *set;
    std::string error;
    if (!s.arena || s.arena->size() < 4 * segment.size()) {
        const std::uint64_t size = std::max(kArenaMin, power_of_two_above(4 * segment.size()));
        auto bigger =
            SegmentArena::create(dir + "/arena." + std::to_string(next_segment_++), size, error);
        if (!bigger) {
            log().warn("fence {}: no segment arena: {}", key, error);
            return std::nullopt;
        }
        if (s.arena && !s.arena->empty()) s.outgrown.push_back(std::move(s.arena));
        s.arena = std::move(bigger);
    }
    return s.arena->place(f.fence_id, segment);
}

std::string FenceReducer::write_segment(const std::string &key, const Fence &f,
                                        const FenceSegmentWriter &segment) {
    std::string dir;
    SetSegments *set = set_segments(f, dir);
    if (!set) return {};  // no session directory
    const std::string path = dir + "/fence." + std::to_string(next_segment_++);
    if (auto err = segment.write(path); !err.empty()) {
        log().warn("fence {}: its data goes inline: {}", key, err);
        return {};
    }
    set->paths.emplace(f.fence_id, path);
    return path;
}

void FenceReducer::release(const std::string &set, std::uint64_t below) {
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

void FenceReducer::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc gone{m.nspace, m.rank};
    if (FenceBoard *board = board_of(m.nspace))
        board->rank_ended(m.rank, PMIX_ERR_PROC_TERM_WO_SYNC);
    std::vector<std::string> failed;
    for (const auto &[key, f] : fences_)
        if (!f.gathering && takes_part(f.participants, gone) && !f.arrived.contains(gone))
            failed.push_back(key);
    for (const auto &key : failed) {
        log().info("fence {} fails: {}:{} ended before contributing", key, m.nspace, m.rank);
        finish(key, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
}

void FenceReducer::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    boards_.erase(m.nspace);
    // A set's segments go with the last of its namespaces: until then a participant of another
    // namespace may still be about to map one.
    const auto snapshot = namespaces_.snapshot();
    std::vector<std::string> dead;
    for (const auto &[set, s] : segments_)
        if (std::none_of(s.nspaces.begin(), s.nspaces.end(),
                         [&](const std::string &ns) { return snapshot->contains(ns); }))
            dead.push_back(set);
    for (const auto &set : dead) {
        release(set, UINT64_MAX);
        segments_.erase(set);  // and its arenas
    }
}

// The job's fence board, mapped on first use; nullptr when it has none (or it cannot be mapped:
// then its ranks cannot map it either, and fail PMIx_Init).
FenceBoard *FenceReducer::board_of(const std::string &nspace) {
    if (auto b = boards_.find(nspace); b != boards_.end()) return b->second.get();
    const auto ns = namespaces_.find(nspace);
    if (!ns || ns->job->fence_board.empty()) return nullptr;
    std::string error;
    auto board = FenceBoard::open(ns->job->fence_board, error);
    if (!board) log().error("{}: {}", nspace, error);
    return (boards_[nspace] = std::move(board)).get();
}

void FenceReducer::finish(const std::string &key, std::int32_t status,
                          const FenceSegmentWriter *segment) {
    auto node = fences_.extract(key);
    if (!node) return;
    Fence &f = node.mapped();
    if (f.timer) reactor().cancel(f.timer);
    std::erase_if(gathering_, [&](const auto &kv) { return kv.second == key; });
    // One FenceDone, encoded once: every copy shares its buffer.
    msg::FenceDone d;
    if (segment) d = delivery(key, f, *segment);
    d.key = key;
    d.status = status;
    zmq::message_t done = encode(msg::FenceDone::type, 0, d, name());
    for (const auto &route : f.routes) {
        zmq::message_t copy;
        copy.copy(done);
        bus().send(route, std::move(copy));
    }
}

}  // namespace zpmix
