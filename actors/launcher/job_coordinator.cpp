#include "actors/launcher/job_coordinator.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include <pmix_common.h>

#include "actors/launcher/rank_environment.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/pset.hpp"

namespace zpmix {

namespace {

constexpr int kLostStatus = 1;  // what `zpmix run` exits with when a node is lost

}  // namespace

JobCoordinator::JobCoordinator(Reactor &reactor, Bus &bus, const BrokerMap &brokers)
    : Actor("jobs", reactor, bus), brokers_(brokers) {
    on(&JobCoordinator::launch, Access::operator_);
    on(&JobCoordinator::part_launched, Access::internal);
    on(&JobCoordinator::part_status, Access::internal);
    on(&JobCoordinator::tree_lost, Access::internal);
    on(&JobCoordinator::tree_joined, Access::internal);
    on(&JobCoordinator::parts_held, Access::internal);
    on(&JobCoordinator::spawn, Access::internal);
    on(&JobCoordinator::relay_answered, Access::internal);
    on(&JobCoordinator::relay_refused, Access::internal);
}

std::vector<std::uint32_t> JobCoordinator::brokers_up() const {
    const auto view = brokers_.view();
    std::vector<std::uint32_t> up;
    for (std::uint32_t b = 0; b < view->size(); ++b)
        if (!view->standing || b == view->rank || joined_.contains(b)) up.push_back(b);
    return up;
}

void JobCoordinator::tree_joined(const Envelope &, msg::TreeJoined &m) {
    joined_.insert(m.rank);
}

// A standing tree's `zpmix run` on another broker: its launch goes to the root's coordinator,
// whose answer comes back here for it (bounded); the job's output and end go to it directly.
void JobCoordinator::relay_launch(const Envelope &env, msg::LaunchAcross &m) {
    const auto view = brokers_.view();
    m.requester = remote_address(view->rank, env.from);
    m.requester_pid = env.peer.pid;
    const std::uint64_t id = next_relay_++;
    relays_[id] = {env, reactor().after(kRelayBound, [this, id] {
                       auto node = relays_.extract(id);
                       if (!node.empty())
                           reply_error(node.mapped().request, PMIX_ERR_TIMEOUT,
                                       "the root broker did not answer the launch");
                   })};
    send(remote_address(0, name()), m, id);
}

void JobCoordinator::relay_answered(const Envelope &env, msg::LaunchReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;
    reactor().cancel(node.mapped().timer);
    reply(node.mapped().request, m);
}

void JobCoordinator::relay_refused(const Envelope &env, msg::ErrorReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;
    reactor().cancel(node.mapped().timer);
    reply_error(node.mapped().request, m.status, std::move(m.message));
}

// The part of a job on each broker up: a standing tree's brokers that are not are left out, and
// a job with a node there is refused.
std::string JobCoordinator::place_parts(Job &job, const std::vector<std::string> &nodes) {
    const auto view = brokers_.view();
    const auto up = brokers_up();
    for (const auto &node : nodes) {
        const auto b = view->broker_of(node);
        if (!b) return "no broker of the tree serves " + node;
        if (!std::binary_search(up.begin(), up.end(), *b))
            return "the broker on " + node + " is not up (it has not joined the tree)";
    }
    job.brokers.insert(up.begin(), up.end());
    job.parts = static_cast<std::uint32_t>(up.size());
    return {};
}

void JobCoordinator::send_parts(const Job &job, const msg::JobPart &part) {
    for (std::uint32_t b : job.brokers) send(remote_address(b, "launcher"), part);
}

std::string JobCoordinator::node_of(std::uint32_t broker) const {
    const auto view = brokers_.view();
    return broker < view->size() ? view->nodes[broker] : "broker " + std::to_string(broker);
}

void JobCoordinator::launch(const Envelope &env, msg::LaunchAcross &m) {
    if (env.peer.tcp) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "launch over tcp refused");
    const auto view = brokers_.view();
    if (view->standing && view->rank != 0 && !is_remote_address(env.from))
        return relay_launch(env, m);
    if (view->alone() || view->rank != 0)
        return reply_error(env, PMIX_ERR_NOT_SUPPORTED,
                           "this broker is not the root of a broker tree");
    msg::Launch &l = m.launch;
    if (l.np == 0 || l.np > msg::kMaxRanks || m.node_of_rank.size() != l.np)
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           fmt::format("-n must be 1..{}, one node per rank", msg::kMaxRanks));
    std::string error;
    std::vector<msg::App> apps = launch_apps(l, error);  // moves l.argv, l.apps
    if (apps.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, error);
    const std::string program = apps.front().argv.front();

    Job job;
    if (auto why = place_parts(job, m.nodes); !why.empty())
        return reply_error(env, PMIX_ERR_UNREACH, why);

    msg::JobInfo info;
    info.nspace = new_namespace_name();
    info.program = program;
    info.size = info.univ_size = info.max_procs = l.np;
    info.num_apps = static_cast<std::uint32_t>(apps.size());
    info.nodes = m.nodes;
    info.procs.resize(l.np);
    std::vector<std::uint16_t> on_node(m.nodes.size(), 0);
    // An MPMD job's apps have consecutive ranks, in order.
    for (std::uint32_t r = 0, app = 0, of_app = 0; r < l.np; ++r, ++of_app) {
        if (of_app == apps[app].np) ++app, of_app = 0;
        const std::uint32_t n = m.node_of_rank[r];
        if (n >= m.nodes.size())
            return reply_error(env, PMIX_ERR_BAD_PARAM, "a rank's node is not among the nodes");
        msg::ProcInfo &p = info.procs[r];
        p.rank = r;
        p.app_num = app;
        p.node_id = n;
        p.hostname = m.nodes[n];
        p.local_rank = on_node[n]++;
    }
    node_ranks_.number(info);
    for (const auto &pset : l.psets)
        for (std::uint32_t r = 0; r < l.np; ++r) info.psets[pset].push_back(r);
    info.stop_in_init = l.stop_in_init;
    info.stop_on_exec = l.stop_on_exec;
    info.recoverable = l.recoverable;

    msg::JobPart part;
    part.job = info;
    part.apps = std::move(apps);
    part.env = l.env;
    part.bind_to = l.bind_to;
    part.map_by = l.map_by;
    part.personality_ompi = l.personality_ompi;
    part.stdin_target = l.stdin_target;
    part.recoverable = l.recoverable;
    part.merge_stderr = l.merge_stderr;
    // A standing tree's brokers are services with environments of their own: the ranks get the
    // caller's. Brokers `zpmix run` started have what rsh or srun gives, as under mpirun or srun.
    if (view->standing) part.caller = l.caller;
    part.secret = random_secret();
    // A relayed launch names its requester (on another broker), which its broker's part watches.
    const bool relayed = !m.requester.empty();
    part.requester = relayed ? m.requester : remote_address(view->rank, env.from);
    part.requester_pid = relayed ? m.requester_pid : env.peer.pid;

    const std::string nspace = info.nspace;
    job.nspace = nspace;
    job.request = env;
    job.requester = relayed ? m.requester : env.from;
    job.pids.assign(l.np, 0);
    job.nodes = m.nodes;
    for (std::size_t n = 0; n < m.nodes.size(); ++n)
        job.hosts.push_back({m.nodes[n], n < m.slots.size() ? m.slots[n] : on_node[n], {}});
    // The allocation's nodes without ranks of it, whose brokers run parts of none: where the jobs
    // it spawns may go too (those whose broker is up).
    for (std::size_t n = 0; n < m.spare_nodes.size() && n < m.spare_slots.size(); ++n)
        if (const auto b = view->broker_of(m.spare_nodes[n]); b && job.brokers.contains(*b))
            job.hosts.push_back({m.spare_nodes[n], m.spare_slots[n], {}});
    for (const auto &p : info.procs) ++job.ranks_on[p.hostname];
    job.oversubscribe = m.oversubscribe;
    job.report_child_sep = l.report_child_sep;
    Job &placed = jobs_[nspace] = std::move(job);
    limit_time(nspace, placed, l.timeout_s);
    // Every broker knows the namespace before any part of it starts: a rank's first message to
    // another broker (a fence, a Get) finds it registered there.
    auto launch_sets = info.psets;
    send(every_broker("registry"), msg::RegisterNamespace{std::move(info), part.secret, {}});
    // Its launch-time sets are announced once, here (its parts do not).
    if (!launch_sets.empty() && bus().find("pset"))
        send("pset", msg::PsetLaunched{nspace, std::move(launch_sets)});
    send_parts(placed, part);
    log().info("{}: {} rank(s) on {} node(s) of {} broker(s)", nspace, l.np, m.nodes.size(),
               placed.parts);
    send("events", msg::JobLifecycle{nspace,
                                     PMIX_EVENT_JOB_START,
                                     {},
                                     0,
                                     0,
                                     l.np,
                                     fmt::format("{} launched: {} rank(s) of {} on {} node(s)",
                                                 nspace, l.np, program, m.nodes.size())});
}

