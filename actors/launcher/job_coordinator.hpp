#pragma once
// JobCoordinator (`jobs`, on the root broker of a tree): runs a job whose ranks span the tree's
// brokers as mpirun runs one across its daemons. It lays the ranks out on their nodes (node ids,
// local and node ranks), registers the namespace on every broker, sends every broker's launcher
// its part (JobPart: the ranks of its node, maybe none), and answers `zpmix run` as the launcher
// answers a Launch: one LaunchReply once every part has started, then the parts' Output and
// ProcExit (which they send to `zpmix run` themselves, through the tree), then one JobEnded once
// every part is over.
//
// Invariants and limits:
// - The first failure anywhere (a part's rank ends abnormally, PMIx_Abort, the time limit, a lost
//   broker) is the job's status and message; every part is then told to terminate its ranks.
// - A part that cannot start fails the whole launch: every part is ended, `zpmix run` gets the
//   error (naming the node), nothing of the job is left. A part that gives up starting because the
//   job already failed is just over.
// - The job ends once every part is over (a lost broker's part counts as over, failed); the
//   parts then forget it (EndPart.finish), so its namespace leaves every broker at once.
// - A JobEnded comes after every Output of the job: each part reports its end after its last
//   output, on the same path through the tree.
// - Jobs a rank spawns (PMIx_Spawn) run on that rank's broker (the launcher's); not here.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/broker_map.hpp"

namespace zpmix {

class JobCoordinator : public Actor {
  public:
    JobCoordinator(Reactor &reactor, Bus &bus, const BrokerMap &brokers);

  private:
    struct Job {
        Envelope request;  // the LaunchAcross, answered once every part started
        std::string requester;
        std::uint32_t parts = 0;
        std::set<std::uint32_t> started, over;
        std::vector<std::int64_t> pids;  // by rank
        std::optional<std::int32_t> status;
        std::string message;
        Reactor::TimerId time_limit = 0;
        bool answered = false;  // the LaunchReply is sent
    };

    const BrokerMap &brokers_;
    std::map<std::string, Job> jobs_;  // by namespace

    void launch(const Envelope &env, msg::LaunchAcross &m);
    void part_launched(const Envelope &env, msg::PartLaunched &m);
    void part_status(const Envelope &env, msg::PartStatus &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);

    // The job's first failure: every part terminates its ranks.
    void fail(const std::string &nspace, Job &job, std::int32_t status, std::string message);
    void part_over(const std::string &nspace, std::uint32_t broker);
    void answer(const std::string &nspace, Job &job);
    std::string node_of(std::uint32_t broker) const;
};

}  // namespace zpmix
