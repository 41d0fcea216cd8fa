// zpmix: the client side of the PMIx standard API (init, put/commit/fence/get, publish/lookup,
// job information), over the Session and its store.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <pmix.h>
#include <spdlog/spdlog.h>

#include "actors/protocol/host.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/pset.hpp"
#include "attributes.hpp"
#include "client/node_fence.hpp"
#include "client/session.hpp"
#include "client/store.hpp"
#include "client/values/value_codec.hpp"
#include "client_events.hpp"
#include "client_group.hpp"
#include "debugger.hpp"
#include "process.hpp"

namespace {

using namespace zpmix;
using c::Process;
using c::process;
using client::ClientStore;
using client::Session;

constexpr std::uint32_t kInitTimeoutMs = 10000;  // for the Welcome, when PMIX_TIMEOUT is not given
constexpr std::uint32_t kFinalizeTimeoutMs = 2000;
constexpr std::uint64_t kEnvelopeSlack = 4096;  // a commit's envelope and keys beside its data

// The directives an API call honours, from its info array.
struct Directives {
    bool collect = false;
    bool optional = false;
    bool refresh = false;
    bool wait = false;
    std::uint32_t timeout_ms = 0;
    pmix_scope_t scope = PMIX_SCOPE_UNDEF;
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    pmix_persistence_t persistence = PMIX_PERSIST_SESSION;
};

bool is_directive(const pmix_info_t &i) {
    return PMIX_CHECK_KEY(&i, PMIX_TIMEOUT) || PMIX_CHECK_KEY(&i, PMIX_RANGE) ||
           PMIX_CHECK_KEY(&i, PMIX_PERSISTENCE) || PMIX_CHECK_KEY(&i, PMIX_WAIT);
}

Directives parse(const pmix_info_t *info, size_t ninfo) {
    Directives d;
    for (size_t n = 0; info != nullptr && n < ninfo; ++n) {
        const pmix_info_t &i = info[n];
        if (PMIX_CHECK_KEY(&i, PMIX_COLLECT_DATA)) {
            d.collect = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_OPTIONAL)) {
            d.optional = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_GET_REFRESH_CACHE)) {
            d.refresh = PMIX_INFO_TRUE(&i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_WAIT)) {
            d.wait = true;
        } else if (PMIX_CHECK_KEY(&i, PMIX_TIMEOUT)) {
            pmix_status_t rc;
            int seconds = 0;
            PMIX_VALUE_GET_NUMBER(rc, &i.value, seconds, int);
            if (rc == PMIX_SUCCESS && seconds > 0)
                d.timeout_ms = static_cast<std::uint32_t>(seconds) * 1000u;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DATA_SCOPE) && i.value.type == PMIX_SCOPE) {
            d.scope = i.value.data.scope;
        } else if (PMIX_CHECK_KEY(&i, PMIX_RANGE) && i.value.type == PMIX_DATA_RANGE) {
            d.range = i.value.data.range;
        } else if (PMIX_CHECK_KEY(&i, PMIX_PERSISTENCE) && i.value.type == PMIX_PERSIST) {
            d.persistence = i.value.data.persist;
        }
    }
    return d;
}

using client::to_msg;

// What the functions of this file honour (PMIX_QUERY_ATTRIBUTE_SUPPORT): the Directives above.
const c::Honours kInitAttributes(c::Role::client, "PMIx_Init",
                                 {ZPMIX_ATTR(PMIX_TIMEOUT), ZPMIX_ATTR(PMIX_PROGRAMMING_MODEL)});
const c::Honours kGetAttributes(c::Role::client, "PMIx_Get",
                                {ZPMIX_ATTR(PMIX_TIMEOUT), ZPMIX_ATTR(PMIX_OPTIONAL),
                                 ZPMIX_ATTR(PMIX_GET_REFRESH_CACHE), ZPMIX_ATTR(PMIX_DATA_SCOPE)});
const c::Honours kFenceAttributes(c::Role::client, "PMIx_Fence",
                                  {ZPMIX_ATTR(PMIX_COLLECT_DATA), ZPMIX_ATTR(PMIX_TIMEOUT)});
const c::Honours kPublishAttributes(c::Role::client, "PMIx_Publish",
                                    {ZPMIX_ATTR(PMIX_RANGE), ZPMIX_ATTR(PMIX_PERSISTENCE),
                                     ZPMIX_ATTR(PMIX_TIMEOUT)});
const c::Honours kLookupAttributes(c::Role::client, "PMIx_Lookup",
                                   {ZPMIX_ATTR(PMIX_RANGE), ZPMIX_ATTR(PMIX_WAIT),
                                    ZPMIX_ATTR(PMIX_TIMEOUT)});

// ------------------------------------------------------------------ init and finalize

// Without zpmix's ZPMIX_URI, a process may still have been started by a PMIx server: another
// implementation's (OpenPMIx's, as its mpirun, prterun and srun's pmix plugin set these), whose
// protocol zpmix's libpmix does not speak. Its rendezvous variable and value, when one is set.
std::optional<std::pair<std::string, std::string>> foreign_server() {
    static const char *const kVars[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                        "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", "PMIX_SERVER_URI"};
    for (const char *var : kVars)
        if (const char *v = getenv(var); v && *v)
            return std::pair{std::string(var), std::string(v)};
    return std::nullopt;
}

