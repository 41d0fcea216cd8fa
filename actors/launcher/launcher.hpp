#pragma once
// Starts jobs on this node the way mpirun does: places and binds each rank with hwloc, spawns it
// with the client environment, forwards its stdout/stderr in whole lines to the requester (paced
// by its consumers: rank_output.hpp), reaps it, and ends the job: on the first abnormal exit,
// PMIx_Abort, the time limit, the requester's death or the broker's shutdown, the remaining ranks
// get SIGTERM, then SIGKILL after the grace period. JobEnded comes last, after every Output and
// ProcExit of the job. The namespace is registered first and the ranks are spawned one per reactor
// turn, so the Hellos of the first ranks are answered while the last ones are started; the
// LaunchReply (with every pid) comes once all are spawned, before any Output or ProcExit.
//
// Jobs a rank spawns (PMIx_Spawn, msg::Spawn) are children of its job, launched the same way
// (on this node; a job spanning brokers spawns through the coordinator, below):
// their Output, ProcExit and JobEnded go to the requester of the job at the root of the tree
// (`zpmix run` prints them); they run on after their parent job's normal end, as under ORTE and
// PRRTE, and end with its failure (PMIX_SPAWN_CHILD_SEP says otherwise). A job is over, and its
// requester gets its JobEnded, once its ranks and all the jobs it spawned are.
//
// A job spanning the brokers of a tree comes as one part per broker from the root's coordinator
// (job_coordinator.hpp): the part starts the ranks of this node the same way, sends their Output
// and ProcExit to `zpmix run` through the tree, reports to the coordinator (started, failed,
// over) instead of answering a requester, and forgets the job when the coordinator says it is
// over everywhere (or terminates its ranks when the job failed elsewhere). A rank of such a job
// spawns across the allocation: its Spawn goes to the coordinator (msg::SpawnAcross), whose answer
// this launcher relays to the rank; the child's parts are jobs of their own here (the
// coordinator keeps the tree of jobs and ends a child with its failed parent).
//
// Where ranks run is Placement's (placement.hpp), what they are started with
// rank_environment.hpp's, how their processes start rank_process.hpp's; this actor owns the jobs,
// their tree and their processes. The tree (Job.parent, .children, .tree_status) stays here: each
// of its steps fails jobs or sends messages.
// Its other concerns have files of their own: the ranks' stdout and stderr (RankOutput,
// rank_output.hpp), their stdin (StdinForwarding, stdin_forwarding.hpp), a part of a job across
// brokers and the spawns relayed to the coordinator (TreePart, SpawnRelays, job_part.hpp), the
// ranks that stop for a debugger (DebugStop, debug_stop.hpp). launcher.cpp has the handlers,
// job_lifecycle.cpp a job's life from its start to its end.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/launcher/cleanup.hpp"
#include "actors/launcher/debug_stop.hpp"
#include "actors/launcher/job_part.hpp"
#include "actors/launcher/node_ranks.hpp"
#include "actors/launcher/placement.hpp"
#include "actors/launcher/rank_environment.hpp"
#include "actors/launcher/rank_output.hpp"
#include "actors/launcher/stdin_forwarding.hpp"
#include "actors/launcher/topology_writer.hpp"
#include "actors/launcher/watchdog.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class NamespaceTable;

