#pragma once
// Job control (PMIx_Job_control, RFC0015) and the operators' `zpmix ctl|ps|preempt`: what clients
// and tools ask the broker's `jobctl` actor, and what it asks the launcher (which owns the
// processes and is the only one to signal them).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc

namespace zpmix::msg {

// Client or tool -> jobctl: one job-control operation. Answered by JobControlReply (granted or
// not, and why), or an ErrorReply for a malformed request.
struct JobControl {
    static constexpr const char *type = "jctl.request";
    Proc requester;             // the calling process; empty nspace: a tool
    std::vector<Proc> targets;  // empty: the requester's whole namespace
    // pause | resume | kill | terminate | signal | checkpoint | cancel | preemptible |
    // checkpoint_method | restart | provision | provision_image
    std::string action;
    std::int32_t signal = 0;       // signal: the signal number
    std::string id;                // PMIX_JOB_CTRL_ID: names this request (for cancel)
    std::string cancel_id;         // cancel: the request to cancel; empty: all the requester's
    bool preemptible = true;       // preemptible: the mark's value
    std::int32_t ckpt_signal = 0;  // checkpoint_method: a signal, or
    bool ckpt_event = false;       //   the PMIX_JCTRL_CHECKPOINT event
    std::uint32_t timeout_ms = 0;  // checkpoint: how long to wait for completion (0: default)
    std::string value;  // restart: the checkpoint id; provision: the nodes; provision_image: it
    ZPMIX_MSG_MAP(requester, targets, action, signal, id, cancel_id, preemptible, ckpt_signal,
                  ckpt_event, timeout_ms, value);
};

struct JobControlReply {
    static constexpr const char *type = "jctl.reply";
    std::int32_t status = 0;     // PMIX_SUCCESS when granted and done, else why not
    std::string message;         // what was done, or why not
    std::vector<Proc> affected;  // the processes acted on
    Blob results;                // a hosting resource manager's job_control results (infos)
    ZPMIX_MSG_MAP(status, message, affected, results);
};
// PMIx_Job_control's results (and its _nb callback's info): one info of this key per operation
// the broker answered, in order, holding its message (a string), also when refused: the standard
// returns a status only, and `zpmix ctl` prints why. A hosting resource manager's results follow
// them, as its job_control upcall gave them.
inline constexpr const char *kJobControlMessageKey = "zpmix.jctrl.msg";

// Tool -> jobctl (`zpmix preempt`): warn a preemptible job with PMIX_JCTRL_PREEMPT_ALERT, give it
// grace_ms, then terminate it. Answered by JobControlReply once the alert went out.
struct Preempt {
    static constexpr const char *type = "jctl.preempt";
    std::string nspace;
    std::uint32_t grace_ms = 1000;
    ZPMIX_MSG_MAP(nspace, grace_ms);
};

// Tool -> jobctl (`zpmix ps`): the process table of one job (empty: every job), every rank
// wherever it runs: the broker asks the others of its tree for theirs (`node_only`).
struct ProcTableQuery {
    static constexpr const char *type = "jctl.ps";
    std::string nspace;
    bool node_only = false;  // only the ranks running on this broker's node
    ZPMIX_MSG_MAP(nspace, node_only);
};
struct ProcRow {
    std::string nspace;
    std::uint32_t rank = 0;
    std::string host;
    std::int64_t pid = 0;
    std::string state;  // running | paused | exited | killed | unreachable (its broker is lost)
    std::int32_t exit_code = 0;
    std::int32_t signal = 0;
    std::string executable;  // the running process's (/proc/<pid>/exe); empty once it ended
    ZPMIX_MSG_MAP(nspace, rank, host, pid, state, exit_code, signal, executable);
};
struct ProcTable {
    static constexpr const char *type = "jctl.ps.reply";
    std::vector<ProcRow> procs;
    ZPMIX_MSG_MAP(procs);
};

// Tool -> jobctl (`zpmix ps`): the jobs this broker knows, running and finished within
// `[broker] keep_finished_s`. Answered by JobList. Rank states of a running job are the process
// table's (ProcTableQuery); a finished job's as it ended (a job across nodes: on every node, as
// its coordinator counted them, with the job's status, the same on every broker).
struct JobsQuery {
    static constexpr const char *type = "jctl.jobs";
    bool finished = true;  // also the finished jobs still kept
    ZPMIX_MSG_MAP(finished);
};
struct JobRow {
    std::string nspace;
    std::string program;  // its first app's
    std::uint32_t np = 0;
    std::vector<std::string> hosts;  // its nodes
    std::vector<std::string> psets;  // its launch-time process sets
    std::int64_t started_us = 0;     // registered here, microseconds since the Unix epoch
    std::int64_t ended_us = 0;       // 0 while it runs
    std::int32_t status = 0;         // finished: what `zpmix run` exits with
    std::string message;             // finished: why it failed
    std::map<std::string, std::uint32_t> states;  // finished: ProcRow state -> ranks
    ZPMIX_MSG_MAP(nspace, program, np, hosts, psets, started_us, ended_us, status, message, states);
};
// Registry -> jobctl (internal): a job that ran ended here; its row as the table had it then,
// with its status and message (`zpmix ps` lists it for keep_finished_s). Sent before ns.ended,
// while the record is still there: jobctl, on its own thread, may find the table without it.
struct JobFinished {
    static constexpr const char *type = "jctl.job_finished";
    JobRow row;
    ZPMIX_MSG_MAP(row);
};
struct JobList {
    static constexpr const char *type = "jctl.jobs.reply";
    std::vector<JobRow> jobs;
    // Jobs that ran and ended here since the broker started, by outcome: "succeeded" (exit 0),
    // "signalled" (128 + a signal number) or "failed" (`zpmix exporter`'s job-outcome counter).
    std::map<std::string, std::uint64_t> ended;
    ZPMIX_MSG_MAP(jobs, ended);
};

// jobctl -> launcher: deliver `signal` to these ranks of a job it launched. When `on_request` is
// set, their end is what was asked for and does not fail the rest of the job. With
// `kill_after_ms` (a termination), the ranks that got it are continued (a stopped process acts on
// it only once it runs) and get SIGKILL if still alive that long after. Answered by SignalledRanks
// (the ranks still alive that got it).
// jobctl -> another broker's jobctl: the same, for the ranks running on that broker's node.
struct SignalRanks {
    static constexpr const char *type = "job.signal_ranks";
    std::string nspace;
    std::vector<std::uint32_t> ranks;
    std::int32_t signal = 0;
    bool on_request = false;
    std::uint32_t kill_after_ms = 0;
    std::string requested_by = {};  // on_request: who asked, which `zpmix run` reports
    ZPMIX_MSG_MAP(nspace, ranks, signal, on_request, kill_after_ms, requested_by);
};
// monitor -> jobctl: end these ranks as TERMINATE does (SIGTERM, then SIGKILL after the grace
// period). Their end is a failure of the job, unlike a TERMINATE someone asked for.
struct TerminateRanks {
    static constexpr const char *type = "job.terminate_ranks";
    std::string nspace;
    std::vector<std::uint32_t> ranks;
    std::string reason;
    ZPMIX_MSG_MAP(nspace, ranks, reason);
};
struct SignalledRanks {
    static constexpr const char *type = "job.signalled_ranks";
    std::vector<std::uint32_t> ranks;
    ZPMIX_MSG_MAP(ranks);
};

// Client -> its node's launcher (PMIx_Job_control with PMIX_REGISTER_CLEANUP(_DIR)): remove
// these when the caller ends, or when its job's part on this node ends (whole_job). Answered by Ok
// or an ErrorReply saying why not.
struct RegisterCleanup {
    static constexpr const char *type = "job.register_cleanup";
    bool whole_job = false;
    std::vector<std::string> files;
    std::vector<std::string> dirs;
    bool recursive = false;           // PMIX_CLEANUP_RECURSIVE
    bool empty_only = false;          // PMIX_CLEANUP_EMPTY
    bool leave_topdir = false;        // PMIX_CLEANUP_LEAVE_TOPDIR
    std::vector<std::string> ignore;  // PMIX_CLEANUP_IGNORE
    ZPMIX_MSG_MAP(whole_job, files, dirs, recursive, empty_only, leave_topdir, ignore);
};

// events -> jobctl (internal): a process notified PMIX_JCTRL_CHECKPOINT_COMPLETE, in any range.
// jobctl -> every other broker's jobctl: the same, as a checkpoint may wait on any broker.
struct CheckpointCompleted {
    static constexpr const char *type = "jctl.checkpoint_completed";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};

// jobctl -> every other broker's jobctl: what a rank of the job registered there (PMIx_Job_control
// PREEMPTIBLE, CHECKPOINT_METHOD), so that a request through any broker finds it.
struct JobMarks {
    static constexpr const char *type = "jctl.marks";
    std::string nspace;
    bool preemptible = false;
    std::int32_t ckpt_signal = 0;
    bool ckpt_event = false;
    ZPMIX_MSG_MAP(nspace, preemptible, ckpt_signal, ckpt_event);
};

}  // namespace zpmix::msg
