// The host's spawn upcall: a hosted client's or a tool's PMIx_Spawn. The launcher hands the
// request over (msg::HostSpawn) when the spawner's job is the host's, and every tool's (the parent
// is the tool, by the name tool_connected gave it); the host starts the new job as it
// started the spawner's (register_nspace, register_client, setup_fork, then its processes) and
// calls back with the new namespace, which PMIx_Spawn returns. The request goes to the host as
// the standard's job_info and apps, rebuilt from what the client's PMIx_Spawn read:
// PMIX_NOTIFY_COMPLETION, PMIX_SPAWN_TIMEOUT, PMIX_JOB_TIMEOUT, PMIX_MAPBY, PMIX_BINDTO,
// PMIX_HOST, PMIX_ADD_HOST, PMIX_SPAWN_CHILD_SEP, the debugger's stops, PMIX_FWD_STDOUT/ERR, a
// tool's debugger daemons (PMIX_DEBUGGER_DAEMONS, PMIX_DEBUG_TARGET,
// PMIX_DEBUG_DAEMONS_PER_NODE/_PER_PROC); each app's cmd, argv, env (PMIX_SETUP_APP_ENVARS's
// first), cwd, maxprocs, and PMIX_PREFIX and PMIX_SET_SESSION_CWD as its infos. Without the upcall:
// PMIX_ERR_NOT_SUPPORTED at once.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"

namespace zpmix::server {

namespace {

// What the upcall lends the host, until it called back.
struct SpawnLent {
    std::vector<pmix_info_t> job_info;
    struct App {
        std::vector<std::string> argv, env;
        std::vector<char *> argv_p, env_p;
        std::vector<pmix_info_t> info;
    };
    std::vector<App> app_data;
    std::vector<pmix_app_t> apps;
    std::vector<std::string> strings;  // values the infos point at are copied by PMIX_INFO_LOAD

    SpawnLent() = default;
    SpawnLent(const SpawnLent &) = delete;
    SpawnLent &operator=(const SpawnLent &) = delete;
    ~SpawnLent() {
        for (auto &i : job_info) PMIX_INFO_DESTRUCT(&i);
        for (auto &a : app_data)
            for (auto &i : a.info) PMIX_INFO_DESTRUCT(&i);
    }
};

template <class T>
void put_info(std::vector<pmix_info_t> &to, const char *key, T value, pmix_data_type_t type) {
    to.emplace_back();
    PMIX_INFO_LOAD(&to.back(), key, &value, type);
}

void put_string(std::vector<pmix_info_t> &to, const char *key, const std::string &value) {
    to.emplace_back();
    PMIX_INFO_LOAD(&to.back(), key, value.c_str(), PMIX_STRING);
}

std::string host_list(const std::vector<std::string> &hosts) {
    std::string out;
    for (const auto &h : hosts) out += (out.empty() ? "" : ",") + h;
    return out;
}

std::shared_ptr<SpawnLent> lend_spawn(const msg::Spawn &m) {
    auto lent = std::make_shared<SpawnLent>();
    auto &ji = lent->job_info;
    ji.reserve(20);
    if (m.notify_completion) put_info(ji, PMIX_NOTIFY_COMPLETION, true, PMIX_BOOL);
    if (m.spawn_timeout_s > 0)
        put_info(ji, PMIX_SPAWN_TIMEOUT, static_cast<int>(m.spawn_timeout_s + 0.999), PMIX_INT);
    if (m.timeout_s > 0)
        put_info(ji, PMIX_JOB_TIMEOUT, static_cast<int>(m.timeout_s + 0.999), PMIX_INT);
    if (m.map_by != "slot") put_string(ji, PMIX_MAPBY, m.map_by);
    if (m.bind_to != "none") put_string(ji, PMIX_BINDTO, m.bind_to);
    if (!m.hosts.empty()) put_string(ji, PMIX_HOST, host_list(m.hosts));
    if (!m.add_hosts.empty()) put_string(ji, PMIX_ADD_HOST, host_list(m.add_hosts));
    if (m.child_sep) put_info(ji, PMIX_SPAWN_CHILD_SEP, true, PMIX_BOOL);
    if (m.stop_in_init) put_info(ji, PMIX_DEBUG_STOP_IN_INIT, true, PMIX_BOOL);
    if (m.stop_in_app) put_info(ji, PMIX_DEBUG_STOP_IN_APP, true, PMIX_BOOL);
    if (m.stop_on_exec) put_info(ji, PMIX_DEBUG_STOP_ON_EXEC, true, PMIX_BOOL);
    if (m.forward_output) {
        put_info(ji, PMIX_FWD_STDOUT, true, PMIX_BOOL);
        put_info(ji, PMIX_FWD_STDERR, true, PMIX_BOOL);
    }
    if (m.debugger_daemons) {
        put_info(ji, PMIX_DEBUGGER_DAEMONS, true, PMIX_BOOL);
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, m.debug_target.nspace.c_str(), m.debug_target.rank);
        ji.emplace_back();
        PMIX_INFO_LOAD(&ji.back(), PMIX_DEBUG_TARGET, &target, PMIX_PROC);
        if (m.daemons_per_node > 0)
            put_info(ji, PMIX_DEBUG_DAEMONS_PER_NODE,
                     static_cast<std::uint16_t>(m.daemons_per_node), PMIX_UINT16);
        if (m.daemons_per_proc > 0)
            put_info(ji, PMIX_DEBUG_DAEMONS_PER_PROC,
                     static_cast<std::uint16_t>(m.daemons_per_proc), PMIX_UINT16);
    }
    lent->app_data.resize(m.apps.size());
    lent->apps.resize(m.apps.size());
    for (std::size_t a = 0; a < m.apps.size(); ++a) {
        const msg::App &in = m.apps[a];
        SpawnLent::App &d = lent->app_data[a];
        d.argv = in.argv;
        d.env = m.env;
        d.env.insert(d.env.end(), in.env.begin(), in.env.end());
        for (auto &s : d.argv) d.argv_p.push_back(s.data());
        d.argv_p.push_back(nullptr);
        for (auto &s : d.env) d.env_p.push_back(s.data());
        d.env_p.push_back(nullptr);
        d.info.reserve(2);
        if (!in.prefix.empty()) put_string(d.info, PMIX_PREFIX, in.prefix);
        if (in.session_cwd) put_info(d.info, PMIX_SET_SESSION_CWD, true, PMIX_BOOL);
        pmix_app_t &out = lent->apps[a];
        std::memset(&out, 0, sizeof out);
        out.cmd = const_cast<char *>(in.cmd.empty() ? d.argv_p[0] : in.cmd.c_str());
        out.argv = d.argv_p.data();
        out.env = d.env_p.data();
        out.cwd = in.cwd.empty() ? nullptr : const_cast<char *>(in.cwd.c_str());
        out.maxprocs = static_cast<int>(in.np);
        out.info = d.info.empty() ? nullptr : d.info.data();
        out.ninfo = d.info.size();
    }
    return lent;
}

}  // namespace

