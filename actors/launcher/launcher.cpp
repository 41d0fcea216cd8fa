#include "actors/launcher/launcher.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <pmix_common.h>

#include "actors/launcher/allocation.hpp"
#include "actors/launcher/rank_process.hpp"
#include "actors/protocol/iof.hpp"
#include "actors/protocol/shm/fence_board.hpp"

extern char **environ;

namespace zpmix {

namespace fs = std::filesystem;

namespace {

constexpr double kForever = 1e9;  // s: a longer time limit is none (and fits a timer)

int pidfd_open(pid_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::string describe_exit(std::uint32_t rank, pid_t pid, int code, int sig) {
    if (sig)
        return fmt::format("rank {} (pid {}) was killed by signal {} ({})", rank, pid, sig,
                           strsignal(sig));
    return fmt::format("rank {} (pid {}) exited with status {}", rank, pid, code);
}

}  // namespace

Launcher::Launcher(Reactor &reactor, Bus &bus, Settings settings, const BrokerMap &brokers)
    : Actor("launcher", reactor, bus),
      settings_(std::move(settings)),
      brokers_(brokers),
      output_(reactor, bus, brokers,
              {.to_requester = [this](const msg::Output &m) { to_stream(jobs_.at(m.nspace), m); },
               .send = [this](const std::string &to, const msg::Output &m) { send(to, m); }}),
      stdin_(reactor, brokers,
             {.answer = [this](const Envelope &req, const msg::InputTaken &m) { reply(req, m); },
              .refuse = [this](const Envelope &req, std::int32_t status,
                               std::string why) { reply_error(req, status, std::move(why)); },
              .pass_on = [this](std::uint32_t broker, const msg::Input &m,
                                std::uint64_t id) { send(remote_address(broker, name()), m, id); },
              .relay_id = [this] { return next_relay_++; }}),
      spawn_relays_(
          reactor,
          {.pass_on = [this](const msg::SpawnAcross &m,
                             std::uint64_t id) { send(remote_address(0, "jobs"), m, id); },
           .answer = [this](const Envelope &req, const msg::LaunchReply &m) { reply(req, m); },
           .refuse = [this](const Envelope &req, std::int32_t status,
                            std::string why) { reply_error(req, status, std::move(why)); },
           .relay_id = [this] { return next_relay_++; }}) {
    on(&Launcher::launch, Access::operator_);
    on(&Launcher::spawn, Access::session | Access::operator_);
    on(&Launcher::stopped_in_init, Access::session | Access::internal);
    on(&Launcher::debugger_released, Access::internal);
    on(&Launcher::signal_job, Access::operator_);
    on(&Launcher::signal_job_ranks, Access::internal);
    on(&Launcher::abort_job, Access::internal);
    on(&Launcher::part, Access::internal);
    on(&Launcher::end_part, Access::internal);
    on(&Launcher::signal_parts, Access::internal);
    on(&Launcher::register_cleanup, Access::session);
    on(&Launcher::spawn_answered, Access::internal);
    on(&Launcher::spawn_refused, Access::internal);
    on(&Launcher::input, Access::operator_ | Access::internal);
    on(&Launcher::input_relayed, Access::internal);
    on(&Launcher::rank_state, Access::internal);
    // Three descriptors per rank (two pipes and a pidfd): allow as many as we may.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

Launcher::~Launcher() {
    // Normally empty: shutdown() ended every job. Never leave a process behind regardless (the
    // ranks' pipes are RankOutput's and StdinForwarding's, which close them).
    for (auto &[nspace, job] : jobs_) {
        for (auto &r : job.ranks) {
            if (r.reaped || r.pid <= 0) continue;
            ::kill(r.pid, SIGKILL);
            ::waitpid(r.pid, nullptr, 0);
        }
        for (auto &r : job.ranks)
            if (r.pidfd >= 0) ::close(r.pidfd);
    }
    for (auto &[pid, fd] : requesters_) ::close(fd);
}

void Launcher::shutdown(std::function<void()> done) {
    shutting_down_ = true;
    if (jobs_.empty()) return done();
    on_idle_ = std::move(done);
    for (auto &[nspace, job] : jobs_) {
        job.part.forget_when_over = true;  // no coordinator will say so any more
        fail(job, 128 + SIGTERM, "the broker is shutting down");
    }
    // Parts already over were only waiting for the coordinator.
    std::vector<std::string> over;
    for (auto &[nspace, job] : jobs_)
        if (job.ranks_over) over.push_back(nspace);
    for (const auto &nspace : over) conclude(nspace);
    if (jobs_.empty() && on_idle_) std::exchange(on_idle_, nullptr)();
    // A rank stuck in the kernel may outlive SIGKILL for a while: do not hang the shutdown.
    reactor().after(std::chrono::milliseconds(settings_.kill_grace_ms + 3000), [this] {
        if (!on_idle_) return;
        log().error("{} job(s) still not reaped; stopping anyway", jobs_.size());
        std::exchange(on_idle_, nullptr)();
    });
}

void Launcher::remove_session_dir() {
    topology_.wait();  // it writes there
    std::error_code ec;
    fs::remove_all(settings_.run_dir + "/session", ec);
}

void Launcher::launch(const Envelope &env, msg::Launch &m) {
    // A launch gives the ranks its caller's environment and ends with the caller's pid: a
    // launcher of this node only (a tool over tcp spawns with PMIx_Spawn, which is refused too).
    if (env.peer.tcp) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "launch over tcp refused");
    if (m.argv.empty() || m.argv[0].empty())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "no program to launch");
    Job job;
    job.requester = env.from;
    job.requester_pid = env.peer.pid;
    job.follows_children = m.follows_children;
    job.report_child_sep = m.report_child_sep;
    job.info.recoverable = m.recoverable;
    Plan plan;
    plan.apps.push_back(msg::App{.cmd = m.argv[0],
                                 .argv = std::move(m.argv),
                                 .env = {},
                                 .cwd = std::move(m.cwd),
                                 .session_cwd = false,
                                 .prefix = {},
                                 .np = m.np});
    plan.env = std::move(m.env);
    plan.bind_to = std::move(m.bind_to);
    plan.map_by = std::move(m.map_by);
    plan.psets = std::move(m.psets);
    plan.timeout_s = m.timeout_s;
    plan.personality_ompi = m.personality_ompi;
    plan.caller = std::move(m.caller);
    plan.stdin_target = m.stdin_target;
    plan.recoverable = m.recoverable;
    job.info.stop_in_init = m.stop_in_init;
    job.info.stop_on_exec = m.stop_on_exec;
    start(env, std::move(job), std::move(plan));
}

// PMIx_Spawn: the spawner must be a running rank of a job of ours, whose tree the child joins.
void Launcher::spawn(const Envelope &env, msg::Spawn &m) {
    if (env.peer.tcp) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "spawn over tcp refused");
    if (env.session && !env.session->is_client()) return tool_spawn(env, m);
    if (m.debugger_daemons)
        return reply_error(env, PMIX_ERR_NOT_SUPPORTED, "only a tool co-launches debugger daemons");
    auto parent = jobs_.find(m.parent.nspace);
    if (parent == jobs_.end() || m.parent.rank >= parent->second.ranks.size() ||
        parent->second.ranks[m.parent.rank].pid <= 0 || parent->second.ranks[m.parent.rank].reaped)
        return reply_error(env, PMIX_ERR_NOT_FOUND,
                           fmt::format("{}:{} is not a running rank of a job of this broker",
                                       m.parent.nspace, m.parent.rank));
    if (parent->second.status)
        return reply_error(env, PMIX_ERR_NOT_AVAILABLE,
                           fmt::format("job {} is ending", m.parent.nspace));
    // A rank of a job spanning brokers spawns across the allocation: the coordinator lays the
    // child out and starts its parts.
    if (parent->second.is_part())
        return spawn_relays_.relay(env, msg::SpawnAcross{std::move(m), parent->second.env});
    std::int32_t status = PMIX_SUCCESS;
    if (auto why = check_local_spawn(m, status); !why.empty()) return reply_error(env, status, why);
    Job job;
    job.requester = env.from;
    job.parent = m.parent.nspace;
    job.child_sep = m.child_sep;
    job.info.parent = m.parent;
    Plan plan;
    plan.apps = std::move(m.apps);
    plan.env = parent->second.env;  // what its parent job's ranks were given, then its own
    plan.env.insert(plan.env.end(), m.env.begin(), m.env.end());
    plan.caller = parent->second.caller;
    plan.bind_to = std::move(m.bind_to);
    plan.map_by = std::move(m.map_by);
    plan.timeout_s = m.timeout_s;
    plan.spawn_timeout_s = m.spawn_timeout_s;
    if (m.notify_completion) plan.notify_completion.push_back(m.parent);
    job.info.stop_in_init = m.stop_in_init;
    job.info.stop_in_app = m.stop_in_app;
    job.info.stop_on_exec = m.stop_on_exec;
    // A job run with the ompi personality spawns with it (mpi4py's interpreter does not link
    // libmpi, and its children must find zpmix's libpmix as their parent did).
    if (parent->second.personality_ompi) plan.personality_ompi = true;
    start(env, std::move(job), std::move(plan));
}