class Launcher : public Actor {
  public:
    struct Settings {
        std::string run_dir;  // session directories go under <run_dir>/session
        std::string uri;      // the broker's ipc uri, given to ranks as ZPMIX_URI
        std::string node;     // this node, as jobs name it (ProcInfo.hostname)
        int kill_grace_ms = 2000;
        int client_write_timeout_ms = 30000;  // given to ranks as ZPMIX_WRITE_TIMEOUT_MS
        int group_timeout_ms = 300000;        // ... as ZPMIX_GROUP_TIMEOUT_MS
        Watchdog *watchdog = nullptr;         // told of each job's process group; may be null
        // A job's output unacknowledged by one of its consumers beyond which its pipes wait.
        std::size_t output_window_bytes = std::size_t{1} << 20;
        // Under a host (the server library): a spawn by a rank of a job the host started goes
        // to the host's spawn upcall (msg::HostSpawn).
        bool hosted = false;
        // Under a host with a spawn upcall: a tool's spawn goes there too (else this launcher
        // starts the tool's job itself).
        bool host_spawns = false;
        // Under a host: the broker's namespace table, where the jobs the host registered are
        // (their ranks stopping for a debugger are counted here: debug_stop.cpp). Else null.
        const NamespaceTable *namespaces = nullptr;
    };
    // The job status when a job exceeds Launch.timeout_s (as timeout(1) does).
    static constexpr int kTimeoutStatus = 124;

    Launcher(Reactor &reactor, Bus &bus, Settings settings, const BrokerMap &brokers);
    ~Launcher() override;

    // Reactor thread: refuses new launches, terminates every job and calls done once all are
    // reaped (or when the grace period and a margin are over, whatever is left).
    void shutdown(std::function<void()> done);
    // After the reactor stopped: removes <run_dir>/session.
    void remove_session_dir();

  private:
    struct Rank {
        pid_t pid = -1;  // -1 until spawned
        int pidfd = -1;
        bool reaped = false;
        bool ending_on_request = false;  // job control ended it: not a failure of the job
        std::string ended_by;            // who asked for it (SignalRanks.requested_by)
        bool initialized = false, finalized = false;  // PMIx_Init, PMIx_Finalize
        bool exited_unconnected = false;  // exited 0 without PMIx_Init through the broker
        CleanupList cleanup;              // what it registered for removal at its end
    };
    // What spawning the ranks one by one needs; dropped once the launch is answered.
    struct Spawning {
        // User-provided: clang 14 takes a nested struct with member initializers for not
        // default-constructible inside its enclosing class (std::optional<Spawning> in Job).
        Spawning() {}
        Envelope request;           // the Launch or Spawn, answered when the last rank is spawned
        std::vector<AppPlan> apps;  // by app number
        std::vector<Placement::Bitmap> sets;  // per rank; null when unbound
        Reactor::TimerId deadline = 0;        // Spawn.spawn_timeout_s
    };
    // A job to start, from a Launch or a Spawn.
    struct Plan {
        std::vector<msg::App> apps;
        std::vector<std::string> env;  // for every app, before the app's own
        std::string bind_to, map_by;
        std::vector<std::string> psets;
        double timeout_s = 0, spawn_timeout_s = 0;
        std::optional<bool> personality_ompi;  // nullopt: per app, whether it links libmpi
        std::vector<msg::Proc> notify_completion;
        msg::Caller caller;
        std::int64_t stdin_target = msg::kStdinNone;
        bool recoverable = false;
        std::string keep_output_for;  // a tool's peer: Spawn.forward_output (msg::IofKeep)
        bool merge_stderr = false;    // Launch.merge_stderr
    };
    struct Job {
        msg::JobInfo info;
        std::string requester;           // routing id; cleared when the requester is gone
        std::int64_t requester_pid = 0;  // watched for a launched job; 0 for a spawned one
        bool follows_children = false;   // Launch.follows_children
        bool report_child_sep = false;   // Launch.report_child_sep
        std::string parent;              // the job that spawned it; empty for a launched job
        std::set<std::string> children;  // the jobs it spawned that are not over
        std::vector<std::string> env;    // Plan.env, which the jobs it spawns inherit
        bool personality_ompi = false;   // given to every app: the jobs it spawns get it too
        msg::Caller caller;              // Plan.caller, which the jobs it spawns inherit too
        bool recoverable = false;        // Plan.recoverable
        bool merge_stderr = false;       // Plan.merge_stderr: its ranks' stderr is their stdout
        bool status_goes_on = false;     // `status` is a recoverable job's rank failure
        // The first end of a rank that job control asked for: the job's status and message when
        // nothing else failed it (`zpmix run` then says who ended it).
        std::optional<std::pair<int, std::string>> requested_end;
        pid_t pgid = 0;
        bool guarded = false;              // the watchdog knows its process group
        std::vector<Rank> ranks;           // every rank of the job; only `local` ones run here
        std::vector<std::uint32_t> local;  // the ranks on this node, ascending
        std::size_t spawned = 0;           // of `local`
        std::optional<Spawning> spawning;
        std::size_t live = 0;
        std::optional<int> status;  // set by the first failure
        std::string message;
        bool terminating = false;
        bool ranks_over = false;         // every rank is reaped; the job waits for its children
        bool ended_by_parent = false;    // terminated because its parent job ended: no failure
        bool child_sep = false;          // Spawn.child_sep: its parent's end does not end it
        bool ends_with_parent = false;   // Spawn.ends_with_parent: its parent's normal end does
        std::optional<int> tree_status;  // a launched job's: the first failure in its tree
        Reactor::TimerId kill_timer = 0, time_limit = 0;
        CleanupList cleanup;  // what its ranks registered for removal at its end here
        TreePart part;        // a part of a job spanning brokers: where it reports
        DebugStop debug;      // its ranks that stop for a debugger