void HostModule::spawn(const Envelope &, msg::HostSpawn &m) {
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    if (!module_.spawn)
        return send(peer,
                    msg::ErrorReply{PMIX_ERR_NOT_SUPPORTED,
                                    "the resource manager does not spawn (no spawn upcall)"},
                    id);
    // The request (its apps' strings) lives as long as what is lent points into it.
    auto request = std::make_shared<msg::Spawn>(std::move(m.request));
    auto lent = lend_spawn(*request);
    auto answer = [this, peer, id](pmix_status_t status, const std::string &nspace) {
        if (status == PMIX_SUCCESS && (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN))
            status = PMIX_ERR_BAD_PARAM;
        if (status == PMIX_SUCCESS) return send(peer, msg::LaunchReply{nspace, {}}, id);
        send(peer, msg::ErrorReply{status, "the resource manager's spawn failed"}, id);
    };
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata = expect(
        reactor(), [this, answer, timer, lent, request](pmix_status_t status, std::string nspace) {
            reactor().cancel(*timer);
            answer(status, nspace);
        });
    const auto wait = request->spawn_timeout_s > 0
                          ? std::chrono::milliseconds(
                                static_cast<std::int64_t>(request->spawn_timeout_s * 1000)) +
                                std::chrono::seconds(1)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(kUpcallTimeout);
    *timer = reactor().after(wait, [this, cbdata, answer] {
        if (!give_up(cbdata)) return;
        log().warn("the host's spawn upcall did not call back in time");
        answer(PMIX_ERR_TIMEOUT, {});
    });
    pmix_proc_t parent;
    PMIX_LOAD_PROCID(&parent, request->parent.nspace.c_str(), request->parent.rank);
    const pmix_status_t rc = module_.spawn(
        &parent, lent->job_info.empty() ? nullptr : lent->job_info.data(), lent->job_info.size(),
        lent->apps.data(), lent->apps.size(), spawn_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    log().info("the host's spawn upcall failed: {}", PMIx_Error_string(rc));
    // A spawn that succeeded at once has no namespace to return.
    answer(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_BAD_PARAM : rc, {});
}

}  // namespace zpmix::server
