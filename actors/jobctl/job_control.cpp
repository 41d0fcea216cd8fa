#include "actors/jobctl/job_control.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <pmix_common.h>

namespace zpmix {

namespace {

std::string proc_name(const msg::Proc &p) {
    return p.rank == msg::kWildcardRank ? p.nspace + ":*" : p.nspace + ":" + std::to_string(p.rank);
}

std::string rank_list(const std::vector<std::uint32_t> &ranks) {
    std::string out;
    for (auto r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
    return out;
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

JobControl::JobControl(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                       Settings settings)
    : Actor("jobctl", reactor, bus), namespaces_(namespaces), settings_(std::move(settings)) {
    on(&JobControl::request, Access::session | Access::operator_);
    on(&JobControl::preempt, Access::operator_);
    on(&JobControl::proc_table, Access::operator_);
    on(&JobControl::terminate_ranks, Access::internal);
    on(&JobControl::namespace_ended, Access::internal);
    on(&JobControl::proc_ended, Access::internal);
    on(&JobControl::signalled, Access::internal);
    on(&JobControl::ok, Access::internal);
    on(&JobControl::error, Access::internal);
    on(&JobControl::checkpoint_completed, Access::internal);
}

void JobControl::answer(const Envelope &env, std::int32_t status, std::string message,
                        std::vector<msg::Proc> affected) {
    reply(env, msg::JobControlReply{status, std::move(message), std::move(affected)});
}

// --- requests ---------------------------------------------------------------------------------

void JobControl::request(const Envelope &env, msg::JobControl &m) {
    // Who asks: a tool (of the broker's uid on this node: the dispatcher admits no other), or a
    // process for its own job. A tcp client's secret does not vouch for job control.
    if (env.peer.tcp) return answer(env, PMIX_ERR_NO_PERMISSIONS, "job control over tcp refused");
    const bool tool = !env.session || !env.session->is_client();  // or one of our actors
    std::string who;
    if (tool) {
        who = fmt::format("tool pid {}", env.peer.pid);
    } else {
        m.requester = {env.session->nspace, env.session->rank};
        const auto ns = namespaces_.find(m.requester.nspace);
        if (!ns || m.requester.rank >= ns->size())
            return answer(env, PMIX_ERR_NO_PERMISSIONS,
                          "unknown requester " + proc_name(m.requester));
        who = fmt::format("{} (pid {})", proc_name(m.requester), env.peer.pid);
    }

    // The targets: one job, some or all of its ranks.
    std::string nspace = tool ? std::string() : m.requester.nspace;
    bool all = m.targets.empty();
    std::set<std::uint32_t> ranks;
    for (const auto &t : m.targets) {
        if (nspace.empty()) nspace = t.nspace;
        if (t.nspace != nspace)
            return answer(
                env, tool ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NO_PERMISSIONS,
                tool ? "targets must be of one job" : "a process may control only its own job");
        if (t.rank == msg::kWildcardRank)
            all = true;
        else
            ranks.insert(t.rank);
    }
    if (nspace.empty()) return answer(env, PMIX_ERR_BAD_PARAM, "a tool must name its targets");
    const auto target = namespaces_.find(nspace);
    if (!target) return answer(env, PMIX_ERR_NOT_FOUND, "no job " + nspace);
    Job &job = jobs_[nspace];
    if (all)
        for (std::uint32_t r = 0; r < target->size(); ++r) ranks.insert(r);
    for (auto r : ranks)
        if (r >= target->size())
            return answer(env, PMIX_ERR_BAD_PARAM, fmt::format("{} has no rank {}", nspace, r));
    std::vector<std::uint32_t> list(ranks.begin(), ranks.end());
    log().info("{} asks {}{} of {}:{}", who, m.action,
               m.action == "signal" ? " " + std::to_string(m.signal) : std::string(), nspace,
               all ? "*" : rank_list(list));

    // Requests that complete at once are remembered by id, so that cancelling one is told apart
    // from cancelling nothing.
    const std::string requester = tool ? "uid" : who;
    auto named = [this, requester, id = m.id, action = m.action] {
        if (id.empty()) return;
        named_done_.push_back({requester, id, action});
        if (named_done_.size() > kNamedDone) named_done_.pop_front();
    };

    // Asks the launcher to signal the targets and answers with those it reached; `pausing`
    // records SIGSTOP/SIGCONT in the process table.
    auto act = [this, env, nspace, named, action = m.action](int sig, bool on_request, bool pausing,
                                                             std::vector<std::uint32_t> targets) {
        auto done = [this, env, nspace, named, action, sig, pausing](
                        std::int32_t status, std::vector<std::uint32_t> done) {
            if (status != PMIX_SUCCESS)
                return answer(env, status, action + " failed: the launcher refused");
            if (done.empty())
                return answer(env, PMIX_ERR_NOT_FOUND, "no live process among the targets");
            std::vector<msg::Proc> affected;
            auto it = jobs_.find(nspace);  // gone with the job
            for (auto r : done) {
                affected.push_back({nspace, r});
                if (!pausing || it == jobs_.end()) continue;
                if (sig == SIGSTOP)
                    it->second.paused.insert(r);
                else
                    it->second.paused.erase(r);
            }
            named();
            answer(env, PMIX_SUCCESS,
                   fmt::format("{} delivered to {} process(es)", action, done.size()),
                   std::move(affected));
        };
        if (action == "terminate")
            terminate(nspace, std::move(targets), true, std::move(done));
        else
            signal_ranks(nspace, std::move(targets), sig, on_request, std::move(done));
    };
    if (m.action == "pause") return act(SIGSTOP, false, true, list);
    if (m.action == "resume") return act(SIGCONT, false, true, list);
    if (m.action == "kill") return act(SIGKILL, true, false, list);
    if (m.action == "terminate") return act(SIGTERM, true, false, list);
    if (m.action == "signal") {
        if (m.signal <= 0 || m.signal >= NSIG)
            return answer(env, PMIX_ERR_BAD_PARAM, fmt::format("bad signal {}", m.signal));
        return act(m.signal, false, m.signal == SIGSTOP || m.signal == SIGCONT, list);
    }
    if (m.action == "preemptible") {
        job.preemptible = m.preemptible;
        named();
        return answer(env, PMIX_SUCCESS,
                      nspace + (m.preemptible ? " is preemptible" : " is not preemptible"));
    }
    if (m.action == "checkpoint_method") {
        if (tool) return answer(env, PMIX_ERR_BAD_PARAM, "only the job registers its methods");
        if (m.ckpt_signal == 0 && !m.ckpt_event)
            return answer(env, PMIX_ERR_BAD_PARAM, "no checkpoint method given");
        if (m.ckpt_signal < 0 || m.ckpt_signal >= NSIG)
            return answer(env, PMIX_ERR_BAD_PARAM, fmt::format("bad signal {}", m.ckpt_signal));
        if (job.ckpt_signal == 0 && !job.ckpt_event) {  // the first registration stands
            job.ckpt_signal = m.ckpt_signal;
            job.ckpt_event = m.ckpt_signal == 0;
        }
        named();
        return answer(env, PMIX_SUCCESS,
                      job.ckpt_event ? "checkpoint by event"
                                     : fmt::format("checkpoint by signal {}", job.ckpt_signal));
    }
    if (m.action == "checkpoint") return checkpoint(env, m, requester, nspace, list);
    if (m.action == "cancel") return cancel(env, m, requester, who);
    if (m.action == "restart" || m.action == "provision")
        return answer(env, PMIX_ERR_NOT_SUPPORTED, m.action + " is not supported by zpmix");
    answer(env, PMIX_ERR_BAD_PARAM, "unknown job-control action '" + m.action + "'");
}

void JobControl::cancel(const Envelope &env, const msg::JobControl &m, const std::string &requester,
                        const std::string &who) {
    std::vector<std::uint64_t> victims;
    for (const auto &[key, c] : checkpoints_)
        if (c.requester == requester && (m.cancel_id.empty() || c.id == m.cancel_id))
            victims.push_back(key);
    if (victims.empty()) {
        if (m.cancel_id.empty())
            return answer(env, PMIX_ERR_NOT_FOUND,
                          "nothing pending to cancel (only pending checkpoints can be)");
        // The newest request of that id decides: one that completed at once cannot be undone.
        for (auto it = named_done_.rbegin(); it != named_done_.rend(); ++it)
            if (it->requester == requester && it->id == m.cancel_id)
                return answer(env, PMIX_ERR_NOT_SUPPORTED,
                              fmt::format("request '{}' ({}) completed at once: only pending "
                                          "checkpoints can be cancelled",
                                          m.cancel_id, it->action));
        return answer(env, PMIX_ERR_NOT_FOUND, "no pending request '" + m.cancel_id + "'");
    }
    for (auto key : victims) finish_checkpoint(key, PMIX_ERR_JOB_CANCELED, "cancelled by " + who);
    answer(env, PMIX_SUCCESS, fmt::format("cancelled {} request(s)", victims.size()));
}

void JobControl::terminate(const std::string &nspace, std::vector<std::uint32_t> ranks,
                           bool on_request,
                           std::function<void(std::int32_t, std::vector<std::uint32_t>)> then) {
    signal_ranks(nspace, ranks, SIGTERM, on_request, std::move(then));
    // A stopped process acts on SIGTERM only once it runs again.
    signal_ranks(nspace, ranks, SIGCONT, on_request, [](std::int32_t, auto) {});
    const auto grace = settings_.kill_grace;
    reactor().after(grace, [this, nspace, ranks = std::move(ranks), grace, on_request] {
        const auto job = namespaces_.find(nspace);
        if (!job) return;  // the whole job ended meanwhile
        std::vector<std::uint32_t> alive;
        for (auto r : ranks)
            if (!job->ended(r)) alive.push_back(r);
        if (alive.empty()) return;
        log().warn("{}:{} still alive {} ms after SIGTERM: SIGKILL", nspace, rank_list(alive),
                   grace.count());
        signal_ranks(nspace, std::move(alive), SIGKILL, on_request, [](std::int32_t, auto) {});
    });
}

void JobControl::checkpoint(const Envelope &env, const msg::JobControl &m, const std::string &who,
                            const std::string &nspace, std::vector<std::uint32_t> ranks) {
    Job &job = jobs_.at(nspace);
    const auto table = namespaces_.find(nspace);
    if (job.ckpt_signal == 0 && !job.ckpt_event)
        return answer(
            env, PMIX_ERR_NOT_SUPPORTED,
            nspace + " registered no checkpoint method (PMIX_JOB_CTRL_CHECKPOINT_METHOD)");
    if (!m.id.empty())
        for (const auto &[key, c] : checkpoints_)
            if (c.requester == who && c.id == m.id)
                return answer(env, PMIX_ERR_BAD_PARAM, "request id '" + m.id + "' is in use");
    std::erase_if(ranks, [&](std::uint32_t r) { return table->ended(r); });
    if (ranks.empty()) return answer(env, PMIX_ERR_NOT_FOUND, "no live process among the targets");
    const std::uint64_t key = next_id_++;
    const auto timeout =
        m.timeout_ms ? std::chrono::milliseconds(m.timeout_ms) : settings_.checkpoint_timeout;
    Checkpoint c{env, who, m.id, nspace, {ranks.begin(), ranks.end()}, 0};
    c.timer = reactor().after(timeout, [this, key, timeout] {
        checkpoints_.at(key).timer = 0;
        finish_checkpoint(key, PMIX_ERR_TIMEOUT,
                          fmt::format("no checkpoint completion within {} ms", timeout.count()));
    });
    checkpoints_.emplace(key, std::move(c));
    if (job.ckpt_event) {
        std::vector<msg::Proc> targets;
        for (auto r : ranks) targets.push_back({nspace, r});
        raise_event(PMIX_JCTRL_CHECKPOINT, targets, targets, "checkpoint requested");
    } else {
        signal_ranks(nspace, ranks, job.ckpt_signal, false,
                     [this, key](std::int32_t status, std::vector<std::uint32_t> done) {
                         if (!checkpoints_.contains(key)) return;
                         if (status != PMIX_SUCCESS || done.empty())
                             finish_checkpoint(key, PMIX_ERR_NOT_FOUND,
                                               "the checkpoint signal reached no process");
                     });
    }
}

void JobControl::finish_checkpoint(std::uint64_t key, std::int32_t status,
                                   const std::string &message) {
    auto it = checkpoints_.find(key);
    if (it == checkpoints_.end()) return;
    if (it->second.timer) reactor().cancel(it->second.timer);
    log().info("checkpoint of {}{}: {}", it->second.nspace,
               it->second.id.empty() ? "" : " (" + it->second.id + ")", message);
    answer(it->second.req, status, message);
    checkpoints_.erase(it);
}

void JobControl::preempt(const Envelope &env, msg::Preempt &m) {
    if (!namespaces_.find(m.nspace)) return answer(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end() || !it->second.preemptible)
        return answer(env, PMIX_ERR_NO_PERMISSIONS, m.nspace + " is not preemptible");
    log().info("tool pid {} preempts {}: alert, then terminate in {} ms", env.peer.pid, m.nspace,
               m.grace_ms);
    raise_event(PMIX_JCTRL_PREEMPT_ALERT, {{m.nspace, msg::kWildcardRank}},
                {{m.nspace, msg::kWildcardRank}},
                fmt::format("{} is preempted: terminating in {} ms", m.nspace, m.grace_ms));
    const std::string nspace = m.nspace;
    reactor().after(std::chrono::milliseconds(m.grace_ms), [this, nspace] {
        const auto job = namespaces_.find(nspace);
        if (!job) return;
        std::vector<std::uint32_t> ranks;
        for (std::uint32_t r = 0; r < job->size(); ++r)
            if (!job->ended(r)) ranks.push_back(r);
        log().info("preempting {}: terminating {} process(es)", nspace, ranks.size());
        terminate(nspace, std::move(ranks), true, [](std::int32_t, auto) {});
    });
    answer(env, PMIX_SUCCESS, "preemption alert delivered to " + m.nspace);
}

void JobControl::proc_table(const Envelope &env, msg::ProcTableQuery &m) {
    const auto snapshot = namespaces_.snapshot();
    if (!m.nspace.empty() && !snapshot->contains(m.nspace))
        return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
    msg::ProcTable out;
    for (const auto &[nspace, job] : *snapshot) {
        if (!m.nspace.empty() && nspace != m.nspace) continue;
        const auto ours = jobs_.find(nspace);
        for (std::uint32_t r = 0; r < job->size(); ++r) {
            const auto &e = job->ends[r];
            const bool paused = ours != jobs_.end() && ours->second.paused.contains(r);
            const char *state =
                e.ended ? (e.signal ? "killed" : "exited") : (paused ? "paused" : "running");
            out.procs.push_back({nspace, r, job->job->procs[r].hostname, job->pids[r], state,
                                 e.exit_code, e.signal});
        }
    }
    reply(env, out);
}

// --- what the other actors tell us ------------------------------------------------------------

void JobControl::terminate_ranks(const Envelope &, msg::TerminateRanks &m) {
    const auto job = namespaces_.find(m.nspace);
    if (!job) return;
    std::erase_if(m.ranks, [&](std::uint32_t r) { return r >= job->size() || job->ended(r); });
    if (m.ranks.empty()) return;
    log().info("terminating {}:{}: {}", m.nspace, rank_list(m.ranks), m.reason);
    terminate(m.nspace, std::move(m.ranks), false, [](std::int32_t, auto) {});
}

void JobControl::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    std::vector<std::uint64_t> gone;
    for (const auto &[key, c] : checkpoints_)
        if (c.nspace == m.nspace) gone.push_back(key);
    for (auto key : gone) finish_checkpoint(key, PMIX_ERR_NOT_FOUND, "the job ended");
    jobs_.erase(m.nspace);
}

void JobControl::proc_ended(const Envelope &, msg::ProcEnded &m) {
    if (auto it = jobs_.find(m.nspace); it != jobs_.end()) it->second.paused.erase(m.rank);
    std::vector<std::uint64_t> failed;
    for (const auto &[key, c] : checkpoints_)
        if (c.nspace == m.nspace && c.waiting.contains(m.rank)) failed.push_back(key);
    for (auto key : failed)
        finish_checkpoint(key, PMIX_ERR_PROC_TERM_WO_SYNC,
                          fmt::format("rank {} ended before completing its checkpoint", m.rank));
}

void JobControl::signalled(const Envelope &env, msg::SignalledRanks &) {
    auto it = awaiting_.find(env.id);
    if (it == awaiting_.end()) return;
    auto then = std::move(it->second);
    awaiting_.erase(it);
    then(PMIX_SUCCESS, env);
}

void JobControl::ok(const Envelope &env, msg::Ok &) {
    awaiting_.erase(env.id);  // an event went out
}

void JobControl::error(const Envelope &env, msg::ErrorReply &m) {
    log().warn("{} refused: {}", env.from, m.message);
    auto it = awaiting_.find(env.id);
    if (it == awaiting_.end()) return;
    auto then = std::move(it->second);
    awaiting_.erase(it);
    then(m.status, env);
}

// --- helpers ----------------------------------------------------------------------------------

void JobControl::signal_ranks(const std::string &nspace, std::vector<std::uint32_t> ranks, int sig,
                              bool on_request,
                              std::function<void(std::int32_t, std::vector<std::uint32_t>)> then) {
    const std::uint64_t id = next_id_++;
    awaiting_[id] = [then = std::move(then)](std::int32_t status, const Envelope &env) {
        std::vector<std::uint32_t> done;
        if (status == PMIX_SUCCESS) done = env.as<msg::SignalledRanks>().ranks;
        then(status, std::move(done));
    };
    send("launcher", msg::SignalRanks{nspace, std::move(ranks), sig, on_request}, id);
}

void JobControl::raise_event(std::int32_t code, std::vector<msg::Proc> range,
                             std::vector<msg::Proc> affected, std::string text) {
    msg::NotifyEvent n;
    n.event.status = code;
    n.event.source = {settings_.broker, 0};
    n.event.range = static_cast<std::uint8_t>(msg::Range::custom);
    n.event.custom_range = std::move(range);
    n.event.affected = std::move(affected);
    n.event.text = std::move(text);
    n.event.timestamp = now_s();
    n.do_not_cache = true;  // a request for now, not a state for latecomers
    const std::uint64_t id = next_id_++;
    awaiting_[id] = [this, code](std::int32_t status, const Envelope &) {
        log().error("event {} could not be published: status {}", code, status);
    };
    send("events", n, id);
}

void JobControl::checkpoint_completed(const Envelope &, msg::CheckpointCompleted &m) {
    std::vector<std::uint64_t> complete;
    for (auto &[key, c] : checkpoints_)
        if (c.nspace == m.proc.nspace && c.waiting.erase(m.proc.rank) && c.waiting.empty())
            complete.push_back(key);
    for (auto key : complete) finish_checkpoint(key, PMIX_SUCCESS, "checkpoint complete");
}

}  // namespace zpmix