// A tool's job has no parent job; the tool is its requester (its output, exits and end go there,
// and it ends when the tool dies, as a `zpmix run`'s), and hears its PMIX_READY_FOR_DEBUG. With
// PMIX_FWD_STDOUT/_STDERR the iof actor keeps its output for the tool's pull past its end.
// Debugger daemons go where their target's ranks are: on this node, daemons_per_node, or
// daemons_per_proc for each of the target's ranks. On a broker of a tree the coordinator lays the
// job out (on this node; daemons on each node of their target), as it does every job of a tree.
void Launcher::tool_spawn(const Envelope &env, msg::Spawn &m) {
    std::int32_t status = PMIX_SUCCESS;
    if (!m.debugger_daemons)
        if (auto why = check_local_spawn(m, status); !why.empty())
            return reply_error(env, status, why);
    if (const auto view = brokers_.view(); !view->alone())
        return spawn_relays_.relay(
            env,
            msg::SpawnAcross{std::move(m), {}, remote_address(view->rank, env.from), env.peer.pid});
    if (m.debugger_daemons && (!m.hosts.empty() || !m.add_hosts.empty()))
        return reply_error(env, PMIX_ERR_BAD_PARAM, "debugger daemons go beside their target");
    Job job;
    job.requester = env.from;
    job.requester_pid = env.peer.pid;
    job.debug.debugger = m.parent;
    job.info.stop_in_init = m.stop_in_init;
    job.info.stop_in_app = m.stop_in_app;
    job.info.stop_on_exec = m.stop_on_exec;
    if (m.debugger_daemons) {
        auto target = jobs_.find(m.debug_target.nspace);
        if (target == jobs_.end())
            return reply_error(env, PMIX_ERR_NOT_FOUND,
                               "no debug target " + m.debug_target.nspace + " on this broker");
        if (m.apps.size() != 1 || (m.daemons_per_node > 0) == (m.daemons_per_proc > 0))
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "debugger daemons: one app, and PMIX_DEBUG_DAEMONS_PER_NODE or "
                               "PMIX_DEBUG_DAEMONS_PER_PROC");
        const auto local = static_cast<std::uint32_t>(target->second.local.size());
        m.apps[0].np = m.daemons_per_node > 0 ? m.daemons_per_node : m.daemons_per_proc * local;
        job.info.debug_target = m.debug_target;
    }
    Plan plan;
    plan.apps = std::move(m.apps);
    plan.env = std::move(m.env);
    plan.bind_to = std::move(m.bind_to);
    plan.map_by = std::move(m.map_by);
    plan.timeout_s = m.timeout_s;
    plan.spawn_timeout_s = m.spawn_timeout_s;
    if (m.notify_completion) plan.notify_completion.push_back(m.parent);
    if (m.forward_output) plan.keep_output_for = env.from;
    start(env, std::move(job), std::move(plan));
}

