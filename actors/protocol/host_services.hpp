#pragma once
// Between the broker's actors and `hostsvc`, the part of a hosting resource manager's
// pmix_server_module_t that serves RFC0015 and RFC0010 requests (bindings/c/src/server/
// host_services.hpp): job control, monitoring, queries and logging. Each request is answered to
// its asker by `hostsvc` as the asker's own actor would have answered it.
#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/log.hpp"
#include "actors/protocol/map.hpp"
#include "actors/protocol/monitor.hpp"
#include "actors/protocol/query.hpp"
#include "actors/protocol/session.hpp"

namespace zpmix::msg {

// registry -> hostsvc: a tool's Hello passed the broker's checks (tool_connected): admitted,
// `open` goes to the dispatcher with the Welcome naming the tool as the host did; refused, an
// ErrorReply to `peer` answering the Hello (`id`).
struct HostToolConnected {
    static constexpr const char *type = "hostsvc.tool";
    Proc tool;                  // as the tool named itself (PMIX_TOOL_NSPACE/_RANK, or its default)
    std::int64_t pid = 0;       // as it says
    std::int64_t peer_pid = 0;  // as the kernel says (0 over tcp)
    std::int64_t uid = -1;
    bool tcp = false;
    SessionOpen open;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(tool, pid, peer_pid, uid, tcp, open, peer, id);
};

// jobctl -> hostsvc: a job-control request whose targets are a hosted job's (the job_control
// upcall), answered to `peer` under `id` with a JobControlReply. `who` names the requester for
// the log (a tool has no proc of its own in the broker).
struct HostJobControl {
    static constexpr const char *type = "hostsvc.jctl";
    JobControl request;
    std::string who;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(request, who, peer, id);
};

// monitor -> hostsvc: a hosted client's PMIx_Process_monitor (the monitor upcall) when the host
// did not ask the library to monitor (PMIX_SERVER_ENABLE_MONITORING), answered to `peer` under
// `id` with an Ok or an ErrorReply.
struct HostMonitor {
    static constexpr const char *type = "hostsvc.monitor";
    Proc requester;
    MonitorRequest request;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(requester, request, peer, id);
};

// query -> hostsvc: the keys of a query the broker could not answer from its own state (the
// query upcall), answered under the same id with a QueryReply holding an answer for each key
// asked (PMIX_ERR_NOT_FOUND for those the host did not answer).
struct HostQuery {
    static constexpr const char *type = "hostsvc.query";
    Proc requester;  // empty nspace: a tool
    std::vector<Query> queries;
    ZPMIX_MSG_MAP(requester, queries);
};

// log -> hostsvc: the entries of a PMIx_Log on channels the broker does not serve (the log
// upcall), answered to `peer` under `id` for the whole PMIx_Log: an Ok, or an ErrorReply with
// the first failure. `logged`, `local_status`: what the broker's own channels did (an entry
// written, the first failure).
struct HostLog {
    static constexpr const char *type = "hostsvc.log";
    Log request;
    bool logged = false;
    std::int32_t local_status = 0;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(request, logged, local_status, peer, id);
};

// iof -> hostsvc, one-way: a pull of a hosted job's output (iof_pull): the host is to deliver
// those processes' output (PMIx_server_IOF_deliver), which the broker's `iof` serves to its
// pullers. The pull itself is served at once; its end is not told (the header has no
// PMIX_IOF_STOP).
struct HostIofPull {
    static constexpr const char *type = "hostsvc.iof_pull";
    std::vector<Proc> procs;
    std::uint16_t channels = 0;  // pmix_iof_channel_t bits (msg::kIof*)
    ZPMIX_MSG_MAP(procs, channels);
};
// iof -> hostsvc: input for a hosted job's ranks (push_stdin), answered to `peer` under `id`
// with an Ok or an ErrorReply.
struct HostStdin {
    static constexpr const char *type = "hostsvc.stdin";
    Proc source;  // empty nspace: a tool
    std::vector<Proc> targets;
    std::string data;
    bool eof = false;
    std::string peer;
    std::uint64_t id = 0;
    ZPMIX_MSG_MAP(source, targets, data, eof, peer, id);
};

// Client or tool -> hostsvc: PMIx_Allocation_request, for the host's allocate upcall (zpmix
// schedules nothing: under `zpmix run` no actor takes it and the broker answers
// PMIX_ERR_NOT_SUPPORTED). `info`: the request's infos in libpmix's wire form (c::encode_infos).
// Answered by AllocationReply (the host's results, the same form) or an ErrorReply.
struct AllocationRequest {
    static constexpr const char *type = "hostsvc.alloc";
    std::uint8_t directive = 0;  // pmix_alloc_directive_t
    Blob info;
    std::uint32_t timeout_ms = 0;  // PMIX_TIMEOUT
    ZPMIX_MSG_MAP(directive, info, timeout_ms);
};
struct AllocationReply {
    static constexpr const char *type = "hostsvc.alloc.reply";
    Blob results;
    ZPMIX_MSG_MAP(results);
};

}  // namespace zpmix::msg
