#include "actors/launcher/debug_stop.hpp"

#include <signal.h>

#include <pmix_common.h>

#include "actors/launcher/launcher.hpp"
#include "actors/runtime/address.hpp"

namespace zpmix {

bool StoppedRanks::add(std::uint32_t rank, std::uint32_t size) {
    if (announced_ || rank >= size) return false;
    stopped_.insert(rank);
    announced_ = stopped_.size() == size;
    return announced_;
}

msg::NotifyEvent ready_for_debug(const std::string &nspace,
                                 const std::optional<msg::Proc> &debugger) {
    msg::NotifyEvent n;
    msg::Event &ev = n.event;
    ev.status = PMIX_READY_FOR_DEBUG;
    ev.source = {nspace, PMIX_RANK_WILDCARD};
    ev.affected = {{nspace, PMIX_RANK_WILDCARD}};
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

}  // namespace zpmix