// A job on this node alone spawns onto it: the hosts the spawn names must be this node, and a
// node-level mapping (node, ppr:N:node) must fit on one node, where it places as by slot.
std::string Launcher::check_local_spawn(msg::Spawn &m, std::int32_t &status) const {
    for (const auto &h : m.add_hosts)
        if (!alloc::is_this_host(h, settings_.node)) {
            status = PMIX_ERR_NOT_SUPPORTED;
            return fmt::format("cannot add host {} to the allocation ({})", h, settings_.node);
        }
    for (const auto &h : m.hosts)
        if (!alloc::is_this_host(h, settings_.node)) {
            status = PMIX_ERR_BAD_PARAM;
            return fmt::format("host {} is not in the allocation ({})", h, settings_.node);
        }
    if (m.map_by == "slot" || m.map_by == "core") return {};
    std::uint64_t np = 0;
    for (const auto &app : m.apps) np += app.np;
    alloc::Request req;
    req.np = static_cast<std::uint32_t>(std::min<std::uint64_t>(np, msg::kMaxRanks));
    req.map_by = m.map_by;
    req.oversubscribe = true;
    if (auto a = alloc::map_onto({alloc::Host{settings_.node, *req.np, std::nullopt}}, req); !a) {
        status = PMIX_ERR_BAD_PARAM;
        return a.error;
    }
    m.map_by = "slot";
    return {};
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

void Launcher::signal_job(const Envelope &env, msg::SignalJob &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
    if (m.signal <= 0 || m.signal >= NSIG)
        return reply_error(env, PMIX_ERR_BAD_PARAM, fmt::format("bad signal {}", m.signal));
    log().info("{}: forwarding signal {} to it and the jobs it spawned", m.nspace, m.signal);
    {
        const bool stop = m.signal == SIGSTOP || m.signal == SIGTSTP;
        const std::int32_t code = stop                  ? msg::kJobPaused
                                  : m.signal == SIGCONT ? msg::kJobResumed
                                                        : msg::kJobSignalled;
        msg::JobLifecycle life{
            m.nspace,
            code,
            {},
            0,
            m.signal,
            0,
            fmt::format("{} got signal {} from its zpmix run", m.nspace, m.signal)};
        send("events", life);  // the job's whole state: the root's launcher tells it
    }
    if (it->second.is_part())
        send(every_broker(name()), msg::SignalParts{m.nspace, m.signal});
    else
        signal_tree(it->second, m.signal);
    reply(env, msg::Ok{});
}

void Launcher::signal_job_ranks(const Envelope &env, msg::SignalRanks &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end()) return reply_error(env, PMIX_ERR_NOT_FOUND, "no job " + m.nspace);
    if (m.signal <= 0 || m.signal >= NSIG)
        return reply_error(env, PMIX_ERR_BAD_PARAM, fmt::format("bad signal {}", m.signal));
    msg::SignalledRanks out;
    for (auto rank : m.ranks) {
        if (rank >= it->second.ranks.size()) continue;
        Rank &r = it->second.ranks[rank];
        if (r.reaped || r.pid <= 0 || ::kill(r.pid, m.signal) != 0) continue;
        r.ending_on_request |= m.on_request;
        if (m.on_request && r.ended_by.empty()) r.ended_by = m.requested_by;
        out.ranks.push_back(rank);
    }
    if (m.kill_after_ms && !out.ranks.empty())
        kill_later(m.nspace, out.ranks, std::chrono::milliseconds(m.kill_after_ms));
    reply(env, out);
}

// After a SIGTERM: a stopped process acts on it only once it runs, and one that outlives the grace
// period gets SIGKILL.
void Launcher::kill_later(const std::string &nspace, std::vector<std::uint32_t> ranks,
                          std::chrono::milliseconds grace) {
    const Job &job = jobs_.at(nspace);
    for (auto r : ranks)
        if (!job.ranks[r].reaped) ::kill(job.ranks[r].pid, SIGCONT);
    reactor().after(grace, [this, nspace, ranks = std::move(ranks), grace] {
        auto it = jobs_.find(nspace);
        if (it == jobs_.end()) return;
        std::vector<std::uint32_t> alive;
        for (auto r : ranks)
            if (!it->second.ranks[r].reaped) alive.push_back(r);
        if (alive.empty()) return;
        log().warn("{}:{} still alive {} ms after SIGTERM: SIGKILL", nspace, fmt::join(alive, ","),
                   grace.count());
        for (auto r : alive) ::kill(it->second.ranks[r].pid, SIGKILL);
    });
}