void JobCoordinator::part_launched(const Envelope &, msg::PartLaunched &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    if (m.status != PMIX_SUCCESS && job.status) {
        // The job failed while this part was starting: it gave up, and is over.
        job.started.insert(m.broker);
        if (!job.over.contains(m.broker))
            for (const auto &[state, n] : m.ended) job.states[state] += n;
        return part_over(m.nspace, m.broker);
    }
    if (m.status != PMIX_SUCCESS) {
        // Nothing of the job survives a part that could not start.
        const std::string why = fmt::format("on {}: {}", node_of(m.broker), m.message);
        log().info("launch of {} failed {}", m.nspace, why);
        send(every_broker("launcher"), msg::EndPart{m.nspace, m.status, why, true});
        reply_error(job.request, m.status, why);
        return erase_job(m.nspace);
    }
    for (const auto &[rank, pid] : m.pids)
        if (rank < job.pids.size()) job.pids[rank] = pid;
    job.started.insert(m.broker);
    if (job.started.size() != job.parts) return;
    if (!job.status)
        send("events", msg::JobLifecycle{m.nspace,
                                         PMIX_LAUNCH_COMPLETE,
                                         {},
                                         0,
                                         0,
                                         0,
                                         m.nspace + " is running: every rank started"});
    answer(m.nspace, job);
}

