#include "actors/launcher/job_coordinator.hpp"

#include <unistd.h>

#include <pmix_common.h>

#include "actors/launcher/rank_environment.hpp"

namespace zpmix {

namespace {

constexpr std::uint32_t kMaxRanks = 65535;  // local_rank is 16 bits
constexpr int kLostStatus = 1;              // what `zpmix run` exits with when a node is lost

}  // namespace

JobCoordinator::JobCoordinator(Reactor &reactor, Bus &bus, const BrokerMap &brokers)
    : Actor("jobs", reactor, bus), brokers_(brokers) {
    on(&JobCoordinator::launch, Access::operator_);
    on(&JobCoordinator::part_launched, Access::internal);
    on(&JobCoordinator::part_status, Access::internal);
    on(&JobCoordinator::tree_lost, Access::internal);
}

std::string JobCoordinator::node_of(std::uint32_t broker) const {
    const auto view = brokers_.view();
    return broker < view->size() ? view->nodes[broker] : "broker " + std::to_string(broker);
}

void JobCoordinator::launch(const Envelope &env, msg::LaunchAcross &m) {
    const auto view = brokers_.view();
    if (view->alone() || view->rank != 0)
        return reply_error(env, PMIX_ERR_NOT_SUPPORTED,
                           "this broker is not the root of a broker tree");
    const msg::Launch &l = m.launch;
    if (l.argv.empty() || l.argv[0].empty())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "no program to launch");
    if (l.np == 0 || l.np > kMaxRanks || m.node_of_rank.size() != l.np)
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           fmt::format("-n must be 1..{}, one node per rank", kMaxRanks));
    for (const auto &node : m.nodes)
        if (!view->broker_of(node))
            return reply_error(env, PMIX_ERR_BAD_PARAM, "no broker of the tree serves " + node);

    msg::JobInfo info;
    info.nspace = new_namespace_name();
    info.size = info.univ_size = info.max_procs = l.np;
    info.nodes = m.nodes;
    info.procs.resize(l.np);
    std::vector<std::uint16_t> on_node(m.nodes.size(), 0);
    for (std::uint32_t r = 0; r < l.np; ++r) {
        const std::uint32_t n = m.node_of_rank[r];
        if (n >= m.nodes.size())
            return reply_error(env, PMIX_ERR_BAD_PARAM, "a rank's node is not among the nodes");
        msg::ProcInfo &p = info.procs[r];
        p.rank = r;
        p.node_id = n;
        p.hostname = m.nodes[n];
        p.local_rank = p.node_rank = on_node[n]++;
    }
    for (const auto &pset : l.psets)
        for (std::uint32_t r = 0; r < l.np; ++r) info.psets[pset].push_back(r);

    msg::JobPart part;
    part.job = info;
    part.apps.push_back(msg::App{.cmd = l.argv[0],
                                 .argv = l.argv,
                                 .env = {},
                                 .cwd = l.cwd,
                                 .session_cwd = false,
                                 .prefix = {},
                                 .np = l.np});
    part.env = l.env;
    part.bind_to = l.bind_to;
    part.map_by = l.map_by;
    part.personality_ompi = l.personality_ompi;
    part.secret = random_secret();
    part.requester = remote_address(view->rank, env.from);

    const std::string nspace = info.nspace;
    Job &job = jobs_[nspace];
    job.request = env;
    job.requester = env.from;
    job.parts = view->size();
    job.pids.assign(l.np, 0);
    if (l.timeout_s > 0 && l.timeout_s < 1e9)
        job.time_limit =
            reactor().after(std::chrono::duration_cast<Reactor::Clock::duration>(
                                std::chrono::duration<double>(l.timeout_s)),
                            [this, nspace, limit = l.timeout_s] {
                                auto it = jobs_.find(nspace);
                                if (it == jobs_.end()) return;
                                it->second.time_limit = 0;
                                fail(nspace, it->second, 124,
                                     fmt::format("job exceeded its time limit of {} s", limit));
                            });
    // Every broker knows the namespace before any part of it starts: a rank's first message to
    // another broker (a fence, a Get) finds it registered there.
    send(every_broker("registry"), msg::RegisterNamespace{std::move(info), part.secret, {}});
    send(every_broker("launcher"), part);
    log().info("{}: {} rank(s) on {} node(s) of {} broker(s)", nspace, l.np, m.nodes.size(),
               job.parts);
}

