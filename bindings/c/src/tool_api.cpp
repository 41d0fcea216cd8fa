// zpmix: the tool API (RFC0010 connections): PMIx_tool_init/_finalize and a tool's connections
// to brokers. A tool holds one session per broker it attached to (a DEALER as a client's, whose
// Hello says `tool`); one of them is the primary, which every other call of the API (queries, job
// control, events, spawn) goes through, as for a client. The broker admits a tool as it admits
// `zpmix ctl` (docs/access.md): a process of its uid on its node (ipc), or over tcp one that
// holds its CURVE keypair ($ZPMIX_TCP_KEYS, as tcp clients do). Events are those of the first
// broker the tool connected to (over tcp, from its tcp publisher).
//
// Finding a broker: PMIX_SERVER_URI or PMIX_TCP_URI (its address), PMIX_SERVER_PIDINFO (the pid
// of a `zpmix run`, whose broker is embedded, or of a `zpmix broker`), PMIX_SERVER_NSPACE (the
// broker that runs that job), PMIX_CONNECT_TO_SYSTEM (the standalone broker), and by default
// (or PMIX_CONNECT_SYSTEM_FIRST) the standalone broker, else the only broker of this user on the
// node; all from the rendezvous files (actors/protocol/rendezvous.hpp): of the base directory, and
// for a pid or a job of every base directory this user's brokers may use. PMIX_CONNECT_MAX_RETRIES
// and PMIX_CONNECT_RETRY_DELAY (seconds, 1 by default): a broker found but not reached (not up yet)
// is tried again; by default once only.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pmix_tool.h>
#include <spdlog/spdlog.h>

#include "actors/protocol/job.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/session.hpp"
#include "attributes.hpp"
#include "client/session.hpp"
#include "client/store.hpp"
#include "client_events.hpp"
#include "info_values.hpp"
#include "process.hpp"

