#include "actors/launcher/job_part.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>

#include <pmix_common.h>

#include "actors/launcher/launcher.hpp"
#include "actors/runtime/address.hpp"

namespace zpmix {

namespace {

constexpr double kSpawnForever = 1e9;  // s: a longer spawn timeout is none (and fits a timer)
// s: a spawn across brokers without PMIX_SPAWN_TIMEOUT has its parts started within this (as long
// as brokers have to boot, [tree] boot_timeout_ms's default); the relay waits a margin longer for
// the coordinator's verdict.
constexpr double kSpawnAcrossBound = 60;
constexpr double kRelayMargin = 5;

}  // namespace

SpawnRelays::SpawnRelays(Reactor &reactor, Wiring wiring)
    : reactor_(reactor), wiring_(std::move(wiring)) {}

void SpawnRelays::relay(const Envelope &env, msg::SpawnAcross m) {
    if (!(m.spawn.timeout_s >= 0) || !(m.spawn.spawn_timeout_s >= 0))
        return wiring_.refuse(env, PMIX_ERR_BAD_PARAM, "negative timeout");
    if (m.spawn.spawn_timeout_s == 0 || m.spawn.spawn_timeout_s > kSpawnForever)
        m.spawn.spawn_timeout_s = kSpawnAcrossBound;
    const double bound = m.spawn.spawn_timeout_s + kRelayMargin;
    const std::uint64_t id = wiring_.relay_id();
    Relay &relay = relays_[id];
    relay.request = env;
    relay.timer = reactor_.after(
        std::chrono::duration_cast<Reactor::Clock::duration>(std::chrono::duration<double>(bound)),
        [this, id] {
            auto node = relays_.extract(id);
            if (node.empty()) return;
            wiring_.refuse(node.mapped().request, PMIX_ERR_TIMEOUT,
                           "the job coordinator did not answer the spawn");
        });
    wiring_.pass_on(m, id);
}

void SpawnRelays::answered(const Envelope &env, msg::LaunchReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;  // timed out
    reactor_.cancel(node.mapped().timer);
    wiring_.answer(node.mapped().request, m);
}

void SpawnRelays::refused(const Envelope &env, msg::ErrorReply &m) {
    auto node = relays_.extract(env.id);
    if (node.empty()) return;
    reactor_.cancel(node.mapped().timer);
    wiring_.refuse(node.mapped().request, m.status, std::move(m.message));
}

// This node's part of a job spanning brokers.
void Launcher::part(const Envelope &env, msg::JobPart &m) {
    Job job;
    job.requester = std::move(m.requester);
    job.follows_children = true;
    job.part.coordinator = remote_address(0, "jobs");
    job.info = std::move(m.job);
    Plan plan;
    plan.apps = std::move(m.apps);
    plan.env = std::move(m.env);
    plan.bind_to = std::move(m.bind_to);
    plan.map_by = std::move(m.map_by);
    plan.personality_ompi =
        m.personality_per_app ? std::nullopt : std::optional<bool>(m.personality_ompi);
    plan.stdin_target = m.stdin_target;
    plan.recoverable = m.recoverable;
    plan.merge_stderr = m.merge_stderr;
    plan.caller = std::move(m.caller);
    // A spawned job's end is told to its spawner by the spawner's broker alone (events relay it),
    // not once per broker; a tool's job's by the tool's broker. The requester's broker watches
    // the requester (a tool, or a standing tree's `zpmix run`): the job ends with it.
    const bool requesters_broker =
        m.requester_pid != 0 && sender_broker(job.requester) == brokers_.view()->rank;
    if (auto p = jobs_.find(job.info.parent.nspace);
        requesters_broker ||
        (p != jobs_.end() &&
         std::binary_search(p->second.local.begin(), p->second.local.end(), job.info.parent.rank)))
        plan.notify_completion = std::move(m.notify_completion);
    if (requesters_broker) job.requester_pid = m.requester_pid;
    if (!m.debugger.nspace.empty()) job.debug.debugger = m.debugger;
    if (shutting_down_ || jobs_.contains(job.info.nspace)) {
        return report_not_started(
            job, PMIX_ERR_NOT_AVAILABLE,
            shutting_down_ ? "the broker is stopping" : "the namespace exists");
    }
    begin(env, std::move(job), std::move(plan), std::move(m.secret));
}

void Launcher::end_part(const Envelope &, msg::EndPart &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) {
        if (m.finish && gave_up_.erase(m.nspace))
            send("registry", msg::DeregisterNamespace{m.nspace, true, m.status, m.message,
                                                      std::move(m.states)});
        return;
    }
    Job &job = it->second;
    if (m.finish) {
        job.part.forget_when_over = true;
        job.part.job_status = m.status;
        job.part.job_message = m.message;
        job.part.job_states = std::move(m.states);
    }
    if (!job.status && m.status != 0) {
        job.part.ended_by_coordinator = true;
        set_status(job, m.status, m.message);
    }
    if (m.finish && !job.status) job.message = m.message;
    // Still starting: it gives up, its namespace kept for the job's end unless this is it.
    if (job.spawning) return abandon_launch(m.nspace, m.status, m.message, !m.finish);
    if (job.ranks_over) return conclude(m.nspace);
    fail(job, m.status ? m.status : 128 + SIGTERM, m.message);
}

