#pragma once
// Sessions: answers every peer's Hello, keeps the namespaces the launcher registers and which of
// their ranks are connected or gone, names a job's fence board (fence_board.hpp) in the Welcome
// of its ranks only (a process claiming another's rank fences through the broker, which refuses
// it), serves a namespace's job information to the other jobs'
// processes (JobInfoQuery), and turns a client's PMIx_Abort into the launcher's AbortJob.
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "actors/protocol/job.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/server/launched_ranks.hpp"

namespace zpmix {

class Server : public Actor {
  public:
    Server(Reactor &reactor, Bus &bus, std::string broker_name, std::string events_uri);

  private:
    struct Namespace {
        msg::JobInfo job;
        std::string secret;
        std::set<std::uint32_t> exited;
    };
    struct Session {
        std::string role;  // client | tool | launcher
        std::string nspace;
        std::uint32_t rank = 0;
    };

    std::string broker_name_;
    std::string events_uri_;
    std::map<std::string, Namespace> namespaces_;
    std::unordered_map<std::string, Session> sessions_;  // by routing id
    LaunchedRanks ranks_;  // a job's fence board is shown only to its own ranks

    void hello(const Envelope &env, msg::Hello &m);
    void abort(const Envelope &env, msg::Abort &m);
    void job_info(const Envelope &env, msg::JobInfoQuery &m);
    void register_namespace(const Envelope &env, msg::RegisterNamespace &m);
    void rank_spawned(const Envelope &env, msg::RankSpawned &m);
    void deregister_namespace(const Envelope &env, msg::DeregisterNamespace &m);
    void proc_exit(const Envelope &env, msg::ProcExit &m);
};

}  // namespace zpmix
