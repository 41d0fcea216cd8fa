#include "actors/registry/registry.hpp"

#include <unistd.h>

#include <set>

#include <pmix_common.h>

#include "actors/protocol/host_services.hpp"
#include "actors/registry/job_row.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

Registry::Registry(Reactor &reactor, Bus &bus, NamespaceTable &table, std::string broker_name,
                   std::string events_uri, std::uint64_t max_message)
    : Actor("registry", reactor, bus),
      table_(table),
      broker_name_(std::move(broker_name)),
      events_uri_(std::move(events_uri)),
      max_message_(max_message) {
    on(&Registry::hello, Access::anyone);
    on(&Registry::abort, Access::session);
    on(&Registry::finalize, Access::session);
    on(&Registry::job_info, Access::session | Access::operator_);
    on(&Registry::register_namespace, Access::internal);
    on(&Registry::rank_spawned, Access::internal);
    on(&Registry::proc_exit, Access::internal);
    on(&Registry::deregister_namespace, Access::internal);
    on(&Registry::tree_lost, Access::internal);
    on(&Registry::register_client, Access::internal);
    on(&Registry::deregister_client, Access::internal);
    on(&Registry::session_closed, Access::internal);
}

void Registry::hello(const Envelope &env, msg::Hello &m) {
    // A tcp peer subscribes to the events over tcp too (with the same keypair).
    msg::Welcome welcome{
        broker_name_, env.peer.tcp ? tcp_events_uri_ : events_uri_, {}, max_message_};
    if (m.role == "tool" || m.role == "launcher") {
        // A tool is a local peer of our uid (ZAP), or over tcp one that holds the broker's
        // keypair (its CURVE handshake proved it): the operator's credential there, as for
        // `zpmix ctl --broker tcp://`. A launcher starts processes with its caller's environment
        // and is watched by pid: on this node only.
        // Over ipc a broker may also admit a host's clients of another user (the server
        // library): they are clients, never tools or launchers, which act for the runtime.
        if (!env.peer.tcp && env.peer.uid >= 0 &&
            env.peer.uid != static_cast<std::int64_t>(::getuid())) {
            warn_peer(env,
                      "refused a {} of uid {} (pid {}): only the broker's uid acts for the runtime",
                      m.role, env.peer.uid, env.peer.pid);
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               "a tool or launcher must run as the broker's user");
        }
        if (env.peer.tcp && m.role == "launcher") {
            warn_peer(env, "refused a launcher over tcp (pid {})", m.pid);
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "a launcher must connect over ipc");
        }
        if (env.peer.tcp) log().info("a tool connected over tcp (its pid {} there)", m.pid);
        // The kernel names no pid for a process outside the broker's pid namespace: no launcher
        // the broker cannot watch. Such a tool is no rank of ours (ranks run inside it).
        if (env.peer.ipc && env.peer.pid <= 0 && m.role == "launcher") {
            warn_peer(env,
                      "refused a launcher outside the broker's pid namespace (its pid {} there)",
                      m.pid);
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               "a launcher must run in the broker's pid namespace (it is watched "
                               "by its pid)");
        }
        // A rank acts for itself (a client's rights, event_rights.hpp): its own process may not
        // act for the runtime as a tool or a launcher does.
        if (auto rank = launched_rank_of(env.peer.pid)) {
            warn_peer(env, "refused a {} session to pid {}: it is rank {} of {}", m.role,
                      env.peer.pid, rank->rank, rank->nspace);
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               fmt::format("this process is rank {} of {}: a rank's process may "
                                           "not open a {} session",
                                           rank->rank, rank->nspace, m.role));
        }
    } else if (m.role == "client") {
        const auto ns = table_.find(m.nspace);
        // Over tcp, an unknown namespace and a wrong secret get the same answer: a stranger
        // learns nothing of which jobs exist.
        if (env.peer.tcp && (!ns || m.secret != ns->secret)) {
            warn_peer(env, "refused a tcp client claiming {}.{}: {}", m.nspace, m.rank,
                      !ns                ? "no such namespace"
                      : m.secret.empty() ? "no job secret"
                                         : "wrong job secret");
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "unknown namespace or bad job secret");
        }
        if (!ns) {
            warn_peer(env, "hello from unknown namespace '{}' rank {} (pid {})", m.nspace, m.rank,
                      env.peer.pid);
            return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + m.nspace + "'");
        }
        if (m.rank >= ns->size())
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "rank " + std::to_string(m.rank) + " is not in " + m.nspace);
        if (ns->hosted) {
            welcome.job = ns->job_with_pids();
            return hosted_hello(env, m, *ns, welcome);
        }
        // A process of this node that claims a rank this broker launched must be that rank's
        // process (or run by it): a same-uid impostor gets no session at all.
        switch (ranks_.may_act_as(env.peer, ns.get(), m.rank)) {
            case LaunchedRanks::Verdict::allowed:
                break;
            case LaunchedRanks::Verdict::later:
                return ranks_.after_next_spawn(m.nspace,
                                               [this, env, m]() mutable { hello(env, m); });
            case LaunchedRanks::Verdict::refused:
                if (env.peer.ipc && env.peer.pid <= 0) {
                    warn_peer(
                        env,
                        "refused a process outside the broker's pid namespace (its pid {} there) "
                        "claiming {}:{}: the kernel gives no pid for it, nothing can be checked",
                        m.pid, m.nspace, m.rank);
                    return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                                       "this process runs outside the broker's pid namespace: "
                                       "it cannot be checked to be rank " +
                                           std::to_string(m.rank) + " of " + m.nspace);
                }
                warn_peer(env, "refused pid {}: it says it is {}:{}, which is pid {}", env.peer.pid,
                          m.nspace, m.rank, ns->pids[m.rank]);
                return reply_error(
                    env, PMIX_ERR_NO_PERMISSIONS,
                    "this process is not rank " + std::to_string(m.rank) + " of " + m.nspace);
        }
        welcome.job = ns->job_with_pids();  // its own pid and those of the ranks before it
    } else {
        return reply_error(env, PMIX_ERR_BAD_PARAM, "unknown role '" + m.role + "'");
    }
    log().debug("{} {}.{} connected (pid {})", m.role, m.nspace, m.rank, env.peer.pid);
    if (m.role == "client") send("launcher", msg::RankState{m.nspace, m.rank, false});
    const zmq::message_t bytes = encode(msg::Welcome::type, env.id, welcome, name());
    const char *data = static_cast<const char *>(bytes.data());
    msg::SessionOpen open{
        env.from,  m.role,    m.nspace, m.rank, msg::Blob(data, data + bytes.size()),
        m.release, m.features};
    if (m.role == "tool" && tools_to_host_)
        return send("hostsvc", msg::HostToolConnected{{m.nspace, m.rank},
                                                      m.pid,
                                                      env.peer.pid,
                                                      env.peer.uid,
                                                      env.peer.tcp,
                                                      std::move(open),
                                                      env.from,
                                                      env.id});
    send("broker", open);
}

