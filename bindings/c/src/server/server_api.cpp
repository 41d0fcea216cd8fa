// The server half of the C API (pmix_server.h): a resource manager embeds zpmix as its PMIx server
// library. PMIx_server_init starts a broker inside the host's process (the same broker as
// `zpmix broker`, on threads of its own) with the host's pmix_server_module_t as its `host` actor
// (host_module.hpp); the host registers namespaces and clients, sets up each client's environment
// (PMIx_server_setup_fork) and starts them; they reach the broker as zpmix's own ranks do. The host
// process itself is a tool of its broker (PMIx_Register_event_handler, PMIx_Notify_event ... work
// for it). PMIx_server_finalize ends the clients' sessions, stops the broker and removes its files.
//
// Threading: every call may come from any host thread, also from inside an upcall (on the
// broker's thread: then it runs there, at once). A call with a NULL cbfunc completes before it
// returns and says so (PMIX_OPERATION_SUCCEEDED); with a cbfunc, the callback runs on the broker's
// thread once done. Calls before PMIx_server_init or after PMIx_server_finalize: PMIX_ERR_INIT.
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "actors/launcher/rank_environment.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/host.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/shm/fence_board.hpp"
#include "broker/broker.hpp"
#include "client/values/pmix_helpers.hpp"
#include "pmix.h"
#include "pmix_server.h"
#include "process.hpp"
#include "server/completions.hpp"
#include "server/host_module.hpp"
#include "server/host_services.hpp"
#include "server/job_registration.hpp"
#include "server/maps.hpp"
#include "server/server_core.hpp"

namespace zpmix::server {

namespace {

namespace fs = std::filesystem;

std::string string_info(const pmix_info_t *info, std::size_t ninfo, const char *key) {
    for (std::size_t i = 0; info && i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_STRING &&
            info[i].value.data.string)
            return info[i].value.data.string;
    return {};
}

std::optional<std::uint64_t> number_info(const pmix_info_t *info, std::size_t ninfo,
                                         const char *key) {
    for (std::size_t i = 0; info && i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], key)) {
            pmix_status_t rc;
            std::uint64_t n = 0;
            PMIX_VALUE_GET_NUMBER(rc, &info[i].value, n, std::uint64_t);
            if (rc == PMIX_SUCCESS) return n;
        }
    return std::nullopt;
}

bool flag_info(const pmix_info_t *info, std::size_t ninfo, const char *key) {
    for (std::size_t i = 0; info && i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], key)) return PMIX_INFO_TRUE(&info[i]);
    return false;
}

std::string hostname() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

// The board of namespace `ns` of `size` ranks, in the broker's own session directory (removed
// with the namespace); the one made at an earlier registration of it when it fits. Empty when
// none can be made: that job fences through the broker, as every job did before.
std::string fence_board_for(const Core &c, const std::string &ns, std::uint32_t size) {
    const std::string dir = c.broker->run_dir() + "/session/" + ns;
    const std::string path = dir + "/fence-board";
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string err = ec ? dir + ": " + ec.message() : FenceBoard::create(path, size);
    if (!err.empty() && fs::exists(path, ec)) {
        std::string error;
        auto board = FenceBoard::open(path, error);
        if (board && board->ranks() == size) return path;
    }
    if (!err.empty()) {
        spdlog::warn("pmix server: {} fences through the broker: {}", ns, err);
        return {};
    }
    // The job's user, when the host serves another (Slurm's stepd): the ranks map it read-write.
    const std::int64_t uid = c.broker->config().client_uid;
    if (uid >= 0 && static_cast<uid_t>(uid) != ::geteuid() &&
        (::chown(dir.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(-1)) != 0 ||
         ::chown(path.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(-1)) != 0)) {
        spdlog::warn("pmix server: {} fences through the broker: cannot give {} to uid {}", ns,
                     path, uid);
        fs::remove(path, ec);
        return {};
    }
    return path;
}

}  // namespace

}  // namespace zpmix::server

