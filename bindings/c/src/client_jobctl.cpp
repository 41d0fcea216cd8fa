// zpmix: job control, process monitoring and logging (RFC0015): PMIx_Job_control(_nb),
// PMIx_Process_monitor(_nb) (and so PMIx_Heartbeat), PMIx_Log(_nb). Each is one request to a
// broker actor (jobctl, monitor, log); a heartbeat is one one-way message. Job control's results
// hold the broker's message of each operation (kJobControlMessageKey): what it did, or why not;
// then a hosting resource manager's results, as its job_control upcall gave them.
#include "attributes.hpp"
#include "process.hpp"

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/log.hpp"
#include "actors/protocol/monitor.hpp"
#include "client/values/value_codec.hpp"
#include "info_values.hpp"
#include "pmix.h"

namespace zpmix::c {

namespace {

const Honours kJobControlAttributes(Role::client, "PMIx_Job_control",
                                    {ZPMIX_ATTR(PMIX_JOB_CTRL_ID),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_PAUSE),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_RESUME),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_CANCEL),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_KILL),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_SIGNAL),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_TERMINATE),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_CHECKPOINT),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_CHECKPOINT_METHOD),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_PREEMPTIBLE),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_RESTART),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_PROVISION),
                                     ZPMIX_ATTR(PMIX_JOB_CTRL_PROVISION_IMAGE),
                                     ZPMIX_ATTR(PMIX_REGISTER_CLEANUP),
                                     ZPMIX_ATTR(PMIX_REGISTER_CLEANUP_DIR),
                                     ZPMIX_ATTR(PMIX_CLEANUP_RECURSIVE),
                                     ZPMIX_ATTR(PMIX_CLEANUP_EMPTY),
                                     ZPMIX_ATTR(PMIX_CLEANUP_LEAVE_TOPDIR),
                                     ZPMIX_ATTR(PMIX_CLEANUP_IGNORE),
                                     ZPMIX_ATTR(PMIX_TIMEOUT)});
const Honours kMonitorAttributes(
    Role::client, "PMIx_Process_monitor",
    {ZPMIX_ATTR(PMIX_MONITOR_ID), ZPMIX_ATTR(PMIX_MONITOR_APP_CONTROL),
     ZPMIX_ATTR(PMIX_MONITOR_HEARTBEAT_TIME), ZPMIX_ATTR(PMIX_MONITOR_HEARTBEAT_DROPS),
     ZPMIX_ATTR(PMIX_MONITOR_FILE_ACCESS), ZPMIX_ATTR(PMIX_MONITOR_FILE_MODIFY),
     ZPMIX_ATTR(PMIX_MONITOR_FILE_SIZE), ZPMIX_ATTR(PMIX_MONITOR_FILE_CHECK_TIME),
     ZPMIX_ATTR(PMIX_MONITOR_FILE_DROPS), ZPMIX_ATTR(PMIX_RANGE), ZPMIX_ATTR(PMIX_TIMEOUT)});
const Honours kLogAttributes(Role::client, "PMIx_Log",
                             {ZPMIX_ATTR(PMIX_LOG_SOURCE), ZPMIX_ATTR(PMIX_LOG_STDERR),
                              ZPMIX_ATTR(PMIX_LOG_STDOUT), ZPMIX_ATTR(PMIX_LOG_SYSLOG),
                              ZPMIX_ATTR(PMIX_LOG_LOCAL_SYSLOG), ZPMIX_ATTR(PMIX_LOG_GLOBAL_SYSLOG),
                              ZPMIX_ATTR(PMIX_LOG_SYSLOG_PRI), ZPMIX_ATTR(PMIX_LOG_TIMESTAMP),
                              ZPMIX_ATTR(PMIX_LOG_GENERATE_TIMESTAMP), ZPMIX_ATTR(PMIX_LOG_ONCE),
                              ZPMIX_ATTR(PMIX_LOG_EMAIL)});

std::vector<std::string> split(const std::string &list, char sep) {
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t at; (at = list.find(sep, from)) != std::string::npos; from = at + 1)
        out.push_back(list.substr(from, at - from));
    out.push_back(list.substr(from));
    return out;
}

bool number_of(const pmix_value_t &v, std::int64_t &out) {
    pmix_status_t rc;
    std::int64_t n = 0;
    PMIX_VALUE_GET_NUMBER(rc, &v, n, std::int64_t);
    if (rc != PMIX_SUCCESS) return false;
    out = n;
    return true;
}

