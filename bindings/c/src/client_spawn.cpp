// zpmix: PMIx_Spawn and PMIx_Spawn_nb. One request to the broker's launcher (msg::Spawn): it
// starts the apps as one new job, a child of the caller's job, and answers with its namespace
// once every rank is started (or with why none is left). The child's ranks see the caller as
// PMIX_PARENT_ID; the caller gets PMIX_EVENT_JOB_END when it ends, as PRRTE tells a spawner
// (PMIX_NOTIFY_COMPLETION false says not to).
//
// Directives (job_info, and each app's info: an app's PMIX_WDIR, PMIX_SET_SESSION_CWD,
// PMIX_PREFIX and PMIX_SET_ENVAR are its own, its other directives are the job's, as PRRTE reads
// them and OpenPMIx's launcher and debugger examples give them): PMIX_TIMEOUT and
// PMIX_SPAWN_TIMEOUT (every rank started within), PMIX_JOB_TIMEOUT (the job's time limit),
// PMIX_NOTIFY_COMPLETION, PMIX_SETUP_APP_ENVARS (the caller's environment for the apps),
// PMIX_BINDTO (none, core, package), PMIX_MAPBY (slot, core, node, ppr:N:node), PMIX_PPR (N:node),
// and, also per app, PMIX_WDIR, PMIX_SET_SESSION_CWD, PMIX_PREFIX, PMIX_SET_ENVAR, PMIX_HOST,
// PMIX_HOSTFILE, PMIX_ADD_HOST and PMIX_ADD_HOSTFILE (the hosts restrict the whole job; the
// launcher refuses a host outside the allocation). Debuggers (job directives):
// PMIX_DEBUG_STOP_IN_INIT, PMIX_DEBUG_STOP_IN_APP and PMIX_DEBUG_STOP_ON_EXEC for every rank (true,
// or a wildcard rank or proc; chosen ranks are not supported), and from a tool
// PMIX_DEBUGGER_DAEMONS with PMIX_DEBUG_TARGET (or PMIX_DEBUG_JOB) and PMIX_DEBUG_DAEMONS_PER_NODE
// or _PER_PROC, and PMIX_FWD_STDOUT and PMIX_FWD_STDERR (the broker keeps the job's output for the
// tool's PMIx_IOF_pull, also once the job is over). Any other directive is ignored, or refused
// with PMIX_ERR_NOT_SUPPORTED when marked required.
#include "attributes.hpp"
#include "debugger.hpp"
#include "process.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/protocol/job.hpp"
#include "info_values.hpp"
#include "pmix.h"

extern char **environ;

