#pragma once
// Sessions: judges every peer's Hello and opens the session of those it accepts (session.open to
// the broker's dispatcher, which forwards the Welcome); keeps the namespaces the launcher
// registers and which of their ranks are gone; serves a namespace's job information to the other
// jobs' processes (JobInfoQuery), and turns a client's PMIx_Abort into the launcher's AbortJob.
// A client that claims a rank this broker launched must be that rank's process or run by it
// (LaunchedRanks): an impostor of the same uid gets no session, so every later message of a
// client session is its own rank's.
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

    std::string broker_name_;
    std::string events_uri_;
    std::map<std::string, Namespace> namespaces_;
    LaunchedRanks ranks_;  // a client claiming a launched rank must be its process

    void hello(const Envelope &env, msg::Hello &m);
    void abort(const Envelope &env, msg::Abort &m);
    void job_info(const Envelope &env, msg::JobInfoQuery &m);
    void register_namespace(const Envelope &env, msg::RegisterNamespace &m);
    void rank_spawned(const Envelope &env, msg::RankSpawned &m);
    void deregister_namespace(const Envelope &env, msg::DeregisterNamespace &m);
    void proc_exit(const Envelope &env, msg::ProcExit &m);
};

}  // namespace zpmix