std::optional<msg::Proc> Registry::launched_rank_of(std::int64_t pid) const {
    if (pid <= 0) return std::nullopt;  // unknown (tcp, an actor)
    for (const auto &[nspace, rec] : *table_.snapshot())
        for (std::uint32_t r = 0; r < rec->size(); ++r)
            if (rec->pids[r] == pid && !rec->ended(r)) return msg::Proc{nspace, r};
    return std::nullopt;
}

// Before the reply, so that the launcher knows it before it can see the rank end.
void Registry::finalize(const Envelope &env, msg::Finalize &) {
    if (!env.session || !env.session->is_client())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "finalize needs a client");
    if (auto ns = hosted_.find(env.session->nspace); ns != hosted_.end()) {
        if (auto c = ns->second.find(env.session->rank); c != ns->second.end()) {
            c->second.finalized = true;
            // The host answers the client once its client_finalized called back.
            return send("host",
                        msg::HostClientEnded{
                            {env.session->nspace, env.session->rank}, true, env.from, env.id});
        }
        return reply(env, msg::Ok{});
    }
    send("launcher", msg::RankState{env.session->nspace, env.session->rank, true});
    reply(env, msg::Ok{});
}

// A client aborts processes of its own job only (a tool ends other jobs with job control).
void Registry::abort(const Envelope &env, msg::Abort &m) {
    if (!env.session) return reply_error(env, PMIX_ERR_BAD_PARAM, "abort needs a client");
    const PeerSession &s = *env.session;
    for (const auto &p : m.procs) {
        if (p.nspace != s.nspace)
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               "a process may abort only processes of its own job");
        const auto ns = table_.find(p.nspace);
        if (!ns)
            return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + p.nspace + "'");
        if (p.rank != msg::kWildcardRank && p.rank >= ns->size())
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "rank " + std::to_string(p.rank) + " is not in " + p.nspace);
    }
    log().info("{}.{} calls PMIx_Abort (status {}) for {}", s.nspace, s.rank, m.status,
               m.procs.empty() ? "its namespace" : std::to_string(m.procs.size()) + " proc(s)");
    // A hosted job's processes are the host's to end: its abort upcall answers. The rest of the
    // job hears of the abort as under `zpmix run` (PMIX_ERR_PROC_REQUESTED_ABORT).
    if (const auto ns = table_.find(s.nspace); ns && ns->hosted) {
        send("events", msg::AbortJob{s.nspace, s.rank, m.status, m.message, m.procs});
        return send("host", msg::HostAbort{{s.nspace, s.rank},
                                           m.status,
                                           std::move(m.message),
                                           std::move(m.procs),
                                           env.from,
                                           env.id});
    }
    // launcher, events
    broadcast(msg::AbortJob{s.nspace, s.rank, m.status, m.message, std::move(m.procs)});
    reply(env, msg::Ok{});
}