// Started by another implementation's server: says what was found and why it cannot be used.
// PMIX_ERR_NOT_SUPPORTED, unless the user asked for a singleton (ZPMIX_SINGLETON=1): then
// PMIX_SUCCESS, and the process runs alone.
pmix_status_t refuse_foreign_server(const std::pair<std::string, std::string> &server) {
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    const std::string who = ns && rank ? fmt::format(" as {}:{}", ns, rank) : "";
    const char *want = getenv("ZPMIX_SINGLETON");
    const bool singleton = want && *want && strcmp(want, "0") != 0;
    spdlog::error(
        "pmix client: PMIx_Init: this process was started{} by a PMIx server zpmix cannot speak "
        "to ({}={}): another implementation's (OpenPMIx's, as mpirun's, prterun's or srun's), "
        "while zpmix's libpmix speaks to zpmix brokers only and no ZPMIX_URI names one. Run the "
        "program under `zpmix run`, or with that runtime's own libpmix.so.2 first on "
        "LD_LIBRARY_PATH. {}",
        who, server.first, server.second,
        singleton ? "ZPMIX_SINGLETON is set: running alone, as a singleton."
                  : "Set ZPMIX_SINGLETON=1 to run it alone, as a singleton.");
    return singleton ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t init_singleton(Process &c) {
    msg::JobInfo job;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    job.nspace = "singleton." + std::to_string(getpid());
    job.size = job.univ_size = job.max_procs = 1;
    job.nodes = {host};
    msg::ProcInfo p;
    p.hostname = host;
    p.pid = getpid();
    job.procs = {p};
    c.store->set_job(job, 0);
    PMIX_LOAD_PROCID(&c.me, job.nspace.c_str(), 0);
    c.job_size = 1;
    c.session = std::make_unique<Session>(*c.store);
    (void)c::events_start(*c.session, c.me, job, "", "");  // no connection: cannot fail
    c::attach(*c.session);
    return PMIX_SUCCESS;
}

// Connects to the broker at `uri` as rank `rank` of `ns`, proving it with the job's secret.
pmix_status_t init_client(Process &c, const char *uri, const std::string &ns, std::uint32_t rank,
                          const std::string &secret, const Directives &d) {
    msg::Hello hello{"client", ns, rank, getpid(), secret};
    const std::uint32_t timeout_ms = d.timeout_ms ? d.timeout_ms : kInitTimeoutMs;
    // On ipc the broker speaks ZMTP itself: the Hello may follow the handshake at once, saving
    // PMIx_Init a round trip. On tcp, libzmq's ROUTER with a ZAP handler would drop it.
    const bool pipeline = std::string_view(uri).starts_with("ipc://");
    // A broker out of room says so in its refusal; any other refusal is about who we are.
    auto refused = [](const std::string &why) {
        spdlog::error("pmix client: PMIx_Init: the broker refused the connection{}{}",
                      why.empty() ? "" : ": ", why);
        return why == "too many connections" ||
                       why.find("out of file descriptors") != std::string::npos
                   ? PMIX_ERR_OUT_OF_RESOURCE
                   : PMIX_ERR_NO_PERMISSIONS;
    };
    // tcp: the broker's CURVE keypair, as its tcp.key holds it.
    std::optional<CurveKeypair> tcp_keys;
    if (const char *k = getenv("ZPMIX_TCP_KEYS"); k && *k) {
        tcp_keys = CurveKeypair::parse(k);
        if (!tcp_keys) {
            spdlog::error(
                "pmix client: PMIx_Init: $ZPMIX_TCP_KEYS is not \"PUBLIC SECRET\" "
                "(40-character Z85 keys)");
            return PMIX_ERR_BAD_PARAM;
        }
    }
    try {
        c.session = std::make_unique<Session>(*c.store, uri, timeout_ms, pipeline, tcp_keys);
    } catch (const client::ZmtpError &e) {
        if (e.denied()) {
            spdlog::error("pmix client: PMIx_Init: {}", e.what());
            return PMIX_ERR_NO_PERMISSIONS;
        }
        if (!e.refused) return PMIX_ERR_UNREACH;
        const std::string what = e.what();
        if (what.starts_with("refusing ")) {  // we did: not this user's broker
            spdlog::error("pmix client: PMIx_Init: {}", what);
            return PMIX_ERR_NO_PERMISSIONS;
        }
        const auto colon = what.find(": ");
        return refused(colon == std::string::npos ? "" : what.substr(colon + 2));
    }
    auto reply = c.session->call(hello, timeout_ms);
    pmix_status_t status = reply.status;
    if (status == PMIX_ERR_LOST_CONNECTION && c.session->refused())
        status = refused(c.session->refusal());
    if (status == PMIX_SUCCESS && reply.env.version != kProtocolVersion) {
        reply.message =
            msg::other_protocol(reply.env.version, msg::release_in(reply.env), "broker", "libpmix");
        status = PMIX_ERR_NOT_SUPPORTED;
    }
    // Why the broker turned this process away (another protocol version, an unknown namespace,
    // a bad secret...), where the user sees it: PMIx_Init itself returns only a status.
    if (!reply.message.empty()) spdlog::error("pmix client: PMIx_Init: {}", reply.message);
    msg::Welcome welcome;
    if (status == PMIX_SUCCESS) {
        try {
            welcome = reply.env.as<msg::Welcome>();
        } catch (const DecodeError &) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (status == PMIX_SUCCESS && welcome.job.nspace != hello.nspace) status = PMIX_ERR_INIT;
    if (status != PMIX_SUCCESS) {
        c.session.reset();
        return status;
    }
    c.session->set_broker(
        msg::PeerFeatures(welcome.release, std::move(welcome.features), welcome.abi));
    c.store->set_job(welcome.job, hello.rank);
    PMIX_LOAD_PROCID(&c.me, ns.c_str(), hello.rank);
    c.job_size = welcome.job.size;
    c.max_message = welcome.max_message;
    c.stop_in_init = welcome.job.stop_in_init;
    c.hosted = welcome.hosted;
    if (!welcome.job.fence_board.empty() && welcome.job.size > 1) {
        // Every rank fences its namespace on the board, or none does: one that cannot map it
        // must not go on to fence through the broker.
        std::string error;
        auto board = FenceBoard::open(welcome.job.fence_board, error);
        if (!board || board->ranks() != welcome.job.size) {
            spdlog::error("pmix client: {}", board ? "the fence board is not this job's" : error);
            c.session.reset();
            return PMIX_ERR_INIT;
        }
        c.node_fence = std::make_unique<client::NodeFence>(std::move(board), *c.session, *c.store,
                                                           to_msg(c.me));
    }
    if (pmix_status_t rc =
            c::events_start(*c.session, c.me, welcome.job, welcome.events_uri, welcome.broker);
        rc != PMIX_SUCCESS) {
        c.session.reset();
        return rc;
    }
    c::attach(*c.session);
    return PMIX_SUCCESS;
}

bool ready() {
    return process().initialized.load(std::memory_order_acquire);
}

// ------------------------------------------------------------------ get

std::string_view nspace_of(const pmix_proc_t &p) {
    return std::string_view(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
}

// The group keys of a process answered from the groups this process knows (client_group.hpp):
// PMIX_GROUP_NAMES, and PMIX_GROUP_LOCAL_CID with the PMIX_GROUP_CONTEXT_ID qualifier. None for
// other keys.
std::optional<pmix_status_t> group_key(const pmix_proc_t &p, const char *key,
                                       const pmix_info_t info[], size_t ninfo, pmix_value_t **val) {
    if (strncmp(key, PMIX_GROUP_NAMES, PMIX_MAX_KEYLEN) == 0) return c::group_names_of(p, val);
    if (strncmp(key, PMIX_GROUP_LOCAL_CID, PMIX_MAX_KEYLEN) == 0)
        return c::group_local_cid(p, info, ninfo, val);
    return std::nullopt;
}

// Keys the standard reserves: job information, never put data.
bool reserved(const char *key) {
    return strncmp(key, "pmix.", 5) == 0;
}

// The value's copy for a cached key, else PMIX_ERR_NOT_FOUND.
pmix_status_t get_cached(Process &c, const pmix_proc_t &p, const char *key, pmix_value_t **val) {
    return c.store->get(nspace_of(p), p.rank, key, val);
}

// PMIX_HWLOC_XML_V2 of the own job: the node's topology, shared by the job's ranks through its
// PMIX_TMPDIR (zpmix::c::shared_topology_xml). PMIX_ERR_NOT_FOUND for any other Get.
pmix_status_t topology_xml(Process &c, const pmix_proc_t &p, const char *key, pmix_value_t **val) {
    if (std::strcmp(key, PMIX_HWLOC_XML_V2) != 0 || p.rank != PMIX_RANK_WILDCARD ||
        !PMIX_CHECK_NSPACE(p.nspace, c.me.nspace))
        return PMIX_ERR_NOT_FOUND;
    pmix_value_t *dir = nullptr;
    if (get_cached(c, p, PMIX_TMPDIR, &dir) != PMIX_SUCCESS) return PMIX_ERR_NOT_FOUND;
    std::string xml;
    const pmix_status_t rc = zpmix::c::shared_topology_xml(dir->data.string, xml);
    PMIX_VALUE_RELEASE(dir);
    if (rc != PMIX_SUCCESS) return rc;
    PMIX_VALUE_CREATE(*val, 1);
    return PMIx_Value_load(*val, xml.c_str(), PMIX_STRING);
}

// The same, for a Get that names PMIX_DATA_SCOPE: put data of that scope only. The scope is that
// of the data, so it does not apply to job information.
pmix_status_t lookup(Process &c, const pmix_proc_t &p, const char *key, pmix_scope_t scope,
                     pmix_value_t **val) {
    if (scope == PMIX_SCOPE_UNDEF || reserved(key)) return get_cached(c, p, key, val);
    return c.store->get_scoped(nspace_of(p), p.rank, key, scope, val);
}

// Whether a Get that missed the cache may ask the broker for the owner's committed data.
bool may_go_remote(const Process &c, const pmix_proc_t &p, const char *key, const Directives &d) {
    if (d.optional || !c.session->has_broker() || d.scope == PMIX_INTERNAL) return false;
    if (p.rank == PMIX_RANK_WILDCARD || p.rank == PMIX_RANK_UNDEF || p.rank == PMIX_RANK_INVALID)
        return false;
    if (PMIX_CHECK_PROCID(&p, &c.me)) return false;  // own data is all here
    return !reserved(key);                           // reserved keys are job information
}

// Whether a Get of job information must first bring another namespace's job from the broker
// (once: afterwards it is served from the store like the own job's).
bool needs_job(const Process &c, const pmix_proc_t &p, const char *key, const Directives &d) {
    if (d.optional || !c.session->has_broker() || !reserved(key)) return false;
    const std::string_view ns = nspace_of(p);
    if (ns.empty() || ns == nspace_of(c.me)) return false;
    return d.refresh || !c.store->has_job(ns);
}

pmix_status_t add_job(Process &c, std::string_view nspace, const Envelope &env) {
    try {
        auto reply = env.as<msg::JobInfoReply>();
        if (reply.job.nspace != nspace) return PMIX_ERR_UNPACK_FAILURE;
        c.store->add_job(reply.job);
        return PMIX_SUCCESS;
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
}

// Asks the broker for a namespace's job information and stores it: PMIX_ERR_NOT_FOUND for a
// namespace it does not know.
pmix_status_t fetch_job_blocking(Process &c, std::string_view nspace, std::uint32_t timeout_ms) {
    auto reply = c.session->call(msg::JobInfoQuery{std::string(nspace)}, timeout_ms);
    if (reply.status != PMIX_SUCCESS) return reply.status;
    return add_job(c, nspace, reply.env);
}

// The non-blocking form: `then` runs on the progress thread with the outcome.
template <class Then>
void fetch_job(Process &c, std::string_view nspace, std::uint32_t timeout_ms, Then then) {
    Process *client = &c;
    c.session->request(
        msg::JobInfoQuery{std::string(nspace)}, timeout_ms,
        [client, ns = std::string(nspace), then](pmix_status_t status, const Envelope *env) {
            if (status == PMIX_SUCCESS) status = add_job(*client, ns, *env);
            then(status);
        });
}

// The job information of a namespace, fetched first when it is another one not cached yet.
bool job_of(Process &c, const char *nspace, msg::JobInfo &job) {
    const std::string_view ns(nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    if (c.store->job_of(ns, job)) return true;
    return c.session->has_broker() && fetch_job_blocking(c, ns, 0) == PMIX_SUCCESS &&
           c.store->job_of(ns, job);
}

// PMIx_Get of a node's information, the node named by the standard's qualifiers PMIX_HOSTNAME
// or PMIX_NODEID (with PMIX_NODE_INFO or without): its name and id, the job's ranks there
// (PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS, PMIX_LOCALLDR), and what the host registered of that node
// (JobInfo.node_infos: its node arrays, resources and delivered inventories). None when the Get
// names no node, or the caller's own node: the job's information answers that one.
std::optional<pmix_status_t> node_key(Process &c, const pmix_proc_t &p, const char *key,
                                      const pmix_info_t info[], size_t ninfo, pmix_value_t **val) {
    std::optional<std::string> host;
    std::optional<std::uint32_t> id;
    for (size_t i = 0; info && i < ninfo; ++i) {
        const pmix_value_t &v = info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_HOSTNAME) && v.type == PMIX_STRING && v.data.string) {
            host = v.data.string;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_NODEID)) {
            pmix_status_t rc;
            std::uint32_t n = 0;
            PMIX_VALUE_GET_NUMBER(rc, &v, n, std::uint32_t);
            if (rc != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
            id = n;
        }
    }
    if (!host && !id) return std::nullopt;
    msg::JobInfo job;
    const char *ns = p.nspace[0] != '\0' ? p.nspace : c.me.nspace;
    if (!job_of(c, ns, job)) return std::nullopt;
    auto at = host ? std::find(job.nodes.begin(), job.nodes.end(), *host) : job.nodes.end();
    if (!host) {
        if (*id >= job.nodes.size()) return PMIX_ERR_NOT_FOUND;
        at = job.nodes.begin() + *id;
        host = *at;
    }
    // The caller's own node: its cached PMIX_HOSTNAME (no copy of its whole job).
    pmix_proc_t own;
    PMIX_LOAD_PROCID(&own, c.me.nspace, PMIX_RANK_WILDCARD);
    if (pmix_value_t *mine = nullptr; get_cached(c, own, PMIX_HOSTNAME, &mine) == PMIX_SUCCESS) {
        const bool here =
            mine->type == PMIX_STRING && mine->data.string && *host == mine->data.string;
        PMIX_VALUE_RELEASE(mine);
        if (here) return std::nullopt;
    }
    std::vector<std::uint32_t> ranks;
    for (const msg::ProcInfo &pi : job.procs)
        if (pi.hostname == *host) ranks.push_back(pi.rank);
    const std::string_view k(key);
    PMIX_VALUE_CREATE(*val, 1);
    auto answer = [&](const void *data, pmix_data_type_t type) -> pmix_status_t {
        const pmix_status_t rc = PMIx_Value_load(*val, data, type);
        if (rc != PMIX_SUCCESS) {
            PMIX_VALUE_RELEASE(*val);
            *val = nullptr;
        }
        return rc;
    };
    if (k == PMIX_HOSTNAME) return answer(host->c_str(), PMIX_STRING);
    if (at != job.nodes.end()) {  // a node of the job
        const auto node = static_cast<std::uint32_t>(at - job.nodes.begin());
        if (k == PMIX_NODEID) return answer(&node, PMIX_UINT32);
        if (k == PMIX_LOCAL_SIZE) {
            const auto n = static_cast<std::uint32_t>(ranks.size());
            return answer(&n, PMIX_UINT32);
        }
        if (k == PMIX_LOCALLDR && !ranks.empty()) return answer(&ranks.front(), PMIX_PROC_RANK);
        if (k == PMIX_LOCAL_PEERS && !ranks.empty()) {
            std::string peers;
            for (std::uint32_t r : ranks) peers += (peers.empty() ? "" : ",") + std::to_string(r);
            return answer(peers.c_str(), PMIX_STRING);
        }
    }
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    if (auto blob = job.node_infos.find(*host); blob != job.node_infos.end()) {
        pmix_info_t *infos = nullptr;
        size_t n = 0;
        if (c::decode_infos(blob->second.data(), blob->second.size(), &infos, &n) != PMIX_SUCCESS)
            rc = PMIX_ERR_UNPACK_FAILURE;
        for (size_t i = n; rc == PMIX_ERR_NOT_FOUND && i > 0; --i)  // the last one given wins
            if (PMIX_CHECK_KEY(&infos[i - 1], key)) rc = PMIx_Value_xfer(*val, &infos[i - 1].value);
        if (infos) PMIX_INFO_FREE(infos, n);
    }
    if (rc != PMIX_SUCCESS) {
        PMIX_VALUE_RELEASE(*val);
        *val = nullptr;
    }
    return rc;
}

// The owner's commits a direct-modex answer must include: those its card on the job's fence board
// counts (the broker may not have read the latest yet when a fence on the board completes).
std::uint32_t commits_seen(const Process &c, const pmix_proc_t &p) {
    if (!c.node_fence || !PMIX_CHECK_NSPACE(p.nspace, c.me.nspace) || p.rank >= c.job_size)
        return 0;
    return c.node_fence->commits_of(p.rank);
}

// Before a direct-modex Get of a peer on the job's fence board: its card there, if it has one. True
// when the key was found in it.
bool from_board(Process &c, const pmix_proc_t &p, const char *key, const Directives &d) {
    if (d.refresh || !c.node_fence || !PMIX_CHECK_NSPACE(p.nspace, c.me.nspace) ||
        p.rank >= c.job_size || !c.node_fence->offer_card(p.rank))
        return false;
    pmix_value_t *v = nullptr;
    const pmix_status_t rc = lookup(c, p, key, d.scope, &v);
    if (v) PMIX_VALUE_RELEASE(v);
    return rc == PMIX_SUCCESS;
}

// Direct modex: asks the broker for the owner's data; `then` runs on the progress thread with
// the Get's outcome once the data is in the store.
template <class Then>
void fetch(Process &c, const pmix_proc_t &p, const char *key, const Directives &d, Then then) {
    msg::ModexGet m{to_msg(p), key, d.timeout_ms, to_msg(c.me), commits_seen(c, p), c.server_host};
    ClientStore *store = c.store.get();
    c.session->request(m, d.timeout_ms, [store, then](pmix_status_t status, const Envelope *env) {
        if (status == PMIX_SUCCESS) status = store->add_modex_data(*env);
        then(status);
    });
}

// The blocking form of fetch, answered on the calling thread.
pmix_status_t fetch_blocking(Process &c, const pmix_proc_t &p, const char *key,
                             const Directives &d) {
    auto reply = c.session->call(msg::ModexGet{to_msg(p), key, d.timeout_ms, to_msg(c.me),
                                               commits_seen(c, p), c.server_host},
                                 d.timeout_ms);
    if (reply.status != PMIX_SUCCESS) return reply.status;
    return c.store->add_modex_data(reply.env);
}

// PMIX_PSET_NAMES: process sets are defined and deleted while jobs run, so a Get of a process's
// sets asks its broker each time (the `pset` actor, which knows the launch-time ones too).
// PMIX_ERR_NOT_FOUND when the process is in none.
bool asks_psets(const Process &c, const char *key) {
    return c.session->has_broker() && strcmp(key, PMIX_PSET_NAMES) == 0;
}

pmix_status_t pset_names(const Envelope &env, pmix_value_t **val) {
    msg::PsetList list;
    try {
        list = env.as<msg::PsetList>();
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (list.psets.empty()) return PMIX_ERR_NOT_FOUND;
    std::vector<char *> names;
    for (auto &set : list.psets) names.push_back(set.name.data());
    pmix_data_array_t arr{PMIX_STRING, names.size(), names.data()};
    PMIX_VALUE_CREATE(*val, 1);
    if (*val == nullptr) return PMIX_ERR_NOMEM;
    const pmix_status_t rc = PMIx_Value_load(*val, &arr, PMIX_DATA_ARRAY);
    if (rc != PMIX_SUCCESS) {
        PMIX_VALUE_RELEASE(*val);
        *val = nullptr;
    }
    return rc;
}

bool bad_key(const char *key) {
    return key == nullptr || key[0] == '\0' || strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN;
}

// ------------------------------------------------------------------ fence

struct FencePlan {
    pmix_status_t status = PMIX_SUCCESS;
    bool local_only = false;  // only the caller takes part: nothing to wait for
    msg::FenceContribute contribution;
};

FencePlan plan_fence(Process &c, const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                     size_t ninfo) {
    FencePlan plan;
    const Directives d = parse(info, ninfo);
    std::vector<msg::Proc> participants;
    if (procs == nullptr || nprocs == 0)
        participants.push_back({std::string(c.me.nspace), PMIX_RANK_WILDCARD});
    else
        for (size_t i = 0; i < nprocs; ++i) participants.push_back(to_msg(procs[i]));
    if (!zpmix::c::expand_groups(participants)) {  // {group, rank}: its members
        plan.status = PMIX_ERR_BAD_PARAM;
        return plan;
    }
    participants = msg::canonical_participants(std::move(participants));
    const msg::Proc me = to_msg(c.me);
    const msg::Proc my_ns{me.nspace, PMIX_RANK_WILDCARD};
    // Every rank of the caller's own job named one by one is its whole namespace, the wildcard's
    // set (whose fences meet on the fence board). Only when no other job takes part: a rank of
    // another job cannot tell this job's ranks named from its wildcard, and must name the set
    // as we do.
    if (participants.size() == c.job_size && c.job_size > 1 &&
        std::all_of(participants.begin(), participants.end(), [&](const msg::Proc &p) {
            return p.nspace == me.nspace && p.rank < c.job_size;
        }))
        participants = {my_ns};
    if (!std::binary_search(participants.begin(), participants.end(), me) &&
        !std::binary_search(participants.begin(), participants.end(), my_ns)) {
        plan.status = PMIX_ERR_BAD_PARAM;  // the caller must take part
        return plan;
    }
    if (participants.size() == 1 && (participants[0] == me || c.job_size == 1)) {
        plan.local_only = true;
        return plan;
    }
    if (!c.session->has_broker()) {
        plan.status = PMIX_ERR_UNREACH;  // a singleton has no one to fence with
        return plan;
    }
    std::uint64_t id;
    {
        std::lock_guard lock(c.seq_mu);
        id = c.fence_seq[msg::fence_key(participants, 0)]++;
    }
    plan.contribution = msg::FenceContribute{
        std::move(participants), id, d.collect, d.timeout_ms, me, {{me.nspace, c.job_size}}};
    return plan;
}

// Whether the fence is over the caller's whole namespace, on its job's fence board.
bool on_board(const Process &c, const msg::FenceContribute &f) {
    return c.node_fence && f.participants.size() == 1 &&
           f.participants[0].rank == PMIX_RANK_WILDCARD && f.participants[0].nspace == c.me.nspace;
}

// Runs the planned fence (on the job's fence board or through the broker); `then` runs on the
// progress thread with its status.
void fence_nb(Process &c, FencePlan plan, std::function<void(pmix_status_t)> then) {
    if (plan.local_only) return c.session->post([then] { then(PMIX_SUCCESS); });
    const msg::FenceContribute &f = plan.contribution;
    if (on_board(c, f))
        return c.node_fence->fence_nb(static_cast<std::uint32_t>(f.fence_id), f.collect,
                                      f.timeout_ms, std::move(then));
    c.session->fence(std::move(plan.contribution),
                     [then](pmix_status_t status, const Envelope *) { then(status); });
}

// ------------------------------------------------------------------ connect / disconnect
// PMIx_Connect is a collecting fence over the named processes (every participant's data reaches
// every other, through the broker tree when they span nodes), after which the caller holds the
// job information of every other namespace among them, fetched from its broker (every broker
// registers every namespace of its allocation). PMIx_Disconnect is a fence without data. Both
// take their fence id from the set's sequence of fences: every participant calls its
// collectives over one set in the same order. PMIX_TIMEOUT bounds them; a participant that ends
// first fails them (PMIX_ERR_PROC_TERM_WO_SYNC), a lost broker hosting one too
// (PMIX_ERR_UNREACH). Under a host (the server library) both go to the host's connect and
// disconnect upcalls instead, once every participant of the node called them (msg::HostConnect),
// as OpenPMIx serves them: the host connects the nodes and makes the other namespaces known.

FencePlan plan_connect(Process &c, const pmix_proc_t procs[], size_t nprocs,
                       const pmix_info_t info[], size_t ninfo, bool collect) {
    if (procs == nullptr || nprocs == 0) return FencePlan{PMIX_ERR_BAD_PARAM, false, {}};
    FencePlan plan = plan_fence(c, procs, nprocs, info, ninfo);
    plan.contribution.collect = collect;
    return plan;
}

// The other namespaces among the participants whose job information the caller lacks.
std::vector<std::string> jobs_to_fetch(Process &c, const pmix_proc_t procs[], size_t nprocs) {
    std::vector<std::string> out;
    for (size_t i = 0; i < nprocs; ++i) {
        std::string ns(nspace_of(procs[i]));
        if (ns != nspace_of(c.me) && !c.store->has_job(ns) &&
            std::find(out.begin(), out.end(), ns) == out.end())
            out.push_back(std::move(ns));
    }
    return out;
}

// Under a host: the caller's part of the node's connect or disconnect, which the host's upcall
// completes (msg::HostConnect); no fence.
msg::HostConnect host_connect_message(Process &c, const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo, bool disconnect) {
    msg::HostConnect m{to_msg(c.me), {}, disconnect, parse(info, ninfo).timeout_ms};
    for (size_t i = 0; i < nprocs; ++i) m.procs.push_back(to_msg(procs[i]));
    return m;
}

pmix_status_t host_connect(Process &c, const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t info[], size_t ninfo, bool disconnect) {
    if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
    msg::HostConnect m = host_connect_message(c, procs, nprocs, info, ninfo, disconnect);
    const std::uint32_t timeout_ms = m.timeout_ms;
    if (pmix_status_t rc = c.session->call(m, timeout_ms).status; rc != PMIX_SUCCESS) return rc;
    if (disconnect) return PMIX_SUCCESS;
    for (const auto &ns : jobs_to_fetch(c, procs, nprocs))
        if (pmix_status_t rc = fetch_job_blocking(c, ns, timeout_ms); rc != PMIX_SUCCESS) return rc;
    return PMIX_SUCCESS;
}

// Fetches the jobs in turn, from the last; `then` runs on the progress thread with the first
// failure, or PMIX_SUCCESS.
void fetch_jobs(Process &c, std::vector<std::string> jobs, std::uint32_t timeout_ms,
                std::function<void(pmix_status_t)> then) {
    if (jobs.empty()) return then(PMIX_SUCCESS);
    const std::string ns = std::move(jobs.back());
    jobs.pop_back();
    fetch_job(c, ns, timeout_ms,
              [&c, jobs = std::move(jobs), timeout_ms, then](pmix_status_t status) {
                  if (status != PMIX_SUCCESS) return then(status);
                  fetch_jobs(c, jobs, timeout_ms, then);
              });
}

// ------------------------------------------------------------------ publish / lookup

pmix_status_t publish_message(Process &c, const pmix_info_t info[], size_t ninfo, msg::Publish &m) {
    if (info == nullptr || ninfo == 0) return PMIX_ERR_BAD_PARAM;
    const Directives d = parse(info, ninfo);
    msgpack::sbuffer buf;
    c::Packer pk(buf);
    std::uint32_t n = 0;
    for (size_t i = 0; i < ninfo; ++i) n += is_directive(info[i]) ? 0 : 1;
    if (n == 0) return PMIX_ERR_BAD_PARAM;
    pk.pack_map(n);
    for (size_t i = 0; i < ninfo; ++i) {
        if (is_directive(info[i])) continue;
        pk.pack(std::string_view(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN)));
        if (pmix_status_t rc = c::encode_value(pk, info[i].value); rc != PMIX_SUCCESS) return rc;
    }
    m.proc = to_msg(c.me);
    m.range = d.range;
    m.persistence = d.persistence;
    m.data.assign(buf.data(), buf.data() + buf.size());
    return PMIX_SUCCESS;
}

msg::Lookup lookup_message(Process &c, std::vector<std::string> keys, const pmix_info_t info[],
                           size_t ninfo) {
    const Directives d = parse(info, ninfo);
    return msg::Lookup{to_msg(c.me), d.range, std::move(keys), d.wait, d.timeout_ms};
}

// Fills pdata (by key) from a LookupReply; returns PMIX_ERR_NOT_FOUND when nothing matched.
pmix_status_t fill_lookup(const msg::LookupReply &r, pmix_pdata_t *pdata, size_t n) {
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    for (const auto &f : r.found)
        for (size_t i = 0; i < n; ++i) {
            if (!PMIX_CHECK_KEY(&pdata[i], f.key.c_str())) continue;
            PMIx_Value_destruct(&pdata[i].value);
            if (c::decode_value(f.value.data(), f.value.size(), &pdata[i].value) != PMIX_SUCCESS)
                return PMIX_ERR_UNPACK_FAILURE;
            PMIX_LOAD_PROCID(&pdata[i].proc, f.publisher.nspace.c_str(), f.publisher.rank);
            status = PMIX_SUCCESS;
        }
    return status;
}

std::vector<std::string> keys_of(char **keys) {
    std::vector<std::string> out;
    for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i) out.emplace_back(keys[i]);
    return out;
}

template <class Msg>
pmix_status_t ask(Process &c, const Msg &m, std::uint32_t timeout_ms) {
    return c.session->call(m, timeout_ms).status;
}

template <class Msg>
pmix_status_t ask_nb(Process &c, const Msg &m, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    c.session->request(m, 0, [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
        if (cbfunc) cbfunc(status, cbdata);
    });
    return PMIX_SUCCESS;
}

}  // namespace

namespace zpmix::c {

namespace {
// The next number in the sequence of held collectives (their own, as the broker's are).
std::uint32_t next_held(Process &c) {
    std::lock_guard lock(c.seq_mu);
    return c.held_seq++;
}

// A held collective's name on the board: FNV-1a of what it is.
std::uint32_t held_id(std::string_view what) {
    std::uint32_t h = 2166136261u;
    for (unsigned char ch : what) h = (h ^ ch) * 16777619u;
    return h;
}
}  // namespace

std::optional<pmix_status_t> board_collective(std::string_view what, bool by_broker,
                                              std::uint32_t timeout_ms,
                                              const BoardCompleter &complete,
                                              std::uint64_t &value) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.node_fence) return std::nullopt;
    return c.node_fence->collective(next_held(c), held_id(what), by_broker, timeout_ms, complete,
                                    value);
}