// PMIx_Abort: a whole namespace fails at once; named ranks are terminated (SIGTERM, SIGKILL after
// the grace period) and their job takes the abort's status and message, so that their end, which
// fails the job as any abnormal end does, reports the abort. Named ranks on other nodes are ended
// by their brokers' launchers, to which the abort goes as it came (each ends its node's ranks, and
// never passes it on). A part tells the coordinator the abort's status when a named rank's end
// fails the job (or when the part is over), not before: until then the other ranks run on.
void Launcher::abort_job(const Envelope &env, msg::AbortJob &m) {
    if (m.targets.empty()) m.targets.push_back({m.nspace, msg::kWildcardRank});
    if (!is_remote_address(env.from)) {
        const auto view = brokers_.view();
        std::set<std::uint32_t> others;
        for (const auto &t : m.targets) {
            auto it = jobs_.find(t.nspace);
            if (it == jobs_.end() || t.rank == msg::kWildcardRank ||
                t.rank >= it->second.info.procs.size())
                continue;
            const auto b = view->broker_of(it->second.info.procs[t.rank].hostname);
            if (b && *b != view->rank) others.insert(*b);
        }
        for (auto b : others) send(remote_address(b, name()), m);
    }
    std::map<std::string, std::vector<std::uint32_t>> ranks;  // by namespace; empty: all of it
    for (const auto &t : m.targets) {
        auto &r = ranks[t.nspace];
        if (t.rank == msg::kWildcardRank)
            r.assign(1, msg::kWildcardRank);
        else if (r.empty() || r.front() != msg::kWildcardRank)
            r.push_back(t.rank);
    }
    for (auto &[nspace, list] : ranks) {
        auto it = jobs_.find(nspace);
        if (it == jobs_.end()) continue;
        Job &job = it->second;
        const bool whole = list.front() == msg::kWildcardRank;
        std::string message =
            fmt::format("{}rank {} called PMIx_Abort with status {}{}{}{}",
                        nspace == m.nspace ? "" : m.nspace + " ", m.rank, m.status,
                        whole ? "" : fmt::format(" for rank(s) {}", fmt::join(list, ",")),
                        m.message.empty() ? "" : ": ", m.message);
        if (whole) {
            fail(job, m.status, std::move(message));
            continue;
        }
        // This node's ranks only (a part's others are other brokers').
        std::erase_if(list, [&](std::uint32_t r) {
            return r >= job.ranks.size() ||
                   !std::binary_search(job.local.begin(), job.local.end(), r);
        });
        if (list.empty()) continue;
        if (!job.status && !job.is_part()) {
            set_status(job, m.status, std::move(message));
        } else if (!job.status) {
            job.status = m.status;
            job.message = std::move(message);
            job.part.abort_unreported = true;
        }
        std::erase_if(
            list, [&](std::uint32_t r) { return job.ranks[r].reaped || job.ranks[r].pid <= 0; });
        for (auto r : list) ::kill(job.ranks[r].pid, SIGTERM);
        if (!list.empty())
            kill_later(nspace, std::move(list), std::chrono::milliseconds(settings_.kill_grace_ms));
    }
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
    if (it == jobs_.end()) return;
    Job &job = it->second;
    if (m.finish) job.part.forget_when_over = true;
    if (!job.status && m.status != 0) {
        job.part.ended_by_coordinator = true;
        set_status(job, m.status, m.message);
    }
    if (m.finish && !job.status) job.message = m.message;
    if (job.spawning) return abandon_launch(m.nspace, m.status, m.message);
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

void Launcher::report_not_started(const Job &job, std::int32_t status, const std::string &why) {
    send(job.part.coordinator,
         msg::PartLaunched{job.info.nspace, brokers_.view()->rank, status, why, {}});
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
    if (!job.status && job.requested_end) {
        over.status = job.requested_end->first;
        over.message = job.requested_end->second;
        over.on_request = true;
    }
    send(job.part.coordinator, over);
}

// `zpmix run`'s stdin, and a tool's PMIx_IOF_push (stdin_forwarding.hpp).
void Launcher::input(const Envelope &env, msg::Input &m) {
    stdin_.input(env, m);
}

void Launcher::input_relayed(const Envelope &env, msg::InputTaken &m) {
    stdin_.relayed(env, m);
}

// The coordinator's answer to a spawn relayed to it (job_part.hpp).
void Launcher::spawn_answered(const Envelope &env, msg::LaunchReply &m) {
    spawn_relays_.answered(env, m);
}

void Launcher::spawn_refused(const Envelope &env, msg::ErrorReply &m) {
    spawn_relays_.refused(env, m);
}

void Launcher::rank_state(const Envelope &, msg::RankState &m) {
    auto it = jobs_.find(m.nspace);
    if (it == jobs_.end() || m.rank >= it->second.ranks.size()) return;
    Rank &r = it->second.ranks[m.rank];
    (m.finalized ? r.finalized : r.initialized) = true;
}

// PMIx_Job_control's cleanup registration, from a running rank of a job of this node, for its own
// end or its job's end here.
void Launcher::register_cleanup(const Envelope &env, msg::RegisterCleanup &m) {
    if (!env.session || !env.session->is_client())
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "only a job's process registers cleanup");
    auto it = jobs_.find(env.session->nspace);
    const std::uint32_t rank = env.session->rank;
    if (it == jobs_.end() || rank >= it->second.ranks.size() || it->second.ranks[rank].reaped ||
        it->second.ranks[rank].pid <= 0)
        return reply_error(
            env, PMIX_ERR_NOT_FOUND,
            fmt::format("{}:{} is not a running rank of this node", env.session->nspace, rank));
    if (env.peer.uid < 0) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "unknown uid");
    CleanupList &list = m.whole_job ? it->second.cleanup : it->second.ranks[rank].cleanup;
    const auto owner = static_cast<uid_t>(env.peer.uid);
    auto add = [&](std::string path, bool dir) {
        return list.add({std::move(path), dir, m.recursive, m.empty_only, m.leave_topdir, m.ignore},
                        owner);
    };
    for (auto &f : m.files)
        if (auto why = add(std::move(f), false); !why.empty())
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "cleanup refused: " + why);
    for (auto &d : m.dirs)
        if (auto why = add(std::move(d), true); !why.empty())
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "cleanup refused: " + why);
    reply(env, msg::Ok{});
}

// Checks the plan and lays the job out on this node; begin() does the rest. Or answers the
// request with an error and nothing of the job exists.
void Launcher::start(const Envelope &env, Job job, Plan plan) {
    if (shutting_down_) return reply_error(env, PMIX_ERR_NOT_AVAILABLE, "the broker is stopping");
    if (plan.apps.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "no app to launch");
    std::uint64_t np = 0;
    for (const auto &app : plan.apps) np += app.np;
    if (np > msg::kMaxRanks)
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           fmt::format("-n must be 1..{}", msg::kMaxRanks));
    msg::JobInfo &info = job.info;
    info.nspace = new_namespace_name();
    {
        const auto &first = plan.apps.front();
        info.program = first.cmd.empty() && !first.argv.empty() ? first.argv[0] : first.cmd;
    }
    info.size = info.univ_size = info.max_procs = static_cast<std::uint32_t>(np);
    info.nodes = {settings_.node};
    info.procs.resize(np);
    for (std::uint32_t i = 0; i < np; ++i) {
        msg::ProcInfo &p = info.procs[i];
        p.rank = i;
        p.local_rank = static_cast<std::uint16_t>(i);
        p.hostname = settings_.node;
    }
    node_ranks_.number(info);
    for (std::uint32_t app = 0, rank = 0; app < plan.apps.size(); ++app)
        for (std::uint32_t i = 0; i < plan.apps[app].np && rank < np; ++i)
            info.procs[rank++].app_num = app;
    for (const auto &pset : plan.psets) {
        auto &ranks = info.psets[pset];
        for (std::uint32_t i = 0; i < np; ++i) ranks.push_back(i);
    }
    begin(env, std::move(job), std::move(plan), random_secret());
}

