// The launcher's handlers: what each message asks of it (launcher.hpp says what the launcher
// does). A job's life from its start to its end is job_lifecycle.cpp's; the debugger's handlers
// are in debug_stop.cpp, a part's in job_part.cpp.
#include "actors/launcher/launcher.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <pmix_common.h>

#include "actors/launcher/allocation.hpp"
#include "actors/protocol/host.hpp"

namespace zpmix {

Launcher::Launcher(Reactor &reactor, Bus &bus, Settings settings, const BrokerMap &brokers)
    : Actor("launcher", reactor, bus),
      settings_(std::move(settings)),
      brokers_(brokers),
      output_(reactor, bus, brokers, settings_.output_window_bytes,
              {.requester_of = [this](const std::string &nspace) { return follower_of(nspace); },
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
    on(&Launcher::tree_rejoined, Access::internal);
    on(&Launcher::register_cleanup, Access::session);
    on(&Launcher::spawn_answered, Access::internal);
    on(&Launcher::spawn_refused, Access::internal);
    on(&Launcher::input, Access::operator_ | Access::internal);
    on(&Launcher::input_relayed, Access::internal);
    on(&Launcher::rank_state, Access::internal);
    on(&Launcher::output_ack, Access::operator_ | Access::internal);
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
    std::filesystem::remove_all(settings_.run_dir + "/session", ec);
}

void Launcher::launch(const Envelope &env, msg::Launch &m) {
    // A launch gives the ranks its caller's environment and ends with the caller's pid: a
    // launcher of this node only (a tool over tcp spawns with PMIx_Spawn, which is refused too).
    if (env.peer.tcp) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "launch over tcp refused");
    Plan plan;
    std::string error;
    plan.apps = launch_apps(m, error);
    if (plan.apps.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, error);
    Job job;
    job.requester = env.from;
    job.requester_pid = env.peer.pid;
    job.follows_children = m.follows_children;
    job.report_child_sep = m.report_child_sep;
    job.info.recoverable = m.recoverable;
    plan.env = std::move(m.env);
    plan.bind_to = std::move(m.bind_to);
    plan.map_by = std::move(m.map_by);
    plan.psets = std::move(m.psets);
    plan.timeout_s = m.timeout_s;
    plan.personality_ompi = m.personality_ompi;
    plan.caller = std::move(m.caller);
    plan.stdin_target = m.stdin_target;
    plan.recoverable = m.recoverable;
    plan.merge_stderr = m.merge_stderr;
    job.info.stop_in_init = m.stop_in_init;
    job.info.stop_on_exec = m.stop_on_exec;
    start(env, std::move(job), std::move(plan));
}

// PMIx_Spawn: the spawner must be a running rank of a job of ours, whose tree the child joins.
void Launcher::spawn(const Envelope &env, msg::Spawn &m) {
    if (env.peer.tcp) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "spawn over tcp refused");
    if (env.session && !env.session->is_client()) {
        // A tool of a resource manager asks it, as under OpenPMIx: the host places and starts
        // its processes (debugger daemons beside their target) and names the job.
        if (settings_.host_spawns)
            return send("host", msg::HostSpawn{std::move(m), env.from, env.id});
        return tool_spawn(env, m);
    }
    if (m.debugger_daemons)
        return reply_error(env, PMIX_ERR_NOT_SUPPORTED, "only a tool co-launches debugger daemons");
    auto parent = jobs_.find(m.parent.nspace);
    if (parent == jobs_.end() && settings_.hosted)  // the host's job: the host spawns
        return send("host", msg::HostSpawn{std::move(m), env.from, env.id});
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
    job.ends_with_parent = m.ends_with_parent;
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

// A consumer finished with some of a job's output (RankOutput's window). `zpmix run` sends its
// acknowledgements to its own broker, which passes those of other brokers' output on, naming it.
void Launcher::output_ack(const Envelope &env, msg::OutputAck &m) {
    const auto view = brokers_.view();
    const bool from_broker = !env.session || env.session->role == PeerSession::Role::broker;
    std::string consumer = from_broker && !m.consumer.empty() ? m.consumer : env.from;
    if (m.broker == view->rank) return output_.acknowledged(consumer, m.nspace, m.bytes);
    if (from_broker || m.broker >= view->size()) {
        log().debug("output ack of {} for broker {} dropped: not ours to pass on", m.nspace,
                    m.broker);
        return;
    }
    m.consumer = remote_address(view->rank, consumer);
    send(remote_address(m.broker, name()), m);
}

// Whom a job's output streams to (besides the root's iof): the requester of its tree, when the
// tree's root is the job itself or follows the jobs it spawns. A tool that spawned a job pulls its
// output instead (PMIx_IOF_pull, kept for it by iof).
std::string Launcher::follower_of(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return {};
    const Job &root = root_of(it->second);
    if (&root != &it->second && !root.follows_children) return {};
    if (root.debug.debugger) return {};
    return root.requester;
}

}  // namespace zpmix
