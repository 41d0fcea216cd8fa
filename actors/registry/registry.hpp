#pragma once
// The namespace registry: keeps the node's namespace table (namespace_table.hpp) from the
// launcher's reports, judges every peer's Hello and opens the session of those it accepts
// (session.open to the broker's dispatcher, which forwards the Welcome), serves a namespace's job
// information to the other jobs' processes (ns.query), and turns a client's PMIx_Abort into the
// launcher's AbortJob.
//
// Invariants: it is the table's one writer; it tells the actors that react to a rank's or a
// job's end (ns.proc_ended, ns.ended) only after the table says so. A client that claims a rank
// this broker launched must be that rank's process or run by it (LaunchedRanks): an impostor of
// the same uid gets no session, so every later message of a client session is its own rank's.
// Nor may a launched rank's own process open a tool or launcher session (which act for the
// runtime, free of a client's rules): a rank is a client.
// The ranks of a lost broker's node (tree.lost) end here as if they had exited, without a status
// (ProcEnded.lost_with): what reacts to an end reacts to them on every broker.
// Under a host (the server library, hosted_clients.cpp): the host registers namespaces and their
// clients; a client is the process of the uid the host named that proves its job's secret, its
// connection goes to the host's client_connected upcall before its Welcome, its Finalize, end
// (its connection gone) and PMIx_Abort go to the host, and its end is what the broker sees of it.
#include <map>
#include <optional>
#include <string>

#include "actors/protocol/host.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/session.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/launched_ranks.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"

namespace zpmix {

class Registry : public Actor {
  public:
    Registry(Reactor &reactor, Bus &bus, NamespaceTable &table, std::string broker_name,
             std::string events_uri, std::uint64_t max_message);

    // The broker's tcp events endpoint, which tcp peers are told; before the reactor runs.
    void set_tcp_events_uri(std::string uri) { tcp_events_uri_ = std::move(uri); }
    // A broker a resource manager hosts: a tool's Hello that passed the checks goes to the host's
    // tool_connected upcall (`hostsvc`), which admits, names or refuses it; before the reactor
    // runs.
    void send_tools_to_host() { tools_to_host_ = true; }

  private:
    NamespaceTable &table_;
    std::string broker_name_;
    std::string events_uri_, tcp_events_uri_;
    std::uint64_t max_message_;  // told in the Welcome: a client refuses a larger commit itself
    bool tools_to_host_ = false;
    LaunchedRanks ranks_;  // a client claiming a launched rank must be its process
    // Hosted namespaces: the clients the host registered (uid by rank), kept from before their
    // namespace is (hosts register clients first), and the sessions of those connected.
    struct HostedClient {
        std::uint32_t uid = 0;
        bool finalized = false;
        std::string peer;  // its session's routing id, once connected
    };
    std::map<std::string, std::map<std::uint32_t, HostedClient>> hosted_;
    std::map<std::string, msg::Proc> hosted_peers_;  // routing id -> the client it is

    void hello(const Envelope &env, msg::Hello &m);
    void abort(const Envelope &env, msg::Abort &m);
    void finalize(const Envelope &env, msg::Finalize &m);
    void job_info(const Envelope &env, msg::JobInfoQuery &m);
    void register_namespace(const Envelope &env, msg::RegisterNamespace &m);
    void rank_spawned(const Envelope &env, msg::RankSpawned &m);
    void proc_exit(const Envelope &env, msg::ProcExit &m);
    void deregister_namespace(const Envelope &env, msg::DeregisterNamespace &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    // hosted_clients.cpp
    void register_client(const Envelope &env, msg::RegisterClient &m);
    void deregister_client(const Envelope &env, msg::DeregisterClient &m);
    void session_closed(const Envelope &env, msg::SessionClosed &m);
    // A hosted client's Hello: checked here (refused with a log line), then to the host.
    void hosted_hello(const Envelope &env, const msg::Hello &m, const NamespaceRecord &ns,
                      const msg::Welcome &welcome);
    // The launched rank (still running) whose process `pid` is, if any.
    std::optional<msg::Proc> launched_rank_of(std::int64_t pid) const;
};

}  // namespace zpmix