void Launcher::begin(const Envelope &env, Job job, Plan plan, std::string secret) {
    // A part's failure goes to its coordinator, a launch's to its requester.
    auto refuse = [&](std::int32_t status, const std::string &why) {
        if (!job.is_part()) return reply_error(env, status, why);
        report_not_started(job, status, why);
    };
    if (plan.apps.empty()) return refuse(PMIX_ERR_BAD_PARAM, "no app to launch");
    std::uint64_t np = 0;
    for (const auto &app : plan.apps) {
        if ((app.cmd.empty() && (app.argv.empty() || app.argv[0].empty())))
            return refuse(PMIX_ERR_BAD_PARAM, "an app without a program");
        if (app.np == 0) return refuse(PMIX_ERR_BAD_PARAM, "an app of 0 ranks");
        std::error_code ec;
        if (!app.cwd.empty() && !fs::is_directory(app.cwd, ec))
            return refuse(PMIX_ERR_JOB_WDIR_NOT_FOUND, "no working directory " + app.cwd);
        np += app.np;
    }
    msg::JobInfo &info = job.info;
    if (np != info.procs.size()) return refuse(PMIX_ERR_BAD_PARAM, "the apps' ranks do not add up");
    if (!(plan.timeout_s >= 0) || !(plan.spawn_timeout_s >= 0))
        return refuse(PMIX_ERR_BAD_PARAM, "negative timeout");
    if (plan.timeout_s > kForever) plan.timeout_s = 0;
    if (plan.spawn_timeout_s > kForever) plan.spawn_timeout_s = 0;

    for (std::uint32_t i = 0; i < np; ++i)
        if (info.procs[i].hostname == settings_.node) job.local.push_back(i);
    Spawning &sp = job.spawning.emplace();
    std::vector<Placement::Rank> places;
    if (auto err = placement_.place(plan.map_by, plan.bind_to,
                                    static_cast<std::uint32_t>(job.local.size()), places);
        !err.empty())
        return refuse(PMIX_ERR_BAD_PARAM, err);
    sp.sets.resize(np);
    for (std::size_t k = 0; k < job.local.size(); ++k) {
        msg::ProcInfo &p = info.procs[job.local[k]];
        p.cpuset = std::move(places[k].cpuset);
        p.locality = std::move(places[k].locality);
        sp.sets[job.local[k]] = std::move(places[k].set);
    }

    info.session_tmpdir = settings_.run_dir + "/session";
    info.nsdir = info.session_tmpdir + "/" + info.nspace;
    std::error_code ec;
    fs::create_directories(info.nsdir, ec);
    for (std::size_t k = 0; k < job.local.size() && !ec; ++k)
        fs::create_directory(info.nsdir + "/" + std::to_string(job.local[k]), ec);
    if (ec) {
        fs::remove_all(info.nsdir, ec);
        return refuse(PMIX_ERR_OUT_OF_RESOURCE, "cannot create " + info.nsdir);
    }
    // Every rank is on this node: its whole-namespace fences meet on a board, not in the broker.
    if (np > 1 && job.local.size() == np) {
        const std::string board = info.nsdir + "/fence-board";
        if (auto err = FenceBoard::create(board, info.size); err.empty())
            info.fence_board = board;
        else
            log().warn("{} fences through the broker: {}", info.nspace, err);
    }

    // One environment per app; only PMIX_RANK differs between its ranks.
    const std::vector<std::string> client_vars =
        client_variables(settings_.uri, secret, settings_.client_write_timeout_ms,
                         settings_.group_timeout_ms, info.nspace);
    // The caller's environment when it gave it (a broker of its own has it anyway).
    std::vector<const char *> caller_env;
    for (const auto &kv : plan.caller.environ) caller_env.push_back(kv.c_str());
    caller_env.push_back(nullptr);
    const char *const *inherited = plan.caller.given ? caller_env.data() : environ;
    for (auto &app : plan.apps)
        sp.apps.push_back(plan_app(app, inherited, plan.env, client_vars, info.nsdir,
                                   plan.personality_ompi, job.local.size()));
    // Open MPI's ranks load the node's topology from PMIx: written once, while they start.
    if (std::any_of(sp.apps.begin(), sp.apps.end(), [](const AppPlan &a) { return a.links_mpi; }))
        topology_.start(info.session_tmpdir);
    sp.request = env;
    job.env = std::move(plan.env);
    job.personality_ompi = plan.personality_ompi.value_or(false);
    job.caller = std::move(plan.caller);
    job.recoverable = plan.recoverable;
    job.ranks.resize(np);

    const std::string nspace = info.nspace;
    // Server and events know the namespace before its first rank exists (both posted in order).
    // A part replaces the coordinator's registration with this node's placement and directories.
    send("registry",
         msg::RegisterNamespace{info, std::move(secret), std::move(plan.notify_completion)});
    if (!plan.keep_output_for.empty() && bus().find("iof"))
        send("iof", msg::IofKeep{nspace, std::move(plan.keep_output_for)});
    auto [it, inserted] = jobs_.emplace(nspace, std::move(job));
    Job &j = it->second;
    stdin_.open(nspace, static_cast<std::uint32_t>(np), plan.stdin_target);
    if (!j.parent.empty()) jobs_.at(j.parent).children.insert(nspace);
    if (plan.timeout_s > 0) {
        const double limit = plan.timeout_s;
        j.time_limit =
            reactor().after(std::chrono::duration_cast<Reactor::Clock::duration>(
                                std::chrono::duration<double>(limit)),
                            [this, nspace, limit] {
                                auto it = jobs_.find(nspace);
                                if (it == jobs_.end()) return;
                                it->second.time_limit = 0;
                                fail(it->second, kTimeoutStatus,
                                     fmt::format("job exceeded its time limit of {} s", limit));
                            });
    }
    if (plan.spawn_timeout_s > 0) {
        const double limit = plan.spawn_timeout_s;
        j.spawning->deadline = reactor().after(
            std::chrono::duration_cast<Reactor::Clock::duration>(
                std::chrono::duration<double>(limit)),
            [this, nspace, limit] {
                auto it = jobs_.find(nspace);
                if (it == jobs_.end() || !it->second.spawning) return;
                it->second.spawning->deadline = 0;
                abandon_launch(nspace, PMIX_ERR_TIMEOUT,
                               fmt::format("its ranks were not all started within {} s", limit));
            });
    }
    tell_monitors(j, PMIX_EVENT_JOB_START,
                  fmt::format("{} launched: {} rank(s) of {}", nspace, np, j.info.program));
    reactor().post([this, nspace] { spawn_next(nspace); });
    watch_requester(j.requester_pid);
}