void JobCoordinator::answer(const std::string &nspace, Job &job) {
    if (std::exchange(job.answered, true)) return;
    if (job.start_deadline) reactor().cancel(std::exchange(job.start_deadline, 0));
    reply(job.request, msg::LaunchReply{nspace, job.pids});
}

void JobCoordinator::part_status(const Envelope &, msg::PartStatus &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    std::string message =
        job.parts > 1 ? fmt::format("{} (on {})", m.message, node_of(m.broker)) : m.message;
    if (m.on_request) {
        if (!job.requested_end) job.requested_end.emplace(m.status, std::move(message));
    } else if (m.status != 0 && !job.status && m.goes_on) {
        if (!job.first_failure) {
            log().info("{}: {} (the job goes on)", m.nspace, message);
            job.first_failure.emplace(m.status, std::move(message));
            tree_failed(job, m.status);
        }
    } else if (m.status != 0 && !job.status) {
        fail(m.nspace, job, m.status, std::move(message));
    }
    if (m.over && !job.over.contains(m.broker))
        for (const auto &[state, n] : m.ended) job.states[state] += n;
    if (m.over) part_over(m.nspace, m.broker);
}

void JobCoordinator::tree_lost(const Envelope &, msg::TreeLost &m) {
    for (std::uint32_t b : m.brokers) joined_.erase(b);
    std::vector<std::string> names;
    for (const auto &[nspace, job] : jobs_) names.push_back(nspace);
    for (const auto &nspace : names)
        for (std::uint32_t b : m.brokers) part_lost(nspace, b);
}

void JobCoordinator::part_lost(const std::string &nspace, std::uint32_t b) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    if (!job.brokers.contains(b) || job.over.contains(b)) return;
    const std::string why =
        fmt::format("the broker on {} was lost, with the job's ranks there", node_of(b));
    if (!job.started.contains(b) && !job.status) {
        // Still starting: the launch fails as a part that could not start does.
        msg::PartLaunched failed{nspace, b, PMIX_ERR_UNREACH, why, {}};
        return part_launched({}, failed);
    }
    if (!job.status)
        fail(nspace, job, kLostStatus, why);
    else if (job.message.find(why) == std::string::npos)
        job.message += "; " + why;  // a failure it caused may have come first: say both
    if (const auto on = job.ranks_on.find(node_of(b)); on != job.ranks_on.end())
        job.states["unreachable"] += on->second;
    part_over(nspace, b);
}

