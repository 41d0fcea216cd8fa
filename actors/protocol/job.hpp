#pragma once
// Jobs: what the launcher asks of a broker, what a broker knows of a namespace, and what it
// tells the launcher back. Shared by `zpmix run`, the broker's actors and the client library.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"
#include "actors/protocol/modex.hpp"  // Proc

namespace zpmix::msg {

// One rank's placement, recorded by the launcher and served as job-level information.
struct ProcInfo {
    std::uint32_t rank = 0;
    std::uint16_t local_rank = 0;
    std::uint16_t node_rank = 0;
    std::uint32_t node_id = 0;
    std::uint32_t app_num = 0;
    std::string hostname;
    std::string cpuset;    // hwloc bitmap list string ("0-1"), empty when unbound
    std::string locality;  // PMIx locality string ("SK0:L3ss0:L2s0:L1s0:CRs0:HTs0")
    std::int64_t pid = 0;
    ZPMIX_MSG_MAP(rank, local_rank, node_rank, node_id, app_num, hostname, cpuset, locality, pid);
};

// Everything a client learns at init: the namespace and every rank's placement.
struct JobInfo {
    std::string nspace;
    std::uint32_t size = 0;       // PMIX_JOB_SIZE
    std::uint32_t univ_size = 0;  // PMIX_UNIV_SIZE
    std::uint32_t max_procs = 0;  // PMIX_MAX_PROCS
    std::uint32_t num_apps = 1;
    std::string session_tmpdir;      // PMIX_TMPDIR
    std::string nsdir;               // PMIX_NSDIR; each rank's PMIX_PROCDIR is nsdir/<rank>
    std::vector<std::string> nodes;  // index = node id
    std::vector<ProcInfo> procs;     // index = rank
    std::map<std::string, std::vector<std::uint32_t>> psets;  // name -> ranks
    Proc parent = {};  // PMIX_PARENT_ID of a job PMIx_Spawn started; empty nspace otherwise
    // Where the job's whole-namespace fences meet (fence_board.hpp); empty: through the broker.
    std::string fence_board;
    bool recoverable = false;  // PMIX_JOB_RECOVERABLE: a rank's failure does not end the job
    // Debuggers (actors/launcher/debug_stop.hpp): PMIX_DEBUG_STOP_IN_INIT (every rank waits in
    // PMIx_Init for PMIX_DEBUGGER_RELEASE), PMIX_DEBUG_STOP_IN_APP (the application waits itself),
    // PMIX_DEBUG_STOP_ON_EXEC (every rank is stopped at its first instruction until the release),
    // and a debugger daemons' job's PMIX_DEBUG_TARGET (empty nspace: none).
    bool stop_in_init = false;
    bool stop_in_app = false;
    bool stop_on_exec = false;
    Proc debug_target = {};
    std::string program;  // its first app's program, for operators (`zpmix ps`)
    // What a host (a resource manager that embeds the server library) registered beyond the
    // fields above, as client/values/value_codec.hpp encodes an info array: job-level keys (with
    // this node's node-level ones), and each rank's. Clients answer Gets of them as of any job
    // information; the broker never reads them.
    Blob job_infos = {};
    std::map<std::string, Blob> proc_infos = {};  // by rank, in decimal
    // Node-level keys a host gave for nodes other than this one (PMIX_NODE_INFO_ARRAY, its
    // resources, inventories it delivered), by host name: a Get qualified by PMIX_HOSTNAME or
    // PMIX_NODEID reads them.
    std::map<std::string, Blob> node_infos = {};
    ZPMIX_MSG_MAP(nspace, size, univ_size, max_procs, num_apps, session_tmpdir, nsdir, nodes, procs,
                  psets, parent, fence_board, recoverable, stop_in_init, stop_in_app, stop_on_exec,
                  debug_target, program, job_infos, proc_infos, node_infos);
};

// What `zpmix run` runs in, which its ranks get (as mpirun's and srun's do) from a broker that is
// not its own process: its whole environment, its umask and its soft resource limits.
struct Limit {
    std::int32_t resource = 0;  // RLIMIT_*
    std::uint64_t soft = 0;     // RLIM_INFINITY for none
    ZPMIX_MSG_MAP(resource, soft);
};
struct Caller {
    bool given = false;  // false: the ranks get the broker's
    std::vector<std::string> environ;
    std::uint32_t umask = 022;
    std::vector<Limit> limits;
    ZPMIX_MSG_MAP(given, environ, umask, limits);
};

// The most ranks a job may have: PMIX_LOCAL_RANK is 16 bits.
constexpr std::uint32_t kMaxRanks = 65535;

// Which ranks read `zpmix run`'s stdin (Launch.stdin_target): a rank, or these.
constexpr std::int64_t kStdinNone = -1, kStdinAll = -2;

// One application of a job (a pmix_app_t; an MPMD `zpmix run`'s `-n N prog` between colons): a
// program and how many ranks run it. A job's ranks are numbered consecutively across its apps, in
// order; PMIX_APPNUM is the app's index.
struct App {
    std::string cmd;                // looked up in PATH (after prefix/bin) unless it has a '/'
    std::vector<std::string> argv;  // argv[0] included
    std::vector<std::string> env;   // "NAME=value" added to its ranks' environment
    std::string cwd;                // empty: the job's session directory if session_cwd, else
                                    // the broker's
    bool session_cwd = false;       // PMIX_SET_SESSION_CWD
    std::string prefix;             // PMIX_PREFIX: <prefix>/bin on PATH, <prefix>/lib on
                                    // LD_LIBRARY_PATH, first
    std::uint32_t np = 1;
    ZPMIX_MSG_MAP(cmd, argv, env, cwd, session_cwd, prefix, np);
};

// `zpmix run` -> broker: start a job. Answered by LaunchReply, then streamed Output and
// ProcExit messages and a final JobEnded, all addressed to the requester.
struct Launch {
    static constexpr const char *type = "job.launch";
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value" added to each rank's environment
    std::string cwd;
    std::uint32_t np = 1;
    std::string bind_to = "none";    // none | core | package | socket | numa | hwthread
    std::string map_by = "slot";     // slot | core
    std::vector<std::string> psets;  // PMIX_PSET_NAMES: each names the whole job
    double timeout_s = 0;            // 0: no limit
    bool personality_ompi = false;
    // The requester also takes the Output, ProcExit and JobEnded of the jobs its job spawns
    // (PMIx_Spawn), whose nspaces it has not launched; an older `zpmix run` does not say so,
    // and is sent nothing of them.
    bool follows_children = false;
    // PMIX_REPORT_CHILD_SEP: the final JobEnded's status is the job's own. Otherwise it is that of
    // the first job of the tree (the job or one it spawned) that failed, as the standard says.
    bool report_child_sep = false;
    Caller caller = {};
    std::int64_t stdin_target = kStdinNone;  // whose stdin Input feeds
    // PMIX_JOB_RECOVERABLE (`zpmix run --enable-recovery`): a rank that fails, or exits 0 without
    // PMIx_Finalize, does not end the job (its ranks run on; the job's status is still its first
    // failure's).
    bool recoverable = false;
    bool stop_in_init = false;  // `zpmix run --stop-in-init`: JobInfo.stop_in_init
    bool stop_on_exec = false;  // `zpmix run --stop-on-exec`: JobInfo.stop_on_exec
    // An MPMD job (`zpmix run -n 2 a : -n 1 b`, --app FILE): its apps, whose np add up to np and
    // whose ranks are numbered in order; an app without a cwd has `cwd`. argv is then the first
    // app's (what operators see). Empty: one app, argv on np ranks.
    std::vector<App> apps = {};
    // --merge-stderr-to-stdout: each rank's stderr is its stdout pipe (one stream, in its order).
    bool merge_stderr = false;
    ZPMIX_MSG_MAP(argv, env, cwd, np, bind_to, map_by, psets, timeout_s, personality_ompi,
                  follows_children, report_child_sep, caller, stdin_target, recoverable,
                  stop_in_init, stop_on_exec, apps, merge_stderr);
};

// `zpmix run` -> the root broker's launcher: the next piece of its stdin for the job's stdin ranks
// on the broker of tree rank `broker` (0 but across nodes), which the root's launcher passes on.
// Answered by InputTaken once written to their stdin (or dropped: the ranks are gone), so that
// `zpmix run` sends the next only then and nobody buffers more than one piece per sender (the
// pieces of several senders, `zpmix run` and the `iof` actor, are written in turn).
struct Input {
    static constexpr const char *type = "job.input";
    std::string nspace;
    std::uint32_t broker = 0;
    std::string data;
    bool eof = false;  // the last piece: their stdin is closed after it
    // Only these of the job's ranks on that broker (PMIx_IOF_push); empty: every stdin rank.
    // A rank named that does not read forwarded input is refused (PMIX_ERR_NOT_SUPPORTED).
    std::vector<std::uint32_t> ranks = {};
    ZPMIX_MSG_MAP(nspace, broker, data, eof, ranks);
};
struct InputTaken {
    static constexpr const char *type = "job.input_taken";
    std::int32_t status = 0;
    ZPMIX_MSG_MAP(status);
};

// Registry -> launcher: a rank of a job of this node connected (PMIx_Init) or called
// PMIx_Finalize; one that exits 0 in between fails its job (unless recoverable).
struct RankState {
    static constexpr const char *type = "job.rank_state";
    std::string nspace;
    std::uint32_t rank = 0;
    bool finalized = false;  // false: connected
    ZPMIX_MSG_MAP(nspace, rank, finalized);
};

// Client -> its launcher (a part's passes it on to the coordinator): the rank of a job started
// with PMIX_DEBUG_STOP_IN_INIT waits in PMIx_Init for PMIX_DEBUGGER_RELEASE (its handler is
// registered). Once every rank of the job does, PMIX_READY_FOR_DEBUG goes out. Answered by Ok.
// A part's launcher sends the same, unanswered, for a rank it stopped at exec
// (PMIX_DEBUG_STOP_ON_EXEC).
struct StoppedInInit {
    static constexpr const char *type = "job.stopped_in_init";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};
inline const Proc *acting_proc(const StoppedInInit &m) {
    return &m.proc;
}

// events -> launcher (internal, on every broker that publishes it): a PMIX_DEBUGGER_RELEASE
// event went out for these processes (its custom range, else its affected procs), so ranks
// stopped at exec for them go on (SIGCONT); ranks stopped in init hear the event themselves.
struct DebuggerReleased {
    static constexpr const char *type = "job.debugger_released";
    std::vector<Proc> procs;
    ZPMIX_MSG_MAP(procs);
};

// Client -> registry: PMIx_Finalize. Answered by Ok.
struct Finalize {
    static constexpr const char *type = "ns.finalize";
    std::int32_t unused = 0;
    ZPMIX_MSG_MAP(unused);
};

// `zpmix run` -> the root broker's job coordinator (`jobs`): a job whose ranks span the brokers
// of a tree. `nodes` are the job's nodes (node id = index), each served by a broker of the tree;
// node_of_rank[r] is rank r's node. Answered like a Launch (LaunchReply, streamed Output and
// ProcExit, a final JobEnded), or an ErrorReply. slots[n] is node n's slots in the allocation
// (absent: as many as the job's ranks there) and oversubscribe whether more may run there: the
// jobs its ranks spawn are mapped onto what is left. In a standing tree `zpmix run` may be on
// another broker, whose coordinator relays it to the root's, naming the requester ("@<broker>/
// <peer>") and its pid (watched by its broker's part of the job).
struct LaunchAcross {
    static constexpr const char *type = "job.launch_across";
    Launch launch;
    std::vector<std::string> nodes;
    std::vector<std::uint32_t> node_of_rank;
    std::vector<std::uint32_t> slots = {};
    bool oversubscribe = false;
    std::string requester = {};
    std::int64_t requester_pid = 0;
    // The allocation's nodes without ranks of the job (each with a broker) and their slots: the
    // jobs it spawns may go there.
    std::vector<std::string> spare_nodes = {};
    std::vector<std::uint32_t> spare_slots = {};
    ZPMIX_MSG_MAP(launch, nodes, node_of_rank, slots, oversubscribe, requester, requester_pid,
                  spare_nodes, spare_slots);
};

// Client or tool -> launcher: PMIx_Spawn. From a rank, a child job of the spawner's job; from a
// tool, a job of its own whose requester is the tool (it ends when the tool dies). Answered by
// LaunchReply once every rank is spawned, or an ErrorReply (PMIX_ERR_JOB_EXE_NOT_FOUND,
// PMIX_ERR_TIMEOUT...; then no rank of it is left). The child's Output, ProcExit and JobEnded go
// where its parent job's go (Launch.follows_children); it is terminated when its parent job fails.
struct Spawn {
    static constexpr const char *type = "job.spawn";
    Proc parent;  // the spawner, a rank of a job this broker launched
    std::vector<App> apps;
    std::vector<std::string> env;    // added to every app's environment (before App.env)
    bool notify_completion = false;  // PMIX_NOTIFY_COMPLETION: PMIX_EVENT_JOB_END to the parent
    double spawn_timeout_s = 0;      // PMIX_TIMEOUT, PMIX_SPAWN_TIMEOUT: every rank started by then
    double timeout_s = 0;            // PMIX_JOB_TIMEOUT: the job's time limit; 0: none
    std::string bind_to = "none";    // PMIX_BINDTO, as Launch
    std::string map_by = "slot";     // PMIX_MAPBY, PMIX_PPR: slot | core | node | ppr:N:node
    std::vector<std::string> hosts = {};      // PMIX_HOST, PMIX_HOSTFILE: only these hosts
    std::vector<std::string> add_hosts = {};  // PMIX_ADD_HOST, PMIX_ADD_HOSTFILE
    bool stop_in_init = false;                // PMIX_DEBUG_STOP_IN_INIT
    bool stop_in_app = false;                 // PMIX_DEBUG_STOP_IN_APP
    bool stop_on_exec = false;                // PMIX_DEBUG_STOP_ON_EXEC
    // PMIX_DEBUGGER_DAEMONS: the apps are debugger daemons of debug_target's job, placed beside
    // its ranks: daemons_per_node on each of its nodes, or daemons_per_proc per rank (0: unset).
    bool debugger_daemons = false;
    Proc debug_target = {};
    std::uint32_t daemons_per_node = 0, daemons_per_proc = 0;
    // A child job outlives its parent's normal end, as under ORTE and PRRTE, and is ended by its
    // parent's failure. PMIX_SPAWN_CHILD_SEP true: by neither (child_sep); false: by both
    // (ends_with_parent).
    bool child_sep = false;
    // PMIX_FWD_STDOUT, PMIX_FWD_STDERR from a tool: its output is kept for the tool's pull, also
    // once the job is over (msg::IofKeep).
    bool forward_output = false;
    bool ends_with_parent = false;
    ZPMIX_MSG_MAP(parent, apps, env, notify_completion, spawn_timeout_s, timeout_s, bind_to, map_by,
                  hosts, add_hosts, stop_in_init, stop_in_app, stop_on_exec, debugger_daemons,
                  debug_target, daemons_per_node, daemons_per_proc, child_sep, forward_output,
                  ends_with_parent);
};
inline const Proc *acting_proc(const Spawn &m) {
    return &m.parent;
}

// A part's launcher -> the root's coordinator: a Spawn whose parent job spans the brokers, laid out
// over the allocation's nodes and started there as parts. `env` is what the parent's ranks were
// given. Or a tool's Spawn on a broker of a tree (`tool`: its address, "@<broker>/<peer>", which
// gets the job's output and end; `tool_pid`: its process, whose death ends the job): the job's
// ranks go on the tool's node, debugger daemons beside their target's ranks on its nodes.
// Answered as the Spawn is (LaunchReply once every part started, or an ErrorReply).
struct SpawnAcross {
    static constexpr const char *type = "job.spawn_across";
    Spawn spawn;
    std::vector<std::string> env;
    std::string tool = {};
    std::int64_t tool_pid = 0;
    ZPMIX_MSG_MAP(spawn, env, tool, tool_pid);
};

struct LaunchReply {
    static constexpr const char *type = "job.launched";
    std::string nspace;
    std::vector<std::int64_t> pids;  // index = rank
    ZPMIX_MSG_MAP(nspace, pids);
};

// A line (or a chunk without newline at EOF) of a rank's stdout (fd 1) or stderr (fd 2).
struct Output {
    static constexpr const char *type = "job.output";
    std::string nspace;
    std::uint32_t rank = 0;
    std::uint8_t fd = 1;
    std::string data;       // whole lines, a piece of a line over 64 KiB, or the last bytes at EOF
    std::string node = {};  // the rank's node when its job spans nodes (`--tag-output`), else empty
    std::uint32_t broker = 0;  // the broker whose launcher read it: where its OutputAck goes
    ZPMIX_MSG_MAP(nspace, rank, fd, data, node, broker);
};

// A consumer of a job's output (the requester of its tree, `zpmix run`; the root's `iof`) has
// finished with `bytes` bytes of what `broker`'s launcher sent it of the job (cumulative, so a
// late or repeated ack is harmless). A launcher reads a job's pipes only while every consumer
// has less than the output window unacknowledged: a slow consumer makes the ranks wait on their
// pipes, nothing is dropped. Sent to the consumer's own launcher, which passes it on to
// `broker`'s, naming the consumer.
// A consumer acknowledges at the latest once it has finished with this much more of a flow's
// output; a launcher's window is at least twice as large, so an idle consumer never holds it.
constexpr std::uint64_t kOutputAckBytes = 256 * 1024;

struct OutputAck {
    static constexpr const char *type = "job.output_ack";
    std::string nspace;
    std::uint32_t broker = 0;
    std::uint64_t bytes = 0;
    std::string consumer = {};  // set by the launcher that passes it on; its sender otherwise
    ZPMIX_MSG_MAP(nspace, broker, bytes, consumer);
};

// A rank ended: exit_code when it exited, signal when a signal killed it.
struct ProcExit {
    static constexpr const char *type = "proc.exit";
    std::string nspace;
    std::uint32_t rank = 0;
    std::int64_t pid = 0;
    std::int32_t exit_code = 0;
    std::int32_t signal = 0;
    ZPMIX_MSG_MAP(nspace, rank, pid, exit_code, signal);
};

// The job is over; status is what `zpmix run` exits with (0, exit code, or 128+signal). Its
// requester gets it once the jobs it spawned are over too (their own JobEnded come before it);
// the broker's actors learn it from the registry (NamespaceEnded).
struct JobEnded {
    static constexpr const char *type = "job.ended";
    std::string nspace;
    std::int32_t status = 0;
    std::string message;  // why, when it did not end by itself (abort, timeout, signal)
    ZPMIX_MSG_MAP(nspace, status, message);
};

// The parts of a job spanning brokers: the coordinator (`jobs`, on the root broker) sends every
// broker's launcher its part (the ranks on that broker's node; none is a part too), each part
// reports to the coordinator, and the coordinator ends the parts. `requester` is where Output and
// ProcExit go ("@0/<routing id>" of `zpmix run`).
struct JobPart {
    static constexpr const char *type = "job.part";
    JobInfo job;  // every rank's node; placement and directories are each broker's own
    std::vector<App> apps;
    std::vector<std::string> env;
    std::string bind_to = "none", map_by = "slot";
    bool personality_ompi = false;
    std::string secret;
    std::string requester;
    // A spawned job's: the personality is each app's own (whether it links libmpi), and who gets
    // PMIX_EVENT_JOB_END (the spawner's broker tells it).
    bool personality_per_app = false;
    std::vector<Proc> notify_completion = {};
    std::int64_t stdin_target = kStdinNone;  // as Launch's
    bool recoverable = false;
    // A tool's job: the tool (which hears PMIX_READY_FOR_DEBUG; empty nspace: none). The
    // requester's pid (a tool's, a `zpmix run`'s), which the part on its broker watches: the job
    // ends with it.
    Proc debugger = {};
    std::int64_t requester_pid = 0;
    bool merge_stderr = false;  // as Launch's
    // A standing tree's launch: `zpmix run`'s environment, umask and limits, for the ranks of
    // every node (a spawned job's ranks get their parent's environment through `env`).
    Caller caller = {};
    ZPMIX_MSG_MAP(job, apps, env, bind_to, map_by, personality_ompi, secret, requester,
                  personality_per_app, notify_completion, stdin_target, recoverable, debugger,
                  requester_pid, merge_stderr, caller);
};
// launcher -> coordinator: the part's ranks are spawned (pids, by rank), or it failed (status,
// message; nothing of it is left but, when the job failed elsewhere meanwhile, its namespace until
// EndPart.finish; `ended`: its ranks that had started, killed, as PartStatus's).
struct PartLaunched {
    static constexpr const char *type = "job.part_launched";
    std::string nspace;
    std::uint32_t broker = 0;
    std::int32_t status = 0;
    std::string message;
    std::vector<std::pair<std::uint32_t, std::int64_t>> pids;
    std::map<std::string, std::uint32_t> ended = {};
    ZPMIX_MSG_MAP(nspace, broker, status, message, pids, ended);
};
// launcher -> coordinator: the part failed (a rank's abnormal end, PMIx_Abort: status and message,
// once), or is over (its ranks all ended; `ended`: how, "exited" or "killed" -> ranks). An over
// part whose ranks job control ended, and that did not fail, says so (on_request, with the first
// such end): the job's status if nothing failed. In a recoverable job a rank's failure ends
// nothing (goes_on): it is the job's status at its end.
struct PartStatus {
    static constexpr const char *type = "job.part_status";
    std::string nspace;
    std::uint32_t broker = 0;
    std::int32_t status = 0;
    std::string message;
    bool over = false;
    bool on_request = false;
    bool goes_on = false;
    std::map<std::string, std::uint32_t> ended = {};
    ZPMIX_MSG_MAP(nspace, broker, status, message, over, on_request, goes_on, ended);
};
// launcher -> the root's coordinator, when its broker is in the tree of a root again
// (tree.rejoined): the parts of jobs across the tree it holds, each with the job's info as its
// registry has it, its requester, and the part's state (as PartLaunched and PartStatus would
// have told it), so that a restarted root adopts the jobs that still run.
struct PartHeld {
    std::string nspace;
    JobInfo job;
    std::string requester;  // "@<broker>/<routing id>"
    bool started = false;   // every rank of the part was spawned
    std::vector<std::pair<std::uint32_t, std::int64_t>> pids;
    std::int32_t status = 0;  // its first failure, as PartStatus's (0: none)
    std::string message;
    bool goes_on = false, over = false, on_request = false;
    std::map<std::string, std::uint32_t> ended = {};
    ZPMIX_MSG_MAP(nspace, job, requester, started, pids, status, message, goes_on, over, on_request,
                  ended);
};
struct PartsHeld {
    static constexpr const char *type = "job.parts_held";
    std::uint32_t broker = 0;
    std::vector<PartHeld> parts;
    ZPMIX_MSG_MAP(broker, parts);
};
// coordinator -> every launcher: terminate the part's ranks (the job failed: status, message),
// or (finish) the job is over everywhere: forget it. A finish has the job's status and message,
// and its ranks by how they ended on every node (`states`, as msg::JobRow's): what each broker's
// `zpmix ps` shows of the finished job.
struct EndPart {
    static constexpr const char *type = "job.end_part";
    std::string nspace;
    std::int32_t status = 0;
    std::string message;
    bool finish = false;
    std::map<std::string, std::uint32_t> states = {};
    ZPMIX_MSG_MAP(nspace, status, message, finish, states);
};
// A part's launcher -> every launcher: deliver `signal` to the job's ranks (zpmix run forwards a
// signal to the root's part).
struct SignalParts {
    static constexpr const char *type = "job.signal_parts";
    std::string nspace;
    std::int32_t signal = 0;
    ZPMIX_MSG_MAP(nspace, signal);
};

// Deliver a signal to every live rank of a job (the launcher forwards its own SIGINT...).
struct SignalJob {
    static constexpr const char *type = "job.signal";
    std::string nspace;
    std::int32_t signal = 0;
    ZPMIX_MSG_MAP(nspace, signal);
};

// PMIx_Abort from a client: the launcher ends `procs` (none: the caller's whole namespace; a
// wildcard rank: that whole namespace) and the jobs they belong to fail with this status and
// message. Answered by Ok once the launcher has the request, or an ErrorReply: PMIX_ERR_NOT_FOUND
// for a namespace the broker does not know, PMIX_ERR_BAD_PARAM for a rank it does not have.
struct Abort {
    static constexpr const char *type = "ns.abort";
    std::int32_t status = 0;
    std::string message;
    std::vector<Proc> procs;
    ZPMIX_MSG_MAP(status, message, procs);
};

// Server -> launcher (and events): a connected client, rank `rank` of `nspace`, called PMIx_Abort
// (its Abort, identified and checked). targets as Abort.procs; empty: the caller's namespace.
struct AbortJob {
    static constexpr const char *type = "job.abort";
    std::string nspace;
    std::uint32_t rank = 0;
    std::int32_t status = 0;
    std::string message;
    std::vector<Proc> targets;
    ZPMIX_MSG_MAP(nspace, rank, status, message, targets);
};

// Launcher -> registry, which keeps the namespace table (namespace_table.hpp): a namespace exists
// (before its ranks start), a rank is spawned, a rank ended (ProcExit), the namespace is gone.
// The ranks are spawned one per reactor turn after it, so that the first ones are served while
// the last are started: each rank's pid is 0 until its RankSpawned.
struct RegisterNamespace {
    static constexpr const char *type = "ns.register";
    JobInfo job;
    std::string secret;
    std::vector<Proc> notify_completion = {};  // who gets PMIX_EVENT_JOB_END when it ends
    bool hosted = false;                       // a host registered it (NamespaceRecord::hosted)
    bool elsewhere = false;                    // ... with no rank here (NamespaceRecord)
    ZPMIX_MSG_MAP(job, secret, notify_completion, hosted, elsewhere);
};
struct RankSpawned {
    static constexpr const char *type = "ns.spawned";
    std::string nspace;
    std::uint32_t rank = 0;
    std::int64_t pid = 0;
    ZPMIX_MSG_MAP(nspace, rank, pid);
};
struct DeregisterNamespace {
    static constexpr const char *type = "ns.deregister";
    std::string nspace;
    bool ran = false;  // its ranks ran (not a launch that failed): the job ended with status
    std::int32_t status = 0;
    std::string message = {};  // as JobEnded's
    // A job across nodes: its ranks by how they ended on every node (EndPart.states). Empty: as
    // this node's table has them.
    std::map<std::string, std::uint32_t> states = {};
    ZPMIX_MSG_MAP(nspace, ran, status, message, states);
};

// Registry -> the actors that react to an end (broadcast), once the namespace table says so: a
// rank ended (its fences fail, its event goes out, its monitors stop...), the namespace ended
// (its data and sessions go).
struct ProcEnded {
    static constexpr const char *type = "ns.proc_ended";
    std::string nspace;
    std::uint32_t rank = 0;
    std::int32_t exit_code = 0;
    std::int32_t signal = 0;     // the signal that killed it, 0 when it exited
    std::string lost_with = {};  // lost with its node's broker (tree.lost): that node; no exit
    ZPMIX_MSG_MAP(nspace, rank, exit_code, signal, lost_with);
};
struct NamespaceEnded {
    static constexpr const char *type = "ns.ended";
    std::string nspace;
    bool ran = false;  // as DeregisterNamespace's, and its status and message
    std::int32_t status = 0;
    std::string message = {};
    std::vector<Proc> notify_completion = {};  // the table's: who gets PMIX_EVENT_JOB_END
    ZPMIX_MSG_MAP(nspace, ran, status, message, notify_completion);
};

// Client or tool -> registry: the job information of another namespace registered on this broker,
// for PMIx_Get of its job-level and per-process keys (the client caches it). Answered by
// JobInfoReply, or an ErrorReply: PMIX_ERR_NOT_FOUND for a namespace the broker does not know,
// PMIX_ERR_NO_PERMISSIONS for a peer without a session, or a tcp client asking for another job
// than its own (over tcp, its job's secret is all that vouches for a peer).
struct JobInfoQuery {
    static constexpr const char *type = "ns.query";
    std::string nspace;
    ZPMIX_MSG_MAP(nspace);
};
struct JobInfoReply {
    static constexpr const char *type = "ns.info";
    JobInfo job;  // never the job's secret
    ZPMIX_MSG_MAP(job);
};

}  // namespace zpmix::msg