// One rank per reactor turn: between two spawns the reactor answers the Hellos (and everything
// else) that came in, instead of leaving the first ranks waiting for the last to start.
void Launcher::spawn_next(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end() || !it->second.spawning) return;
    Job &job = it->second;
    // A job that failed meanwhile (abort, time limit, requester gone, shutdown) starts no more.
    if (!job.status && job.spawned < job.local.size()) {
        int status = PMIX_ERROR;
        if (auto error = spawn_rank(job, job.local[job.spawned], status); !error.empty())
            return abandon_launch(nspace, status, error);
        ++job.spawned;
        if (job.spawned < job.local.size() && !job.status) {
            reactor().post([this, nspace] { spawn_next(nspace); });
            return;
        }
    }
    launched(nspace);
}

// Spawns rank i bound to its cpuset (rank_process.hpp); its output and exit are watched once the
// job is launched.
std::string Launcher::spawn_rank(Job &job, std::size_t i, int &status) {
    Spawning &sp = *job.spawning;
    Rank &r = job.ranks[i];
    const auto rank = static_cast<std::uint32_t>(i);
    RankStart how;
    how.rank = i;
    how.set = sp.sets[i].get();
    how.topology = how.set ? placement_.topology() : nullptr;
    how.cpuset = job.info.procs[i].cpuset;
    how.pgroup = job.pgid;
    how.caller = &job.caller;
    how.stop_at_exec = job.debug.stops_at_exec(job.info);
    how.with_stdin = stdin_.is_stdin_rank(job.info.nspace, rank);
    RankProcess p;
    const std::string error =
        start_rank_process(sp.apps[job.info.procs[i].app_num], how, p, status);
    if (how.stop_at_exec && p.pid > 0) job.debug.at_exec.insert(rank);
    if (p.out >= 0)
        output_.add(job.info.nspace, rank, p.out, p.err,
                    output_node(job.info, job.is_part(), rank));
    if (p.in >= 0) stdin_.add(job.info.nspace, rank, p.in);
    if (!error.empty()) return error;
    const pid_t pid = p.pid;
    if (job.pgid == 0) {
        job.pgid = pid;
        job.guarded = settings_.watchdog && settings_.watchdog->guard(pid);
        if (settings_.watchdog && !job.guarded)
            log().warn("{}: the watchdog cannot guard its ranks", job.info.nspace);
    }
    r.pid = pid;
    r.pidfd = pidfd_open(pid);
    job.info.procs[i].pid = pid;
    ++job.live;
    // Before this rank's Hello can be read: the mailboxes are drained before the sockets.
    send("registry", msg::RankSpawned{job.info.nspace, rank, pid});
    if (r.pidfd < 0) return fmt::format("pidfd_open: {}", strerror(errno));
    return {};
}

// Every rank is spawned (or the job failed first): the requester gets the LaunchReply, then the
// ranks' output and exits.
void Launcher::launched(const std::string &nspace) {
    Job &j = jobs_.at(nspace);
    const Envelope request = std::move(j.spawning->request);
    if (j.spawning->deadline) reactor().cancel(j.spawning->deadline);
    j.spawning.reset();
    if (j.is_part()) {
        report_started(j);
    } else {
        msg::LaunchReply reply_msg{nspace, {}};
        for (const auto &p : j.info.procs) reply_msg.pids.push_back(p.pid);
        if (!j.requester.empty()) reply(request, reply_msg);
    }
    log().info("launched {}: {} of {} rank(s)", nspace, j.spawned, j.local.size());
    if (!j.status)
        tell_monitors(j, PMIX_LAUNCH_COMPLETE, nspace + " is running: every rank started");
    for (std::size_t k = 0; k < j.spawned; ++k) {
        const std::size_t i = j.local[k];
        output_.watch(nspace, static_cast<std::uint32_t>(i));
        reactor().watch_fd(j.ranks[i].pidfd, [this, nspace, i] { on_rank_exit(nspace, i); });
    }
    // After the reply: a tool hears PMIX_READY_FOR_DEBUG for a job it knows.
    for (auto rank : j.debug.at_exec) rank_waits_for_debugger(j, rank);
    if (j.live == 0) finish(nspace);
}