        bool is_part() const { return !part.coordinator.empty(); }
    };

    Settings settings_;
    const BrokerMap &brokers_;
    Placement placement_;
    NodeRanks node_ranks_;             // of the jobs laid out here (a part's come laid out)
    TopologyWriter topology_;          // the node's topology file, for Open MPI's ranks
    std::map<std::string, Job> jobs_;  // by namespace
    std::map<std::string, HostedStop> hosted_stops_;  // the host's jobs stopping here, by nspace
    // Parts that gave up starting as their job failed elsewhere: their namespace stays until the
    // coordinator's EndPart.finish, as a part's does, and leaves with the job's end.
    std::set<std::string> gave_up_;
    std::map<std::int64_t, int> requesters_;  // pid -> pidfd of a requester we watch
    bool shutting_down_ = false;
    std::function<void()> on_idle_;
    std::uint64_t next_relay_ = 1;  // the id of a spawn or an Input relayed to another broker
    RankOutput output_;
    StdinForwarding stdin_;
    SpawnRelays spawn_relays_;

    // Handlers (launcher.cpp; the debugger's in debug_stop.cpp, a part's in job_part.cpp).
    void launch(const Envelope &env, msg::Launch &m);
    void spawn(const Envelope &env, msg::Spawn &m);
    // PMIx_Spawn from a tool: a job of its own (debugger daemons beside their target's ranks).
    void tool_spawn(const Envelope &env, msg::Spawn &m);
    // A Spawn onto this node alone: every host it names must be this one.
    std::string check_local_spawn(msg::Spawn &m, std::int32_t &status) const;
    void stopped_in_init(const Envelope &env, msg::StoppedInInit &m);
    // PMIX_DEBUGGER_RELEASE: the ranks stopped at exec for it go on.
    void debugger_released(const Envelope &env, msg::DebuggerReleased &m);
    void signal_job(const Envelope &env, msg::SignalJob &m);
    void signal_job_ranks(const Envelope &env, msg::SignalRanks &m);
    void abort_job(const Envelope &env, msg::AbortJob &m);
    void part(const Envelope &env, msg::JobPart &m);
    void end_part(const Envelope &env, msg::EndPart &m);
    void signal_parts(const Envelope &env, msg::SignalParts &m);
    // This broker is in the tree of a root again (a standing tree's, maybe restarted): the parts
    // it holds go to the root's coordinator (msg::PartsHeld), which adopts their jobs.
    void tree_rejoined(const Envelope &env, msg::TreeRejoined &m);
    void register_cleanup(const Envelope &env, msg::RegisterCleanup &m);
    void spawn_answered(const Envelope &env, msg::LaunchReply &m);
    void spawn_refused(const Envelope &env, msg::ErrorReply &m);
    void input(const Envelope &env, msg::Input &m);
    void input_relayed(const Envelope &env, msg::InputTaken &m);
    void rank_state(const Envelope &env, msg::RankState &m);
    void output_ack(const Envelope &env, msg::OutputAck &m);
    std::string follower_of(const std::string &nspace);