std::uint32_t timeout_ms_of(const pmix_info_t *info, size_t n) {
    for (size_t i = 0; info && i < n; ++i) {
        std::int64_t s = 0;
        if (is_key(info[i], PMIX_TIMEOUT) && number_of(info[i].value, s) && s > 0)
            return static_cast<std::uint32_t>(s * 1000);
    }
    return 0;
}

// ---- job control

// One request per operation the directives ask for, in the order given (PMIX_JOB_CTRL_ID and
// PMIX_TIMEOUT apply to each): PMIx_Job_control carries them out one after the other.
pmix_status_t job_control_messages(const pmix_proc_t targets[], size_t ntargets,
                                   const pmix_info_t dirs[], size_t ndirs,
                                   std::vector<msg::JobControl> &out) {
    msg::JobControl base;
    if (pmix_status_t rc = with_client(
            false, [&](client::Session &, const pmix_proc_t &me) { base.requester = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    for (size_t i = 0; targets && i < ntargets; ++i) base.targets.push_back(to_msg(targets[i]));
    for (size_t n = 0; dirs && n < ndirs; ++n)
        if (is_key(dirs[n], PMIX_JOB_CTRL_ID)) base.id = string_of(dirs[n].value);
    base.timeout_ms = timeout_ms_of(dirs, ndirs);
    auto add = [&](const char *action) -> msg::JobControl & {
        out.push_back(base);
        out.back().action = action;
        return out.back();
    };
    for (size_t n = 0; dirs && n < ndirs; ++n) {
        const pmix_info_t &i = dirs[n];
        const pmix_value_t &v = i.value;
        bool ok = true;
        std::int64_t num = 0;
        if (is_key(i, PMIX_JOB_CTRL_ID) || is_key(i, PMIX_TIMEOUT)) {
            // above
        } else if (is_key(i, PMIX_JOB_CTRL_PAUSE)) {
            if (PMIX_INFO_TRUE(&i)) add("pause");
        } else if (is_key(i, PMIX_JOB_CTRL_RESUME)) {
            if (PMIX_INFO_TRUE(&i)) add("resume");
        } else if (is_key(i, PMIX_JOB_CTRL_KILL)) {
            if (PMIX_INFO_TRUE(&i)) add("kill");
        } else if (is_key(i, PMIX_JOB_CTRL_TERMINATE)) {
            if (PMIX_INFO_TRUE(&i)) add("terminate");
        } else if (is_key(i, PMIX_JOB_CTRL_SIGNAL)) {
            ok = number_of(v, num);
            add("signal").signal = static_cast<std::int32_t>(num);
        } else if (is_key(i, PMIX_JOB_CTRL_CANCEL)) {
            add("cancel").cancel_id = string_of(v);
        } else if (is_key(i, PMIX_JOB_CTRL_CHECKPOINT)) {
            msg::JobControl &m = add("checkpoint");
            if (m.id.empty()) m.id = string_of(v);
        } else if (is_key(i, PMIX_JOB_CTRL_CHECKPOINT_METHOD)) {
            // Its key names its type (pmix_data_array_t*): a value whose type was left unset
            // (OpenPMIx's jctrl example fills in the array alone) is read as one, as OpenPMIx does.
            if (v.type == PMIX_UNDEF && v.data.darray && v.data.darray->type == PMIX_INFO)
                spdlog::warn(
                    "pmix: PMIx_Job_control: {} has no value type; read as the "
                    "pmix_data_array_t of pmix_info_t its key names",
                    PMIX_JOB_CTRL_CHECKPOINT_METHOD);
            else if (v.type != PMIX_DATA_ARRAY || !v.data.darray ||
                     v.data.darray->type != PMIX_INFO)
                return PMIX_ERR_BAD_PARAM;
            msg::JobControl &m = add("checkpoint_method");
            const auto *methods = static_cast<const pmix_info_t *>(v.data.darray->array);
            // The first method the application lists is the one used.
            for (size_t k = 0; k < v.data.darray->size && m.ckpt_signal == 0 && !m.ckpt_event;
                 ++k) {
                if (is_key(methods[k], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL) &&
                    number_of(methods[k].value, num))
                    m.ckpt_signal = static_cast<std::int32_t>(num);
                else if (is_key(methods[k], PMIX_JOB_CTRL_CHECKPOINT_EVENT))
                    m.ckpt_event = PMIX_INFO_TRUE(&methods[k]);
            }
        } else if (is_key(i, PMIX_JOB_CTRL_PREEMPTIBLE)) {
            add("preemptible").preemptible = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_JOB_CTRL_RESTART)) {
            add("restart").value = string_of(v);  // a resource manager hosting zpmix may
        } else if (is_key(i, PMIX_JOB_CTRL_PROVISION)) {
            add("provision").value = string_of(v);
        } else if (is_key(i, PMIX_JOB_CTRL_PROVISION_IMAGE)) {
            add("provision_image").value = string_of(v);
        } else if (PMIX_INFO_IS_REQUIRED(&i)) {
            return PMIX_ERR_NOT_SUPPORTED;  // a required directive we do not know
        }
        if (!ok) return PMIX_ERR_BAD_PARAM;
    }
    return out.empty() ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
}

// PMIX_REGISTER_CLEANUP(_DIR): what lies in the job's session directory (PMIX_NSDIR) goes with it
// when the job ends (Open MPI registers that directory at MPI_Init), so only other paths are sent:
// the node's launcher removes them when the caller ends, or when its job ends there if the target
// is the whole job (Open MPI registers its /dev/shm segments for itself). nullopt: the directives
// are not a cleanup registration; else its status, and in `m` what is left to send (nothing when
// m.files and m.dirs are empty).
std::optional<pmix_status_t> cleanup_registration(const pmix_proc_t targets[], size_t ntargets,
                                                  const pmix_info_t dirs[], size_t ndirs,
                                                  msg::RegisterCleanup &m) {
    std::vector<std::pair<std::string, bool>> paths;  // path, is a directory
    for (size_t n = 0; dirs && n < ndirs; ++n) {
        const pmix_info_t &i = dirs[n];
        if (is_key(i, PMIX_REGISTER_CLEANUP) || is_key(i, PMIX_REGISTER_CLEANUP_DIR)) {
            const std::string list = string_of(i.value);
            if (list.empty()) return PMIX_ERR_BAD_PARAM;
            for (const auto &p : split(list, ','))
                if (!p.empty()) paths.emplace_back(p, is_key(i, PMIX_REGISTER_CLEANUP_DIR));
        } else if (is_key(i, PMIX_CLEANUP_RECURSIVE)) {
            m.recursive = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_CLEANUP_EMPTY)) {
            m.empty_only = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_CLEANUP_LEAVE_TOPDIR)) {
            m.leave_topdir = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_CLEANUP_IGNORE)) {
            for (const auto &f : split(string_of(i.value), ','))
                if (!f.empty()) m.ignore.push_back(f);
        }
    }
    if (paths.empty()) return std::nullopt;
    pmix_proc_t me;
    if (pmix_status_t rc =
            with_client(false, [&](client::Session &, const pmix_proc_t &self) { me = self; });
        rc != PMIX_SUCCESS)
        return rc;
    // The target: the caller, or its whole job; no other process's end is seen on this node.
    if (ntargets > 1 || (ntargets == 1 && !targets)) return PMIX_ERR_NOT_SUPPORTED;
    if (targets && ntargets == 1) {
        if (!PMIX_CHECK_NSPACE(targets[0].nspace, me.nspace)) return PMIX_ERR_NOT_SUPPORTED;
        if (targets[0].rank == PMIX_RANK_WILDCARD)
            m.whole_job = true;
        else if (targets[0].rank != me.rank)
            return PMIX_ERR_NOT_SUPPORTED;
    } else {
        m.whole_job = true;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    std::filesystem::path root;
    pmix_value_t *nsdir = nullptr;
    if (PMIx_Get(&job, PMIX_NSDIR, nullptr, 0, &nsdir) == PMIX_SUCCESS && nsdir) {
        root = std::filesystem::path(string_of(*nsdir)).lexically_normal();
        PMIX_VALUE_RELEASE(nsdir);
    }
    for (auto &[p, dir] : paths) {
        const auto path = std::filesystem::path(p).lexically_normal();
        if (!path.is_absolute()) return PMIX_ERR_BAD_PARAM;
        const auto rel = path.lexically_relative(root);
        const bool inside = !root.empty() && !rel.empty() && *rel.begin() != "..";
        if (inside) {
            if (!m.ignore.empty()) return PMIX_ERR_NOT_SUPPORTED;  // the whole directory goes
            continue;
        }
        (dir ? m.dirs : m.files).push_back(path.string());
    }
    return PMIX_SUCCESS;
}