void JobCoordinator::fail(const std::string &nspace, Job &job, std::int32_t status,
                          std::string message) {
    if (job.status) return;
    job.status = status;
    job.message = message;
    if (status != 0) tree_failed(job, status);
    log().info("{}: {}", nspace, message);
    send(every_broker("launcher"), msg::EndPart{nspace, status, std::move(message), false});
}

// The first failure in a tree of jobs is what the launched job's requester gets (a job its parent
// ended does not count).
void JobCoordinator::tree_failed(Job &job, std::int32_t status) {
    if (job.ended_by_parent) return;
    Job &root = root_of(job);
    if (!root.tree_status) root.tree_status = status;
}

void JobCoordinator::part_over(const std::string &nspace, std::uint32_t broker) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    job.over.insert(broker);
    if (job.over.size() < job.parts) return;
    conclude(nspace);
}

void JobCoordinator::conclude(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    if (!job.children.empty()) {
        // The jobs it spawned run on after its normal end (as under ORTE and PRRTE), and are
        // ended by its failure, as PMIX_SPAWN_CHILD_SEP says otherwise; it is over once they are.
        const bool failed = job.status.value_or(0) != 0 || job.first_failure || job.requested_end;
        for (const auto &name : job.children) {
            Job &child = jobs_.at(name);
            if (child.status || child.child_sep || !(failed || child.ends_with_parent)) continue;
            child.ended_by_parent = true;
            fail(name, child, 128 + SIGTERM, fmt::format("its parent job {} ended", nspace));
        }
        return;
    }
    // A recoverable job ends with its first rank's failure, as on one node.
    if (!job.status && job.first_failure) {
        job.status = job.first_failure->first;
        job.message = std::move(job.first_failure->second);
    }
    // A job that job control ended, and that did not fail, ends with who ended it (as on one node).
    if (!job.status && job.requested_end) {
        job.status = job.requested_end->first;
        job.message = std::move(job.requested_end->second);
    }
    const std::int32_t status = job.status.value_or(0);
    answer(nspace, job);  // `zpmix run` reads the JobEnded after a LaunchReply
    // Ranks no part reported an end of were never started (their part gave up: the job failed).
    std::uint32_t accounted = 0;
    for (const auto &[state, n] : job.states) accounted += n;
    if (accounted < job.pids.size())
        job.states["unstarted"] += static_cast<std::uint32_t>(job.pids.size()) - accounted;
    send(every_broker("launcher"), msg::EndPart{nspace, status, job.message, true, job.states});
    // A restarted root holds no part of an adopted job: its own record of the job ends here.
    if (job.adopted)
        send("registry", msg::DeregisterNamespace{nspace, true, status, job.message, job.states});
    if (ended_.emplace(nspace, Ended{status, job.message, job.states}).second) {
        ended_order_.push_back(nspace);
        if (ended_order_.size() > kEndedKept) {
            ended_.erase(ended_order_.front());
            ended_order_.pop_front();
        }
    }
    // PMIX_REPORT_CHILD_SEP aside, a launched job ends with its tree's first failure.
    const std::int32_t reported =
        job.parent.empty() && !job.report_child_sep ? job.tree_status.value_or(status) : status;
    if (!job.requester.empty()) send(job.requester, msg::JobEnded{nspace, reported, job.message});
    send("events", msg::JobLifecycle{nspace,
                                     PMIX_EVENT_JOB_END,
                                     {},
                                     reported,
                                     0,
                                     0,
                                     msg::job_ended_text(nspace, reported, job.message)});
    log().info("{} ended with status {}", nspace, status);
    erase_job(nspace);
}

void JobCoordinator::erase_job(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    if (job.time_limit) reactor().cancel(job.time_limit);
    if (job.start_deadline) reactor().cancel(job.start_deadline);
    if (job.adopt_deadline) reactor().cancel(job.adopt_deadline);
    const std::string parent = std::move(job.parent);
    jobs_.erase(it);
    auto p = jobs_.find(parent);
    if (p == jobs_.end()) return;
    p->second.children.erase(nspace);
    if (p->second.children.empty() && p->second.over.size() == p->second.parts) conclude(parent);
}