namespace zpmix::c {

namespace {

const Honours kSpawnAttributes(Role::client, "PMIx_Spawn",
                               {ZPMIX_ATTR(PMIX_TIMEOUT),
                                ZPMIX_ATTR(PMIX_SPAWN_TIMEOUT),
                                ZPMIX_ATTR(PMIX_JOB_TIMEOUT),
                                ZPMIX_ATTR(PMIX_NOTIFY_COMPLETION),
                                ZPMIX_ATTR(PMIX_SPAWN_CHILD_SEP),
                                ZPMIX_ATTR(PMIX_FWD_STDOUT),
                                ZPMIX_ATTR(PMIX_FWD_STDERR),
                                ZPMIX_ATTR(PMIX_SETUP_APP_ENVARS),
                                ZPMIX_ATTR(PMIX_BINDTO),
                                ZPMIX_ATTR(PMIX_MAPBY),
                                ZPMIX_ATTR(PMIX_PPR),
                                ZPMIX_ATTR(PMIX_WDIR),
                                ZPMIX_ATTR(PMIX_SET_SESSION_CWD),
                                ZPMIX_ATTR(PMIX_PREFIX),
                                ZPMIX_ATTR(PMIX_SET_ENVAR),
                                ZPMIX_ATTR(PMIX_HOST),
                                ZPMIX_ATTR(PMIX_HOSTFILE),
                                ZPMIX_ATTR(PMIX_ADD_HOST),
                                ZPMIX_ATTR(PMIX_ADD_HOSTFILE),
                                ZPMIX_ATTR(PMIX_DEBUG_STOP_IN_INIT),
                                ZPMIX_ATTR(PMIX_DEBUG_STOP_IN_APP),
                                ZPMIX_ATTR(PMIX_DEBUG_STOP_ON_EXEC),
                                ZPMIX_ATTR(PMIX_DEBUGGER_DAEMONS),
                                ZPMIX_ATTR(PMIX_DEBUG_TARGET),
                                ZPMIX_ATTR(PMIX_DEBUG_JOB),
                                ZPMIX_ATTR(PMIX_DEBUG_DAEMONS_PER_NODE),
                                ZPMIX_ATTR(PMIX_DEBUG_DAEMONS_PER_PROC)});

// How long past the launcher's own spawn deadline the caller waits for its answer.
constexpr std::uint32_t kAnswerMarginMs = 5000;

// A PMIX_STRING value's text; nullopt for a value of another type.
std::optional<std::string> given_string(const pmix_value_t &v) {
    if (v.type != PMIX_STRING || v.data.string == nullptr) return std::nullopt;
    return std::string(v.data.string);
}

std::optional<double> seconds_of(const pmix_value_t &v) {
    pmix_status_t rc;
    std::int64_t n = 0;
    PMIX_VALUE_GET_NUMBER(rc, &v, n, std::int64_t);
    if (rc != PMIX_SUCCESS || n < 0) return std::nullopt;
    return static_cast<double>(n);
}

std::optional<std::uint32_t> count_of(const pmix_value_t &v) {
    pmix_status_t rc;
    std::int64_t n = 0;
    PMIX_VALUE_GET_NUMBER(rc, &v, n, std::int64_t);
    if (rc != PMIX_SUCCESS || n < 0 || n > UINT16_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(n);
}

std::string lower(std::string s) {
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// PMIX_HOST: a comma-separated list (a host's ":N" slots are the allocation's business, not the
// job's). PMIX_HOSTFILE: one host per line (first word; '#' comments).
std::optional<std::vector<std::string>> hosts_of(const pmix_info_t &i) {
    auto s = given_string(i.value);
    if (!s) return std::nullopt;
    std::vector<std::string> hosts;
    if (is_key(i, PMIX_HOST) || is_key(i, PMIX_ADD_HOST)) {
        std::stringstream in(*s);
        for (std::string h; std::getline(in, h, ',');)
            if (h = h.substr(0, h.find(':')); !h.empty()) hosts.push_back(h);
        return hosts;
    }
    std::ifstream in(*s);
    if (!in) return std::nullopt;
    for (std::string line; std::getline(in, line);) {
        std::stringstream words(line.substr(0, line.find('#')));
        if (std::string h; words >> h) hosts.push_back(h);
    }
    return hosts;
}

// The caller's environment for PMIX_SETUP_APP_ENVARS, without what names it in its own job.
std::vector<std::string> harvested_environment() {
    std::vector<std::string> out;
    for (char **e = environ; e && *e; ++e) {
        const std::string_view kv = *e;
        if (kv.starts_with("PMIX_NAMESPACE=") || kv.starts_with("PMIX_RANK=") ||
            kv.starts_with("ZPMIX_URI=") || kv.starts_with("ZPMIX_SECRET="))
            continue;
        out.emplace_back(kv);
    }
    return out;
}

// What the job's directives give every app that does not say otherwise.
struct AppDefaults {
    std::optional<std::string> cwd;
    bool session_cwd = false;
    std::string prefix;
};

// One directive, of the job (app == nullptr) or of an app. PMIX_ERR_BAD_PARAM for a value of the
// wrong type, PMIX_ERR_NOT_SUPPORTED for a required directive zpmix cannot honour.
pmix_status_t apply(const pmix_info_t &i, msg::Spawn &m, AppDefaults &d, bool &harvest,
                    msg::App *app) {
    const bool job = app == nullptr;
    const pmix_value_t &v = i.value;
    if (is_key(i, PMIX_TIMEOUT) || is_key(i, PMIX_SPAWN_TIMEOUT) || is_key(i, PMIX_JOB_TIMEOUT)) {
        auto s = seconds_of(v);
        if (!s) return PMIX_ERR_BAD_PARAM;
        (is_key(i, PMIX_JOB_TIMEOUT) ? m.timeout_s : m.spawn_timeout_s) = *s;
    } else if (is_key(i, PMIX_NOTIFY_COMPLETION)) {
        m.notify_completion = PMIX_INFO_TRUE(&i);
    } else if (is_key(i, PMIX_SPAWN_CHILD_SEP)) {
        m.child_sep = PMIX_INFO_TRUE(&i);
        m.ends_with_parent = !m.child_sep;
    } else if (is_key(i, PMIX_FWD_STDOUT) || is_key(i, PMIX_FWD_STDERR)) {
        m.forward_output = m.forward_output || PMIX_INFO_TRUE(&i);
    } else if (is_key(i, PMIX_SETUP_APP_ENVARS)) {
        harvest = PMIX_INFO_TRUE(&i);
    } else if (is_key(i, PMIX_BINDTO) || is_key(i, PMIX_MAPBY) || is_key(i, PMIX_PPR)) {
        auto s = given_string(v);
        if (!s) return PMIX_ERR_BAD_PARAM;
        const std::string policy = is_key(i, PMIX_PPR) ? "ppr:" + lower(*s) : lower(*s);
        const bool bind = is_key(i, PMIX_BINDTO);
        const bool known = bind ? policy == "none" || policy == "core" || policy == "package"
                                : policy == "slot" || policy == "core" || policy == "node" ||
                                      policy.starts_with("ppr:");
        if (known)
            (bind ? m.bind_to : m.map_by) = policy;
        else if (PMIX_INFO_IS_REQUIRED(&i))
            return PMIX_ERR_NOT_SUPPORTED;
    } else if (is_key(i, PMIX_WDIR)) {
        auto s = given_string(v);
        if (!s || s->empty()) return PMIX_ERR_BAD_PARAM;
        if (job)
            d.cwd = *s;
        else
            app->cwd = *s;
    } else if (is_key(i, PMIX_SET_SESSION_CWD)) {
        (job ? d.session_cwd : app->session_cwd) = PMIX_INFO_TRUE(&i);
    } else if (is_key(i, PMIX_PREFIX)) {
        auto s = given_string(v);
        if (!s || s->empty()) return PMIX_ERR_BAD_PARAM;
        (job ? d.prefix : app->prefix) = *s;
    } else if (is_key(i, PMIX_SET_ENVAR)) {
        if (v.type != PMIX_ENVAR || v.data.envar.envar == nullptr || v.data.envar.envar[0] == 0)
            return PMIX_ERR_BAD_PARAM;
        std::string kv =
            std::string(v.data.envar.envar) + "=" + (v.data.envar.value ? v.data.envar.value : "");
        (job ? m.env : app->env).push_back(std::move(kv));
    } else if (is_key(i, PMIX_HOST) || is_key(i, PMIX_HOSTFILE) || is_key(i, PMIX_ADD_HOST) ||
               is_key(i, PMIX_ADD_HOSTFILE)) {
        auto hosts = hosts_of(i);
        if (!hosts) return PMIX_ERR_BAD_PARAM;
        auto &into = is_key(i, PMIX_HOST) || is_key(i, PMIX_HOSTFILE) ? m.hosts : m.add_hosts;
        for (auto &h : *hosts)
            if (std::find(into.begin(), into.end(), h) == into.end()) into.push_back(std::move(h));
    } else if (is_key(i, PMIX_DEBUG_STOP_IN_INIT) || is_key(i, PMIX_DEBUG_STOP_IN_APP) ||
               is_key(i, PMIX_DEBUG_STOP_ON_EXEC)) {
        auto all = stops_every_rank(v);
        if (!all) {
            spdlog::error("PMIx_Spawn: {} for chosen ranks is not supported (every rank or none)",
                          i.key);
            return PMIX_ERR_NOT_SUPPORTED;
        }
        (is_key(i, PMIX_DEBUG_STOP_IN_INIT)  ? m.stop_in_init
         : is_key(i, PMIX_DEBUG_STOP_IN_APP) ? m.stop_in_app
                                             : m.stop_on_exec) = *all;
    } else if (is_key(i, PMIX_DEBUGGER_DAEMONS)) {
        m.debugger_daemons = PMIX_INFO_TRUE(&i);
    } else if (is_key(i, PMIX_DEBUG_TARGET)) {
        if (auto ns = given_string(v); ns && !ns->empty() && ns->size() <= PMIX_MAX_NSLEN) {
            // A namespace for the proc (OpenPMIx's debugger example gives one; PRRTE takes it).
            spdlog::info("PMIx_Spawn: PMIX_DEBUG_TARGET given as a string, read as namespace {}",
                         *ns);
            m.debug_target = {*ns, PMIX_RANK_WILDCARD};
            return PMIX_SUCCESS;
        }
        if (v.type != PMIX_PROC || v.data.proc == nullptr) return PMIX_ERR_BAD_PARAM;
        m.debug_target = to_msg(*v.data.proc);
    } else if (is_key(i, PMIX_DEBUG_JOB)) {
        auto s = given_string(v);
        if (!s || s->empty() || s->size() > PMIX_MAX_NSLEN) return PMIX_ERR_BAD_PARAM;
        m.debug_target = {*s, PMIX_RANK_WILDCARD};
    } else if (is_key(i, PMIX_DEBUG_DAEMONS_PER_NODE) || is_key(i, PMIX_DEBUG_DAEMONS_PER_PROC)) {
        auto n = count_of(v);
        if (!n) return PMIX_ERR_BAD_PARAM;
        (is_key(i, PMIX_DEBUG_DAEMONS_PER_NODE) ? m.daemons_per_node : m.daemons_per_proc) = *n;
    } else if (PMIX_INFO_IS_REQUIRED(&i)) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return PMIX_SUCCESS;
}

// The Spawn request for the call's arguments, and how long to wait for its answer.
pmix_status_t spawn_message(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, msg::Spawn &m, std::uint32_t &wait_ms) {
    if (apps == nullptr || napps == 0) return PMIX_ERR_BAD_PARAM;
    AppDefaults d;
    bool harvest = false;
    m.notify_completion = true;  // unless PMIX_NOTIFY_COMPLETION says false
    for (size_t n = 0; job_info != nullptr && n < ninfo; ++n)
        if (pmix_status_t rc = apply(job_info[n], m, d, harvest, nullptr); rc != PMIX_SUCCESS)
            return rc;
    if (!d.cwd) {
        // As Open MPI does: the spawner's working directory, where its relative paths point.
        if (char *cwd = ::getcwd(nullptr, 0)) {
            d.cwd = cwd;
            std::free(cwd);
        }
    }
    for (size_t a = 0; a < napps; ++a) {
        const pmix_app_t &in = apps[a];
        msg::App &app = m.apps.emplace_back();
        if (in.maxprocs <= 0) return PMIX_ERR_BAD_PARAM;
        app.np = static_cast<std::uint32_t>(in.maxprocs);
        if (in.cmd != nullptr) app.cmd = in.cmd;
        for (size_t k = 0; in.argv != nullptr && in.argv[k] != nullptr; ++k)
            app.argv.emplace_back(in.argv[k]);
        if (app.cmd.empty() && (app.argv.empty() || app.argv[0].empty())) return PMIX_ERR_BAD_PARAM;
        if (app.argv.empty()) app.argv.push_back(app.cmd);
        for (size_t k = 0; in.env != nullptr && in.env[k] != nullptr; ++k) {
            const char *eq = std::strchr(in.env[k], '=');
            if (eq == nullptr || eq == in.env[k]) return PMIX_ERR_BAD_PARAM;
            app.env.emplace_back(in.env[k]);
        }
        if (in.cwd != nullptr && in.cwd[0] != 0) app.cwd = in.cwd;
        for (size_t n = 0; in.info != nullptr && n < in.ninfo; ++n)
            if (pmix_status_t rc = apply(in.info[n], m, d, harvest, &app); rc != PMIX_SUCCESS)
                return rc;
        if (app.prefix.empty()) app.prefix = d.prefix;
        if (app.cwd.empty()) {
            app.session_cwd = app.session_cwd || d.session_cwd;
            if (!app.session_cwd && d.cwd) app.cwd = *d.cwd;
        }
    }
    if (m.debugger_daemons && m.debug_target.nspace.empty()) return PMIX_ERR_BAD_PARAM;
    if (m.debugger_daemons && m.daemons_per_node == 0 && m.daemons_per_proc == 0) {
        // As PRRTE maps debugger daemons: PMIX_MAPBY ppr:N:node gives N per node, else one.
        unsigned n = 1;
        if (m.map_by.starts_with("ppr:") && m.map_by.ends_with(":node"))
            n = static_cast<unsigned>(std::strtoul(m.map_by.c_str() + 4, nullptr, 10));
        m.daemons_per_node = std::clamp(n, 1u, static_cast<unsigned>(UINT16_MAX));
        spdlog::info("PMIx_Spawn: debugger daemons without a count: {} per node of the target",
                     m.daemons_per_node);
    }
    if (m.debugger_daemons) m.map_by = "slot";  // beside their target, by the counts
    if (harvest) {
        std::vector<std::string> env = harvested_environment();
        env.insert(env.end(), m.env.begin(), m.env.end());  // explicit settings win
        m.env = std::move(env);
    }
    const double limit_ms =
        std::min(m.spawn_timeout_s * 1000, static_cast<double>(UINT32_MAX - kAnswerMarginMs));
    wait_ms = m.spawn_timeout_s > 0 ? static_cast<std::uint32_t>(limit_ms) + kAnswerMarginMs : 0;
    return PMIX_SUCCESS;
}

// The request: the caller as the new job's parent, then the apps and directives.
// PMIX_ERR_INIT before PMIx_Init, PMIX_ERR_UNREACH for a singleton (no launcher to ask).
pmix_status_t spawn_request(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, msg::Spawn &m, std::uint32_t &wait_ms) {
    if (pmix_status_t rc = with_client(
            true, [&](client::Session &, const pmix_proc_t &me) { m.parent = to_msg(me); });
        rc != PMIX_SUCCESS)
        return rc;
    return spawn_message(job_info, ninfo, apps, napps, m, wait_ms);
}

// The child's namespace from the launcher's answer.
pmix_status_t nspace_of(const Envelope &reply, std::string &nspace) {
    try {
        nspace = reply.as<msg::LaunchReply>().nspace;
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return nspace.empty() || nspace.size() > PMIX_MAX_NSLEN ? PMIX_ERR_UNPACK_FAILURE
                                                            : PMIX_SUCCESS;
}

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;
using namespace zpmix::c;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                                     const pmix_app_t apps[], size_t napps, pmix_nspace_t nspace) {
    msg::Spawn m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = spawn_request(job_info, ninfo, apps, napps, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    client::Session::Reply reply;
    if (pmix_status_t rc = ask(m, wait_ms, reply); rc != PMIX_SUCCESS) return rc;
    std::string child;
    if (pmix_status_t rc = nspace_of(reply.env, child); rc != PMIX_SUCCESS) return rc;
    if (nspace != nullptr) PMIX_LOAD_NSPACE(nspace, child.c_str());
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                                        const pmix_app_t apps[], size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    msg::Spawn m;
    std::uint32_t wait_ms = 0;
    if (pmix_status_t rc = spawn_request(job_info, ninfo, apps, napps, m, wait_ms);
        rc != PMIX_SUCCESS)
        return rc;
    return submit(m, wait_ms, [cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
        std::string child;
        if (status == PMIX_SUCCESS) status = nspace_of(*env, child);
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, status == PMIX_SUCCESS ? child.c_str() : "");
        cbfunc(status, ns, cbdata);
    });
}

}  // extern "C"
