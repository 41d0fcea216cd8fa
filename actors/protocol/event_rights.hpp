#pragma once
// Who may notify what (docs/events.md, "Who may notify what"): the rules the broker applies to a
// client's PMIx_Notify_event, and that the library applies first where a one-way send would never
// hear a refusal. Tools and operators (`zpmix notify`, `zpmix release`, a debugger) are not
// bound by them: they act for the runtime.
//
// - Runtime codes: the end of a process or a job, lost connections, the system's events (the
//   standard's PMIX_SYSTEM_EVENT range: node down...), launch and session steps, job control and
//   the resource manager's, process sets, groups, the fabric and IOF. Only the runtime notifies
//   them; a client may raise one in its own process (PROC_LOCAL), and answer a checkpoint
//   request (PMIX_JCTRL_CHECKPOINT_COMPLETE, on RM or NAMESPACE). Every other code (the user's,
//   MODEL_DECLARED, OPENMP_*, generic errors...) is the client's to send: a deny-list, since an
//   allow-list would break applications' own codes.
// - Ranges: NAMESPACE (its own job, the source being the client), RM, and LOCAL, SESSION and
//   GLOBAL for non-runtime codes; a CUSTOM range only of processes of related jobs: its own, its
//   spawn family, jobs it built a group with or connected to (the broker's JobRelations).
#include <array>
#include <cstdint>
#include <string>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"