void JobCoordinator::limit_time(const std::string &nspace, Job &job, double seconds) {
    if (!(seconds > 0 && seconds < 1e9)) return;
    job.time_limit =
        reactor().after(std::chrono::duration_cast<Reactor::Clock::duration>(
                            std::chrono::duration<double>(seconds)),
                        [this, nspace, seconds] {
                            auto it = jobs_.find(nspace);
                            if (it == jobs_.end()) return;
                            it->second.time_limit = 0;
                            fail(nspace, it->second, 124,
                                 fmt::format("job exceeded its time limit of {} s", seconds));
                        });
}

JobCoordinator::Job &JobCoordinator::root_of(Job &job) {
    Job *j = &job;
    while (!j->parent.empty()) j = &jobs_.at(j->parent);  // a parent outlives its children
    return *j;
}

// PMIx_Spawn from a rank of a job of this tree: the child is laid out over the allocation and
// started as parts, as a launched job is; the spawner's launcher relays the answer.
void JobCoordinator::spawn(const Envelope &env, msg::SpawnAcross &m) {
    const auto view = brokers_.view();
    if (view->alone() || view->rank != 0)
        return reply_error(env, PMIX_ERR_NOT_FOUND, "this broker is not the root of a broker tree");
    if (!m.tool.empty()) return tool_spawn(env, m);
    msg::Spawn &s = m.spawn;
    auto parent = jobs_.find(s.parent.nspace);
    if (parent == jobs_.end())
        return reply_error(env, PMIX_ERR_NOT_FOUND,
                           fmt::format("job {} does not run on this tree", s.parent.nspace));
    if (parent->second.status)
        return reply_error(env, PMIX_ERR_NOT_AVAILABLE,
                           fmt::format("job {} is ending", s.parent.nspace));
    std::uint32_t np = 0;
    if (auto why = spawn_size(s, np); !why.empty())
        return reply_error(env, PMIX_ERR_BAD_PARAM, why);
    Job &root = root_of(parent->second);
    std::int32_t status = PMIX_SUCCESS;
    const auto mapped = map_spawn(root, s, np, status);
    if (!mapped) {
        // No room is the allocation's business, not a caller's mistake: said where the user sees.
        if (status == PMIX_ERR_OUT_OF_RESOURCE)
            log().warn("spawn of {} rank(s) from {}:{} refused: {}", np, s.parent.nspace,
                       s.parent.rank, mapped.error);
        return reply_error(env, status, mapped.error);
    }

    msg::JobPart part;
    part.env = std::move(m.env);  // the parent's ranks', then the spawn's own
    part.requester = remote_address(0, root.requester);
    if (s.notify_completion) part.notify_completion.push_back(s.parent);
    Job &job = start_spawned(env, s, mapped.value, std::move(part), root.requester);
    job.parent = s.parent.nspace;
    job.child_sep = s.child_sep;
    job.ends_with_parent = s.ends_with_parent;
    parent->second.children.insert(job.nspace);
}

