// JobCoordinator: a standing tree's root that started again adopts the jobs still running on the
// other brokers (job_coordinator.hpp). Each broker that rejoins tells it the parts it holds
// (msg::PartsHeld: the job's info, its requester, the part's state); the first part of a job
// rebuilds the job (its nodes, ranks and requester, the brokers hosting its ranks, this broker's
// record of it), and each part then counts as PartLaunched and PartStatus would have. A part of a
// job already over here (it rejoined late), or failed, is told so (EndPart).
#include <pmix_common.h>

#include "actors/launcher/job_coordinator.hpp"
#include "actors/launcher/rank_environment.hpp"

namespace zpmix {

namespace {

constexpr int kLostWithRootStatus = 1;  // as a job that lost a broker ends

}  // namespace

void JobCoordinator::parts_held(const Envelope &env, msg::PartsHeld &m) {
    const auto view = brokers_.view();
    const auto from = sender_broker(env.from);
    if (!view->standing || view->rank != 0 || !from || *from != m.broker || m.broker == 0 ||
        m.broker >= view->size()) {
        log().warn(
            "the parts a broker holds, not from broker {} to a standing tree's root: dropped",
            m.broker);
        return;
    }
    for (auto &p : m.parts) adopt(m.broker, p);
}

void JobCoordinator::adopt(std::uint32_t broker, msg::PartHeld &p) {
    if (!jobs_.contains(p.nspace)) {
        if (const auto end = ended_.find(p.nspace); end != ended_.end()) {
            log().info("{}: the part on {} is told that the job is over", p.nspace,
                       node_of(broker));
            return send(remote_address(broker, "launcher"),
                        msg::EndPart{p.nspace, end->second.status, end->second.message, true,
                                     end->second.states});
        }
        if (p.job.nspace != p.nspace || p.job.size == 0 || p.job.size > msg::kMaxRanks ||
            p.job.procs.size() != p.job.size) {
            log().warn("{}: the part on {} names no job that can be adopted: ignored", p.nspace,
                       node_of(broker));
            return;
        }
    }
    auto it = jobs_.find(p.nspace);
    const bool known = it != jobs_.end();
    Job &job = known ? it->second : adopted_job(p, broker);
    const std::string nspace = p.nspace;
    job.brokers.insert(broker);
    job.parts = static_cast<std::uint32_t>(job.brokers.size());
    if (!job.reported.insert(broker).second && job.adopted) return;
    if (p.started) {
        job.started.insert(broker);
        for (const auto &[rank, pid] : p.pids)
            if (rank < job.pids.size()) job.pids[rank] = pid;
    }
    // The job failed before this part could hear of it (it was away): it ends its ranks now.
    // (A job adopted failing told every part as it failed.)
    if (known && job.status && !p.over)
        send(remote_address(broker, "launcher"),
             msg::EndPart{nspace, *job.status, job.message, false});
    msg::PartStatus status{nspace, broker,       p.status,  std::move(p.message),
                           p.over, p.on_request, p.goes_on, std::move(p.ended)};
    part_status({}, status);
}

JobCoordinator::Job &JobCoordinator::adopted_job(msg::PartHeld &p, std::uint32_t broker) {
    const auto view = brokers_.view();
    const std::string nspace = p.nspace;
    Job &job = jobs_[nspace];
    job.nspace = nspace;
    job.adopted = true;
    job.answered = true;  // its launch was answered by the root that was lost
    job.requester = p.requester;
    job.pids.assign(p.job.size, 0);
    job.nodes = p.job.nodes;
    for (const auto &proc : p.job.procs) ++job.ranks_on[proc.hostname];
    for (const auto &[node, n] : job.ranks_on) {
        job.hosts.push_back({node, n, {}});
        if (const auto b = view->broker_of(node)) job.brokers.insert(*b);
    }
    job.started = job.brokers;  // its parts started before the root was lost
    node_ranks_.count(p.job);
    log().info("{}: adopted from its part on {} ({} rank(s) on {})", nspace, node_of(broker),
               p.job.size, fmt::join(job.nodes, ","));
    // This broker's record of the job (`zpmix ps`, and the fences whose verdicts it gives), with
    // no rank here.
    send("registry", msg::RegisterNamespace{p.job, random_secret(), {}, false, true});
    std::string lost;
    if (job.brokers.erase(0)) {
        job.started.erase(0);
        job.states["unreachable"] += job.ranks_on[view->nodes[0]];
        lost = fmt::format("the broker on {} was lost, with the job's ranks there", view->nodes[0]);
    } else if (sender_broker(job.requester) == 0u) {
        lost = fmt::format("the broker on {} was lost, with the job's requester there",
                           view->nodes[0]);
    }
    if (sender_broker(job.requester) == 0u) job.requester.clear();  // gone with the root
    job.parts = static_cast<std::uint32_t>(job.brokers.size());
    job.adopt_deadline = reactor().after(kAdoptBound, [this, nspace] { adoption_over(nspace); });
    if (!lost.empty()) fail(nspace, job, kLostWithRootStatus, lost);
    return job;
}

void JobCoordinator::adoption_over(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    job.adopt_deadline = 0;
    std::vector<std::uint32_t> silent;
    for (std::uint32_t b : job.brokers)
        if (!job.reported.contains(b) && !job.over.contains(b)) silent.push_back(b);
    for (std::uint32_t b : silent) {
        log().warn("{}: the broker on {} did not tell of its part within {} s", nspace, node_of(b),
                   kAdoptBound.count());
        part_lost(nspace, b);
    }
}

}  // namespace zpmix
