#include "actors/jobctl/job_control.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <tuple>

#include <pmix_common.h>

#include "actors/protocol/host_services.hpp"
#include "actors/registry/job_row.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

namespace {

// A live process's executable, for the process table (PMIx_Query_info's pmix_proc_info_t).
std::string executable(std::int64_t pid) {
    if (pid <= 0) return "";
    char path[4096];
    const ssize_t n =
        ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), path, sizeof path - 1);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

std::string proc_name(const msg::Proc &p) {
    return p.rank == msg::kWildcardRank ? p.nspace + ":*" : p.nspace + ":" + std::to_string(p.rank);
}

std::string rank_list(const std::vector<std::uint32_t> &ranks) {
    std::string out;
    for (auto r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
    return out;
}

std::vector<std::uint32_t> all_ranks(const NamespaceRecord &job) {
    std::vector<std::uint32_t> out(job.size());
    for (std::uint32_t r = 0; r < job.size(); ++r) out[r] = r;
    return out;
}

}  // namespace

JobControl::JobControl(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                       const BrokerMap &brokers, Settings settings)
    : Actor("jobctl", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      settings_(std::move(settings)) {
    on(&JobControl::request, Access::session | Access::operator_);
    on(&JobControl::preempt, Access::operator_);
    on(&JobControl::proc_table, Access::operator_);
    on(&JobControl::terminate_ranks, Access::internal);
    on(&JobControl::jobs, Access::operator_);
    on(&JobControl::namespace_ended, Access::internal);
    on(&JobControl::job_finished, Access::internal);
    on(&JobControl::proc_ended, Access::internal);
    on(&JobControl::signalled, Access::internal);
    on(&JobControl::ok, Access::internal);
    on(&JobControl::error, Access::internal);
    on(&JobControl::checkpoint_completed, Access::internal);
    on(&JobControl::signal_here, Access::internal);
    on(&JobControl::table_part, Access::internal);
    on(&JobControl::marks, Access::internal);
    on(&JobControl::tree_lost, Access::internal);
    on(&JobControl::tree_joined, Access::internal);
}

void JobControl::answer(const Envelope &env, std::int32_t status, std::string message,
                        std::vector<msg::Proc> affected) {
    reply(env, msg::JobControlReply{status, std::move(message), std::move(affected), {}});
}

// --- requests ---------------------------------------------------------------------------------

void JobControl::request(const Envelope &env, msg::JobControl &m) {
    // Who asks: a tool (of the broker's uid on this node, or holding its keypair over tcp), or a
    // process for its own job. A tcp client's secret does not vouch for job control.
    if (env.tcp_client())
        return answer(env, PMIX_ERR_NO_PERMISSIONS, "job control by a tcp client refused");
    const bool tool = !env.session || !env.session->is_client();  // or one of our actors
    std::string who;
    if (tool) {
        who = env.peer.tcp ? std::string("a tool over tcp")
                           : fmt::format("tool pid {}", env.peer.pid);
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
    log_peer(env, spdlog::level::info, "{} asks {}{} of {}:{}", who, m.action,
             m.action == "signal" ? " " + std::to_string(m.signal) : std::string(), nspace,
             all ? "*" : rank_list(list));
    // A hosted job's processes are the resource manager's: its job_control upcall answers.
    if (target->hosted) {
        if (m.targets.empty()) m.targets.push_back({nspace, msg::kWildcardRank});
        return send("hostsvc", msg::HostJobControl{std::move(m), who, env.from, env.id});
    }

    // Requests that complete at once are remembered by id, so that cancelling one is told apart
    // from cancelling nothing.
    const std::string requester = tool ? "uid" : who;
    auto named = [this, requester, id = m.id, action = m.action] {
        if (id.empty()) return;
        named_done_.push_back({requester, id, action});
        if (named_done_.size() > kNamedDone) named_done_.pop_front();
    };

    // Signals the targets wherever they run and answers with those reached.
    auto act = [this, env, nspace, named, who, action = m.action](
                   int sig, bool on_request, std::vector<std::uint32_t> targets) {
        auto done = [this, env, nspace, named, action, sig, who](std::int32_t status,
                                                                 std::vector<std::uint32_t> done,
                                                                 std::string problems) {
            if (status != PMIX_SUCCESS) return answer(env, status, action + " failed: " + problems);
            if (done.empty())
                return answer(env, PMIX_ERR_NOT_FOUND, "no live process among the targets");
            // For monitors, once, from the broker asked (its answer covers every node).
            const std::int32_t code = sig == SIGSTOP   ? msg::kJobPaused
                                      : sig == SIGCONT ? msg::kJobResumed
                                                       : msg::kJobSignalled;
            send("events", msg::JobLifecycle{nspace, code, done, 0, sig, 0,
                                             fmt::format("{} of {} rank(s) of {} by {}", action,
                                                         done.size(), nspace, who)});
            std::vector<msg::Proc> affected;
            for (auto r : done) affected.push_back({nspace, r});
            named();
            answer(env, PMIX_SUCCESS,
                   fmt::format("{} delivered to {} process(es){}", action, done.size(),
                               problems.empty() ? "" : "; not reached: " + problems),
                   std::move(affected));
        };
        const std::string by = on_request ? fmt::format("{} ({} request)", who, action) : "";
        if (action == "terminate")
            terminate(nspace, std::move(targets), true, std::move(done), by);
        else
            signal_ranks(nspace, std::move(targets), sig, on_request, std::move(done), 0, by);
    };
    if (m.action == "pause") return act(SIGSTOP, false, list);
    if (m.action == "resume") return act(SIGCONT, false, list);
    if (m.action == "kill") return act(SIGKILL, true, list);
    if (m.action == "terminate") return act(SIGTERM, true, list);
    if (m.action == "signal") {
        if (m.signal <= 0 || m.signal >= NSIG)
            return answer(env, PMIX_ERR_BAD_PARAM, fmt::format("bad signal {}", m.signal));
        return act(m.signal, false, list);
    }
    if (m.action == "preemptible") {
        job.preemptible = m.preemptible;
        share_marks(nspace, job);
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
            share_marks(nspace, job);
        }
        named();
        return answer(env, PMIX_SUCCESS,
                      job.ckpt_event ? "checkpoint by event"
                                     : fmt::format("checkpoint by signal {}", job.ckpt_signal));
    }
    if (m.action == "checkpoint") return checkpoint(env, m, requester, nspace, list);
    if (m.action == "cancel") return cancel(env, m, requester, who);
    if (m.action == "restart" || m.action == "provision" || m.action == "provision_image")
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

// Each node's launcher escalates to SIGKILL itself: only it knows when its ranks end.
void JobControl::terminate(const std::string &nspace, std::vector<std::uint32_t> ranks,
                           bool on_request, Reached then, std::string requested_by) {
    signal_ranks(nspace, std::move(ranks), SIGTERM, on_request, std::move(then),
                 static_cast<std::uint32_t>(settings_.kill_grace.count()), std::move(requested_by));
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
                     [this, key](std::int32_t status, std::vector<std::uint32_t> done, auto) {
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
    const std::string by = fmt::format("tool pid {} (preemption)", env.peer.pid);
    reactor().after(std::chrono::milliseconds(m.grace_ms), [this, nspace, by] {
        const auto job = namespaces_.find(nspace);
        if (!job) return;
        std::vector<std::uint32_t> ranks;
        for (std::uint32_t r = 0; r < job->size(); ++r)
            if (!job->ended(r)) ranks.push_back(r);
        log().info("preempting {}: terminating {} process(es)", nspace, ranks.size());
        terminate(
            nspace, std::move(ranks), true, [](std::int32_t, auto, auto) {}, by);
    });
    answer(env, PMIX_SUCCESS, "preemption alert delivered to " + m.nspace);
}

void JobControl::table_rows(const std::string &only, msg::ProcTable &out) const {
    const auto snapshot = namespaces_.snapshot();
    const std::uint32_t me = brokers_.view()->rank;
    for (const auto &[nspace, job] : *snapshot) {
        if (!only.empty() && nspace != only) continue;
        const auto ours = jobs_.find(nspace);
        const auto by = by_broker(*job, all_ranks(*job));
        const auto here = by.find(me);
        if (here == by.end()) continue;
        for (auto r : here->second) {
            const auto &e = job->ends[r];
            const bool paused = ours != jobs_.end() && ours->second.paused.contains(r);
            const char *state =
                e.ended ? (e.signal ? "killed" : "exited") : (paused ? "paused" : "running");
            out.procs.push_back({nspace, r, job->job->procs[r].hostname, job->pids[r], state,
                                 e.exit_code, e.signal, e.ended ? "" : executable(job->pids[r])});
        }
    }
}

// Every rank of the job(s), wherever it runs: this node's from the table, the others' from their
// brokers; a rank whose broker is lost or silent is listed as unreachable.
void JobControl::proc_table(const Envelope &env, msg::ProcTableQuery &m) {
    const auto view = brokers_.view();
    const auto known = m.nspace.empty() ? nullptr : namespaces_.find(m.nspace);
    if (m.node_only || view->alone()) {
        if (!m.nspace.empty() && !known && !m.node_only)
            return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
        msg::ProcTable out;
        table_rows(m.nspace, out);
        return reply(env, out);
    }
    // A job this broker knows is asked of the brokers that run its ranks; any other, of all.
    std::set<std::uint32_t> ask;
    if (known) {
        for (const auto &[b, ranks] : by_broker(*known, all_ranks(*known))) ask.insert(b);
    } else {
        for (std::uint32_t b = 0; b < view->size(); ++b) ask.insert(b);
    }
    ask.erase(view->rank);
    auto out = std::make_shared<msg::ProcTable>();
    table_rows(m.nspace, *out);
    auto failed = std::make_shared<std::set<std::uint32_t>>();
    const std::string nspace = m.nspace;
    ask_brokers(
        ask,
        [this, nspace](std::uint32_t b, std::uint64_t id) {
            send(remote_address(b, name()), msg::ProcTableQuery{nspace, true}, id);
        },
        [this, out, failed, nspace](std::uint32_t b, std::int32_t status, const Envelope *answer) {
            if (status != PMIX_SUCCESS || !answer) {
                log().warn("process table: {}", failure(b, status, answer));
                failed->insert(b);
                return;
            }
            for (auto &row : answer->as<msg::ProcTable>().procs)
                if (nspace.empty() || row.nspace == nspace) out->procs.push_back(std::move(row));
        },
        [this, env, out, failed, nspace] {
            std::set<std::pair<std::string, std::uint32_t>> listed;
            for (const auto &row : out->procs) listed.insert({row.nspace, row.rank});
            const auto snapshot = namespaces_.snapshot();
            for (const auto &[ns, job] : *snapshot) {
                if (!nspace.empty() && ns != nspace) continue;
                for (const auto &[b, ranks] : by_broker(*job, all_ranks(*job))) {
                    if (!failed->contains(b)) continue;
                    for (auto r : ranks)
                        if (!listed.contains({ns, r}))
                            out->procs.push_back(
                                {ns, r, job->job->procs[r].hostname, 0, "unreachable", 0, 0, ""});
                }
            }
            if (!nspace.empty() && out->procs.empty() && !namespaces_.find(nspace))
                return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + nspace);
            std::sort(out->procs.begin(), out->procs.end(), [](const auto &a, const auto &b) {
                return std::tie(a.nspace, a.rank) < std::tie(b.nspace, b.rank);
            });
            reply(env, *out);
        });
}

msg::JobRow JobControl::row_of(const std::string &nspace, const NamespaceRecord &job) const {
    const auto ours = jobs_.find(nspace);
    return ours == jobs_.end() ? job_row(nspace, job) : job_row(nspace, job, ours->second.paused);
}

void JobControl::jobs(const Envelope &env, msg::JobsQuery &m) {
    const auto now_us = unix_time_us();
    const auto keep_us =
        std::chrono::duration_cast<std::chrono::microseconds>(settings_.keep_finished).count();
    while (!finished_.empty() && finished_.front().ended_us + keep_us < now_us)
        finished_.pop_front();
    msg::JobList out;
    for (const auto &[nspace, job] : *namespaces_.snapshot())
        out.jobs.push_back(row_of(nspace, *job));
    if (m.finished) out.jobs.insert(out.jobs.end(), finished_.begin(), finished_.end());
    out.ended = ended_;
    reply(env, out);
}

// --- what the other actors tell us ------------------------------------------------------------

void JobControl::terminate_ranks(const Envelope &, msg::TerminateRanks &m) {
    const auto job = namespaces_.find(m.nspace);
    if (!job) return;
    std::erase_if(m.ranks, [&](std::uint32_t r) { return r >= job->size() || job->ended(r); });
    if (m.ranks.empty()) return;
    log().info("terminating {}:{}: {}", m.nspace, rank_list(m.ranks), m.reason);
    terminate(m.nspace, std::move(m.ranks), false, [](std::int32_t, auto, auto) {});
}

void JobControl::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    std::vector<std::uint64_t> gone;
    for (const auto &[key, c] : checkpoints_)
        if (c.nspace == m.nspace) gone.push_back(key);
    for (auto key : gone) finish_checkpoint(key, PMIX_ERR_NOT_FOUND, "the job ended");
    jobs_.erase(m.nspace);
}

void JobControl::job_finished(const Envelope &, msg::JobFinished &m) {
    const std::int32_t s = m.row.status;
    ++ended_[s == 0 ? "succeeded" : s > 128 && s <= 128 + 64 ? "signalled" : "failed"];
    if (settings_.keep_finished.count() == 0) return;
    finished_.push_back(std::move(m.row));
    if (finished_.size() > kMaxFinished) finished_.pop_front();
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
    answered(env, PMIX_SUCCESS, &env);
}

void JobControl::table_part(const Envelope &env, msg::ProcTable &) {
    answered(env, PMIX_SUCCESS, &env);  // another broker's rows
}

void JobControl::ok(const Envelope &env, msg::Ok &) {
    answered(env, PMIX_SUCCESS, &env);  // an event went out
}

void JobControl::error(const Envelope &env, msg::ErrorReply &m) {
    log().warn("{} refused: {}", env.from, m.message);
    answered(env, m.status == PMIX_SUCCESS ? PMIX_ERROR : m.status, &env);
}

void JobControl::answered(const Envelope &env, std::int32_t status, const Envelope *answer) {
    auto it = awaiting_.find(env.id);
    if (it == awaiting_.end()) return;  // given up already
    auto then = std::move(it->second.then);
    awaiting_.erase(it);
    then(status, answer);
}

void JobControl::give_up(std::uint64_t id, std::int32_t status) {
    auto it = awaiting_.find(id);
    if (it == awaiting_.end()) return;
    auto then = std::move(it->second.then);
    awaiting_.erase(it);
    then(status, nullptr);
}

// Another broker's jobctl asks for this node's ranks: never passed on, so nothing loops.
void JobControl::signal_here(const Envelope &env, msg::SignalRanks &m) {
    const auto job = namespaces_.find(m.nspace);
    if (!job) return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
    auto by = by_broker(*job, m.ranks);
    auto here = by.find(brokers_.view()->rank);
    if (here == by.end()) return reply(env, msg::SignalledRanks{});
    signal_ranks(
        m.nspace, std::move(here->second), m.signal, m.on_request,
        [this, env](std::int32_t status, std::vector<std::uint32_t> done, std::string problems) {
            if (status != PMIX_SUCCESS) return reply_error(env, status, problems);
            reply(env, msg::SignalledRanks{std::move(done)});
        },
        m.kill_after_ms, m.requested_by);
}

void JobControl::marks(const Envelope &env, msg::JobMarks &m) {
    if (env.from == remote_address(brokers_.view()->rank, name())) return;  // ours, back
    if (!namespaces_.find(m.nspace)) return;
    Job &job = jobs_[m.nspace];
    job.preemptible = m.preemptible;
    if (job.ckpt_signal == 0 && !job.ckpt_event) {  // the first registration stands
        job.ckpt_signal = m.ckpt_signal;
        job.ckpt_event = m.ckpt_event;
    }
}

// A standing tree's broker that joined again is reached again.
void JobControl::tree_joined(const Envelope &, msg::TreeJoined &m) {
    lost_.erase(m.rank);
}

void JobControl::tree_lost(const Envelope &, msg::TreeLost &m) {
    lost_.insert(m.brokers.begin(), m.brokers.end());
    std::vector<std::uint64_t> ids;
    for (const auto &[id, a] : awaiting_)
        if (lost_.contains(a.broker)) ids.push_back(id);
    for (auto id : ids) give_up(id, PMIX_ERR_UNREACH);
}

// --- helpers ----------------------------------------------------------------------------------

std::map<std::uint32_t, std::vector<std::uint32_t>> JobControl::by_broker(
    const NamespaceRecord &job, const std::vector<std::uint32_t> &ranks) const {
    const auto view = brokers_.view();
    std::map<std::uint32_t, std::vector<std::uint32_t>> out;
    for (auto r : ranks)
        if (r < job.job->procs.size())
            out[view->broker_of(job.job->procs[r].hostname).value_or(view->rank)].push_back(r);
    return out;
}

std::string JobControl::failure(std::uint32_t broker, std::int32_t status,
                                const Envelope *answer) const {
    const auto view = brokers_.view();
    const std::string node =
        broker < view->size() ? view->nodes[broker] : "broker " + std::to_string(broker);
    if (answer && status != PMIX_SUCCESS)
        return fmt::format("{}: {}", node, answer->as<msg::ErrorReply>().message);
    if (status == PMIX_ERR_UNREACH) return node + ": its broker is lost";
    return fmt::format("{}: no answer within {} ms", node, settings_.remote_timeout.count());
}

void JobControl::ask_brokers(
    const std::set<std::uint32_t> &brokers,
    const std::function<void(std::uint32_t, std::uint64_t)> &send_to,
    std::function<void(std::uint32_t, std::int32_t, const Envelope *)> each,
    std::function<void()> done) {
    if (brokers.empty()) return done();
    struct State {
        std::size_t left = 0;
        std::vector<std::uint64_t> ids;
        std::function<void(std::uint32_t, std::int32_t, const Envelope *)> each;
        std::function<void()> done;
        Reactor::TimerId timer = 0;
    };
    auto state = std::make_shared<State>();
    state->left = brokers.size();
    state->each = std::move(each);
    state->done = std::move(done);
    std::vector<std::pair<std::uint32_t, std::uint64_t>> legs;
    for (auto b : brokers) {
        const std::uint64_t id = next_id_++;
        state->ids.push_back(id);
        legs.emplace_back(b, id);
        awaiting_[id] = {b, [this, state, b](std::int32_t status, const Envelope *answer) {
                             state->each(b, status, answer);
                             if (--state->left > 0) return;
                             if (state->timer) reactor().cancel(std::exchange(state->timer, 0));
                             state->done();
                         }};
    }
    state->timer = reactor().after(settings_.remote_timeout, [this, state] {
        state->timer = 0;
        for (auto id : state->ids) give_up(id, PMIX_ERR_TIMEOUT);
    });
    const std::uint32_t me = brokers_.view()->rank;
    for (const auto &[b, id] : legs) {
        if (b != me && lost_.contains(b))
            give_up(id, PMIX_ERR_UNREACH);
        else
            send_to(b, id);
    }
}

void JobControl::signal_ranks(const std::string &nspace, std::vector<std::uint32_t> ranks, int sig,
                              bool on_request, Reached then, std::uint32_t kill_after_ms,
                              std::string requested_by) {
    const auto job = namespaces_.find(nspace);
    if (!job) return then(PMIX_ERR_NOT_FOUND, {}, "no job " + nspace);
    auto by = std::make_shared<std::map<std::uint32_t, std::vector<std::uint32_t>>>(
        by_broker(*job, ranks));
    struct Result {
        std::set<std::uint32_t> reached;
        std::int32_t status = PMIX_SUCCESS;  // the first failure
        std::string problems;
    };
    auto result = std::make_shared<Result>();
    std::set<std::uint32_t> brokers;
    for (const auto &[b, list] : *by) brokers.insert(b);
    const std::uint32_t me = brokers_.view()->rank;
    ask_brokers(
        brokers,
        [this, by, nspace, sig, on_request, kill_after_ms, me, requested_by](std::uint32_t b,
                                                                             std::uint64_t id) {
            msg::SignalRanks m{nspace, by->at(b), sig, on_request, kill_after_ms, requested_by};
            send(b == me ? std::string("launcher") : remote_address(b, name()), m, id);
        },
        [this, result, nspace, sig, me](std::uint32_t b, std::int32_t status,
                                        const Envelope *answer) {
            if (status != PMIX_SUCCESS || !answer) {
                if (result->status == PMIX_SUCCESS) result->status = status;
                result->problems +=
                    (result->problems.empty() ? "" : "; ") + failure(b, status, answer);
                return;
            }
            const auto done = answer->as<msg::SignalledRanks>().ranks;
            result->reached.insert(done.begin(), done.end());
            // The paused state of this node's ranks is kept here, for the process table.
            if (b != me || (sig != SIGSTOP && sig != SIGCONT) || !namespaces_.find(nspace)) return;
            Job &job = jobs_[nspace];
            for (auto r : done) {
                if (sig == SIGSTOP)
                    job.paused.insert(r);
                else
                    job.paused.erase(r);
            }
        },
        [result, then = std::move(then)] {
            const std::int32_t status = result->reached.empty() ? result->status : PMIX_SUCCESS;
            then(status, {result->reached.begin(), result->reached.end()}, result->problems);
        });
}

void JobControl::share_marks(const std::string &nspace, const Job &job) {
    if (brokers_.view()->alone()) return;
    send(every_broker(name()),
         msg::JobMarks{nspace, job.preemptible, job.ckpt_signal, job.ckpt_event});
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
    n.event.timestamp = unix_time_s();
    n.do_not_cache = true;  // a request for now, not a state for latecomers
    const std::uint64_t id = next_id_++;
    awaiting_[id] = {brokers_.view()->rank, [this, code](std::int32_t status, const Envelope *) {
                         if (status != PMIX_SUCCESS)
                             log().error("event {} could not be published: status {}", code,
                                         status);
                     }};
    send("events", n, id);
}

void JobControl::checkpoint_completed(const Envelope &env, msg::CheckpointCompleted &m) {
    // This node's events tell us; we tell the other brokers, as their checkpoints may wait on it.
    const auto view = brokers_.view();
    if (env.from == remote_address(view->rank, name())) return;  // ours, back
    if (!is_remote_address(env.from) && !view->alone()) send(every_broker(name()), m);
    std::vector<std::uint64_t> complete;
    for (auto &[key, c] : checkpoints_)
        if (c.nspace == m.proc.nspace && c.waiting.erase(m.proc.rank) && c.waiting.empty())
            complete.push_back(key);
    for (auto key : complete) finish_checkpoint(key, PMIX_SUCCESS, "checkpoint complete");
}

}  // namespace zpmix
