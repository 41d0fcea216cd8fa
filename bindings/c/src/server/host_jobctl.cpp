// HostServices' job control and monitoring (RFC0015): a request whose targets are a hosted job's
// goes to the host's job_control upcall with the directive the requester gave, the requester
// named, and its results go back with its status; a hosted client's monitor goes to its monitor
// upcall.
#include <fmt/format.h>
#include <msgpack.hpp>

#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_services.hpp"

namespace zpmix::server {

namespace {

// The directives of one job-control operation, as the requester gave them (the client library
// splits a PMIx_Job_control into one operation per directive).
bool load_directives(const msg::JobControl &m, LentInfos &d) {
    d.info.reserve(4);  // no reallocation: the infos hold pointers
    if (!m.id.empty() && m.action != "checkpoint") d.add_string(PMIX_JOB_CTRL_ID, m.id);
    const std::string &a = m.action;
    if (a == "pause")
        d.add(PMIX_JOB_CTRL_PAUSE, true, PMIX_BOOL);
    else if (a == "resume")
        d.add(PMIX_JOB_CTRL_RESUME, true, PMIX_BOOL);
    else if (a == "kill")
        d.add(PMIX_JOB_CTRL_KILL, true, PMIX_BOOL);
    else if (a == "terminate")
        d.add(PMIX_JOB_CTRL_TERMINATE, true, PMIX_BOOL);
    else if (a == "signal")
        d.add(PMIX_JOB_CTRL_SIGNAL, static_cast<int>(m.signal), PMIX_INT);
    else if (a == "cancel")
        d.add_string(PMIX_JOB_CTRL_CANCEL, m.cancel_id);
    else if (a == "checkpoint")
        d.add_string(PMIX_JOB_CTRL_CHECKPOINT, m.id);
    else if (a == "preemptible")
        d.add(PMIX_JOB_CTRL_PREEMPTIBLE, m.preemptible, PMIX_BOOL);
    else if (a == "restart")
        d.add_string(PMIX_JOB_CTRL_RESTART, m.value);
    else if (a == "provision")
        d.add_string(PMIX_JOB_CTRL_PROVISION, m.value);
    else if (a == "provision_image")
        d.add_string(PMIX_JOB_CTRL_PROVISION_IMAGE, m.value);
    else if (a == "checkpoint_method") {
        pmix_data_array_t *methods;
        PMIX_DATA_ARRAY_CREATE(methods, 1, PMIX_INFO);
        auto *mi = static_cast<pmix_info_t *>(methods->array);
        if (m.ckpt_signal != 0) {
            int sig = m.ckpt_signal;
            PMIX_INFO_LOAD(&mi[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
        } else {
            bool yes = true;
            PMIX_INFO_LOAD(&mi[0], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &yes, PMIX_BOOL);
        }
        d.info.emplace_back();
        PMIX_INFO_LOAD(&d.info.back(), PMIX_JOB_CTRL_CHECKPOINT_METHOD, methods, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(methods);
    } else {
        return false;
    }
    if (m.timeout_ms > 0)
        d.add(PMIX_TIMEOUT, static_cast<int>((m.timeout_ms + 999) / 1000), PMIX_INT);
    return true;
}

}  // namespace

void HostServices::job_control(const Envelope &, msg::HostJobControl &m) {
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    const std::string action = m.request.action;
    auto answer = [this, peer, id](pmix_status_t status, std::string message,
                                   std::vector<msg::Proc> affected = {},
                                   const Results &results = Results{}) {
        msg::JobControlReply reply{status, std::move(message), std::move(affected), {}};
        if (results.ninfo > 0) {
            msgpack::sbuffer buf;
            c::Packer pk(buf);
            if (c::encode_infos(pk, results.info, results.ninfo) == PMIX_SUCCESS)
                reply.results.assign(buf.data(), buf.data() + buf.size());
            else
                log().warn("the host's job_control results cannot be sent on: dropped");
        }
        send(peer, std::move(reply), id);
    };
    if (!module_.job_control)
        return answer(PMIX_ERR_NOT_SUPPORTED,
                      action +
                          ": the resource manager does not control its jobs (no job_control "
                          "upcall)");
    auto lent = std::make_shared<LentInfos>();
    if (!load_directives(m.request, *lent))
        return answer(PMIX_ERR_BAD_PARAM, "unknown job-control action '" + action + "'");
    for (const auto &t : m.request.targets) lent->procs.push_back(host_proc(t));
    log().info("{} asks the resource manager to {} {} target(s)", m.who, action,
               lent->procs.size());
    std::vector<msg::Proc> affected = m.request.targets;
    pmix_proc_t requestor = host_proc(m.request.requester);
    void *cbdata = expect_infos(
        "job_control", wait_for(m.request.timeout_ms),
        [answer, action, affected](pmix_status_t status, const Results &results) {
            if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
                return answer(PMIX_SUCCESS, action + " done by the resource manager", affected,
                              results);
            answer(status,
                   fmt::format("the resource manager's {}: {}", action, PMIx_Error_string(status)),
                   {}, results);
        },
        lent);
    const pmix_status_t rc = module_.job_control(
        &requestor, lent->procs.empty() ? nullptr : lent->procs.data(), lent->procs.size(),
        lent->infos(), lent->info.size(), infos_done, cbdata);
    returned(rc, cbdata, [answer, action, affected](pmix_status_t status) {
        if (status == PMIX_SUCCESS)
            return answer(PMIX_SUCCESS, action + " done by the resource manager", affected);
        answer(status, fmt::format("the resource manager refused {}: {}", action,
                                   PMIx_Error_string(status)));
    });
}

void HostServices::monitor(const Envelope &, msg::HostMonitor &m) {
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    auto answer = [this, peer, id](pmix_status_t status) {
        if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
            return send(peer, msg::Ok{}, id);
        send(peer, msg::ErrorReply{status, "the resource manager's monitor answered so"}, id);
    };
    if (!module_.monitor) return answer(PMIX_ERR_NOT_SUPPORTED);
    const msg::MonitorRequest &r = m.request;
    auto lent = std::make_shared<LentInfos>();
    lent->info.reserve(10);
    // The monitor itself, then its directives.
    if (r.kind == "heartbeat")
        lent->add(PMIX_MONITOR_HEARTBEAT, true, PMIX_BOOL);
    else if (r.kind == "file")
        lent->add_string(PMIX_MONITOR_FILE, r.file);
    else
        lent->add_string(PMIX_MONITOR_CANCEL, r.id);
    if (!r.id.empty() && r.kind != "cancel") lent->add_string(PMIX_MONITOR_ID, r.id);
    if (r.kind == "heartbeat") {
        lent->add(PMIX_MONITOR_HEARTBEAT_TIME, r.time, PMIX_UINT32);
        lent->add(PMIX_MONITOR_HEARTBEAT_DROPS, r.drops, PMIX_UINT32);
    } else if (r.kind == "file") {
        lent->add(PMIX_MONITOR_FILE_CHECK_TIME, r.time, PMIX_UINT32);
        lent->add(PMIX_MONITOR_FILE_DROPS, r.drops, PMIX_UINT32);
        if (r.file_size) lent->add(PMIX_MONITOR_FILE_SIZE, true, PMIX_BOOL);
        if (r.file_access) lent->add(PMIX_MONITOR_FILE_ACCESS, true, PMIX_BOOL);
        if (r.file_modify) lent->add(PMIX_MONITOR_FILE_MODIFY, true, PMIX_BOOL);
    }
    if (r.app_control) lent->add(PMIX_MONITOR_APP_CONTROL, true, PMIX_BOOL);
    lent->add(PMIX_RANGE, static_cast<pmix_data_range_t>(r.range), PMIX_DATA_RANGE);
    pmix_proc_t requestor = host_proc(m.requester);
    void *cbdata = expect_infos(
        "monitor", wait_for(0), [answer](pmix_status_t status, const Results &) { answer(status); },
        lent);
    const pmix_status_t rc =
        module_.monitor(&requestor, &lent->info[0], r.code, lent->info.data() + 1,
                        lent->info.size() - 1, infos_done, cbdata);
    returned(rc, cbdata, answer);
}

}  // namespace zpmix::server
