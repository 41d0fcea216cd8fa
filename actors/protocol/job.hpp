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
    ZPMIX_MSG_MAP(nspace, size, univ_size, max_procs, num_apps, session_tmpdir, nsdir, nodes, procs,
                  psets);
};

// `zpmix run` -> broker: start a job. Answered by LaunchReply, then streamed Output and
// ProcExit messages and a final JobEnded, all addressed to the requester.
struct Launch {
    static constexpr const char *type = "job.launch";
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value" added to each rank's environment
    std::string cwd;
    std::uint32_t np = 1;
    std::string bind_to = "none";    // none | core | package
    std::string map_by = "slot";     // slot | core
    std::vector<std::string> psets;  // PMIX_PSET_NAMES: each names the whole job
    double timeout_s = 0;            // 0: no limit
    bool personality_ompi = false;
    ZPMIX_MSG_MAP(argv, env, cwd, np, bind_to, map_by, psets, timeout_s, personality_ompi);
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
    std::string data;
    ZPMIX_MSG_MAP(nspace, rank, fd, data);
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

// The job is over; status is what `zpmix run` exits with (0, exit code, or 128+signal).
struct JobEnded {
    static constexpr const char *type = "job.ended";
    std::string nspace;
    std::int32_t status = 0;
    std::string message;  // why, when it did not end by itself (abort, timeout, signal)
    ZPMIX_MSG_MAP(nspace, status, message);
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
    static constexpr const char *type = "abort";
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

// Launcher -> the actors that follow jobs (broadcast): a namespace exists (before its ranks
// start), and is gone. The ranks are spawned one per reactor turn after it, so that the first
// ones are served while the last are started: each proc's pid is 0 until its RankSpawned.
struct RegisterNamespace {
    static constexpr const char *type = "ns.register";
    JobInfo job;
    std::string secret;
    ZPMIX_MSG_MAP(job, secret);
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
    ZPMIX_MSG_MAP(nspace);
};

// Client or tool -> server: the job information of another namespace registered on this broker,
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