bool board_collective_nb(std::string_view what, bool by_broker, std::uint32_t timeout_ms,
                         BoardCompleter complete,
                         std::function<void(pmix_status_t, std::uint64_t)> done) {
    if (!ready()) return false;
    Process &c = process();
    if (!c.node_fence) return false;
    c.node_fence->collective_nb(next_held(c), held_id(what), by_broker, timeout_ms,
                                std::move(complete), std::move(done));
    return true;
}

std::uint32_t own_job_size() {
    return ready() ? process().job_size : 0;
}

bool has_fence_board() {
    return ready() && process().node_fence != nullptr;
}

pmix_status_t init_as(const std::string &uri, const std::string &nspace, std::uint32_t rank,
                      const std::string &secret) {
    Process &c = process();
    std::lock_guard lock(c.init_mu);
    if (c.refs > 0) return PMIX_ERR_INIT;  // a client already: it cannot be another one too
    c.store = std::make_unique<ClientStore>();
    c.fence_seq.clear();
    if (pmix_status_t rc = init_client(c, uri.c_str(), nspace, rank, secret, Directives{});
        rc != PMIX_SUCCESS) {
        c.store.reset();
        return rc;
    }
    c.refs = 1;
    c.server_host = true;
    c.initialized.store(true, std::memory_order_release);
    return PMIX_SUCCESS;
}

}  // namespace zpmix::c

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    c::log_to_stderr();
    Process &c = process();
    std::lock_guard lock(c.init_mu);
    if (c.refs > 0) {
        ++c.refs;
        if (proc) *proc = c.me;
        c::events_model_declared(info, ninfo);  // another library of this process declares itself
        return PMIX_SUCCESS;
    }
    c.store = std::make_unique<ClientStore>();
    c.fence_seq.clear();
    const char *uri = getenv("ZPMIX_URI");
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    const char *secret = getenv("ZPMIX_SECRET");
    const bool no_broker = uri == nullptr || uri[0] == '\0';
    if (no_broker)
        if (auto server = foreign_server())
            if (pmix_status_t rc = refuse_foreign_server(*server); rc != PMIX_SUCCESS) {
                c.store.reset();
                return rc;
            }
    const pmix_status_t rc =
        no_broker ? init_singleton(c)
        : (ns == nullptr || rank == nullptr)
            ? PMIX_ERR_INIT
            : init_client(c, uri, ns, static_cast<std::uint32_t>(strtoul(rank, nullptr, 10)),
                          secret ? secret : "", parse(info, ninfo));
    if (rc != PMIX_SUCCESS) {
        c.store.reset();
        return rc;
    }
    c.refs = 1;
    c.initialized.store(true, std::memory_order_release);
    if (proc) *proc = c.me;
    // Initialised, so that the debugger's release can reach it; PMIx_Finalize undoes a failure.
    if (c.stop_in_init) return c::wait_for_debugger(c.me);
    return PMIX_SUCCESS;
}