using namespace zpmix;
using namespace zpmix::server;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo) {
    c::log_to_stderr();
    ServerLibrary &s = state();
    std::unique_lock lock(s.mu);
    if (s.refs > 0) {
        ++s.refs;
        return PMIX_SUCCESS;
    }
    if (module == nullptr) return PMIX_ERR_BAD_PARAM;
    auto c = std::make_shared<Core>();
    try {
        Config config = load_config(std::nullopt);
        // Where the broker's sockets go: the host's directory for them, else this user's runtime
        // directory, where tools find a server by its pid (PMIX_SERVER_TOOL_SUPPORT).
        config.run_dir.clear();
        config.run_dir_base = string_info(info, ninfo, PMIX_SERVER_TMPDIR);
        if (config.run_dir_base.empty())
            config.run_dir_base = string_info(info, ninfo, PMIX_SYSTEM_TMPDIR);
        while (config.run_dir_base.size() > 1 && config.run_dir_base.back() == '/')
            config.run_dir_base.pop_back();
        if (flag_info(info, ninfo, PMIX_SERVER_TOOL_SUPPORT) ||
            flag_info(info, ninfo, PMIX_SERVER_SYSTEM_SUPPORT))
            config.run_dir_base.clear();
        // The clients' uid, when it is not the host's (Slurm's stepd serves the job's user).
        if (auto uid = number_info(info, ninfo, PMIX_USERID))
            config.client_uid = static_cast<std::int64_t>(*uid);
        // The node's system server: its broker is where a standalone `zpmix broker` would be,
        // this user's base directory, where tools asking for the system's server
        // (PMIX_CONNECT_TO_SYSTEM) and `zpmix run` look; one per base directory (a second, or a
        // `zpmix broker` there, fails PMIx_server_init). Not for clients of another uid: that
        // directory stays this user's.
        if (flag_info(info, ninfo, PMIX_SERVER_SYSTEM_SUPPORT)) {
            if (config.client_uid >= 0 &&
                config.client_uid != static_cast<std::int64_t>(::getuid()))
                spdlog::warn(
                    "pmix server: PMIX_SERVER_SYSTEM_SUPPORT with clients of uid {}: "
                    "not the system server (its directory is this user's)",
                    config.client_uid);
            else
                config.run_dir = default_base_dir();
        }
        config.hosted = true;
        // The host monitors its clients unless it asks the library to (mpirun does).
        const bool library_monitors = flag_info(info, ninfo, PMIX_SERVER_ENABLE_MONITORING);
        config.monitor_by_host = module->monitor != nullptr && !library_monitors;
        config.monitor_alerts_to_host = library_monitors && module->notify_event != nullptr;
        config.host_spawns = module->spawn != nullptr;
        config.node = string_info(info, ninfo, PMIX_HOSTNAME);  // "": the host name
        config.handle_signals = false;
        // The host's stderr is the host's (and often nowhere, as slurmstepd's): only warnings
        // there, unless configured; [log] file takes the library's log instead.
        if (!config.log_file.empty()) {
            auto logger = spdlog::basic_logger_mt("zpmix-server", config.log_file);
            logger->set_pattern("%H:%M:%S.%e zpmix-server[%P] %n %l: %v");
            logger->flush_on(spdlog::level::trace);
            spdlog::set_default_logger(logger);
        }
        apply_log_level(std::getenv("ZPMIX_CONFIG") ? config.log_level : "warn");
        c->write_timeout_ms = config.client_write_timeout_ms;
        c->group_timeout_ms = config.group_timeout_ms;
        c->broker = std::make_unique<Broker>(config);
        c->host = &c->broker->add_actor<HostModule>(*module);
        c->broker->add_actor<HostServices>(*module);  // job control, monitor, query, log
        c->host->set_node(&c->broker->namespaces(), c->broker->node());
        c->broker->start();
        c->uri = c->broker->uri();
    } catch (const std::exception &e) {
        spdlog::error("pmix server: PMIx_server_init: cannot start a broker: {}", e.what());
        return PMIX_ERR_INIT;
    }
    // The host process is a client of its own broker, as rank `rank` of the namespace the host
    // names it by (PMIX_SERVER_NSPACE/RANK): PMIx_Get, PMIx_Store_internal, events ... work for
    // it as for any client. Its namespace is a plain one of this node, holding this process.
    std::string nspace = string_info(info, ninfo, PMIX_SERVER_NSPACE);
    if (nspace.empty()) nspace = "zpmix-server." + hostname() + "." + std::to_string(::getpid());
    const auto rank = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(number_info(info, ninfo, PMIX_SERVER_RANK).value_or(0), 1023));
    const std::string secret = random_secret();
    msg::JobInfo own;
    own.nspace = nspace;
    own.size = own.univ_size = own.max_procs = rank + 1;
    own.nodes = {c->broker->node()};
    own.procs.resize(rank + 1);
    for (std::uint32_t r = 0; r <= rank; ++r) {
        own.procs[r].rank = r;
        own.procs[r].hostname = c->broker->node();
        own.procs[r].local_rank = own.procs[r].node_rank = static_cast<std::uint16_t>(r);
    }
    own.procs[rank].pid = ::getpid();
    c->own_nspace = nspace;
    HostModule *host = c->host;
    if (!on_broker(*c, [host, own, secret]() mutable {
            host->tell("registry", msg::RegisterNamespace{std::move(own), secret});
        })) {
        c->broker->stop();
        return PMIX_ERR_INIT;
    }
    s.core = c;
    s.refs = 1;
    lock.unlock();
    // The host's PMIx_Notify_event: published by the broker with the source the host names.
    c::set_host_notify(
        [c](msg::Event event, bool no_cache, std::function<void(pmix_status_t)> done) {
            HostModule *h = c->host;
            auto publish = [h, event = std::move(event), no_cache, done]() mutable {
                h->publish(std::move(event), no_cache);
                done(PMIX_SUCCESS);
            };
            // From an upcall (the broker's thread): at once, as the caller may wait for it there.
            if (c->broker->reactor().on_reactor_thread()) return publish();
            c->broker->reactor().post(std::move(publish));
        });
    if (const pmix_status_t rc = c::init_as(c->uri, nspace, rank, secret); rc != PMIX_SUCCESS) {
        spdlog::error("pmix server: PMIx_server_init: the server cannot reach its broker: {}",
                      PMIx_Error_string(rc));
        PMIx_server_finalize();
        return rc;
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void) {
    ServerLibrary &s = state();
    std::shared_ptr<Core> c;
    {
        std::lock_guard lock(s.mu);
        if (s.refs == 0) return PMIX_ERR_INIT;
        if (--s.refs > 0) return PMIX_SUCCESS;
        c = std::move(s.core);
        s.secrets.clear();
    }
    c::set_host_notify(nullptr);
    (void)PMIx_Finalize(nullptr, 0);  // the host's own client session
    give_up_all();                    // the host's late callbacks find nothing from here on
    c->broker->stop();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex) {
    if (input == nullptr || regex == nullptr) return PMIX_ERR_BAD_PARAM;
    *regex = strdup(generate_regex(input).c_str());
    return *regex ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn) {
    if (input == nullptr || ppn == nullptr) return PMIX_ERR_BAD_PARAM;
    *ppn = strdup(generate_ppn(input).c_str());
    return *ppn ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (nspace == nullptr || PMIX_NSPACE_INVALID(nspace)) return PMIX_ERR_BAD_PARAM;
    const std::string ns(nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    if (ns == c->own_nspace)  // the host's own, registered by PMIx_server_init (mpirun's NODATA)
        return finish(
            *c, [] {}, cbfunc, cbdata);
    // The host's resources first (PMIx_server_register_resources): the namespace's own win.
    JobRegistration reg;
    c->resources.with(info, ninfo, [&](const pmix_info_t *all, std::size_t n) {
        reg = job_from_infos(ns, nlocalprocs, all, n, c->broker->node());
    });
    if (!reg.error.empty()) {
        spdlog::error("pmix server: PMIx_server_register_nspace {}: {}", ns, reg.error);
        return reg.unsupported ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM;
    }
    std::string secret;
    {
        ServerLibrary &s = state();
        std::lock_guard lock(s.mu);
        auto [it, fresh] = s.secrets.try_emplace(ns, random_secret());  // kept if registered again
        secret = it->second;
    }
    msg::JobInfo &job = reg.job;
    // The job's session directories, unless the host gave its own: PMIX_TMPDIR, PMIX_NSDIR.
    if (job.session_tmpdir.empty()) {
        job.session_tmpdir = c->broker->run_dir() + "/session/" + ns;
        std::error_code ec;
        fs::create_directories(job.session_tmpdir, ec);
        if (ec) spdlog::warn("pmix server: cannot make {}: {}", job.session_tmpdir, ec.message());
    }
    if (job.nsdir.empty()) job.nsdir = job.session_tmpdir;
    // No local process: the host's job runs on its other servers (mpirun registers so a job of
    // another mpirun that its job connected to), whatever host names it has.
    const bool elsewhere = nlocalprocs == 0;
    // Every rank on this node (mpirun on one node, a one-node srun step): its whole-namespace
    // fences meet on a board, as under `zpmix run`, instead of a round trip to this broker each.
    if (job.size > 1 && nlocalprocs >= 0 && static_cast<std::uint32_t>(nlocalprocs) == job.size)
        job.fence_board = fence_board_for(*c, ns, job.size);
    HostModule *host = c->host;
    return finish(
        *c,
        [host, job = std::move(job), secret = std::move(secret), elsewhere]() mutable {
            host->tell("registry", msg::RegisterNamespace{
                                       std::move(job), std::move(secret), {}, true, elsewhere});
        },
        cbfunc, cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    auto c = core();
    if (!c || nspace == nullptr) {
        if (cbfunc) cbfunc(c ? PMIX_ERR_BAD_PARAM : PMIX_ERR_INIT, cbdata);
        return;
    }
    const std::string ns(nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    {
        ServerLibrary &s = state();
        std::lock_guard lock(s.mu);
        s.secrets.erase(ns);
    }
    const std::string dir = c->broker->run_dir() + "/session/" + ns;
    HostModule *host = c->host;
    (void)finish(
        *c,
        [host, ns, dir] {
            host->tell("registry", msg::DeregisterNamespace{ns, true, 0, {}});
            std::error_code ec;
            fs::remove_all(dir, ec);
        },
        cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
    const msg::Proc p = proc_of(*proc);
    HostModule *host = c->host;
    return finish(
        *c,
        [host, p, uid, gid, server_object] {
            host->set_client(p, server_object, false, static_cast<std::uint32_t>(uid),
                             static_cast<std::uint32_t>(gid));
            host->tell("registry", msg::RegisterClient{p, static_cast<std::uint32_t>(uid),
                                                       static_cast<std::uint32_t>(gid)});
        },
        cbfunc, cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    auto c = core();
    if (!c || proc == nullptr) {
        if (cbfunc) cbfunc(c ? PMIX_ERR_BAD_PARAM : PMIX_ERR_INIT, cbdata);
        return;
    }
    const msg::Proc p = proc_of(*proc);
    HostModule *host = c->host;
    (void)finish(
        *c,
        [host, p] {
            host->set_client(p, nullptr, true);
            host->tell("registry", msg::DeregisterClient{p});
        },
        cbfunc, cbdata);
}

// The client's environment: how it reaches this broker and proves its job (the job's secret).
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (proc == nullptr || env == nullptr) return PMIX_ERR_BAD_PARAM;
    const msg::Proc p = proc_of(*proc);
    std::string secret;
    {
        ServerLibrary &s = state();
        std::lock_guard lock(s.mu);
        auto it = s.secrets.find(p.nspace);
        if (it == s.secrets.end()) {
            // Hosts may set a child up before registering its namespace: the secret is made now.
            it = s.secrets.emplace(p.nspace, random_secret()).first;
        }
        secret = it->second;
    }
    for (const std::string &kv :
         client_variables(c->uri, secret, c->write_timeout_ms, c->group_timeout_ms, p.nspace)) {
        const auto eq = kv.find('=');
        std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
        if (name == "PMIX_RANK") value = std::to_string(p.rank);
        if (pmix_status_t rc = c::env_set(name.c_str(), value.c_str(), true, env);
            rc != PMIX_SUCCESS)
            return rc;
    }
    const std::string dir = c->broker->run_dir();
    for (const char *name : {"PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR"})
        if (pmix_status_t rc = c::env_set(name, dir.c_str(), true, env); rc != PMIX_SUCCESS)
            return rc;
    return PMIX_SUCCESS;
}

// The data a process of this node committed, for the host's direct modex from another node: its
// callback gets it once the process committed (bounded by the broker's direct-modex wait).
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (proc == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    if (proc->rank == PMIX_RANK_WILDCARD) return PMIX_ERR_BAD_PARAM;  // one process's data
    const msg::Proc p = proc_of(*proc);
    HostModule *host = c->host;
    c->broker->reactor().post(
        [host, p, cbfunc, cbdata] { host->dmodex_request(p, cbfunc, cbdata); });
    return PMIX_SUCCESS;
}

// Nothing to add where zpmix has nothing to offer (no fabric, no local support to set up).
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace,
                                                        pmix_info_t info[], size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata) {
    (void)info;
    (void)ninfo;
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (nspace == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    c->broker->reactor().post(
        [cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, nullptr, 0, cbdata, nullptr, nullptr); });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                                          pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (nspace == nullptr) return PMIX_ERR_BAD_PARAM;
    return finish(
        *c, [] {}, cbfunc, cbdata);
}

}  // extern "C"