void Launcher::signal_parts(const Envelope &, msg::SignalParts &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end() || m.signal <= 0 || m.signal >= NSIG) return;
    signal_tree(it->second, m.signal);
    // The jobs it spawned across brokers (and theirs) are parts here, not its children.
    std::set<std::string> tree{m.nspace};
    for (bool grew = true; grew;) {
        grew = false;
        for (auto &[nspace, job] : jobs_)
            if (job.is_part() && tree.contains(job.info.parent.nspace) &&
                tree.insert(nspace).second) {
                signal_ranks(job, m.signal);
                grew = true;
            }
    }
}

void Launcher::tree_rejoined(const Envelope &, msg::TreeRejoined &) {
    if (brokers_.view()->rank == 0) return;
    // The root's iof, which sees every job's output, may be a new one: it counts from zero.
    output_.consumers_restarted(0);
    msg::PartsHeld held{brokers_.view()->rank, {}};
    for (const auto &[nspace, job] : jobs_) {
        if (!job.is_part()) continue;
        msg::PartHeld p;
        p.nspace = nspace;
        p.job = job.info;
        p.requester = job.requester;
        p.started = !job.spawning;
        for (auto r : job.local) p.pids.emplace_back(r, job.info.procs[r].pid);
        // As report_status and report_over would tell it: an abort's status waits for its rank.
        if (job.status && *job.status != 0 && !job.part.abort_unreported) {
            p.status = *job.status;
            p.message = job.message;
            p.goes_on = job.status_goes_on;
        }
        if (job.part.reported_over) {
            p.over = true;
            p.ended = job.part.ended;
            if (!job.status && job.requested_end) {
                p.status = job.requested_end->first;
                p.message = job.requested_end->second;
                p.on_request = true;
            }
        }
        held.parts.push_back(std::move(p));
    }
    if (held.parts.empty()) return;
    log().info("telling the root broker of the {} part(s) of jobs across the tree held here",
               held.parts.size());
    send(remote_address(0, "jobs"), held);
}

void Launcher::report_not_started(const Job &job, std::int32_t status, const std::string &why,
                                  std::map<std::string, std::uint32_t> ended) {
    send(job.part.coordinator,
         msg::PartLaunched{
             job.info.nspace, brokers_.view()->rank, status, why, {}, std::move(ended)});
}

void Launcher::report_started(const Job &job) {
    msg::PartLaunched started{job.info.nspace, brokers_.view()->rank, 0, {}, {}};
    for (auto r : job.local) started.pids.emplace_back(r, job.info.procs[r].pid);
    send(job.part.coordinator, started);
}

// The job's first failure, unless the coordinator told it (it knows).
void Launcher::report_status(const Job &job) {
    if (job.is_part() && !job.part.ended_by_coordinator && *job.status != 0)
        send(job.part.coordinator,
             msg::PartStatus{job.info.nspace, brokers_.view()->rank, *job.status, job.message,
                             false, false, job.status_goes_on});
}

// An abort's status, kept from the coordinator until a named rank's end fails the job.
void Launcher::report_abort(Job &job) {
    if (std::exchange(job.part.abort_unreported, false) && !job.part.ended_by_coordinator)
        send(job.part.coordinator, msg::PartStatus{job.info.nspace, brokers_.view()->rank,
                                                   *job.status, job.message, false});
}

// Its ranks and the jobs it spawned here are over: once, with the status of its end.
void Launcher::report_over(Job &job) {
    if (job.part.reported_over) return;
    job.part.reported_over = true;
    msg::PartStatus over{job.info.nspace, brokers_.view()->rank, job.status.value_or(0),
                         job.message, true};
    over.goes_on = job.status_goes_on;
    over.ended = job.part.ended;
    if (!job.status && job.requested_end) {
        over.status = job.requested_end->first;
        over.message = job.requested_end->second;
        over.on_request = true;
    }
    send(job.part.coordinator, over);
}

}  // namespace zpmix