// A tool's PMIx_Spawn through a broker of this tree: a job of its own, not a child of any, whose
// output and end go to the tool, and which ends with the tool. Its ranks go on the tool's node;
// debugger daemons go beside their target's ranks, PMIX_DEBUG_DAEMONS_PER_NODE on each of its
// nodes or PMIX_DEBUG_DAEMONS_PER_PROC per rank there, outside the slots of any allocation.
void JobCoordinator::tool_spawn(const Envelope &env, msg::SpawnAcross &m) {
    msg::Spawn &s = m.spawn;
    const auto view = brokers_.view();
    const auto broker = sender_broker(m.tool);
    if (!broker || *broker >= view->size())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "no broker serves the tool " + m.tool);
    alloc::Allocation a;
    if (s.debugger_daemons) {
        auto target = jobs_.find(s.debug_target.nspace);
        if (target == jobs_.end())
            return reply_error(env, PMIX_ERR_NOT_FOUND,
                               "no debug target " + s.debug_target.nspace + " on this tree");
        if (s.apps.size() != 1 || (s.daemons_per_node > 0) == (s.daemons_per_proc > 0))
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "debugger daemons: one app, and PMIX_DEBUG_DAEMONS_PER_NODE or "
                               "PMIX_DEBUG_DAEMONS_PER_PROC");
        std::uint64_t np = 0;
        for (const auto &node : target->second.nodes) {
            const auto on = target->second.ranks_on.find(node);
            if (on == target->second.ranks_on.end() || on->second == 0) continue;
            const std::uint32_t n =
                s.daemons_per_node > 0 ? s.daemons_per_node : s.daemons_per_proc * on->second;
            a.hosts.push_back({node, n, {}});
            for (std::uint32_t k = 0; k < n; ++k)
                a.ranks.push_back({static_cast<std::uint32_t>(a.hosts.size() - 1), k});
            np += n;
        }
        if (np == 0 || np > msg::kMaxRanks)
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               fmt::format("debugger daemons: 1..{} of them", msg::kMaxRanks));
        s.apps[0].np = static_cast<std::uint32_t>(np);
    } else {
        std::uint32_t np = 0;
        if (auto why = spawn_size(s, np); !why.empty())
            return reply_error(env, PMIX_ERR_BAD_PARAM, why);
        a.hosts.push_back({view->nodes[*broker], np, {}});
        for (std::uint32_t k = 0; k < np; ++k) a.ranks.push_back({0, k});
    }
    a.on_host.resize(a.hosts.size());
    for (std::uint32_t r = 0; r < a.ranks.size(); ++r) a.on_host[a.ranks[r].host].push_back(r);

    msg::JobPart part;
    part.requester = m.tool;
    part.requester_pid = m.tool_pid;
    part.debugger = s.parent;
    if (s.notify_completion) part.notify_completion.push_back(s.parent);
    part.env = std::move(s.env);
    s.env.clear();
    Job &job = start_spawned(env, s, a, std::move(part), m.tool);
    job.tool = true;
}

std::string JobCoordinator::spawn_size(const msg::Spawn &s, std::uint32_t &np) {
    std::uint64_t n = 0;
    for (const auto &app : s.apps) {
        if (app.np == 0) return "an app of 0 ranks";
        n += app.np;
    }
    if (n == 0 || n > msg::kMaxRanks)
        return fmt::format("a spawned job has 1..{} ranks", msg::kMaxRanks);
    np = static_cast<std::uint32_t>(n);
    return {};
}

// Lays out a spawned job's ranks as `a` places them, registers it on every broker and sends every
// broker its part; the spawn is answered once every part started, or failed (naming the node)
// when one has not started by the spawn's bound.
JobCoordinator::Job &JobCoordinator::start_spawned(const Envelope &env, msg::Spawn &s,
                                                   const alloc::Allocation &a, msg::JobPart part,
                                                   const std::string &requester) {
    const auto view = brokers_.view();
    const auto np = static_cast<std::uint32_t>(a.ranks.size());
    msg::JobInfo info;
    info.nspace = new_namespace_name();
    info.size = info.univ_size = info.max_procs = np;
    info.num_apps = static_cast<std::uint32_t>(s.apps.size());
    if (!s.debugger_daemons) info.parent = s.parent;  // a tool's job has none: the target is
    info.stop_in_init = s.stop_in_init;
    info.stop_in_app = s.stop_in_app;
    info.stop_on_exec = s.stop_on_exec;
    if (s.debugger_daemons) info.debug_target = s.debug_target;
    if (!s.apps.empty())
        info.program =
            s.apps[0].cmd.empty() && !s.apps[0].argv.empty() ? s.apps[0].argv[0] : s.apps[0].cmd;
    std::vector<std::uint32_t> node_of_host(a.hosts.size(), 0);
    for (std::size_t h = 0; h < a.hosts.size(); ++h) {
        if (a.on_host[h].empty()) continue;
        node_of_host[h] = static_cast<std::uint32_t>(info.nodes.size());
        info.nodes.push_back(a.hosts[h].name);
    }
    info.procs.resize(np);
    for (std::uint32_t r = 0, app = 0, of_app = 0; r < np; ++r, ++of_app) {
        if (of_app == s.apps[app].np) ++app, of_app = 0;
        msg::ProcInfo &p = info.procs[r];
        p.rank = r;
        p.app_num = app;
        p.node_id = node_of_host[a.ranks[r].host];
        p.hostname = a.hosts[a.ranks[r].host].name;
        p.local_rank = static_cast<std::uint16_t>(a.ranks[r].local_rank);
    }
    node_ranks_.number(info);

    part.job = info;
    part.apps = std::move(s.apps);
    part.env.insert(part.env.end(), s.env.begin(), s.env.end());
    part.bind_to = s.bind_to;
    part.map_by = s.map_by == "core" ? "core" : "slot";  // onto each node's cores
    part.personality_per_app = true;
    part.secret = random_secret();

    const std::string nspace = info.nspace;
    Job &job = jobs_[nspace];
    job.nspace = nspace;
    job.request = env;
    job.requester = requester;
    place_parts(job, {});  // its nodes' brokers are its parent's or its target's, or the tool's
    job.pids.assign(np, 0);
    job.nodes = info.nodes;
    for (const auto &p : info.procs) ++job.ranks_on[p.hostname];
    limit_time(nspace, job, s.timeout_s);
    // The spawner's launcher always gives a bound; a part that has not started by then fails
    // the spawn, naming its node.
    const double bound = s.spawn_timeout_s > 0 && s.spawn_timeout_s < 1e9 ? s.spawn_timeout_s : 60;
    job.start_deadline = reactor().after(
        std::chrono::duration_cast<Reactor::Clock::duration>(std::chrono::duration<double>(bound)),
        [this, nspace, bound] {
            auto it = jobs_.find(nspace);
            if (it == jobs_.end()) return;
            Job &late = it->second;
            late.start_deadline = 0;
            for (std::uint32_t b = 0; b < late.parts && !late.answered; ++b) {
                if (late.started.contains(b)) continue;
                msg::PartLaunched failed{
                    nspace,
                    b,
                    PMIX_ERR_TIMEOUT,
                    fmt::format("its ranks were not all started within {} s", bound),
                    {}};
                return part_launched({}, failed);
            }
        });
    send(every_broker("registry"), msg::RegisterNamespace{std::move(info), part.secret, {}});
    log().info("{}: spawned by {}:{}, {} rank(s) on {} node(s)", nspace, s.parent.nspace,
               s.parent.rank, np, part.job.nodes.size());
    send_parts(job, part);
    return job;
}