// An operation's answer: its status, the broker's account of it (what was done, or why not),
// when it gave one (`refusal`: an ErrorReply's), and a hosting resource manager's results.
struct Outcome {
    pmix_status_t status = PMIX_SUCCESS;
    std::optional<std::string> message;
    msg::Blob host_results;  // encoded infos
};

Outcome outcome_of(pmix_status_t status, const Envelope *env, const std::string &refusal = {}) {
    if (status != PMIX_SUCCESS || !env)
        return {status, refusal.empty() ? std::nullopt : std::optional(refusal), {}};
    try {
        auto r = env->as<msg::JobControlReply>();
        return {r.status, std::move(r.message), std::move(r.results)};
    } catch (const DecodeError &) {
        return {PMIX_ERR_UNPACK_FAILURE, std::nullopt, {}};
    }
}

// What the operations of one PMIx_Job_control were answered, in order.
struct Answers {
    std::vector<std::string> messages;
    std::vector<msg::Blob> host_results;
    void add(Outcome &o) {
        if (o.message) messages.push_back(*o.message);
        if (!o.host_results.empty()) host_results.push_back(std::move(o.host_results));
    }
};

// The results: one kJobControlMessageKey info per message, then the host's results; none without
// either. Results that do not decode are left out (logged).
void jobctl_results(const Answers &a, pmix_info_t **results, size_t *n) {
    *results = nullptr;
    *n = 0;
    std::vector<std::pair<pmix_info_t *, size_t>> host;
    size_t total = a.messages.size();
    for (const auto &blob : a.host_results) {
        pmix_info_t *info = nullptr;
        size_t ninfo = 0;
        if (decode_infos(blob.data(), blob.size(), &info, &ninfo) != PMIX_SUCCESS) {
            spdlog::warn("pmix: the resource manager's job-control results do not decode");
            continue;
        }
        host.emplace_back(info, ninfo);
        total += ninfo;
    }
    if (total > 0) {
        PMIX_INFO_CREATE(*results, total);
        size_t i = 0;
        for (const auto &m : a.messages)
            PMIx_Info_load(&(*results)[i++], msg::kJobControlMessageKey, m.c_str(), PMIX_STRING);
        for (const auto &[info, ninfo] : host)
            for (size_t k = 0; k < ninfo; ++k) PMIx_Info_xfer(&(*results)[i++], &info[k]);
        *n = total;
    }
    for (auto &[info, ninfo] : host) PMIX_INFO_FREE(info, ninfo);
}