// A rank could not be spawned in time, or at all: nothing of the job survives, and the request
// gets the error.
void Launcher::abandon_launch(const std::string &nspace, int status, const std::string &error) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    for (auto &r : job.ranks) {
        if (r.pid > 0 && !r.reaped) {
            ::kill(r.pid, SIGKILL);
            ::waitpid(r.pid, nullptr, 0);
        }
        if (r.pidfd >= 0) {
            reactor().unwatch_fd(r.pidfd);
            ::close(r.pidfd);
        }
    }
    output_.discard(nspace);
    stdin_.forget(nspace);
    if (std::exchange(job.guarded, false)) settings_.watchdog->release(job.pgid);
    if (job.kill_timer) reactor().cancel(job.kill_timer);
    if (job.time_limit) reactor().cancel(job.time_limit);
    if (job.spawning->deadline) reactor().cancel(job.spawning->deadline);
    std::error_code ec;
    fs::remove_all(job.info.nsdir, ec);
    send("registry", msg::DeregisterNamespace{nspace});
    log().info("launch of {} failed: {}", nspace, error);
    if (job.is_part())
        report_not_started(job, status ? status : PMIX_ERROR, error);
    else if (!job.requester.empty())
        reply_error(job.spawning->request, status, error);
    const std::int64_t requester_pid = job.requester_pid;
    const std::string parent = job.parent;
    jobs_.erase(it);
    release_requester(requester_pid);
    leave_parent(parent, nspace);
    if (jobs_.empty() && on_idle_) std::exchange(on_idle_, nullptr)();
}

void Launcher::on_rank_exit(const std::string &nspace, std::size_t rank) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    Rank &r = job.ranks[rank];
    int st = 0;
    const pid_t got = ::waitpid(r.pid, &st, WNOHANG);
    if (got == 0) return;  // not yet
    reactor().unwatch_fd(r.pidfd);
    ::close(r.pidfd);
    r.pidfd = -1;
    r.reaped = true;
    --job.live;
    run_cleanup(r.cleanup, fmt::format("{}:{}", nspace, rank));
    int code = 0, sig = 0;
    if (got < 0) {
        log().error("waitpid({}) of {} rank {}: {}", r.pid, nspace, rank, strerror(errno));
        code = 1;
    } else if (WIFSIGNALED(st)) {
        sig = WTERMSIG(st);
    } else {
        code = WEXITSTATUS(st);
    }
    // Everything the rank wrote before it exited is in its pipes now: forward it first.
    output_.drain(nspace, static_cast<std::uint32_t>(rank));
    msg::ProcExit exit{nspace, static_cast<std::uint32_t>(rank), r.pid, code, sig};
    send("registry", exit);
    to_stream(job, exit);
    if ((sig || code) && !r.ending_on_request) {
        if (!job.recoverable)
            fail(job, sig ? 128 + sig : code, describe_exit(rank, r.pid, code, sig));
        else if (!job.status)  // the survivors go on; the job reports its first failure
            set_status(job, sig ? 128 + sig : code, describe_exit(rank, r.pid, code, sig), true);
    } else if (sig || code) {
        if (!job.requested_end)
            job.requested_end.emplace(
                sig ? 128 + sig : code,
                describe_exit(rank, r.pid, code, sig) +
                    (r.ended_by.empty() ? "" : ", as asked by " + r.ended_by));
    } else if (!r.initialized) {
        r.exited_unconnected = true;
    } else if (!r.finalized && job.live > 0 && !job.recoverable) {
        // As mpirun: a PMIx process that leaves without finalizing while the rest of its job
        // goes on is a failure (the others may wait for it forever).
        fail(job, 1,
             fmt::format("rank {} (pid {}) exited with status 0 without calling PMIx_Finalize "
                         "while the rest of the job runs",
                         rank, r.pid));
    }
    stdin_.rank_ended(nspace, static_cast<std::uint32_t>(rank));
    if (job.live == 0) finish(nspace);
}

// A rank that never reached the broker while others of its job did ran as a singleton (a
// libpmix other than zpmix's, or an environment it lost): said on the job's stderr, where
// `zpmix run` prints it, since its results were not the job's.
void Launcher::report_unconnected(Job &job) {
    if (std::none_of(job.ranks.begin(), job.ranks.end(),
                     [](const Rank &r) { return r.initialized; }))
        return;
    for (std::size_t i = 0; i < job.ranks.size(); ++i) {
        if (!job.ranks[i].exited_unconnected) continue;
        const std::string text = fmt::format(
            "zpmix: warning: rank {} of {} (pid {}) ended without connecting to its broker while "
            "other ranks of the job did: it ran as a singleton (did it load a libpmix other "
            "than zpmix's, or lose ZPMIX_URI from its environment?)\n",
            i, job.info.nspace, job.ranks[i].pid);
        log().info("{}", text.substr(0, text.size() - 1));
        const auto rank = static_cast<std::uint32_t>(i);
        to_stream(job, msg::Output{job.info.nspace, rank, 2, text,
                                   output_node(job.info, job.is_part(), rank)});
    }
}

void Launcher::run_cleanup(CleanupList &list, const std::string &whose) {
    if (list.empty()) return;
    std::vector<std::string> errors;
    list.run(errors);
    for (const auto &e : errors) log().warn("cleanup registered by {}: {}", whose, e);
}

void Launcher::fail(Job &job, int status, std::string message) {
    if (!job.status)
        set_status(job, status, std::move(message));
    else
        report_abort(job);
    if (job.terminating || job.live == 0) return;
    job.terminating = true;
    signal_ranks(job, SIGTERM);
    const std::string nspace = job.info.nspace;
    job.kill_timer =
        reactor().after(std::chrono::milliseconds(settings_.kill_grace_ms), [this, nspace] {
            auto it = jobs_.find(nspace);
            if (it == jobs_.end()) return;
            it->second.kill_timer = 0;
            signal_ranks(it->second, SIGKILL);
        });
}

// The job's first failure (or abort): its status and why. It is also the tree's, what the root's
// requester gets, if no job of the tree failed before.
void Launcher::set_status(Job &job, int status, std::string message, bool goes_on) {
    job.status = status;
    job.message = std::move(message);
    job.status_goes_on = goes_on;
    log().info("{}: {}", job.info.nspace, job.message);
    report_status(job);
    if (status != 0 && !job.ended_by_parent) {
        Job &root = root_of(job);
        if (!root.tree_status) root.tree_status = status;
    }
}

void Launcher::signal_ranks(Job &job, int sig) {
    if (job.pgid > 0) ::kill(-job.pgid, sig);
    // A rank may have left the job's process group; the others got it once, as under mpirun.
    for (const auto &r : job.ranks)
        if (!r.reaped && r.pid > 0 && (job.pgid <= 0 || ::getpgid(r.pid) != job.pgid))
            ::kill(r.pid, sig);
}