alloc::Result<alloc::Allocation> JobCoordinator::map_spawn(Job &root, const msg::Spawn &s,
                                                           std::uint32_t np, std::int32_t &status) {
    alloc::Result<alloc::Allocation> r;
    // A host the spawner names is a node of the allocation by its name (short or full), never
    // "localhost": which node that is depends on who asks.
    auto names = [](const std::string &h, const alloc::Host &node) {
        return h != "localhost" && h != "127.0.0.1" && alloc::is_this_host(h, node.name);
    };
    auto in_allocation = [&](const std::string &h) {
        return std::any_of(root.hosts.begin(), root.hosts.end(),
                           [&](const alloc::Host &node) { return names(h, node); });
    };
    std::vector<std::string> nodes;
    for (const auto &node : root.hosts) nodes.push_back(node.name);
    for (const auto &h : s.add_hosts)
        if (!in_allocation(h)) {
            status = PMIX_ERR_NOT_SUPPORTED;
            r.error =
                fmt::format("cannot add host {} to the allocation ({})", h, fmt::join(nodes, ", "));
            return r;
        }
    for (const auto &h : s.hosts)
        if (!in_allocation(h)) {
            status = PMIX_ERR_BAD_PARAM;
            r.error =
                fmt::format("host {} is not in the allocation ({})", h, fmt::join(nodes, ", "));
            return r;
        }
    std::vector<alloc::Host> hosts;
    for (const auto &node : root.hosts) {
        if (!s.hosts.empty() && std::none_of(s.hosts.begin(), s.hosts.end(),
                                             [&](const std::string &h) { return names(h, node); }))
            continue;
        std::uint32_t used = 0;
        for (auto &[nspace, j] : jobs_)
            if (&root_of(j) == &root)
                if (auto n = j.ranks_on.find(node.name); n != j.ranks_on.end()) used += n->second;
        hosts.push_back({node.name, node.slots > used ? node.slots - used : 0, {}});
    }
    alloc::Request req;
    req.np = np;
    req.map_by = s.map_by;
    req.oversubscribe = root.oversubscribe;
    r = alloc::map_onto(std::move(hosts), req);
    if (!r) status = PMIX_ERR_OUT_OF_RESOURCE;
    return r;
}

}  // namespace zpmix