// ---- monitoring

// How long to wait for the broker's answer: it answers a checkpoint when it completes or its own
// timeout passes.
std::uint32_t answer_within(const msg::JobControl &m) {
    return m.timeout_ms ? m.timeout_ms + 5000 : 0;
}

// Submits requests[next..] one after the other, each once the one before succeeded, adding the
// answers to `answers`; done(status) with the first failure, or success after the last. Returns
// submit's refusal of the first.
pmix_status_t submit_in_turn(std::shared_ptr<std::vector<msg::JobControl>> requests,
                             std::size_t next, std::shared_ptr<Answers> answers,
                             std::function<void(pmix_status_t)> done) {
    const msg::JobControl &m = (*requests)[next];
    return submit(m, answer_within(m),
                  [requests, next, answers, done](pmix_status_t status, const Envelope *env) {
                      Outcome o = outcome_of(status, env);
                      answers->add(o);
                      status = o.status;
                      if (status == PMIX_SUCCESS && next + 1 < requests->size()) {
                          status = submit_in_turn(requests, next + 1, answers, done);
                          if (status == PMIX_SUCCESS) return;
                      }
                      done(status);
                  });
}

pmix_status_t monitor_message(const pmix_info_t *monitor, pmix_status_t error,
                              const pmix_info_t dirs[], size_t ndirs, msg::MonitorRequest &m) {
    if (is_key(*monitor, PMIX_MONITOR_HEARTBEAT)) {
        m.kind = "heartbeat";
    } else if (is_key(*monitor, PMIX_MONITOR_FILE)) {
        m.kind = "file";
        m.file = string_of(monitor->value);
        if (m.file.empty()) return PMIX_ERR_BAD_PARAM;
    } else if (is_key(*monitor, PMIX_MONITOR_CANCEL)) {
        m.kind = "cancel";
        m.id = string_of(monitor->value);
    } else {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    m.code = error;
    for (size_t n = 0; dirs && n < ndirs; ++n) {
        const pmix_info_t &i = dirs[n];
        std::int64_t num = 0;
        auto count = [&](std::uint32_t &into) {
            if (!number_of(i.value, num) || num < 0 || num > UINT32_MAX) return false;
            into = static_cast<std::uint32_t>(num);
            return true;
        };
        bool ok = true;
        if (is_key(i, PMIX_MONITOR_ID)) {
            if (m.kind != "cancel") m.id = string_of(i.value);
        } else if (is_key(i, PMIX_MONITOR_HEARTBEAT_TIME) ||
                   is_key(i, PMIX_MONITOR_FILE_CHECK_TIME)) {
            ok = count(m.time);
        } else if (is_key(i, PMIX_MONITOR_HEARTBEAT_DROPS) || is_key(i, PMIX_MONITOR_FILE_DROPS)) {
            ok = count(m.drops);
        } else if (is_key(i, PMIX_MONITOR_FILE_SIZE)) {
            m.file_size = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_MONITOR_FILE_ACCESS)) {  // the standard's type varies: presence
            m.file_access = i.value.type != PMIX_BOOL || PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_MONITOR_FILE_MODIFY)) {
            m.file_modify = i.value.type != PMIX_BOOL || PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_MONITOR_APP_CONTROL)) {
            m.app_control = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_RANGE)) {
            ok = i.value.type == PMIX_DATA_RANGE;
            if (ok) m.range = i.value.data.range;
        } else if (PMIX_INFO_IS_REQUIRED(&i) && !is_key(i, PMIX_TIMEOUT)) {
            return PMIX_ERR_NOT_SUPPORTED;
        }
        if (!ok) return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
}