namespace zpmix::msg {

struct RuntimeCode {
    std::int32_t code;
    const char *name;
};

// The runtime's codes beside the standard's PMIX_SYSTEM_EVENT range (-330..-230).
inline constexpr std::array kRuntimeCodes{
    // a process's end (and what ends or moves it)
    RuntimeCode{PMIX_ERR_PROC_RESTART, "PMIX_ERR_PROC_RESTART"},
    RuntimeCode{PMIX_ERR_PROC_CHECKPOINT, "PMIX_ERR_PROC_CHECKPOINT"},
    RuntimeCode{PMIX_ERR_PROC_MIGRATE, "PMIX_ERR_PROC_MIGRATE"},
    RuntimeCode{PMIX_ERR_PROC_ABORTED, "PMIX_ERR_PROC_ABORTED"},
    RuntimeCode{PMIX_ERR_PROC_REQUESTED_ABORT, "PMIX_ERR_PROC_REQUESTED_ABORT"},
    RuntimeCode{PMIX_ERR_PROC_ABORTING, "PMIX_ERR_PROC_ABORTING"},
    RuntimeCode{PMIX_PROC_TERMINATED, "PMIX_PROC_TERMINATED"},
    RuntimeCode{PMIX_ERR_INVALID_TERMINATION, "PMIX_ERR_INVALID_TERMINATION"},
    RuntimeCode{PMIX_ERR_PROC_TERM_WO_SYNC, "PMIX_ERR_PROC_TERM_WO_SYNC"},
    RuntimeCode{PMIX_EVENT_PROC_TERMINATED, "PMIX_EVENT_PROC_TERMINATED"},
    RuntimeCode{PMIX_ERR_PROC_KILLED_BY_CMD, "PMIX_ERR_PROC_KILLED_BY_CMD"},
    RuntimeCode{PMIX_ERR_PROC_FAILED_TO_START, "PMIX_ERR_PROC_FAILED_TO_START"},
    RuntimeCode{PMIX_ERR_PROC_ABORTED_BY_SIG, "PMIX_ERR_PROC_ABORTED_BY_SIG"},
    RuntimeCode{PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED, "PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED"},
    RuntimeCode{PMIX_ERR_EXIT_NONZERO_TERM, "PMIX_ERR_EXIT_NONZERO_TERM"},
    // lost connections: each library's own
    RuntimeCode{PMIX_ERR_LOST_CONNECTION, "PMIX_ERR_LOST_CONNECTION"},
    RuntimeCode{PMIX_ERR_LOST_CONNECTION_TO_SERVER, "PMIX_ERR_LOST_CONNECTION_TO_SERVER"},
    RuntimeCode{PMIX_ERR_LOST_PEER_CONNECTION, "PMIX_ERR_LOST_PEER_CONNECTION"},
    RuntimeCode{PMIX_ERR_LOST_CONNECTION_TO_CLIENT, "PMIX_ERR_LOST_CONNECTION_TO_CLIENT"},
    // jobs and sessions
    RuntimeCode{PMIX_EVENT_JOB_END, "PMIX_EVENT_JOB_END"},
    RuntimeCode{PMIX_LAUNCH_COMPLETE, "PMIX_LAUNCH_COMPLETE"},
    RuntimeCode{PMIX_ERR_JOB_APP_NOT_EXECUTABLE, "PMIX_ERR_JOB_APP_NOT_EXECUTABLE"},
    RuntimeCode{PMIX_ERR_JOB_NO_EXE_SPECIFIED, "PMIX_ERR_JOB_NO_EXE_SPECIFIED"},
    RuntimeCode{PMIX_ERR_JOB_FAILED_TO_MAP, "PMIX_ERR_JOB_FAILED_TO_MAP"},
    RuntimeCode{PMIX_ERR_JOB_CANCELED, "PMIX_ERR_JOB_CANCELED"},
    RuntimeCode{PMIX_ERR_JOB_FAILED_TO_LAUNCH, "PMIX_ERR_JOB_FAILED_TO_LAUNCH"},
    RuntimeCode{PMIX_ERR_JOB_ABORTED, "PMIX_ERR_JOB_ABORTED"},
    RuntimeCode{PMIX_ERR_JOB_KILLED_BY_CMD, "PMIX_ERR_JOB_KILLED_BY_CMD"},
    RuntimeCode{PMIX_ERR_JOB_ABORTED_BY_SIG, "PMIX_ERR_JOB_ABORTED_BY_SIG"},
    RuntimeCode{PMIX_ERR_JOB_TERM_WO_SYNC, "PMIX_ERR_JOB_TERM_WO_SYNC"},
    RuntimeCode{PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED, "PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED"},
    RuntimeCode{PMIX_ERR_JOB_NON_ZERO_TERM, "PMIX_ERR_JOB_NON_ZERO_TERM"},
    RuntimeCode{PMIX_ERR_JOB_ALLOC_FAILED, "PMIX_ERR_JOB_ALLOC_FAILED"},
    RuntimeCode{PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT, "PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT"},
    RuntimeCode{PMIX_ERR_JOB_EXE_NOT_FOUND, "PMIX_ERR_JOB_EXE_NOT_FOUND"},
    RuntimeCode{PMIX_EVENT_JOB_START, "PMIX_EVENT_JOB_START"},
    RuntimeCode{PMIX_EVENT_SESSION_START, "PMIX_EVENT_SESSION_START"},
    RuntimeCode{PMIX_EVENT_SESSION_END, "PMIX_EVENT_SESSION_END"},
    RuntimeCode{PMIX_READY_FOR_DEBUG, "PMIX_READY_FOR_DEBUG"},
    RuntimeCode{PMIX_LAUNCHER_READY, "PMIX_LAUNCHER_READY"},
    RuntimeCode{PMIX_NOTIFY_ALLOC_COMPLETE, "PMIX_NOTIFY_ALLOC_COMPLETE"},
    RuntimeCode{PMIX_PROC_HAS_CONNECTED, "PMIX_PROC_HAS_CONNECTED"},
    RuntimeCode{PMIX_CONNECT_REQUESTED, "PMIX_CONNECT_REQUESTED"},
    // job control, monitoring, the resource manager
    RuntimeCode{PMIX_DEBUGGER_RELEASE, "PMIX_DEBUGGER_RELEASE"},
    RuntimeCode{PMIX_JCTRL_CHECKPOINT, "PMIX_JCTRL_CHECKPOINT"},
    RuntimeCode{PMIX_JCTRL_CHECKPOINT_COMPLETE, "PMIX_JCTRL_CHECKPOINT_COMPLETE"},
    RuntimeCode{PMIX_JCTRL_PREEMPT_ALERT, "PMIX_JCTRL_PREEMPT_ALERT"},
    RuntimeCode{PMIX_MONITOR_HEARTBEAT_ALERT, "PMIX_MONITOR_HEARTBEAT_ALERT"},
    RuntimeCode{PMIX_MONITOR_FILE_ALERT, "PMIX_MONITOR_FILE_ALERT"},
    RuntimeCode{PMIX_PROCESS_SET_DEFINE, "PMIX_PROCESS_SET_DEFINE"},
    RuntimeCode{PMIX_PROCESS_SET_DELETE, "PMIX_PROCESS_SET_DELETE"},
    RuntimeCode{kJobPaused, "ZPMIX_EVENT_JOB_PAUSED"},
    RuntimeCode{kJobResumed, "ZPMIX_EVENT_JOB_RESUMED"},
    RuntimeCode{kJobSignalled, "ZPMIX_EVENT_JOB_SIGNALLED"},
    // groups (the library acts on LEFT and MEMBERSHIP_UPDATE)
    RuntimeCode{PMIX_GROUP_INVITED, "PMIX_GROUP_INVITED"},
    RuntimeCode{PMIX_GROUP_LEFT, "PMIX_GROUP_LEFT"},
    RuntimeCode{PMIX_GROUP_INVITE_ACCEPTED, "PMIX_GROUP_INVITE_ACCEPTED"},
    RuntimeCode{PMIX_GROUP_INVITE_DECLINED, "PMIX_GROUP_INVITE_DECLINED"},
    RuntimeCode{PMIX_GROUP_INVITE_FAILED, "PMIX_GROUP_INVITE_FAILED"},
    RuntimeCode{PMIX_GROUP_MEMBERSHIP_UPDATE, "PMIX_GROUP_MEMBERSHIP_UPDATE"},
    RuntimeCode{PMIX_GROUP_CONSTRUCT_ABORT, "PMIX_GROUP_CONSTRUCT_ABORT"},
    RuntimeCode{PMIX_GROUP_CONSTRUCT_COMPLETE, "PMIX_GROUP_CONSTRUCT_COMPLETE"},
    RuntimeCode{PMIX_GROUP_LEADER_SELECTED, "PMIX_GROUP_LEADER_SELECTED"},
    RuntimeCode{PMIX_GROUP_LEADER_FAILED, "PMIX_GROUP_LEADER_FAILED"},
    RuntimeCode{PMIX_GROUP_CONTEXT_ID_ASSIGNED, "PMIX_GROUP_CONTEXT_ID_ASSIGNED"},
    RuntimeCode{PMIX_GROUP_MEMBER_FAILED, "PMIX_GROUP_MEMBER_FAILED"},
    // the fabric, IOF
    RuntimeCode{PMIX_FABRIC_UPDATE_ENDPOINTS, "PMIX_FABRIC_UPDATE_ENDPOINTS"},
    RuntimeCode{PMIX_ERR_UPDATE_ENDPOINTS, "PMIX_ERR_UPDATE_ENDPOINTS"},
    RuntimeCode{PMIX_ERR_IOF_FAILURE, "PMIX_ERR_IOF_FAILURE"},
    RuntimeCode{PMIX_ERR_IOF_COMPLETE, "PMIX_ERR_IOF_COMPLETE"},
    RuntimeCode{PMIX_FABRIC_UPDATED, "PMIX_FABRIC_UPDATED"},
    RuntimeCode{PMIX_FABRIC_UPDATE_PENDING, "PMIX_FABRIC_UPDATE_PENDING"},
};

// zpmix's own job lifecycle codes and those it may add: -3100..-3199 (docs/events.md).
inline constexpr std::int32_t kZpmixCodesFirst = -3199, kZpmixCodesLast = -3100;

// Whether only the runtime notifies `code` (beyond the notifier's own process).
inline bool runtime_only(std::int32_t code) {
    if (PMIX_SYSTEM_EVENT(code)) return true;
    if (code >= kZpmixCodesFirst && code <= kZpmixCodesLast) return true;
    for (const auto &c : kRuntimeCodes)
        if (c.code == code) return true;
    return false;
}

// `code` as a message names it: "PMIX_ERR_PROC_ABORTED (-7)".
inline std::string code_text(std::int32_t code) {
    for (const auto &c : kRuntimeCodes)
        if (c.code == code) return std::string(c.name) + " (" + std::to_string(code) + ")";
    if (PMIX_SYSTEM_EVENT(code)) return "system event " + std::to_string(code);
    return "event " + std::to_string(code);
}

// Why a client may not notify `code` on `range`, whoever a custom range names (the broker checks
// those); empty when it may. `custom_debug_target`: a CUSTOM range of the job its own debugs
// (PMIX_DEBUG_TARGET), which debugger daemons release with PMIX_DEBUGGER_RELEASE.
inline std::string client_may_not_notify(std::int32_t code, std::uint8_t range,
                                         bool custom_debug_target = false) {
    const auto r = static_cast<Range>(range);
    if (r == Range::proc_local || !runtime_only(code)) return {};
    if (code == PMIX_JCTRL_CHECKPOINT_COMPLETE && (r == Range::rm || r == Range::nspace)) return {};
    if (code == PMIX_DEBUGGER_RELEASE && r == Range::custom && custom_debug_target) return {};
    return code_text(code) + " is the runtime's to notify, not a client's";
}

}  // namespace zpmix::msg