PMIX_EXPORT int PMIx_Initialized(void) {
    return ready() ? 1 : 0;
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
    (void)info;
    (void)ninfo;
    Process &c = process();
    std::lock_guard lock(c.init_mu);
    if (c.refs == 0) return PMIX_ERR_INIT;
    if (--c.refs > 0) return PMIX_SUCCESS;
    c.initialized.store(false, std::memory_order_release);
    // The launcher fails a job whose rank exits without finalizing while the others run: say so,
    // bounded (a broker that is gone has no job to fail).
    if (c.session && c.session->has_broker())
        (void)c.session->call(msg::Finalize{}, kFinalizeTimeoutMs);
    c::detach();
    c::events_stop();
    c.node_fence.reset();
    c.session.reset();  // fails whatever is still pending, then disconnects
    c.store.reset();
    return PMIX_SUCCESS;
}

// No procs: the caller's whole namespace; else exactly those processes (a wildcard rank: that
// whole namespace). The launcher ends them and reports the status and message.
PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    msg::Abort m{status, msg ? msg : "", {}};
    for (size_t i = 0; procs != nullptr && i < nprocs; ++i) {
        if (procs[i].rank == PMIX_RANK_LOCAL_NODE || procs[i].rank == PMIX_RANK_LOCAL_PEERS)
            return PMIX_ERR_NOT_SUPPORTED;  // node-relative rank sets
        if (procs[i].rank == PMIX_RANK_UNDEF || procs[i].rank == PMIX_RANK_INVALID)
            return PMIX_ERR_BAD_PARAM;
        m.procs.push_back(to_msg(procs[i]));
    }
    return ask(c, m, 0);
}

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val) {
    if (!ready()) return PMIX_ERR_INIT;
    if (bad_key(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
    return process().store->put(scope, key, val);
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_SUCCESS;  // a singleton's data stays here
    msg::Commit m;
    c.store->commit_blobs(m);
    // The broker ends the connection of a larger message: refuse it here, and stay connected.
    const std::uint64_t bytes = m.local.size() + m.remote.size() + m.global.size();
    if (c.max_message && bytes + kEnvelopeSlack > c.max_message) {
        spdlog::error(
            "PMIx_Commit: {} bytes of data, over the broker's limit of {} bytes "
            "(max_message_bytes): not committed",
            bytes, c.max_message);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (c.node_fence)
        c.node_fence->commit(m);
    else
        c.session->notify(m);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    FencePlan plan = plan_fence(c, procs, nprocs, info, ninfo);
    if (plan.status != PMIX_SUCCESS || plan.local_only) return plan.status;
    const msg::FenceContribute &f = plan.contribution;
    if (on_board(c, f))
        return c.node_fence->fence(static_cast<std::uint32_t>(f.fence_id), f.collect, f.timeout_ms);
    return c.session->fence_call(std::move(plan.contribution));
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    FencePlan plan = plan_fence(c, procs, nprocs, info, ninfo);
    if (plan.status != PMIX_SUCCESS) return plan.status;
    if (plan.local_only) {
        if (cbfunc) c.session->post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
        return PMIX_SUCCESS;
    }
    const msg::FenceContribute &f = plan.contribution;
    if (on_board(c, f)) {
        c.node_fence->fence_nb(static_cast<std::uint32_t>(f.fence_id), f.collect, f.timeout_ms,
                               [cbfunc, cbdata](pmix_status_t status) {
                                   if (cbfunc) cbfunc(status, cbdata);
                               });
        return PMIX_SUCCESS;
    }
    c.session->fence(std::move(plan.contribution),
                     [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
                         if (cbfunc) cbfunc(status, cbdata);
                     });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (c.hosted) return host_connect(c, procs, nprocs, info, ninfo, false);
    FencePlan plan = plan_connect(c, procs, nprocs, info, ninfo, true);
    if (plan.status != PMIX_SUCCESS) return plan.status;
    const std::uint32_t timeout_ms = plan.contribution.timeout_ms;
    if (!plan.local_only) {
        const msg::FenceContribute &f = plan.contribution;
        const pmix_status_t rc =
            on_board(c, f)
                ? c.node_fence->fence(static_cast<std::uint32_t>(f.fence_id), true, f.timeout_ms)
                : c.session->fence_call(std::move(plan.contribution));
        if (rc != PMIX_SUCCESS) return rc;
    }
    for (const auto &ns : jobs_to_fetch(c, procs, nprocs))
        if (pmix_status_t rc = fetch_job_blocking(c, ns, timeout_ms); rc != PMIX_SUCCESS) return rc;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (c.hosted) {
        if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
        msg::HostConnect m = host_connect_message(c, procs, nprocs, info, ninfo, false);
        const std::uint32_t timeout_ms = m.timeout_ms;
        std::vector<pmix_proc_t> named(procs, procs + nprocs);
        c.session->request(m, timeout_ms,
                           [&c, named = std::move(named), timeout_ms, cbfunc, cbdata](
                               pmix_status_t status, const Envelope *) {
                               auto done = [cbfunc, cbdata](pmix_status_t s) {
                                   if (cbfunc) cbfunc(s, cbdata);
                               };
                               if (status != PMIX_SUCCESS) return done(status);
                               fetch_jobs(c, jobs_to_fetch(c, named.data(), named.size()),
                                          timeout_ms, done);
                           });
        return PMIX_SUCCESS;
    }
    FencePlan plan = plan_connect(c, procs, nprocs, info, ninfo, true);
    if (plan.status != PMIX_SUCCESS) return plan.status;
    const std::uint32_t timeout_ms = plan.contribution.timeout_ms;
    std::vector<pmix_proc_t> named(procs, procs + nprocs);
    fence_nb(c, std::move(plan),
             [&c, named = std::move(named), timeout_ms, cbfunc, cbdata](pmix_status_t status) {
                 auto done = [cbfunc, cbdata](pmix_status_t s) {
                     if (cbfunc) cbfunc(s, cbdata);
                 };
                 if (status != PMIX_SUCCESS) return done(status);
                 fetch_jobs(c, jobs_to_fetch(c, named.data(), named.size()), timeout_ms, done);
             });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (c.hosted) return host_connect(c, procs, nprocs, info, ninfo, true);
    FencePlan plan = plan_connect(c, procs, nprocs, info, ninfo, false);
    if (plan.status != PMIX_SUCCESS || plan.local_only) return plan.status;
    const msg::FenceContribute &f = plan.contribution;
    if (on_board(c, f))
        return c.node_fence->fence(static_cast<std::uint32_t>(f.fence_id), false, f.timeout_ms);
    return c.session->fence_call(std::move(plan.contribution));
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (c.hosted) {
        if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
        c.session->request(host_connect_message(c, procs, nprocs, info, ninfo, true),
                           parse(info, ninfo).timeout_ms,
                           [cbfunc, cbdata](pmix_status_t status, const Envelope *) {
                               if (cbfunc) cbfunc(status, cbdata);
                           });
        return PMIX_SUCCESS;
    }
    FencePlan plan = plan_connect(c, procs, nprocs, info, ninfo, false);
    if (plan.status != PMIX_SUCCESS) return plan.status;
    fence_nb(c, std::move(plan), [cbfunc, cbdata](pmix_status_t status) {
        if (cbfunc) cbfunc(status, cbdata);
    });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t **val) {
    if (!ready()) return PMIX_ERR_INIT;
    if (val == nullptr) return PMIX_ERR_BAD_PARAM;
    Process &c = process();
    const pmix_proc_t &p = proc ? *proc : c.me;
    *val = nullptr;
    // No key: everything the process posted that is here (as a host's own daemons read theirs).
    if (key == nullptr) return c.store->get_all(nspace_of(p), p.rank, val);
    if (bad_key(key)) return PMIX_ERR_BAD_PARAM;
    if (auto rc = group_key(p, key, info, ninfo, val)) return *rc;
    if (auto rc = node_key(c, p, key, info, ninfo, val)) return *rc;
    if (asks_psets(c, key)) {
        auto reply = c.session->call(msg::PsetQuery{to_msg(p)}, parse(info, ninfo).timeout_ms);
        return reply.status != PMIX_SUCCESS ? reply.status : pset_names(reply.env, val);
    }
    if (pmix_status_t rc = topology_xml(c, p, key, val); rc != PMIX_ERR_NOT_FOUND) return rc;
    const bool plain = ninfo == 0 || info == nullptr;
    if (plain) {  // the common case: straight to the cache
        pmix_status_t rc = get_cached(c, p, key, val);
        if (rc != PMIX_ERR_NOT_FOUND) return rc;
    }
    // {group, group rank}: that member's data.
    if (pmix_proc_t member; zpmix::c::group_member(p, member))
        return PMIx_Get(&member, key, info, ninfo, val);
    const Directives d = parse(info, ninfo);
    if (d.scope > PMIX_INTERNAL) return PMIX_ERR_BAD_PARAM;
    if (!plain && !d.refresh) {
        pmix_status_t rc = lookup(c, p, key, d.scope, val);
        if (rc != PMIX_ERR_NOT_FOUND) return rc;
    }
    // Missed (or asked to refresh): bring what the broker has, then answer from the store.
    pmix_status_t rc = PMIX_SUCCESS;
    if (needs_job(c, p, key, d))
        rc = fetch_job_blocking(c, nspace_of(p), d.timeout_ms);
    else if (may_go_remote(c, p, key, d)) {
        if (!from_board(c, p, key, d)) rc = fetch_blocking(c, p, key, d);
    } else if (!d.refresh) {
        return PMIX_ERR_NOT_FOUND;
    }
    if (rc != PMIX_SUCCESS) return rc;
    return lookup(c, p, key, d.scope, val);
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    if (bad_key(key) || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    Process &c = process();
    pmix_proc_t p = proc ? *proc : c.me;
    if (pmix_proc_t member; zpmix::c::group_member(p, member)) p = member;  // by group rank
    const Directives d = parse(info, ninfo);
    if (d.scope > PMIX_INTERNAL) return PMIX_ERR_BAD_PARAM;
    pmix_value_t *v = nullptr;
    auto early = group_key(p, key, info, ninfo, &v);
    // Only from what is here: this may run on the progress thread, which a fetch would block.
    if (!early && c.store->has_job(nspace_of(p))) early = node_key(c, p, key, info, ninfo, &v);
    if (early) {
        c.session->post([status = *early, v, cbfunc, cbdata]() mutable {
            cbfunc(status, v, cbdata);
            if (v) PMIX_VALUE_RELEASE(v);
        });
        return PMIX_SUCCESS;
    }
    if (asks_psets(c, key)) {
        c.session->request(msg::PsetQuery{to_msg(p)}, d.timeout_ms,
                           [cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
                               pmix_value_t *v = nullptr;
                               if (status == PMIX_SUCCESS) status = pset_names(*env, &v);
                               cbfunc(status, v, cbdata);
                               if (v) PMIX_VALUE_RELEASE(v);
                           });
        return PMIX_SUCCESS;
    }
    const std::string k(key);
    // The callback gets a value the library owns and frees once the callback returns.
    auto answer = [&c, p, k, scope = d.scope, cbfunc, cbdata](pmix_status_t status) {
        pmix_value_t *v = nullptr;
        if (status == PMIX_SUCCESS) status = lookup(c, p, k.c_str(), scope, &v);
        cbfunc(status, v, cbdata);
        if (v) PMIX_VALUE_RELEASE(v);
    };
    pmix_value_t *probe = nullptr;
    const pmix_status_t rc = d.refresh ? PMIX_ERR_NOT_FOUND : lookup(c, p, key, d.scope, &probe);
    if (probe) PMIX_VALUE_RELEASE(probe);
    if (rc != PMIX_ERR_NOT_FOUND) {
        c.session->post([answer, rc] { answer(rc); });
    } else if (needs_job(c, p, key, d)) {
        fetch_job(c, nspace_of(p), d.timeout_ms, answer);
    } else if (may_go_remote(c, p, key, d) && from_board(c, p, key, d)) {
        c.session->post([answer] { answer(PMIX_SUCCESS); });
    } else if (may_go_remote(c, p, key, d)) {
        fetch(c, p, key, d, answer);
    } else {
        // Nothing to bring: a refresh answers from the store, a miss is a miss.
        const pmix_status_t status = d.refresh ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
        c.session->post([answer, status] { answer(status); });
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[],
                                              pmix_value_t *val) {
    if (!ready()) return PMIX_ERR_INIT;
    if (proc == nullptr || bad_key(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
    return process().store->store(
        std::string_view(proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN)), proc->rank, key,
        val);
}

// Nothing to do: the library's own progress thread moves every request and event, whatever the
// caller does (the standard lets an implementation with a progress thread return at once).
PMIX_EXPORT void PMIx_Progress(void) {}

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    msg::Publish m;
    if (pmix_status_t rc = publish_message(c, info, ninfo, m); rc != PMIX_SUCCESS) return rc;
    return ask(c, m, parse(info, ninfo).timeout_ms);
}

PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    msg::Publish m;
    if (pmix_status_t rc = publish_message(c, info, ninfo, m); rc != PMIX_SUCCESS) return rc;
    return ask_nb(c, m, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    if (data == nullptr || ndata == 0) return PMIX_ERR_BAD_PARAM;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    std::vector<std::string> keys;
    for (size_t i = 0; i < ndata; ++i) {
        if (bad_key(data[i].key)) return PMIX_ERR_BAD_PARAM;
        keys.emplace_back(data[i].key);
    }
    msg::Lookup m = lookup_message(c, std::move(keys), info, ninfo);
    auto reply = c.session->call(m, m.timeout_ms);
    if (reply.status != PMIX_SUCCESS) return reply.status;
    try {
        return fill_lookup(reply.env.as<msg::LookupReply>(), data, ndata);
    } catch (const DecodeError &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
}

PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    std::vector<std::string> k = keys_of(keys);
    if (k.empty() || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    for (const auto &key : k)
        if (bad_key(key.c_str())) return PMIX_ERR_BAD_PARAM;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    msg::Lookup m = lookup_message(c, k, info, ninfo);
    c.session->request(
        m, m.timeout_ms, [k, cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
            pmix_pdata_t *pdata = nullptr;
            PMIX_PDATA_CREATE(pdata, k.size());
            for (size_t i = 0; i < k.size(); ++i) PMIX_LOAD_KEY(pdata[i].key, k[i].c_str());
            if (status == PMIX_SUCCESS) {
                try {
                    status = fill_lookup(env->as<msg::LookupReply>(), pdata, k.size());
                } catch (const DecodeError &) {
                    status = PMIX_ERR_UNPACK_FAILURE;
                }
            }
            cbfunc(status, status == PMIX_SUCCESS ? pdata : nullptr,
                   status == PMIX_SUCCESS ? k.size() : 0, cbdata);
            PMIX_PDATA_FREE(pdata, k.size());
        });
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    const Directives d = parse(info, ninfo);
    return ask(c, msg::Unpublish{to_msg(c.me), d.range, keys_of(keys)}, d.timeout_ms);
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!ready()) return PMIX_ERR_INIT;
    Process &c = process();
    if (!c.session->has_broker()) return PMIX_ERR_UNREACH;
    const Directives d = parse(info, ninfo);
    return ask_nb(c, msg::Unpublish{to_msg(c.me), d.range, keys_of(keys)}, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t **procs, size_t *nprocs) {
    if (!ready()) return PMIX_ERR_INIT;
    if (procs == nullptr || nprocs == nullptr) return PMIX_ERR_BAD_PARAM;
    *procs = nullptr;
    *nprocs = 0;
    Process &c = process();
    msg::JobInfo job, mine;
    const char *ns = (nspace == nullptr || nspace[0] == '\0') ? c.me.nspace : nspace;
    if (!job_of(c, ns, job)) return PMIX_ERR_NOT_FOUND;
    std::string host;
    if (nodename != nullptr)
        host = nodename;
    else if (c.store->job_of(c.me.nspace, mine) && c.me.rank < mine.procs.size())
        host = mine.procs[c.me.rank].hostname;  // the caller's node
    std::vector<std::uint32_t> ranks;
    for (const auto &p : job.procs)
        if (p.hostname == host) ranks.push_back(p.rank);
    if (ranks.empty()) return PMIX_ERR_NOT_FOUND;
    PMIX_PROC_CREATE(*procs, ranks.size());
    if (*procs == nullptr) return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < ranks.size(); ++i)
        PMIX_LOAD_PROCID(&(*procs)[i], job.nspace.c_str(), ranks[i]);
    *nprocs = ranks.size();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist) {
    if (!ready()) return PMIX_ERR_INIT;
    if (nodelist == nullptr) return PMIX_ERR_BAD_PARAM;
    *nodelist = nullptr;
    Process &c = process();
    msg::JobInfo job;
    const char *ns = (nspace == nullptr || nspace[0] == '\0') ? c.me.nspace : nspace;
    if (!job_of(c, ns, job)) return PMIX_ERR_NOT_FOUND;
    std::string list;
    for (const auto &n : job.nodes) list += (list.empty() ? "" : ",") + n;
    *nodelist = strdup(list.c_str());
    return *nodelist ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

}  // extern "C"
