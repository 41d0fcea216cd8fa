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
//   parts then forget it (EndPart.finish), so its namespace leaves every broker at once, each
//   keeping the job's status and how its ranks ended on every node (the parts' PartStatus.ended,
//   a lost broker's ranks unreachable) for `zpmix ps`.
// - A JobEnded comes after every Output of the job: each part reports its end after its last
//   output, on the same path through the tree.
// - In a standing tree (a site's service, BrokerView.standing) only the brokers that joined get
//   parts; a job on a node whose broker is not up is refused, naming it. `zpmix run` may be on
//   any broker: a launch on another is relayed here, and the job's output and end go to its
//   `zpmix run` there, whose broker's part watches it (the job ends with it).
// - A tool's spawn on a broker of the tree comes here too (SpawnAcross.tool): its job runs on the
//   tool's node, or, debugger daemons, beside their target's ranks on the target's nodes; it is
//   a tree of its own whose output and end go to the tool. So every job of a tree is laid out
//   here, and node ranks count them all.
// - A rank of such a job spawns through here (SpawnAcross): the child is mapped onto the launched
//   job's allocation (its nodes and their slots, less what the jobs of the allocation use;
//   PMIX_HOST restricts, PMIX_MAPBY chooses, a host outside it is refused), started as parts as
//   a launched job is, and answered to the spawner once every part started, or failed (naming the
//   node) when one could not start within the spawn's bound. Its Output, ProcExit and JobEnded go
//   to the launched job's requester; it runs on after its parent job's normal end and is ended by
//   its failure (PMIX_SPAWN_CHILD_SEP says otherwise), and a job is over only once the jobs it
//   spawned are.
// - A standing tree's root that starts again (its service restarted it) knows no job: each
//   broker that rejoins tells it the parts it holds (PartsHeld, job_adoption.cpp), and it adopts
//   their jobs, which then end here as any job does. A job's ranks on the root's node went with
//   the root: it fails as a job that lost a broker does; so does one whose requester was there.
//   A job's parts with ranks that have not told it within kAdoptBound are counted lost. An adopted
//   job keeps no time limit, and a job it spawned is adopted as a job of its own.
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/launcher/allocation.hpp"
#include "actors/launcher/node_ranks.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class JobCoordinator : public Actor {
  public:
    JobCoordinator(Reactor &reactor, Bus &bus, const BrokerMap &brokers);

  private:
    struct Job {
        std::string nspace;
        Envelope request;  // the LaunchAcross, answered once every part started
        std::string requester;
        std::uint32_t parts = 0;
        std::set<std::uint32_t> brokers;  // where its parts are: every broker up at its start
        std::set<std::uint32_t> started, over;
        std::vector<std::int64_t> pids;  // by rank
        std::optional<std::int32_t> status;
        std::string message;
        // The first part's end by job control (PartStatus.on_request): the status if none failed.
        std::optional<std::pair<std::int32_t, std::string>> requested_end;
        // A recoverable job's first rank failure (PartStatus.goes_on): its status at its end.
        std::optional<std::pair<std::int32_t, std::string>> first_failure;
        Reactor::TimerId time_limit = 0;
        bool answered = false;  // the LaunchReply is sent
        // The tree of jobs: a spawned job's parent, the jobs a job spawned that are not over.
        std::string parent;
        std::set<std::string> children;
        bool ended_by_parent = false;    // ended because its parent job is over: no failure
        bool child_sep = false;          // Spawn.child_sep: its parent's end does not end it
        bool ends_with_parent = false;   // Spawn.ends_with_parent: its parent's normal end does
        std::vector<std::string> nodes;  // its nodes, by node id
        std::map<std::string, std::uint32_t> ranks_on;  // its ranks on each node
        // How its ranks ended, by the parts over (PartStatus.ended) and the brokers lost.
        std::map<std::string, std::uint32_t> states;
        bool tool = false;  // a tool's job: the top of its tree, ended with the tool
        // A launched job's: its allocation (nodes, slots), and its tree's first failure.
        std::vector<alloc::Host> hosts;
        bool oversubscribe = false, report_child_sep = false;
        std::optional<std::int32_t> tree_status;
        Reactor::TimerId start_deadline = 0;  // a spawned job's: every part started by then
        // Rebuilt from its parts by a restarted root (PartsHeld): the brokers that told it, and
        // by when the others must have.
        bool adopted = false;
        std::set<std::uint32_t> reported;
        Reactor::TimerId adopt_deadline = 0;
    };
    // How a job ended, kept a while for a part that tells a restarted root of it late.
    struct Ended {
        std::int32_t status = 0;
        std::string message;
        std::map<std::string, std::uint32_t> states;
    };
    static constexpr std::size_t kEndedKept = 256;
    static constexpr std::chrono::seconds kAdoptBound{30};

    // A launch relayed to the root's coordinator (a standing tree's), by its id there.
    struct Relay {
        Envelope request;
        Reactor::TimerId timer = 0;
    };
    static constexpr std::chrono::seconds kRelayBound{30};

    const BrokerMap &brokers_;
    std::map<std::string, Job> jobs_;  // by namespace
    std::set<std::uint32_t> joined_;   // a standing tree's brokers up (tree.joined, tree.lost)
    std::map<std::uint64_t, Relay> relays_;
    std::uint64_t next_relay_ = 1;
    NodeRanks node_ranks_;                // of every job of the tree
    std::map<std::string, Ended> ended_;  // the last kEndedKept jobs' ends, by namespace
    std::deque<std::string> ended_order_;

    void launch(const Envelope &env, msg::LaunchAcross &m);
    void part_launched(const Envelope &env, msg::PartLaunched &m);
    void part_status(const Envelope &env, msg::PartStatus &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void tree_joined(const Envelope &env, msg::TreeJoined &m);
    // A rejoining broker's parts (job_adoption.cpp): their jobs adopted, or told they are over.
    void parts_held(const Envelope &env, msg::PartsHeld &m);
    void adopt(std::uint32_t broker, msg::PartHeld &p);
    Job &adopted_job(msg::PartHeld &p, std::uint32_t broker);
    // The adopted job's parts with ranks that have not told it by now are lost.
    void adoption_over(const std::string &nspace);
    // The part of `broker` is lost with its ranks (tree.lost, or never told a restarted root).
    void part_lost(const std::string &nspace, std::uint32_t broker);
    void relay_launch(const Envelope &env, msg::LaunchAcross &m);
    void relay_answered(const Envelope &env, msg::LaunchReply &m);
    void relay_refused(const Envelope &env, msg::ErrorReply &m);
    // The brokers up, ascending: every broker of a tree its root booted; of a standing tree, the
    // root and those that joined.
    std::vector<std::uint32_t> brokers_up() const;
    // Where a job's parts go (every broker up), or why not (a node's broker is not up).
    std::string place_parts(Job &job, const std::vector<std::string> &nodes);
    void send_parts(const Job &job, const msg::JobPart &part);
    void spawn(const Envelope &env, msg::SpawnAcross &m);
    void tool_spawn(const Envelope &env, msg::SpawnAcross &m);
    // The number of ranks of a spawn's apps (np), or why it is not one.
    static std::string spawn_size(const msg::Spawn &s, std::uint32_t &np);
    Job &start_spawned(const Envelope &env, msg::Spawn &s, const alloc::Allocation &a,
                       msg::JobPart part, const std::string &requester);

    // The job's first failure: every part terminates its ranks.
    void fail(const std::string &nspace, Job &job, std::int32_t status, std::string message);
    void tree_failed(Job &job, std::int32_t status);
    void part_over(const std::string &nspace, std::uint32_t broker);
    void answer(const std::string &nspace, Job &job);
    // Every part is over: the job ends, once the jobs it spawned are over (they are ended first).
    void conclude(const std::string &nspace);
    // Forgets the job; its parent may then be over.
    void erase_job(const std::string &nspace);
    void limit_time(const std::string &nspace, Job &job, double seconds);
    Job &root_of(Job &job);  // the launched job at the top of its tree
    // Which hosts a spawned job's ranks go on, or why none (status).
    alloc::Result<alloc::Allocation> map_spawn(Job &root, const msg::Spawn &s, std::uint32_t np,
                                               std::int32_t &status);
    std::string node_of(std::uint32_t broker) const;
};

}  // namespace zpmix