namespace zpmix::c {

namespace {

constexpr std::uint32_t kConnectTimeoutMs = 10000;

const Honours kToolInit(Role::tool, "PMIx_tool_init",
                        {ZPMIX_ATTR(PMIX_SERVER_PIDINFO), ZPMIX_ATTR(PMIX_SERVER_NSPACE),
                         ZPMIX_ATTR(PMIX_SERVER_URI), ZPMIX_ATTR(PMIX_TCP_URI),
                         ZPMIX_ATTR(PMIX_CONNECT_TO_SYSTEM), ZPMIX_ATTR(PMIX_CONNECT_SYSTEM_FIRST),
                         ZPMIX_ATTR(PMIX_TOOL_NSPACE), ZPMIX_ATTR(PMIX_TOOL_RANK),
                         ZPMIX_ATTR(PMIX_TOOL_DO_NOT_CONNECT), ZPMIX_ATTR(PMIX_CONNECT_MAX_RETRIES),
                         ZPMIX_ATTR(PMIX_CONNECT_RETRY_DELAY), ZPMIX_ATTR(PMIX_TIMEOUT)});
const Honours kToolAttach(Role::tool, "PMIx_tool_attach_to_server",
                          {ZPMIX_ATTR(PMIX_SERVER_PIDINFO), ZPMIX_ATTR(PMIX_SERVER_NSPACE),
                           ZPMIX_ATTR(PMIX_SERVER_URI), ZPMIX_ATTR(PMIX_TCP_URI),
                           ZPMIX_ATTR(PMIX_CONNECT_TO_SYSTEM),
                           ZPMIX_ATTR(PMIX_CONNECT_SYSTEM_FIRST), ZPMIX_ATTR(PMIX_PRIMARY_SERVER),
                           ZPMIX_ATTR(PMIX_CONNECT_MAX_RETRIES),
                           ZPMIX_ATTR(PMIX_CONNECT_RETRY_DELAY), ZPMIX_ATTR(PMIX_TIMEOUT)});
const Honours kToolConnect(Role::tool, "PMIx_tool_connect_to_server",
                           {ZPMIX_ATTR(PMIX_SERVER_PIDINFO), ZPMIX_ATTR(PMIX_SERVER_NSPACE),
                            ZPMIX_ATTR(PMIX_SERVER_URI), ZPMIX_ATTR(PMIX_TCP_URI),
                            ZPMIX_ATTR(PMIX_CONNECT_TO_SYSTEM),
                            ZPMIX_ATTR(PMIX_CONNECT_SYSTEM_FIRST),
                            ZPMIX_ATTR(PMIX_CONNECT_MAX_RETRIES),
                            ZPMIX_ATTR(PMIX_CONNECT_RETRY_DELAY), ZPMIX_ATTR(PMIX_TIMEOUT)});

struct Server {
    pmix_proc_t id{};  // the broker's name, rank 0
    std::string uri;
    std::unique_ptr<client::Session> session;
};

// The process's one tool. Never destroyed, as the client (client_api.cpp).
struct Tool {
    std::mutex mu;  // every call below
    bool initialized = false;
    std::unique_ptr<client::ClientStore> store;
    std::unique_ptr<client::Session> unconnected;  // PMIX_TOOL_DO_NOT_CONNECT
    std::vector<std::unique_ptr<Server>> servers;
    Server *primary = nullptr;
    Server *events = nullptr;  // whose events the tool gets
};

Tool &the_tool() {
    static Tool *t = new Tool;
    return *t;
}

// What the info array says about the broker to connect to.
struct Target {
    std::string uri;
    std::int64_t pid = 0;
    std::string nspace;
    bool system = false, system_first = false, primary = false;
    std::uint32_t timeout_ms = kConnectTimeoutMs;
    // A broker that is not there yet (its socket absent, or not accepting) is tried again.
    std::uint32_t retries = 0, retry_delay_s = 1;
};

Target target_of(const pmix_info_t info[], size_t ninfo) {
    Target t;
    for (size_t n = 0; info && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        pmix_status_t rc;
        if (PMIX_CHECK_KEY(&i, PMIX_SERVER_URI) || PMIX_CHECK_KEY(&i, PMIX_TCP_URI)) {
            t.uri = string_of(i.value);
            // OpenPMIx's form "nspace.rank;uri": the address is what follows the ';'.
            if (auto semi = t.uri.find(';'); semi != std::string::npos) t.uri.erase(0, semi + 1);
        } else if (PMIX_CHECK_KEY(&i, PMIX_SERVER_PIDINFO)) {
            std::int64_t pid = 0;
            PMIX_VALUE_GET_NUMBER(rc, &i.value, pid, std::int64_t);
            if (rc == PMIX_SUCCESS) t.pid = pid;
        } else if (PMIX_CHECK_KEY(&i, PMIX_SERVER_NSPACE)) {
            t.nspace = string_of(i.value);
        } else if (PMIX_CHECK_KEY(&i, PMIX_CONNECT_TO_SYSTEM)) {
            t.system = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_CONNECT_SYSTEM_FIRST)) {
            t.system_first = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_PRIMARY_SERVER)) {
            t.primary = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_TIMEOUT)) {
            int s = 0;
            PMIX_VALUE_GET_NUMBER(rc, &i.value, s, int);
            if (rc == PMIX_SUCCESS && s > 0) t.timeout_ms = static_cast<std::uint32_t>(s) * 1000;
        } else if (PMIX_CHECK_KEY(&i, PMIX_CONNECT_MAX_RETRIES) ||
                   PMIX_CHECK_KEY(&i, PMIX_CONNECT_RETRY_DELAY)) {
            std::uint32_t n = 0;
            PMIX_VALUE_GET_NUMBER(rc, &i.value, n, std::uint32_t);
            if (rc == PMIX_SUCCESS)
                (PMIX_CHECK_KEY(&i, PMIX_CONNECT_MAX_RETRIES) ? t.retries : t.retry_delay_s) = n;
        }
    }
    return t;
}

pmix_status_t refused(const std::string &why) {
    spdlog::error("pmix tool: the broker refused the connection{}{}", why.empty() ? "" : ": ", why);
    return PMIX_ERR_NO_PERMISSIONS;
}

