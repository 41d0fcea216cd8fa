#include "actors/server/server.hpp"

#include <pmix_common.h>

namespace zpmix {

namespace {
// Messages the broker's own actors send each other; a peer that sends one is refused.
bool from_peer(const Envelope &env) {
    return env.peer.tcp || env.peer.uid >= 0;
}
}  // namespace

Server::Server(Reactor &reactor, Bus &bus, std::string broker_name, std::string events_uri)
    : Actor("server", reactor, bus),
      broker_name_(std::move(broker_name)),
      events_uri_(std::move(events_uri)) {
    on(&Server::hello);
    on(&Server::abort);
    on(&Server::job_info);
    on(&Server::register_namespace);
    on(&Server::rank_spawned);
    on(&Server::deregister_namespace);
    on(&Server::proc_exit);
}

void Server::hello(const Envelope &env, msg::Hello &m) {
    msg::Welcome welcome{broker_name_, events_uri_, {}};
    if (m.role == "tool" || m.role == "launcher") {
        // Tools and launchers act on this node's jobs: only local peers of our uid (ZAP).
        if (env.peer.tcp) {
            log().warn("refused a {} over tcp (pid {})", m.role, m.pid);
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               "a " + m.role + " must connect over ipc");
        }
    } else if (m.role == "client") {
        auto it = namespaces_.find(m.nspace);
        if (it == namespaces_.end()) {
            log().warn("hello from unknown namespace '{}' rank {} (pid {})", m.nspace, m.rank,
                       env.peer.pid);
            return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + m.nspace + "'");
        }
        if (env.peer.tcp && m.secret != it->second.secret) {
            log().warn("refused a tcp client claiming {}.{}: {} job secret", m.nspace, m.rank,
                       m.secret.empty() ? "no" : "wrong");
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "bad job secret");
        }
        if (m.rank >= it->second.job.size)
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "rank " + std::to_string(m.rank) + " is not in " + m.nspace);
        welcome.job = it->second.job;
        if (!welcome.job.fence_board.empty())
            switch (ranks_.may_act_as(env.peer, {m.nspace, m.rank})) {
                case LaunchedRanks::Verdict::allowed:
                    break;
                case LaunchedRanks::Verdict::later:
                    return ranks_.after_next_spawn(m.nspace,
                                                   [this, env, m]() mutable { hello(env, m); });
                case LaunchedRanks::Verdict::refused:
                    log().warn("pid {} says it is {}:{}; it fences through the broker",
                               env.peer.pid, m.nspace, m.rank);
                    welcome.job.fence_board.clear();
                    break;
            }
    } else {
        return reply_error(env, PMIX_ERR_BAD_PARAM, "unknown role '" + m.role + "'");
    }
    sessions_[env.from] = Session{m.role, m.nspace, m.rank};
    log().debug("{} {}.{} connected (pid {})", m.role, m.nspace, m.rank, env.peer.pid);
    reply(env, welcome);
}

// Over tcp a client may abort only processes of its own job: its job's secret is all that vouches
// for it. Over ipc it is of the broker's uid, as every job here is.
void Server::abort(const Envelope &env, msg::Abort &m) {
    auto it = sessions_.find(env.from);
    if (it == sessions_.end() || it->second.role != "client")
        return reply_error(env, PMIX_ERR_NOT_FOUND, "abort from a peer that is not a client");
    const Session &s = it->second;
    for (const auto &p : m.procs) {
        auto ns = namespaces_.find(p.nspace);
        if (ns == namespaces_.end())
            return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + p.nspace + "'");
        if (env.peer.tcp && p.nspace != s.nspace)
            return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                               "a tcp client may abort only its own job");
        if (p.rank != msg::kWildcardRank && p.rank >= ns->second.job.size)
            return reply_error(env, PMIX_ERR_BAD_PARAM,
                               "rank " + std::to_string(p.rank) + " is not in " + p.nspace);
    }
    log().info("{}.{} calls PMIx_Abort (status {}) for {}", s.nspace, s.rank, m.status,
               m.procs.empty() ? "its namespace" : std::to_string(m.procs.size()) + " proc(s)");
    // launcher, events
    broadcast(msg::AbortJob{s.nspace, s.rank, m.status, m.message, std::move(m.procs)});
    reply(env, msg::Ok{});
}

void Server::job_info(const Envelope &env, msg::JobInfoQuery &m) {
    auto s = sessions_.find(env.from);
    if (s == sessions_.end() || (s->second.role != "client" && s->second.role != "tool"))
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "job information needs a session");
    if (env.peer.tcp && m.nspace != s->second.nspace) {
        log().warn("refused {}'s job information to a tcp client of {}", m.nspace,
                   s->second.nspace);
        return reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                           "a tcp client may read only its own job's information");
    }
    auto ns = namespaces_.find(m.nspace);
    if (ns == namespaces_.end())
        return reply_error(env, PMIX_ERR_NOT_FOUND, "unknown namespace '" + m.nspace + "'");
    reply(env, msg::JobInfoReply{ns->second.job});
}

void Server::register_namespace(const Envelope &env, msg::RegisterNamespace &m) {
    if (from_peer(env)) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "internal message");
    const std::string nspace = m.job.nspace;
    ranks_.registered(m.job);
    namespaces_[nspace] = Namespace{std::move(m.job), std::move(m.secret), {}};
    log().debug("namespace {} registered", nspace);
}

// A rank's Welcome carries the pids of the ranks spawned so far: its own and every lower rank's.
void Server::rank_spawned(const Envelope &env, msg::RankSpawned &m) {
    if (from_peer(env)) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "internal message");
    auto it = namespaces_.find(m.nspace);
    if (it != namespaces_.end() && m.rank < it->second.job.procs.size())
        it->second.job.procs[m.rank].pid = m.pid;
    ranks_.spawned(m.nspace, m.rank, m.pid);
}

void Server::deregister_namespace(const Envelope &env, msg::DeregisterNamespace &m) {
    if (from_peer(env)) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "internal message");
    namespaces_.erase(m.nspace);
    ranks_.gone(m.nspace);
    std::erase_if(sessions_, [&](const auto &kv) { return kv.second.nspace == m.nspace; });
    log().debug("namespace {} deregistered", m.nspace);
}

void Server::proc_exit(const Envelope &env, msg::ProcExit &m) {
    if (from_peer(env)) return reply_error(env, PMIX_ERR_NO_PERMISSIONS, "internal message");
    if (auto it = namespaces_.find(m.nspace); it != namespaces_.end())
        it->second.exited.insert(m.rank);
}

}  // namespace zpmix
