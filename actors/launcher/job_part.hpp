#pragma once
// A launcher's part of a job across the brokers of a tree. The root's coordinator
// (job_coordinator.hpp) sends every broker's launcher the job's part on its node (msg::JobPart),
// which starts that node's ranks as any job's, but answers to the coordinator instead of a
// requester: it reports its start or its failure to start (PartLaunched), its first failure and
// its end (PartStatus); the coordinator ends it when the job failed elsewhere and tells it when
// the job is over everywhere (EndPart), and signals every part (SignalParts). TreePart is what the
// launcher's Job holds of that; the launcher's handlers and reports for it are in job_part.cpp.
//
// SpawnRelays: what a rank of such a job spawns goes to the coordinator (msg::SpawnAcross), which
// lays the child out across the allocation and starts its parts (jobs of their own on each
// launcher: the coordinator keeps the tree of jobs); so does a tool's spawn on a broker of a tree.
// The coordinator's answer goes to the spawner, or a timeout once the spawn's bound is over.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"

namespace zpmix {

struct TreePart {
    std::string coordinator;            // where it reports; empty: a job of this broker alone
    bool ended_by_coordinator = false;  // its status came from the coordinator
    bool abort_unreported = false;      // its status is an abort's, not told the coordinator yet
    bool reported_over = false;
    bool forget_when_over = false;  // the coordinator is done with it
    // How its ranks ended here ("exited", "killed" -> ranks), told the coordinator when over.
    std::map<std::string, std::uint32_t> ended;
    // The job's end as the coordinator concluded it (EndPart.finish): its status, message and
    // ranks by state on every node, which this broker's record of the job keeps.
    std::int32_t job_status = 0;
    std::string job_message;
    std::map<std::string, std::uint32_t> job_states;
};

class SpawnRelays {
  public:
    struct Wiring {
        // To the root's coordinator, as the launcher, with the relay's id.
        std::function<void(const msg::SpawnAcross &, std::uint64_t id)> pass_on;
        std::function<void(const Envelope &, const msg::LaunchReply &)> answer;
        std::function<void(const Envelope &, std::int32_t status, std::string why)> refuse;
        std::function<std::uint64_t()> relay_id;  // unique among the launcher's relays
    };
    SpawnRelays(Reactor &reactor, Wiring wiring);

    // Passes the spawn (`env` its request) to the coordinator, bounded: Spawn.spawn_timeout_s, or
    // as long as brokers take to boot, and a margin for the coordinator's verdict.
    void relay(const Envelope &env, msg::SpawnAcross m);
    // The coordinator's answer to the relay `env.id`, to its spawner.
    void answered(const Envelope &env, msg::LaunchReply &m);
    void refused(const Envelope &env, msg::ErrorReply &m);

  private:
    struct Relay {
        Envelope request;
        Reactor::TimerId timer = 0;
    };
    Reactor &reactor_;
    Wiring wiring_;
    std::map<std::uint64_t, Relay> relays_;  // by the id of the relay
};

}  // namespace zpmix