void JobCoordinator::part_launched(const Envelope &, msg::PartLaunched &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    if (m.status != PMIX_SUCCESS && job.status) {
        // The job failed while this part was starting: it gave up, and is over.
        job.started.insert(m.broker);
        return part_over(m.nspace, m.broker);
    }
    if (m.status != PMIX_SUCCESS) {
        // Nothing of the job survives a part that could not start.
        const std::string why = fmt::format("on {}: {}", node_of(m.broker), m.message);
        log().info("launch of {} failed {}", m.nspace, why);
        send(every_broker("launcher"), msg::EndPart{m.nspace, m.status, why, true});
        reply_error(job.request, m.status, why);
        if (job.time_limit) reactor().cancel(job.time_limit);
        jobs_.erase(it);
        return;
    }
    for (const auto &[rank, pid] : m.pids)
        if (rank < job.pids.size()) job.pids[rank] = pid;
    job.started.insert(m.broker);
    if (job.started.size() == job.parts) answer(m.nspace, job);
}

void JobCoordinator::answer(const std::string &nspace, Job &job) {
    if (std::exchange(job.answered, true)) return;
    reply(job.request, msg::LaunchReply{nspace, job.pids});
}

void JobCoordinator::part_status(const Envelope &, msg::PartStatus &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return;
    if (m.status != 0 && !it->second.status)
        fail(m.nspace, it->second, m.status,
             it->second.parts > 1 ? fmt::format("{} (on {})", m.message, node_of(m.broker))
                                  : m.message);
    if (m.over) part_over(m.nspace, m.broker);
}

void JobCoordinator::tree_lost(const Envelope &, msg::TreeLost &m) {
    std::vector<std::string> names;
    for (const auto &[nspace, job] : jobs_) names.push_back(nspace);
    for (const auto &nspace : names) {
        for (std::uint32_t b : m.brokers) {
            auto it = jobs_.find(nspace);
            if (it == jobs_.end()) break;
            Job &job = it->second;
            if (job.over.contains(b)) continue;
            const std::string why =
                fmt::format("the broker on {} was lost, with the job's ranks there", node_of(b));
            if (!job.started.contains(b) && !job.status) {
                // Still starting: the launch fails as a part that could not start does.
                msg::PartLaunched failed{nspace, b, PMIX_ERR_UNREACH, why, {}};
                part_launched({}, failed);
                break;
            }
            if (!job.status) fail(nspace, job, kLostStatus, why);
            part_over(nspace, b);
        }
    }
}

void JobCoordinator::fail(const std::string &nspace, Job &job, std::int32_t status,
                          std::string message) {
    if (job.status) return;
    job.status = status;
    job.message = message;
    log().info("{}: {}", nspace, message);
    send(every_broker("launcher"), msg::EndPart{nspace, status, std::move(message), false});
}

void JobCoordinator::part_over(const std::string &nspace, std::uint32_t broker) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    job.over.insert(broker);
    if (job.over.size() < job.parts) return;
    const std::int32_t status = job.status.value_or(0);
    answer(nspace, job);  // `zpmix run` reads the JobEnded after a LaunchReply
    send(every_broker("launcher"), msg::EndPart{nspace, status, job.message, true});
    send(job.requester, msg::JobEnded{nspace, status, job.message});
    if (job.time_limit) reactor().cancel(job.time_limit);
    log().info("{} ended with status {}", nspace, status);
    jobs_.erase(it);
}

}  // namespace zpmix