void Launcher::signal_tree(Job &job, int sig) {
    signal_ranks(job, sig);
    for (const auto &child : job.children) signal_tree(jobs_.at(child), sig);
}

void Launcher::finish(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    output_.drain(nspace);
    // What the ranks left running in the job's process group does not outlive the job.
    if (job.pgid > 0) ::kill(-job.pgid, SIGKILL);
    if (std::exchange(job.guarded, false)) settings_.watchdog->release(job.pgid);
    output_.close(nspace);
    if (job.kill_timer) reactor().cancel(job.kill_timer);
    if (job.time_limit) reactor().cancel(job.time_limit);
    job.kill_timer = job.time_limit = 0;
    stdin_.close(nspace);
    // A job ended by job control fails with who ended it. Not a part of a job across nodes: its
    // status tells the coordinator that the job failed, and would end the ranks of every node.
    if (!job.status && job.requested_end && !job.is_part())
        set_status(job, job.requested_end->first, std::move(job.requested_end->second));
    report_unconnected(job);
    for (std::size_t i = 0; i < job.ranks.size(); ++i)  // a rank not reaped (never spawned)
        run_cleanup(job.ranks[i].cleanup, fmt::format("{}:{}", nspace, i));
    run_cleanup(job.cleanup, nspace);
    std::error_code ec;
    fs::remove_all(job.info.nsdir, ec);
    const int status = job.status.value_or(0);
    log().info("{} ended with status {}", nspace, status);
    // After the job's last ProcExit, through the same registry: the actors see its ranks end,
    // then the job (events sends PMIX_EVENT_JOB_END to whoever asked).
    // A part's namespace stays until the job is over on every broker (its ranks' data may still be
    // read by the others).
    if (!job.is_part())
        send("registry", msg::DeregisterNamespace{nspace, true, status, job.message});
    job.ranks_over = true;
    // A job's end ends the jobs it spawned that still run, as in PRRTE, but those spawned with
    // PMIX_SPAWN_CHILD_SEP: the job is over (and `zpmix run` returns) once they end on their own.
    for (const auto &child : job.children) {
        Job &c = jobs_.at(child);
        if (c.ranks_over || c.child_sep) continue;
        c.ended_by_parent = true;
        fail(c, 128 + SIGTERM, fmt::format("its parent job {} ended", nspace));
    }
    conclude(nspace);
}

void Launcher::tell_monitors(const Job &job, std::int32_t code, std::string text,
                             std::int32_t status, std::int32_t signal) {
    if (job.is_part()) return;
    send("events", msg::JobLifecycle{job.info.nspace,
                                     code,
                                     {},
                                     status,
                                     signal,
                                     static_cast<std::uint32_t>(job.info.procs.size()),
                                     std::move(text)});
}

// A job is over once its ranks and the jobs it spawned are: the last message about it, and then
// its parent may be over too.
void Launcher::conclude(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    if (!job.ranks_over || !job.children.empty()) return;
    const int own = job.status.value_or(0);
    if (job.is_part()) {
        report_over(job);
        if (!job.part.forget_when_over) return;
        send("registry", msg::DeregisterNamespace{nspace, true, own, job.message});
    } else if (job.parent.empty()) {
        const int status = job.report_child_sep ? own : job.tree_status.value_or(own);
        to_requester(job, msg::JobEnded{nspace, status, job.message});
        tell_monitors(job, PMIX_EVENT_JOB_END, msg::job_ended_text(nspace, status, job.message),
                      status);
    } else {
        to_stream(job, msg::JobEnded{nspace, own, job.message});
        tell_monitors(job, PMIX_EVENT_JOB_END, msg::job_ended_text(nspace, own, job.message), own);
    }
    const std::int64_t requester_pid = job.requester_pid;
    const std::string parent = job.parent;
    stdin_.forget(nspace);
    jobs_.erase(it);
    release_requester(requester_pid);
    leave_parent(parent, nspace);
    if (jobs_.empty() && on_idle_) std::exchange(on_idle_, nullptr)();
}

void Launcher::leave_parent(const std::string &parent, const std::string &nspace) {
    if (parent.empty()) return;
    auto it = jobs_.find(parent);
    if (it == jobs_.end()) return;
    it->second.children.erase(nspace);
    conclude(parent);
}

Launcher::Job &Launcher::root_of(const Job &job) {
    const Job *j = &job;
    while (!j->parent.empty()) j = &jobs_.at(j->parent);  // a parent outlives its children
    return jobs_.at(j->info.nspace);
}

// Stops watching a requester that has no job left.
void Launcher::release_requester(std::int64_t pid) {
    for (const auto &[ns, j] : jobs_)
        if (j.requester_pid == pid) return;
    if (auto w = requesters_.find(pid); w != requesters_.end()) {
        reactor().unwatch_fd(w->second);
        ::close(w->second);
        requesters_.erase(w);
    }
}

void Launcher::watch_requester(std::int64_t pid) {
    // Our own process (an embedded broker) ends the jobs itself when it stops.
    if (pid <= 0 || pid == ::getpid() || requesters_.contains(pid)) return;
    const int fd = pidfd_open(static_cast<pid_t>(pid));
    if (fd < 0) {
        if (errno == ESRCH) return requester_died(pid);
        log().warn("cannot watch requester pid {}: {}", pid, strerror(errno));
        return;
    }
    requesters_[pid] = fd;
    reactor().watch_fd(fd, [this, pid] { requester_died(pid); });
}

void Launcher::requester_died(std::int64_t pid) {
    if (auto w = requesters_.find(pid); w != requesters_.end()) {
        reactor().unwatch_fd(w->second);
        ::close(w->second);
        requesters_.erase(w);
    }
    for (auto &[nspace, job] : jobs_) {
        if (job.requester_pid != pid) continue;
        job.requester.clear();
        fail(job, 128 + SIGTERM, fmt::format("its requester (pid {}) died", pid));
    }
}

}  // namespace zpmix
