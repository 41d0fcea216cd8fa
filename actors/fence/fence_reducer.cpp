#include "actors/fence/fence_reducer.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iterator>
#include <set>
#include <string_view>
#include <unordered_map>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"  // JobsRelated
#include "actors/protocol/shm/fence_segment.hpp"

namespace zpmix {

namespace {

// How many of `participants` run on `node`. A host's job registered with no process here (another
// mpirun's, connected to) runs on none of this broker's nodes, whatever its host names say.
long on_node(const std::vector<msg::Proc> &participants, const NamespaceTable::Snapshot &namespaces,
             const std::string &node) {
    long n = 0;
    for (const auto &p : participants) {
        auto ns = namespaces.find(p.nspace);
        if (ns == namespaces.end() || ns->second->elsewhere) continue;
        const auto &procs = ns->second->job->procs;
        if (p.rank != msg::kWildcardRank)
            n += p.rank < procs.size() && procs[p.rank].hostname == node;
        else
            n += std::count_if(procs.begin(), procs.end(),
                               [&](const msg::ProcInfo &i) { return i.hostname == node; });
    }
    return n;
}

// Whether `participants` include a process of a hosted job (a host's, NamespaceRecord::hosted)
// that runs on another node than `node`: the host's nodes are not the tree's.
bool across_host(const std::vector<msg::Proc> &participants,
                 const NamespaceTable::Snapshot &namespaces, const std::string &node) {
    for (const auto &p : participants) {
        auto ns = namespaces.find(p.nspace);
        if (ns == namespaces.end() || !ns->second->hosted) continue;
        if (ns->second->elsewhere) return true;
        const auto &procs = ns->second->job->procs;
        if (p.rank != msg::kWildcardRank) {
            if (p.rank < procs.size() && procs[p.rank].hostname != node) return true;
        } else if (std::any_of(procs.begin(), procs.end(),
                               [&](const msg::ProcInfo &i) { return i.hostname != node; })) {
            return true;
        }
    }
    return false;
}

// The id of this node's part in a fence through the host, which no other node of any host has:
// from the first participant that runs here (its entry among the participants, in their canonical
// order, and its rank), as each process runs on one node. The participants may be of several hosts
// (two mpiruns' jobs, connected), whose nodes' names may be alike.
std::uint32_t node_part_id(const std::vector<msg::Proc> &participants,
                           const NamespaceTable::Snapshot &namespaces, const std::string &node) {
    constexpr std::uint32_t kRankBits = 20;
    auto id = [&](std::size_t entry, std::uint32_t rank) {
        return static_cast<std::uint32_t>(entry << kRankBits) | (rank & ((1u << kRankBits) - 1));
    };
    for (std::size_t i = 0; i < participants.size(); ++i) {
        const msg::Proc &p = participants[i];
        auto ns = namespaces.find(p.nspace);
        if (ns == namespaces.end() || ns->second->elsewhere) continue;
        const auto &procs = ns->second->job->procs;
        if (p.rank != msg::kWildcardRank) {
            if (p.rank < procs.size() && procs[p.rank].hostname == node) return id(i, p.rank);
            continue;
        }
        for (std::uint32_t r = 0; r < procs.size(); ++r)
            if (procs[r].hostname == node) return id(i, r);
    }
    return UINT32_MAX;
}

}  // namespace

FenceReducer::FenceReducer(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                           const BrokerMap &brokers)
    : Actor("fence", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      store_(log(),
             [this](const std::string &nspace) {
                 const auto ns = namespaces_.find(nspace);
                 return ns ? ns->job->session_tmpdir : std::string();
             }),
      tree_(tree::Reduction::Messages<msg::FenceUp, msg::FenceDown>{}, bus, log(), brokers,
            {.owner = "fence",
             .hosts = [this](const std::string &key,
                             const BrokerView &view) { return hosts(key, view); },
             .complete = [this](const std::string &key, tree::Status status,
                                const tree::Bytes &result) { verdict(key, status, result); }}) {
    on(&FenceReducer::contribute, Access::session);
    on(&FenceReducer::stats, Access::operator_);
    // Latency buckets, in seconds: a node-local fence takes tens of microseconds, one across
    // nodes milliseconds, one waiting on a slow rank seconds.
    stats_.bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                     0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
    stats_.counts.assign(stats_.bounds.size() + 1, 0);
    on(&FenceReducer::collected, Access::internal);
    on(&FenceReducer::proc_ended, Access::internal);
    on(&FenceReducer::namespace_ended, Access::internal);
    on(&FenceReducer::from_child, Access::internal);
    on(&FenceReducer::from_parent, Access::internal);
    on(&FenceReducer::tree_lost, Access::internal);
    on(&FenceReducer::tree_joined, Access::internal);
    on(&FenceReducer::proc_ended_elsewhere, Access::internal);
    on(&FenceReducer::host_done, Access::internal);
}

void FenceReducer::contribute(const Envelope &env, msg::FenceContribute &m) {
    log().trace("fence contribution of {}.{} (fence {})", m.proc.nspace, m.proc.rank, m.fence_id);
    auto participants = msg::canonical_participants(std::move(m.participants));
    if (participants.empty() || !FenceCount::includes(participants, m.proc)) {
        reply_error(env, PMIX_ERR_BAD_PARAM, "the contributor is not among the participants");
        return;
    }
    std::string set = msg::fence_set(participants);
    const std::string key = set + '#' + std::to_string(m.fence_id);
    // A participant that cannot exist fails the fence at once for each contributor: a rank its
    // job does not have, a namespace this broker does not know (the contributor's own may be
    // unregistered: a singleton). One of a job that ended here and is gone already ended before
    // contributing, as it would have while its job was still registered. Checked by the first
    // only: the others name the same set. The first also finds the brokers hosting
    // participants, when there is a tree.
    std::vector<std::uint32_t> brokers;
    bool host = false;  // over several of a host's nodes
    long here = 0;      // participants on this node, over several nodes
    auto known = fences_.find(key);
    if (known == fences_.end()) {
        const auto snapshot = namespaces_.snapshot();
        for (const auto &p : participants) {
            auto ns = snapshot->find(p.nspace);
            if (ns == snapshot->end() && p.nspace != m.proc.nspace &&
                namespaces_.job_ended(p.nspace))
                return reply_error(env, PMIX_ERR_PROC_TERM_WO_SYNC,
                                   "the job '" + p.nspace + "' among the participants ended");
            if (ns == snapshot->end() && p.nspace != m.proc.nspace)
                return reply_error(env, PMIX_ERR_NOT_FOUND,
                                   "unknown namespace '" + p.nspace + "' among the participants");
            if (ns != snapshot->end() && p.rank != msg::kWildcardRank &&
                p.rank >= ns->second->size())
                return reply_error(env, PMIX_ERR_BAD_PARAM,
                                   p.nspace + " has no rank " + std::to_string(p.rank));
        }
        if (const auto view = brokers_.view();
            view->alone() && across_host(participants, *snapshot, view->node())) {
            host = true;
            here = on_node(participants, *snapshot, view->node());
            if (on_node({m.proc}, *snapshot, view->node()) != 1)
                return reply_error(env, PMIX_ERR_BAD_PARAM,
                                   "the contributor does not run on this node");
        } else if (!view->alone()) {
            const std::vector<std::uint32_t> self{view->rank};
            auto hosts = tree::hosting_brokers(participants, *snapshot, *view);
            if (!hosts && tree::hosting_brokers(participants, *snapshot, *view, view->rank) != self)
                return reply_error(env, PMIX_ERR_NOT_FOUND,
                                   "the participants span nodes, and one is in a namespace or "
                                   "on a node the broker tree does not know");
            if (hosts && *hosts != self) {
                brokers = std::move(*hosts);
                here = on_node(participants, *snapshot, view->node());
                if (on_node({m.proc}, *snapshot, view->node()) != 1)
                    return reply_error(env, PMIX_ERR_BAD_PARAM,
                                       "the contributor does not run on this broker's node");
            }
        }
    } else if (!known->second.brokers.empty() &&
               on_node({m.proc}, *namespaces_.snapshot(), brokers_.view()->node()) != 1) {
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           "the contributor does not run on this broker's node");
    }
    if (participants.size() == 1 && participants[0].rank == msg::kWildcardRank)
        if (FenceBoard *board = board_of(participants[0].nspace)) {
            warn_peer(env,
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
    if (created && !brokers.empty()) {
        f.brokers = std::move(brokers);
        f.count.expect(here);
    }
    if (created && host) {
        f.host = true;
        f.self =
            node_part_id(f.count.participants(), *namespaces_.snapshot(), brokers_.view()->node());
        f.timeout_ms = m.timeout_ms;
        f.count.expect(here);
    }
    if (created && m.timeout_ms > 0)
        f.timer = reactor().after(std::chrono::milliseconds(m.timeout_ms), [this, key] {
            if (auto t = fences_.find(key); t != fences_.end()) {
                t->second.timer = 0;
                log().info("fence {} timed out", key);
                fail(key, PMIX_ERR_TIMEOUT);
            }
        });
    if (!f.count.arrive(m.proc, m.sizes)) {
        reply_error(env, PMIX_ERR_EXISTS, "this process already contributed to the fence");
        return;
    }
    f.collect = f.collect || m.collect;
    f.done_through = std::min(f.done_through, m.done_through);
    f.routes.push_back(env.from);
    // It failed on the tree before this contributor came.
    if (created && !f.brokers.empty())
        if (const auto failed = failed_.find(key)) return finish(key, *failed);
    // Later exits are handled as they come; one that came before fails a new fence at once.
    if (created && missing_for_good(key, f)) {
        fail(key, PMIX_ERR_PROC_TERM_WO_SYNC);
        return;
    }
    maybe_complete(key, f);
}

std::optional<msg::Proc> FenceReducer::missing_for_good(const std::string &key,
                                                        const Fence &f) const {
    if (!f.brokers.empty())
        if (auto gone = ended_before(key, f.count.participants())) return gone;
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
    f.gathering = true;
    const bool tree = !f.brokers.empty() || f.host;
    if (!f.collect) {
        if (!tree) return finish(key, PMIX_SUCCESS);
        return contribute_part(key, msg::FencePart{part_id(f), false, {}});
    }
    const std::uint64_t id = next_request_++;
    collecting_.emplace(id, Collecting{key, tree});
    send("modex", msg::ModexCollect{f.count.participants(), tree}, id);
}

void FenceReducer::collected(const Envelope &env, msg::ModexCollected &m) {
    auto node = collecting_.extract(env.id);
    if (!node) return;
    const Collecting c = std::move(node.mapped());
    auto f = fences_.find(c.key);
    if (f == fences_.end()) return;
    if (c.part)
        return contribute_part(c.key, msg::FencePart{part_id(f->second), true, std::move(m.data)});
    std::move(f->second.others.begin(), f->second.others.end(), std::back_inserter(m.data));
    const FenceSegmentWriter segment(m.data);
    finish(c.key, PMIX_SUCCESS, &segment);
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
        fail(key, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    // Other brokers cannot see this end: tell the root, which every reduction reaches, when the
    // job spans nodes.
    const auto view = brokers_.view();
    const auto ns = namespaces_.find(m.nspace);
    if (view->alone() || !ns ||
        std::all_of(ns->job->procs.begin(), ns->job->procs.end(),
                    [&](const msg::ProcInfo &p) { return p.hostname == view->node(); }))
        return;
    msg::FenceProcEnded out{gone, {}};
    for (const auto &[key, f] : fences_)
        if (!f.brokers.empty() && f.count.arrived(gone)) out.contributed.push_back(key);
    if (view->rank == 0) return ended(out);
    send(remote_address(0, name()), out);
}

void FenceReducer::proc_ended_elsewhere(const Envelope &, msg::FenceProcEnded &m) {
    ended(m);
}

void FenceReducer::ended(const msg::FenceProcEnded &m) {
    auto &contributed = ended_[m.proc];
    contributed.insert(m.contributed.begin(), m.contributed.end());
    std::set<std::string> keys = open_;
    for (const auto &[key, f] : fences_)
        if (!f.brokers.empty()) keys.insert(key);
    for (const auto &key : keys) {
        const auto participants = msg::fence_key_participants(key);
        if (contributed.contains(key) || !participants ||
            !FenceCount::includes(*participants, m.proc))
            continue;
        log().info("fence {} fails: {}:{} ended before contributing", key, m.proc.nspace,
                   m.proc.rank);
        tree_.fail(key, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
}

std::optional<msg::Proc> FenceReducer::ended_before(
    const std::string &key, const std::vector<msg::Proc> &participants) const {
    for (const auto &[gone, contributed] : ended_)
        if (!contributed.contains(key) && FenceCount::includes(participants, gone)) return gone;
    return std::nullopt;
}

void FenceReducer::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    if (auto b = boards_.find(m.nspace); b != boards_.end() && b->second)
        ended_board_fences_ += b->second->completed();
    boards_.erase(m.nspace);
    std::erase_if(ended_, [&](const auto &e) { return e.first.nspace == m.nspace; });
    store_.drop_orphans();  // the segments of the sets this was the last namespace of
}

// The job's fence board, mapped on first use; nullptr when it has none (or it cannot be mapped:
// then its ranks cannot map it either, and fail PMIx_Init). A board no longer there is a job whose
// ranks here are all over (the launcher removes its directory then, on its own thread, and the
// ranks' ends may reach this actor later): no one can wait on it. Opened without looking first,
// as the file may go between a look and the open.
FenceBoard *FenceReducer::board_of(const std::string &nspace) {
    if (auto b = boards_.find(nspace); b != boards_.end()) return b->second.get();
    const auto ns = namespaces_.find(nspace);
    if (!ns || ns->job->fence_board.empty()) return nullptr;
    std::string error;
    bool missing = false;
    auto board = FenceBoard::open(ns->job->fence_board, error, &missing);
    if (missing) return nullptr;
    if (!board) log().error("{}: {}", nspace, error);
    return (boards_[nspace] = std::move(board)).get();
}

void FenceReducer::fail(const std::string &key, std::int32_t status) {
    auto f = fences_.find(key);
    if (f == fences_.end()) return;
    if (f->second.brokers.empty()) return finish(key, status);  // here, or the host's
    tree_.fail(key, status);  // the root's verdict comes back through verdict()
}

void FenceReducer::stats(const Envelope &env, msg::FenceStatsQuery &m) {
    log().debug("fence counters for {}", m.scraper);
    // A job's board is mapped here at its first rank's end at the latest (proc_ended), so a job's
    // board fences are counted at its end even when no scrape saw it running.
    msg::FenceStats out = stats_;
    out.board_completed = ended_board_fences_;
    const auto snapshot = namespaces_.snapshot();
    for (const auto &[nspace, rec] : *snapshot)
        if (FenceBoard *board = board_of(nspace)) out.board_completed += board->completed();
    reply(env, out);
}

void FenceReducer::finish(const std::string &key, std::int32_t status,
                          const FenceSegmentWriter *segment) {
    auto node = fences_.extract(key);
    if (!node) return;
    Fence &f = node.mapped();
    if (f.timer) reactor().cancel(f.timer);
    const double took = std::chrono::duration<double>(Reactor::Clock::now() - f.started).count();
    ++(status == PMIX_SUCCESS ? stats_.completed : stats_.failed);
    stats_.sum_s += took;
    ++stats_.counts[std::lower_bound(stats_.bounds.begin(), stats_.bounds.end(), took) -
                    stats_.bounds.begin()];
    std::erase_if(collecting_, [&](const auto &kv) { return kv.second.key == key; });
    // One FenceDone, encoded once: every copy shares its buffer.
    msg::FenceDone d;
    if (segment) d = store_.deliver(key, f.set, f.fence_id, f.count.participants(), *segment);
    d.key = key;
    d.status = status;
    if (status == PMIX_SUCCESS) relate_jobs(f.count.participants());
    zmq::message_t done = encode(msg::FenceDone::type, 0, d, name());
    for (const auto &route : f.routes) {
        zmq::message_t copy;
        copy.copy(done);
        bus().send(route, std::move(copy));
    }
}

// A fence (or PMIx_Connect) across jobs: a client of one may name the others in a custom range
// (event_rights.hpp).
void FenceReducer::relate_jobs(const std::vector<msg::Proc> &participants) {
    std::set<std::string> jobs;
    for (const auto &p : participants) jobs.insert(p.nspace);
    if (jobs.size() > 1) broadcast(msg::JobsRelated{{jobs.begin(), jobs.end()}});
}

// ---- The tree's side: fences over several nodes -------------------------------------------

void FenceReducer::contribute_part(const std::string &key, const msg::FencePart &part) {
    auto f = fences_.find(key);
    if (f == fences_.end()) return;
    if (f->second.host) {
        // One bin: the host concatenates the nodes' parts, and each must say where it ends.
        msgpack::sbuffer packed, bin;
        msgpack::pack(packed, part);
        msgpack::packer<msgpack::sbuffer>(bin).pack_bin(static_cast<std::uint32_t>(packed.size()));
        bin.write(packed.data(), packed.size());
        log().debug("fence {}: this node's part ({} bytes) to the host", key, bin.size());
        send("host",
             msg::HostFence{key, f->second.count.participants(), f->second.collect,
                            msg::Blob(bin.data(), bin.data() + bin.size()), f->second.timeout_ms});
        return;
    }
    // Refused: the fence is over on the tree (it failed before these contributors came).
    if (!tree_.contribute(key, part)) finish(key, PMIX_ERROR);
}

std::uint32_t FenceReducer::part_id(const Fence &f) {
    if (!f.host) return tree_.gather().rank();
    return f.self;
}

// The host's fence_nb answered: its verdict, as the tree's would be.
void FenceReducer::host_done(const Envelope &, msg::HostFenceDone &m) {
    auto f = fences_.find(m.key);
    if (f == fences_.end() || !f->second.host) return;  // failed here meanwhile
    log().debug("fence {}: the host's verdict, status {} ({} bytes)", m.key, m.status,
                m.result.size());
    verdict(m.key, m.status, tree::Bytes(m.result.begin(), m.result.end()));
}

std::optional<std::vector<std::uint32_t>> FenceReducer::hosts(const std::string &key,
                                                              const BrokerView &view) const {
    const auto participants = msg::fence_key_participants(key);
    if (!participants) return std::nullopt;
    return tree::hosting_brokers(*participants, *namespaces_.snapshot(), view);
}

void FenceReducer::verdict(const std::string &key, std::int32_t status, const tree::Bytes &result) {
    open_.erase(key);
    if (status != PMIX_SUCCESS) failed_.add(key, status);
    auto it = fences_.find(key);
    if (it == fences_.end()) return;  // no contributor here (yet): this broker relayed
    if (status != PMIX_SUCCESS) return finish(key, status);
    Fence &f = it->second;
    // Every taking-part broker's FencePart (Gather::concatenate).
    auto parts = tree_.parts_of<msg::FencePart>(key, result);
    if (!parts) return finish(key, PMIX_ERR_UNPACK_FAILURE);
    bool collect = false;
    const std::uint32_t self = part_id(f);
    for (auto &part : *parts) {
        collect = collect || part.collect;
        if (part.broker != self)
            std::move(part.data.begin(), part.data.end(), std::back_inserter(f.others));
    }
    if (!collect) return finish(key, PMIX_SUCCESS);
    // This node's own data as its readers see it (local+global), with the others'.
    const std::uint64_t id = next_request_++;
    collecting_.emplace(id, Collecting{key, false});
    send("modex", msg::ModexCollect{f.count.participants(), false}, id);
}

void FenceReducer::from_child(const Envelope &env, msg::FenceUp &m) {
    if (!sender_broker(env.from)) return log().warn("'{}' not from a broker: dropped", env.type);
    // At the root: a rank of the fence ended before contributing (ended()).
    if (!ended_.empty())
        if (const auto participants = msg::fence_key_participants(m.key))
            if (const auto gone = ended_before(m.key, *participants)) {
                log().info("fence {} fails: {}:{} ended before contributing", m.key, gone->nspace,
                           gone->rank);
                tree_.fail(m.key, PMIX_ERR_PROC_TERM_WO_SYNC);
            }
    auto [at, opened] = open_.insert(m.key);
    if (tree_.from_child(env, m) != tree::Outcome::taken && opened) open_.erase(m.key);
}

void FenceReducer::from_parent(const Envelope &env, msg::FenceDown &m) {
    tree_.from_parent(env, m);
}

// A standing tree's broker that joined again takes part again.
void FenceReducer::tree_joined(const Envelope &, msg::TreeJoined &m) {
    tree_.joined(m);
}

// Fences waiting on a lost broker fail: every one over several nodes when the parent is lost
// (each reduction goes through the root), else those with participants under a lost child. The
// Gather fails its own operations that wait on them, and remembers the loss for later ones.
void FenceReducer::tree_lost(const Envelope &, msg::TreeLost &m) {
    tree_.lost(m, fences_);
}

}  // namespace zpmix
