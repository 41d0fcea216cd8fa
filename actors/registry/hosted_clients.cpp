// The registry's side of a host (a resource manager embedding zpmix as its PMIx server library):
// the clients it registers, how they are admitted, and what the host hears of their end.
#include <pmix_common.h>

#include "actors/registry/registry.hpp"

namespace zpmix {

void Registry::register_client(const Envelope &, msg::RegisterClient &m) {
    hosted_[m.proc.nspace][m.proc.rank].uid = m.uid;
}

// The host forgets a client: one still connected has ended (as far as the broker can tell).
void Registry::deregister_client(const Envelope &, msg::DeregisterClient &m) {
    auto ns = hosted_.find(m.proc.nspace);
    if (ns == hosted_.end()) return;
    auto c = ns->second.find(m.proc.rank);
    if (c == ns->second.end()) return;
    if (!c->second.peer.empty()) hosted_peers_.erase(c->second.peer);
    ns->second.erase(c);
    if (table_.ended(m.proc.nspace, m.proc.rank, 0, 0))
        broadcast(msg::ProcEnded{m.proc.nspace, m.proc.rank, 0, 0});
}

// A hosted client's connection ended: the broker sees no process of it, so this is its end
// (abnormal unless it finalized first), which the host hears of too.
void Registry::session_closed(const Envelope &, msg::SessionClosed &m) {
    auto peer = hosted_peers_.find(m.peer);
    if (peer == hosted_peers_.end()) return;
    const msg::Proc proc = peer->second;
    hosted_peers_.erase(peer);
    bool finalized = false;
    if (auto ns = hosted_.find(proc.nspace); ns != hosted_.end())
        if (auto c = ns->second.find(proc.rank); c != ns->second.end()) {
            finalized = c->second.finalized;
            c->second.peer.clear();
        }
    if (!finalized) send("host", msg::HostClientEnded{proc, false, {}, 0});
    if (table_.ended(proc.nspace, proc.rank, finalized ? 0 : 1, 0))
        broadcast(msg::ProcEnded{proc.nspace, proc.rank, finalized ? 0 : 1, 0});
}

void Registry::hosted_hello(const Envelope &env, const msg::Hello &m, const NamespaceRecord &ns,
                            const msg::Welcome &welcome) {
    auto refuse = [&](const std::string &why) {
        warn_peer(env, "refused a client claiming {}.{} (pid {}): {}", m.nspace, m.rank,
                  env.peer.pid, why);
        reply_error(env, PMIX_ERR_NO_PERMISSIONS,
                    "this process is not rank " + std::to_string(m.rank) + " of " + m.nspace);
    };
    auto ns_clients = hosted_.find(m.nspace);
    if (ns_clients == hosted_.end() || !ns_clients->second.contains(m.rank))
        return refuse("the host did not register that client");
    HostedClient &c = ns_clients->second.at(m.rank);
    // Over ipc the kernel names the peer's uid; the job's secret (which only PMIx_server_setup_fork
    // hands out) proves the rest, as over tcp.
    if (!env.peer.tcp && env.peer.uid != static_cast<std::int64_t>(c.uid))
        return refuse("its uid is " + std::to_string(env.peer.uid) + ", not " +
                      std::to_string(c.uid));
    if (m.secret != ns.secret) return refuse(m.secret.empty() ? "no job secret" : "a wrong secret");
    if (!c.peer.empty()) return refuse("that rank is connected already");
    c.peer = env.from;
    c.finalized = false;
    hosted_peers_[env.from] = {m.nspace, m.rank};
    log().debug("client {}.{} connected (pid {}), to the host", m.nspace, m.rank, env.peer.pid);
    msg::Welcome hosted = welcome;
    hosted.hosted = true;
    const zmq::message_t bytes = encode(msg::Welcome::type, env.id, hosted, name());
    const char *data = static_cast<const char *>(bytes.data());
    send("host", msg::HostClientConnected{{m.nspace, m.rank},
                                          env.from,
                                          env.id,
                                          msg::SessionOpen{env.from, m.role, m.nspace, m.rank,
                                                           msg::Blob(data, data + bytes.size()),
                                                           m.release, m.features}});
}

}  // namespace zpmix
