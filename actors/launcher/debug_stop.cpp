#include "actors/launcher/debug_stop.hpp"

#include <signal.h>

#include <algorithm>

#include <pmix_common.h>

#include "actors/launcher/launcher.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/address.hpp"

namespace zpmix {

bool StoppedRanks::add_of(std::uint32_t rank, std::size_t expected) {
    if (announced_) return false;
    stopped_.insert(rank);
    announced_ = stopped_.size() == expected;
    return announced_;
}

msg::NotifyEvent ready_for_debug(const std::string &nspace,
                                 const std::optional<msg::Proc> &debugger,
                                 const std::vector<std::uint32_t> &affected) {
    msg::NotifyEvent n;
    msg::Event &ev = n.event;
    ev.status = PMIX_READY_FOR_DEBUG;
    ev.source = {nspace, PMIX_RANK_WILDCARD};
    ev.affected = {{nspace, PMIX_RANK_WILDCARD}};
    if (!affected.empty()) {
        ev.affected.clear();
        for (auto rank : affected) ev.affected.push_back({nspace, rank});
    }
    if (debugger) {
        ev.range = static_cast<std::uint8_t>(msg::Range::custom);
        ev.custom_range = {*debugger};
    } else {
        ev.range = static_cast<std::uint8_t>(msg::Range::session);
    }
    ev.text = "every rank of " + nspace + " waits for the debugger's release";
    return n;
}

std::vector<std::uint32_t> DebugStop::release(std::uint32_t rank) {
    if (rank == PMIX_RANK_WILDCARD) released = true;
    std::vector<std::uint32_t> ranks;
    for (auto it = at_exec.begin(); it != at_exec.end();)
        if (rank == PMIX_RANK_WILDCARD || rank == *it) {
            ranks.push_back(*it);
            it = at_exec.erase(it);
        } else {
            ++it;
        }
    return ranks;
}

// A rank waits in PMIx_Init for its debugger (or, told by another broker's launcher, is stopped at
// exec): once all do, PMIX_READY_FOR_DEBUG. The ranks of a job across nodes are counted on the
// root broker, whose launcher the others tell.
void Launcher::stopped_in_init(const Envelope &env, msg::StoppedInInit &m) {
    auto it = jobs_.find(m.proc.nspace);
    if (it == jobs_.end() && settings_.namespaces) return hosted_rank_waits(env, m.proc);
    if (it == jobs_.end() || !(it->second.info.stop_in_init || it->second.info.stop_on_exec)) {
        if (env.id != 0) reply_error(env, PMIX_ERR_NOT_FOUND, "no job stopping for a debugger");
        return;
    }
    if (env.id != 0) reply(env, msg::Ok{});
    rank_waits_for_debugger(it->second, m.proc.rank);
}

// Every broker's launcher hears the release: it continues its ranks of the job stopped at exec.
void Launcher::debugger_released(const Envelope &, msg::DebuggerReleased &m) {
    for (const auto &target : m.procs) {
        auto it = jobs_.find(target.nspace);
        if (it == jobs_.end() || !it->second.info.stop_on_exec) continue;
        Job &job = it->second;
        std::size_t continued = 0;
        for (auto i : job.debug.release(target.rank)) {
            const Rank &r = job.ranks[i];
            if (!r.reaped && ::kill(r.pid, SIGCONT) == 0) ++continued;
        }
        log().info("{}: the debugger released {} rank(s) stopped at exec", target.nspace,
                   continued);
    }
}

void Launcher::rank_waits_for_debugger(Job &job, std::uint32_t rank) {
    const std::string &nspace = job.info.nspace;
    // A job across nodes is counted by the root broker's launcher (which has a part of it).
    if (job.is_part() && brokers_.view()->rank != 0)
        return send(remote_address(0, "launcher"), msg::StoppedInInit{{nspace, rank}});
    if (job.debug.stopped.add(rank, job.info.size)) {
        log().info("every rank of {} waits for its debugger", nspace);
        send("events", ready_for_debug(nspace, job.debug.debugger));
    }
}

// A rank of a job the host registered with PMIX_DEBUG_STOP_IN_INIT waits (the host started it:
// no Job here). Its job's ranks on this node, as the host placed them, are counted; the host's
// other nodes count theirs. The event names this node's ranks, or the whole job when they are all
// here, and goes on the session's range (cached): the tools attached to the host's server hear it.
void Launcher::hosted_rank_waits(const Envelope &env, const msg::Proc &proc) {
    const auto ns = settings_.namespaces->find(proc.nspace);
    if (!ns || !ns->hosted || ns->elsewhere || !ns->job || !ns->job->stop_in_init) {
        if (env.id != 0) reply_error(env, PMIX_ERR_NOT_FOUND, "no job stopping for a debugger");
        return;
    }
    std::vector<std::uint32_t> here;
    for (const auto &p : ns->job->procs)
        if (p.hostname == settings_.node) here.push_back(p.rank);
    if (std::find(here.begin(), here.end(), proc.rank) == here.end()) {
        if (env.id != 0)
            reply_error(
                env, PMIX_ERR_NOT_FOUND,
                fmt::format("{}:{} does not run on {}", proc.nspace, proc.rank, settings_.node));
        return;
    }
    if (env.id != 0) reply(env, msg::Ok{});
    // The counts of the host's jobs gone since: forgotten.
    std::erase_if(hosted_stops_, [&](const auto &kv) {
        const auto other = settings_.namespaces->find(kv.first);
        return !other || other->registered_us != kv.second.registered_us;
    });
    HostedStop &stop = hosted_stops_[proc.nspace];
    stop.registered_us = ns->registered_us;
    if (!stop.stopped.add_of(proc.rank, here.size())) return;
    log().info("every rank of {} on {} ({} of {}) waits for its debugger", proc.nspace,
               settings_.node, here.size(), ns->job->size);
    if (here.size() == ns->job->size) here.clear();  // the whole job
    send("events", ready_for_debug(proc.nspace, std::nullopt, here));
}

}  // namespace zpmix