void Registry::job_info(const Envelope &env, msg::JobInfoQuery &m) {
    if (env.tcp_client() && m.nspace != env.session->nspace) {
        warn_peer(env, "refused {}'s job information to a tcp client of {}", m.nspace,
                  env.session->nspace);
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                           "a tcp client may read only its own job's information");
    }
    const auto ns = table_.find(m.nspace);
    if (!ns) return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + m.nspace + "'");
    reply(env, msg::JobInfoReply{ns->job_with_pids()});
}

// --- the launcher's reports -------------------------------------------------------------------

void Registry::register_namespace(const Envelope &, msg::RegisterNamespace &m) {
    const std::string nspace = m.job.nspace;
    table_.add(std::move(m.job), std::move(m.secret), std::move(m.notify_completion), m.hosted,
               m.elsewhere);
    log().debug("namespace {} registered", nspace);
}

void Registry::rank_spawned(const Envelope &, msg::RankSpawned &m) {
    table_.spawned(m.nspace, m.rank, m.pid);
    ranks_.spawned(m.nspace);
}

// fence, modex, events, jobctl, monitor
void Registry::proc_exit(const Envelope &, msg::ProcExit &m) {
    if (table_.ended(m.nspace, m.rank, m.exit_code, m.signal))
        broadcast(msg::ProcEnded{m.nspace, m.rank, m.exit_code, m.signal});
}

// fence, modex, events, jobctl, monitor: the ranks still running on the lost nodes are over.
// (A broker that lost its parent stops with its own ranks, or, a standing tree's, waits for it
// to come back: the root, which ends the jobs, is beyond it; it reports nothing.)
void Registry::tree_lost(const Envelope &, msg::TreeLost &m) {
    if (m.parent || m.nodes.empty()) return;
    const std::set<std::string> nodes(m.nodes.begin(), m.nodes.end());
    const auto snapshot = table_.snapshot();
    for (const auto &[nspace, rec] : *snapshot)
        for (const auto &p : rec->job->procs)
            if (nodes.contains(p.hostname) && !rec->ended(p.rank) &&
                table_.ended(nspace, p.rank, 0, 0))
                broadcast(msg::ProcEnded{nspace, p.rank, 0, 0, p.hostname});
}

// fence, modex, events, jobctl, monitor, and the dispatcher (the job's sessions end); jobctl
// first gets the job's row (`zpmix ps`), which only the record still in the table has.
void Registry::deregister_namespace(const Envelope &, msg::DeregisterNamespace &m) {
    ranks_.gone(m.nspace);
    const auto ns = table_.find(m.nspace);
    if (!ns) return;
    if (m.ran) {
        msg::JobFinished finished{job_row(m.nspace, *ns)};
        finished.row.ended_us = unix_time_us();
        finished.row.status = m.status;
        finished.row.message = m.message;
        if (!m.states.empty()) finished.row.states = std::move(m.states);  // every node's ranks
        broadcast(finished);
    }
    table_.remove(m.nspace);
    if (auto h = hosted_.find(m.nspace); h != hosted_.end()) {
        for (const auto &[rank, c] : h->second) hosted_peers_.erase(c.peer);
        hosted_.erase(h);
    }
    log().debug("namespace {} deregistered", m.nspace);
    broadcast(msg::NamespaceEnded{m.nspace, m.ran, m.status, std::move(m.message),
                                  ns->notify_completion});
}

}  // namespace zpmix
