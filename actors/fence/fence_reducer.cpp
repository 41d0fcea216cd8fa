#include "actors/fence/fence_reducer.hpp"

#include <algorithm>
#include <chrono>

#include <pmix_common.h>

#include "actors/fence/fence_segment.hpp"

namespace zpmix {

FenceReducer::FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces)
    : Actor("fence", reactor, bus),
      namespaces_(namespaces),
      store_(log(), [this](const std::string &nspace) {
          const auto ns = namespaces_.find(nspace);
          return ns ? ns->job->session_tmpdir : std::string();
      }) {
    on(&FenceReducer::contribute, Access::session);
    on(&FenceReducer::collected, Access::internal);
    on(&FenceReducer::proc_ended, Access::internal);
    on(&FenceReducer::namespace_ended, Access::internal);
}

void FenceReducer::contribute(const Envelope &env, msg::FenceContribute &m) {
    auto participants = msg::canonical_participants(std::move(m.participants));
    if (participants.empty() || !FenceCount::includes(participants, m.proc)) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "the contributor is not among the participants");
        return;
    }
    std::string set = msg::fence_set(participants);
    const std::string key = set + '#' + std::to_string(m.fence_id);
    // A participant that cannot exist fails the fence at once for each contributor: a rank its
    // job does not have, a namespace this broker does not know (the contributor's own may be
    // unregistered: a singleton). Checked by the first only: the others name the same set.
    if (!fences_.contains(key)) {
        const auto snapshot = namespaces_.snapshot();
        for (const auto &p : participants) {
            auto ns = snapshot->find(p.nspace);
            if (ns == snapshot->end() && p.nspace != m.proc.nspace)
                return reply_error(env, PMIX_ERR_NOT_FOUND,
                                   "unknown namespace '" + p.nspace + "' among the participants");
            if (ns != snapshot->end() && p.rank != msg::kWildcardRank &&
                p.rank >= ns->second->size())
                return reply_error(env, PMIX_ERR_BAD_PARAM,
                                   p.nspace + " has no rank " + std::to_string(p.rank));
        }
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
    // Moves the set and participants only when the fence is new.
    auto [it, created] =
        fences_.try_emplace(key, std::move(set), m.fence_id, std::move(participants));
    Fence &f = it->second;
    if (created && m.timeout_ms > 0)
        f.timer = reactor().after(std::chrono::milliseconds(m.timeout_ms), [this, key] {
            if (auto t = fences_.find(key); t != fences_.end()) {
                t->second.timer = 0;
                log().info("fence {} timed out", key);
                finish(key, PMIX_ERR_TIMEOUT);
            }
        });
    if (!f.count.arrive(m.proc, m.sizes)) {
        reply_error(env, PMIX_ERR_EXISTS, "this process already contributed to the fence");
        return;
    }
    f.collect = f.collect || m.collect;
    f.done_through = std::min(f.done_through, m.done_through);
    f.routes.push_back(env.from);
    // Later exits are handled as they come; one that came before fails a new fence at once.
    if (created && missing_for_good(f)) {
        finish(key, PMIX_ERR_PROC_TERM_WO_SYNC);
        return;
    }
    maybe_complete(key, f);
}

std::optional<msg::Proc> FenceReducer::missing_for_good(const Fence &f) const {
    const auto snapshot = namespaces_.snapshot();
    for (const auto &p : f.count.participants()) {
        auto ns = snapshot->find(p.nspace);
        if (ns == snapshot->end()) continue;
        const NamespaceRecord &job = *ns->second;
        if (p.rank != msg::kWildcardRank) {
            if (job.ended(p.rank) && !f.count.arrived(p)) return p;
            continue;
        }
        for (std::uint32_t r = 0; r < job.size(); ++r)
            if (job.ended(r) && !f.count.arrived({p.nspace, r})) return msg::Proc{p.nspace, r};
    }
    return std::nullopt;
}

void FenceReducer::maybe_complete(const std::string &key, Fence &f) {
    if (f.gathering || !f.count.complete()) return;
    // Every local participant contributed, each after finishing the set's fences below its
    // done_through: none of them needs those fences' segments again, and their arena regions
    // may take this fence's.
    store_.release(f.set, std::min(f.done_through, f.fence_id));
    if (!f.collect) {
        finish(key, PMIX_SUCCESS);
        return;
    }
    f.gathering = true;
    const std::uint64_t id = next_request_++;
    gathering_.emplace(id, key);
    send("modex", msg::ModexCollect{f.count.participants()}, id);
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

void FenceReducer::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc gone{m.nspace, m.rank};
    if (FenceBoard *board = board_of(m.nspace))
        board->rank_ended(m.rank, PMIX_ERR_PROC_TERM_WO_SYNC);
    std::vector<std::string> failed;
    for (const auto &[key, f] : fences_)
        if (!f.gathering && f.count.waits_for(gone)) failed.push_back(key);
    for (const auto &key : failed) {
        log().info("fence {} fails: {}:{} ended before contributing", key, m.nspace, m.rank);
        finish(key, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
}

void FenceReducer::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    boards_.erase(m.nspace);
    store_.drop_orphans();  // the segments of the sets this was the last namespace of
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
    if (segment) d = store_.deliver(key, f.set, f.fence_id, f.count.participants(), *segment);
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