// A session with the broker at `uri`: the Hello of a tool, answered by a Welcome. A broker not
// reached (its socket not there yet, or not accepting) is tried `retries` more times,
// retry_delay_s apart; a refusal, the broker's or the kernel's (EACCES), is final at once.
pmix_status_t open_session(Tool &t, const std::string &uri, std::uint32_t timeout_ms,
                           std::unique_ptr<Server> &out, msg::Welcome &welcome,
                           std::uint32_t retries = 0, std::uint32_t retry_delay_s = 0) {
    auto s = std::make_unique<Server>();
    s->uri = uri;
    // tcp: the broker's CURVE keypair, as its tcp.key holds it (the operator's credential there).
    std::optional<CurveKeypair> keys;
    if (const char *k = getenv("ZPMIX_TCP_KEYS"); k && *k && uri.starts_with("tcp://")) {
        keys = CurveKeypair::parse(k);
        if (!keys) {
            spdlog::error(
                "pmix tool: $ZPMIX_TCP_KEYS is not \"PUBLIC SECRET\" (40-character Z85 "
                "keys)");
            return PMIX_ERR_BAD_PARAM;
        }
    }
    for (std::uint32_t attempt = 0; !s->session; ++attempt) {
        try {
            s->session = std::make_unique<client::Session>(*t.store, uri, timeout_ms,
                                                           uri.starts_with("ipc://"), keys);
        } catch (const client::ZmtpError &e) {
            if (e.denied()) {  // the socket's mode or its directory's: no retry changes that
                spdlog::error("pmix tool: {}", e.what());
                return PMIX_ERR_NO_PERMISSIONS;
            }
            if (e.refused) {
                const std::string what = e.what();    // "the broker refused the connection: WHY"
                if (what.starts_with("refusing ")) {  // we did: not this user's broker
                    spdlog::error("pmix tool: {}", what);
                    return PMIX_ERR_NO_PERMISSIONS;
                }
                const auto colon = what.find(": ");
                return refused(colon == std::string::npos ? what : what.substr(colon + 2));
            }
            if (attempt >= retries) {
                spdlog::error("pmix tool: cannot reach the broker at {}: {}", uri, e.what());
                return PMIX_ERR_UNREACH;
            }
            std::this_thread::sleep_for(std::chrono::seconds(retry_delay_s));
        }
    }
    const msg::Hello hello{"tool", process().me.nspace, process().me.rank, ::getpid(), ""};
    auto reply = s->session->call(hello, timeout_ms);
    pmix_status_t status = reply.status;
    if (status == PMIX_ERR_LOST_CONNECTION && s->session->refused())
        return refused(s->session->refusal());
    if (status == PMIX_SUCCESS && reply.env.version != kProtocolVersion) {
        reply.message =
            msg::other_protocol(reply.env.version, msg::release_in(reply.env), "broker", "tool");
        status = PMIX_ERR_NOT_SUPPORTED;
    }
    if (!reply.message.empty()) spdlog::error("pmix tool: {}: {}", uri, reply.message);
    if (status != PMIX_SUCCESS) return status;
    try {
        welcome = reply.env.as<msg::Welcome>();
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    s->session->set_broker(msg::PeerFeatures(welcome.release, welcome.features, welcome.abi));
    PMIX_LOAD_PROCID(&s->id, welcome.broker.c_str(), 0);
    // A resource manager hosting the broker named this tool (its tool_connected upcall).
    if (!welcome.tool.nspace.empty() && welcome.tool.nspace.size() <= PMIX_MAX_NSLEN)
        PMIX_LOAD_PROCID(&process().me, welcome.tool.nspace.c_str(), welcome.tool.rank);
    out = std::move(s);
    return PMIX_SUCCESS;
}

// Whether the broker at `uri` runs job `nspace` (it answers for its job information). A broker
// that refused this tool (a resource manager hosting it may refuse tools) leaves its status in
// `refusal`.
bool runs_job(Tool &t, const std::string &uri, const std::string &nspace, std::uint32_t timeout_ms,
              pmix_status_t &refusal) {
    std::unique_ptr<Server> s;
    msg::Welcome w;
    if (pmix_status_t rc = open_session(t, uri, timeout_ms, s, w); rc != PMIX_SUCCESS) {
        if (rc != PMIX_ERR_UNREACH) refusal = rc;
        return false;
    }
    return s->session->call(msg::JobInfoQuery{nspace}, timeout_ms).status == PMIX_SUCCESS;
}

pmix_status_t find_trusted(Tool &t, const Target &target, std::string &uri);

// The broker's address, from the target and the rendezvous files; PMIX_ERR_NO_PERMISSIONS when
// what was found there is not this user's alone (rendezvous.hpp).
pmix_status_t find(Tool &t, const Target &target, std::string &uri) {
    try {
        return find_trusted(t, target, uri);
    } catch (const UntrustedPath &e) {
        spdlog::error("pmix tool: {}", e.what());
        return PMIX_ERR_NO_PERMISSIONS;
    }
}

pmix_status_t find_trusted(Tool &t, const Target &target, std::string &uri) {
    if (!target.uri.empty()) {
        uri = target.uri;
        return PMIX_SUCCESS;
    }
    const std::string base = default_base_dir();
    if (target.system || (target.system_first && target.pid == 0 && target.nspace.empty())) {
        if (auto standalone = find_broker(base)) {
            uri = standalone->uri;
            return PMIX_SUCCESS;
        }
        if (target.system) {
            spdlog::error("pmix tool: no standalone broker (`zpmix broker`) in {}", base);
            return PMIX_ERR_UNREACH;
        }
    }
    // A broker named by its pid or job may have been started with another XDG_RUNTIME_DIR: every
    // base directory of this user is looked in, as `zpmix ps` does.
    if (target.pid != 0 || !target.nspace.empty()) {
        const auto all = find_user_brokers();
        pmix_status_t refusal = PMIX_SUCCESS;
        for (const auto &b : all)
            if (target.pid != 0 ? b.pid == target.pid
                                : runs_job(t, b.uri, target.nspace, target.timeout_ms, refusal)) {
                uri = b.uri;
                return PMIX_SUCCESS;
            }
        std::string dirs;
        for (const auto &d : user_base_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
        if (target.pid != 0) {
            spdlog::error("pmix tool: no broker of pid {} on this node (in {})", target.pid, dirs);
        } else if (refusal != PMIX_SUCCESS) {  // the one that runs it may be among them
            spdlog::error(
                "pmix tool: no broker on this node that admits this tool runs job {} (in {}): {}",
                target.nspace, dirs, PMIx_Error_string(refusal));
            return refusal;
        } else {
            spdlog::error("pmix tool: no broker on this node runs job {} (in {})", target.nspace,
                          dirs);
        }
        return PMIX_ERR_UNREACH;
    }
    const auto brokers = find_brokers(base);
    if (const char *own = getenv("ZPMIX_URI"); own && *own) {  // a tool launched as a rank
        uri = own;
        return PMIX_SUCCESS;
    }
    if (brokers.size() == 1 || (!brokers.empty() && find_broker(base))) {
        uri = brokers.front().uri;  // the standalone broker comes first
        return PMIX_SUCCESS;
    }
    spdlog::error("pmix tool: {} in {}: name one (PMIX_SERVER_PIDINFO, PMIX_SERVER_URI...)",
                  brokers.empty() ? "no broker" : "several brokers", base);
    return PMIX_ERR_UNREACH;
}

void make_primary(Tool &t, Server *s) {
    t.primary = s;
    attach(s ? *s->session : *t.unconnected);
}

// Connects to the broker the info names, as another server (primary when asked, or the first).
pmix_status_t connect(Tool &t, const pmix_info_t info[], size_t ninfo, bool primary,
                      pmix_proc_t *server) {
    const Target target = target_of(info, ninfo);
    std::string uri;
    if (pmix_status_t rc = find(t, target, uri); rc != PMIX_SUCCESS) return rc;
    for (const auto &s : t.servers)
        if (s->uri == uri) {  // already attached
            if (primary || target.primary) make_primary(t, s.get());
            if (server) *server = s->id;
            return PMIX_SUCCESS;
        }
    std::unique_ptr<Server> s;
    msg::Welcome welcome;
    if (pmix_status_t rc = open_session(t, uri, target.timeout_ms, s, welcome, target.retries,
                                        target.retry_delay_s);
        rc != PMIX_SUCCESS)
        return rc;
    if (!t.events) {
        msg::JobInfo job;
        job.nspace = process().me.nspace;
        job.size = 1;
        if (pmix_status_t rc = events_start(*s->session, process().me, job, welcome.events_uri,
                                            welcome.broker, true);
            rc != PMIX_SUCCESS)
            return rc;
        t.events = s.get();
    }
    if (server) *server = s->id;
    t.servers.push_back(std::move(s));
    if (primary || target.primary || !t.primary) make_primary(t, t.servers.back().get());
    return PMIX_SUCCESS;
}

Server *server_named(Tool &t, const pmix_proc_t *p) {
    for (const auto &s : t.servers)
        if (p && PMIX_CHECK_NSPACE(s->id.nspace, p->nspace)) return s.get();
    return nullptr;
}

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    c::log_to_stderr();
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (t.initialized) {
        if (proc) *proc = process().me;
        return PMIX_SUCCESS;
    }
    if (c::with_client(false, [](auto &, const auto &) {}) == PMIX_SUCCESS)
        return PMIX_ERR_INIT;  // PMIx_Init made this process a client
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string nspace = "tool." + std::string(host) + "." + std::to_string(getpid());
    pmix_rank_t rank = 0;
    bool connect = true;
    for (size_t n = 0; info && n < ninfo; ++n) {
        if (PMIX_CHECK_KEY(&info[n], PMIX_TOOL_NSPACE) && info[n].value.type == PMIX_STRING &&
            info[n].value.data.string)
            nspace = info[n].value.data.string;
        else if (PMIX_CHECK_KEY(&info[n], PMIX_TOOL_RANK) && info[n].value.type == PMIX_PROC_RANK)
            rank = info[n].value.data.rank;
        else if (PMIX_CHECK_KEY(&info[n], PMIX_TOOL_RANK) && info[n].value.type == PMIX_UINT32)
            rank = info[n].value.data.uint32;
        else if (PMIX_CHECK_KEY(&info[n], PMIX_TOOL_DO_NOT_CONNECT))
            connect = !PMIX_INFO_TRUE(&info[n]);
    }
    if (nspace.size() > PMIX_MAX_NSLEN) return PMIX_ERR_BAD_PARAM;
    PMIX_LOAD_PROCID(&process().me, nspace.c_str(), rank);
    t.store = std::make_unique<client::ClientStore>();
    t.unconnected = std::make_unique<client::Session>(*t.store);
    if (connect) {
        if (pmix_status_t rc = c::connect(t, info, ninfo, true, nullptr); rc != PMIX_SUCCESS) {
            c::events_stop();
            t.servers.clear();
            t.events = nullptr;
            t.unconnected.reset();
            t.store.reset();
            return rc;
        }
    } else {
        c::make_primary(t, nullptr);
    }
    t.initialized = true;
    if (proc) *proc = process().me;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    t.initialized = false;
    c::detach();
    c::events_stop();
    t.primary = t.events = nullptr;
    t.servers.clear();  // fails what is pending, then disconnects
    t.unconnected.reset();
    t.store.reset();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo) {
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    if (myproc) *myproc = process().me;
    return c::connect(t, info, ninfo, false, server);
}

// The standard's older form: the new server becomes the primary.
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[],
                                                      size_t ninfo) {
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    if (proc) *proc = process().me;
    return c::connect(t, info, ninfo, true, nullptr);
}

PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server) {
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    c::Server *s = c::server_named(t, server);
    if (!s) return PMIX_ERR_NOT_FOUND;
    if (s == t.events) {
        c::events_stop();
        t.events = nullptr;
    }
    if (s == t.primary) {
        c::Server *next = nullptr;
        for (const auto &other : t.servers)
            if (other.get() != s) next = next ? next : other.get();
        c::make_primary(t, next);
    }
    std::erase_if(t.servers, [s](const auto &p) { return p.get() == s; });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers) {
    if (servers == nullptr || nservers == nullptr) return PMIX_ERR_BAD_PARAM;
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    *servers = nullptr;
    *nservers = t.servers.size();
    if (t.servers.empty()) return PMIX_SUCCESS;
    PMIX_PROC_CREATE(*servers, t.servers.size());
    for (size_t i = 0; i < t.servers.size(); ++i) (*servers)[i] = t.servers[i]->id;
    return PMIX_SUCCESS;
}

// Makes an attached server the primary; one not attached is attached first, from the info.
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo) {
    c::Tool &t = c::the_tool();
    std::lock_guard lock(t.mu);
    if (!t.initialized) return PMIX_ERR_INIT;
    if (c::Server *s = c::server_named(t, server)) {
        c::make_primary(t, s);
        return PMIX_SUCCESS;
    }
    if (info == nullptr || ninfo == 0) return PMIX_ERR_NOT_FOUND;
    pmix_proc_t got{};
    if (pmix_status_t rc = c::connect(t, info, ninfo, false, &got); rc != PMIX_SUCCESS) return rc;
    if (server && !PMIX_CHECK_NSPACE(got.nspace, server->nspace)) {
        spdlog::error("pmix tool: the broker found is {}, not {}", got.nspace, server->nspace);
        return PMIX_ERR_BAD_PARAM;
    }
    c::make_primary(t, c::server_named(t, &got));
    return PMIX_SUCCESS;
}

}  // extern "C"