// ---- logging

pmix_status_t log_message(const pmix_info_t data[], size_t ndata, const pmix_info_t dirs[],
                          size_t ndirs, msg::Log &m) {
    if (!data || ndata == 0) return PMIX_ERR_BAD_PARAM;
    if (pmix_status_t rc = with_client(
            false, [&](client::Session &, const pmix_proc_t &me) { m.source = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    for (size_t n = 0; n < ndata; ++n) {
        const pmix_info_t &i = data[n];
        std::string channel;
        if (is_key(i, PMIX_LOG_STDERR))
            channel = "stderr";
        else if (is_key(i, PMIX_LOG_STDOUT))
            channel = "stdout";
        else if (is_key(i, PMIX_LOG_SYSLOG) || is_key(i, PMIX_LOG_LOCAL_SYSLOG) ||
                 is_key(i, PMIX_LOG_GLOBAL_SYSLOG))
            channel = "syslog";
        else if (is_key(i, PMIX_LOG_EMAIL))
            channel = "email";
        else
            channel = std::string(i.key, strnlen(i.key, PMIX_MAX_KEYLEN));  // the broker judges
        if (channel != "email" && i.value.type != PMIX_STRING) return PMIX_ERR_BAD_PARAM;
        m.entries.push_back({channel, string_of(i.value)});
    }
    for (size_t n = 0; dirs && n < ndirs; ++n) {
        const pmix_info_t &i = dirs[n];
        std::int64_t num = 0;
        if (is_key(i, PMIX_LOG_SOURCE)) {
            if (i.value.type != PMIX_PROC || !i.value.data.proc) return PMIX_ERR_BAD_PARAM;
            m.source = to_msg(*i.value.data.proc);
        } else if (is_key(i, PMIX_LOG_TIMESTAMP)) {
            if (i.value.type == PMIX_TIME)
                m.timestamp = i.value.data.time;
            else if (number_of(i.value, num))
                m.timestamp = num;
            else
                return PMIX_ERR_BAD_PARAM;
        } else if (is_key(i, PMIX_LOG_GENERATE_TIMESTAMP)) {
            m.generate_timestamp = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_LOG_ONCE)) {
            m.once = PMIX_INFO_TRUE(&i);
        } else if (is_key(i, PMIX_LOG_SYSLOG_PRI)) {
            if (!number_of(i.value, num)) return PMIX_ERR_BAD_PARAM;
            m.syslog_priority = static_cast<std::int32_t>(num);
        }
    }
    return PMIX_SUCCESS;
}

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;
using namespace zpmix::c;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    msg::RegisterCleanup cleanup;
    if (auto rc = cleanup_registration(targets, ntargets, directives, ndirs, cleanup)) {
        if (*rc != PMIX_SUCCESS) return *rc;
        if (cleanup.files.empty() && cleanup.dirs.empty())
            return with_client(false, [&](client::Session &session, const pmix_proc_t &) {
                session.post([cbfunc, cbdata] {
                    if (cbfunc) cbfunc(PMIX_SUCCESS, nullptr, 0, cbdata, nullptr, nullptr);
                });
            });
        return submit(cleanup, 0, [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
            if (cbfunc) cbfunc(status, nullptr, 0, cbdata, nullptr, nullptr);
        });
    }
    auto requests = std::make_shared<std::vector<msg::JobControl>>();
    if (pmix_status_t rc = job_control_messages(targets, ntargets, directives, ndirs, *requests);
        rc != PMIX_SUCCESS)
        return rc;
    auto answers = std::make_shared<Answers>();
    return submit_in_turn(requests, 0, answers, [answers, cbfunc, cbdata](pmix_status_t status) {
        if (!cbfunc) return;
        auto *r = new std::pair<pmix_info_t *, size_t>(nullptr, 0);
        jobctl_results(*answers, &r->first, &r->second);
        cbfunc(status, r->first, r->second, cbdata, release_info_array, r);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    if (results) *results = nullptr;
    if (nresults) *nresults = 0;
    msg::RegisterCleanup cleanup;
    if (auto rc = cleanup_registration(targets, ntargets, directives, ndirs, cleanup)) {
        if (*rc != PMIX_SUCCESS || (cleanup.files.empty() && cleanup.dirs.empty())) return *rc;
        client::Session::Reply reply;
        return ask(cleanup, 0, reply);
    }
    std::vector<msg::JobControl> requests;
    if (pmix_status_t rc = job_control_messages(targets, ntargets, directives, ndirs, requests);
        rc != PMIX_SUCCESS)
        return rc;
    Answers answers;
    pmix_status_t rc = PMIX_SUCCESS;
    for (const msg::JobControl &m : requests) {
        client::Session::Reply reply;
        rc = ask(m, answer_within(m), reply);
        Outcome o = outcome_of(rc, &reply.env, reply.message);
        answers.add(o);
        rc = o.status;
        if (rc != PMIX_SUCCESS) break;
    }
    if (results && nresults) jobctl_results(answers, results, nresults);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (!monitor) return PMIX_ERR_BAD_PARAM;
    if (is_key(*monitor, PMIX_SEND_HEARTBEAT)) {
        // One one-way message; nothing to wait for, so no callback either.
        const pmix_status_t rc =
            with_client(true, [](client::Session &session, const pmix_proc_t &me) {
                session.notify(msg::MonitorBeat{to_msg(me)});
            });
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    msg::MonitorRequest m;
    m.proc = attached_proc();
    if (pmix_status_t rc = monitor_message(monitor, error, directives, ndirs, m);
        rc != PMIX_SUCCESS)
        return rc;
    return submit(m, timeout_ms_of(directives, ndirs),
                  [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
                      if (cbfunc) cbfunc(status, nullptr, 0, cbdata, nullptr, nullptr);
                  });
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults) {
    if (results) *results = nullptr;
    if (nresults) *nresults = 0;
    if (!monitor) return PMIX_ERR_BAD_PARAM;
    if (is_key(*monitor, PMIX_SEND_HEARTBEAT)) {
        const pmix_status_t rc =
            PMIx_Process_monitor_nb(monitor, error, directives, ndirs, nullptr, nullptr);
        return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
    }
    msg::MonitorRequest m;
    m.proc = attached_proc();
    if (pmix_status_t rc = monitor_message(monitor, error, directives, ndirs, m);
        rc != PMIX_SUCCESS)
        return rc;
    client::Session::Reply reply;
    return ask(m, timeout_ms_of(directives, ndirs), reply);
}

PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    msg::Log m;
    if (pmix_status_t rc = log_message(data, ndata, directives, ndirs, m); rc != PMIX_SUCCESS)
        return rc;
    return submit(m, timeout_ms_of(directives, ndirs),
                  [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
                      if (cbfunc) cbfunc(status, cbdata);
                  });
}

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[], size_t ndirs) {
    msg::Log m;
    if (pmix_status_t rc = log_message(data, ndata, directives, ndirs, m); rc != PMIX_SUCCESS)
        return rc;
    client::Session::Reply reply;
    return ask(m, timeout_ms_of(directives, ndirs), reply);
}

}  // extern "C"