    // A job's life (job_lifecycle.cpp).
    void start(const Envelope &env, Job job, Plan plan);
    // Places, registers and starts spawning this node's ranks of a job whose info (nodes, ranks)
    // is laid out.
    void begin(const Envelope &env, Job job, Plan plan, std::string secret);
    void spawn_next(const std::string &nspace);
    std::string spawn_rank(Job &job, std::size_t i, int &status);
    void launched(const std::string &nspace);
    // Kills what was started of a launch and forgets it; its namespace too, unless `keep_namespace`
    // (a part that gives up as its job failed elsewhere: gave_up_).
    void abandon_launch(const std::string &nspace, int status, const std::string &error,
                        bool keep_namespace = false);
    void on_rank_exit(const std::string &nspace, std::size_t rank);
    void report_unconnected(Job &job);
    void run_cleanup(CleanupList &list, const std::string &whose);
    void fail(Job &job, int status, std::string message);
    // goes_on: a recoverable job's rank failure, which ends nothing else.
    void set_status(Job &job, int status, std::string message, bool goes_on = false);
    void kill_later(const std::string &nspace, std::vector<std::uint32_t> ranks,
                    std::chrono::milliseconds grace);
    void signal_ranks(Job &job, int sig);
    void signal_tree(Job &job, int sig);
    void finish(const std::string &nspace);
    void conclude(const std::string &nspace);
    // A step of a job's life for monitors (msg::JobLifecycle); a part's steps are its
    // coordinator's to tell, not its launcher's.
    void tell_monitors(const Job &job, std::int32_t code, std::string text, std::int32_t status = 0,
                       std::int32_t signal = 0);
    void leave_parent(const std::string &parent, const std::string &nspace);
    Job &root_of(const Job &job);  // the launched job at the top of its tree
    void watch_requester(std::int64_t pid);
    void release_requester(std::int64_t pid);
    void requester_died(std::int64_t pid);
    template <class Msg>
    void to_requester(const Job &job, const Msg &m) {
        if (!job.requester.empty()) send(job.requester, m);
    }
    // Output, ProcExit and a spawned job's JobEnded: to the requester of the tree's root, if it
    // follows the jobs its job spawns.
    template <class Msg>
    void to_stream(const Job &job, const Msg &m) {
        const Job &root = root_of(job);
        if (&root == &job || root.follows_children) to_requester(root, m);
    }

    // A rank waits for its debugger (in init, or stopped at exec): once all do, the
    // PMIX_READY_FOR_DEBUG event (a job across nodes: counted on the root broker). debug_stop.cpp.
    void rank_waits_for_debugger(Job &job, std::uint32_t rank);
    // A rank of a job the host registered waits in PMIx_Init (Settings::namespaces): counted with
    // the job's other ranks on this node. debug_stop.cpp.
    void hosted_rank_waits(const Envelope &env, const msg::Proc &proc);

    // What a part tells its coordinator (job_part.cpp): it could not start (status, why), it
    // started (every pid of its ranks), its first failure, the abort's status once a named rank's
    // end fails it, its end.
    // `ended`: its ranks that had started, killed as it gave up ("killed" -> ranks).
    void report_not_started(const Job &job, std::int32_t status, const std::string &why,
                            std::map<std::string, std::uint32_t> ended = {});
    void report_started(const Job &job);
    void report_status(const Job &job);
    void report_abort(Job &job);
    void report_over(Job &job);
};

}  // namespace zpmix
