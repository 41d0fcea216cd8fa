// zpmix: PMIx_Query_info(_nb) for clients and tools, and PMIx_Register_attributes (RFC0010).
// Keys about this library (attribute support, ABI versions) are answered here, from the
// attribute registry (attributes.hpp); the other query keys go to the broker's `query` actor
// (actors/query/, whose key table says which it answers), and any key that is not a query key
// ("pmix.qry.*", PMIX_QUERY_ALLOC_STATUS) is answered as PMIx_Get answers it (job information of
// the PMIX_NSPACE qualifier's job, or the caller's), PMIX_SERVER_URI by the session. Results are at
// the top level, one info per key of every query in order, as OpenPMIx returns them and its callers
// (Open MPI's Sessions, OpenPMIx's examples) read them; the standard's PMIX_QUERY_RESULTS
// nesting is not used. A key nobody answers holds its status (PMIX_STATUS,
// PMIX_ERR_NOT_FOUND) instead of a value, and the call returns PMIX_QUERY_PARTIAL_SUCCESS;
// PMIX_ERR_NOT_FOUND when no key was answered (or the status every key failed with, such as
// PMIX_ERR_TIMEOUT when the broker did not answer). There is no cache: every query asks afresh, so
// PMIX_QUERY_REFRESH_CACHE always holds. The library's own keys are answered before PMIx_Init
// too (the blocking form), as the standard allows for the ABI versions.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_version.h>

#include "actors/protocol/compat.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/query.hpp"
#include "attributes.hpp"
#include "client/store.hpp"
#include "client/values/value_codec.hpp"
#include "info_values.hpp"
#include "process.hpp"

namespace zpmix::c {

namespace {

const Honours kQueryAttributes(
    Role::client, "PMIx_Query_info",
    {ZPMIX_ATTR(PMIX_QUERY_REFRESH_CACHE), ZPMIX_ATTR(PMIX_NSPACE), ZPMIX_ATTR(PMIX_RANK),
     ZPMIX_ATTR(PMIX_PROCID), ZPMIX_ATTR(PMIX_QUERY_LOCAL_ONLY), ZPMIX_ATTR(PMIX_QUERY_REPORT_AVG),
     ZPMIX_ATTR(PMIX_QUERY_REPORT_MINMAX), ZPMIX_ATTR(PMIX_CLIENT_FUNCTIONS),
     ZPMIX_ATTR(PMIX_TOOL_FUNCTIONS), ZPMIX_ATTR(PMIX_SERVER_FUNCTIONS),
     ZPMIX_ATTR(PMIX_HOST_FUNCTIONS), ZPMIX_ATTR(PMIX_TIMEOUT)});

// An info list's infos as a PMIX_DATA_ARRAY value (the list is released).
void list_to_value(void *list, pmix_value_t *v) {
    auto *d = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
    PMIx_Info_list_convert(list, d);
    PMIx_Info_list_release(list);
    v->type = PMIX_DATA_ARRAY;
    v->data.darray = d;
}

// Moves `v` into the list under `key`.
void add_value(void *list, const char *key, pmix_value_t &v) {
    pmix_info_t tmp;
    PMIX_INFO_CONSTRUCT(&tmp);
    PMIX_LOAD_KEY(tmp.key, key);
    tmp.value = v;
    PMIx_Info_list_xfer(list, &tmp);
    PMIX_INFO_DESTRUCT(&tmp);
    v = pmix_value_t{};
}

// ---- the keys answered here

// The release and features of the server (broker) the caller is attached to; none before
// PMIx_Init and for a singleton: then this library answers for itself.
std::optional<msg::PeerFeatures> connected_server() {
    Process &p = process();
    std::lock_guard lock(p.mu);
    if (!p.attached || !p.attached->has_broker()) return std::nullopt;
    return p.attached->broker();
}

// The protocol feature a function of the API needs of the server (compat.hpp), by its name's
// prefix; nullptr when it needs none of those a release may lack.
const char *feature_of_function(std::string_view fn) {
    static const std::pair<std::string_view, const char *> kByPrefix[] = {
        {"PMIx_Fence", "fence"},
        {"PMIx_Group_", "group"},
        {"PMIx_IOF_", "iof"},
        {"PMIx_Job_control", "jctl"},
        {"PMIx_Process_monitor", "mon"},
        {"PMIx_Log", "log"},
        {"PMIx_Spawn", "job"},
        {"PMIx_Publish", "modex"},
        {"PMIx_Lookup", "modex"},
        {"PMIx_Unpublish", "modex"},
        {"PMIx_Notify_event", "ev"},
        {"PMIx_Register_event_handler", "ev"},
        {"PMIx_Query_info", "query"},
        {"PMIx_Get", "modex"},
    };
    for (const auto &[prefix, feature] : kByPrefix)
        if (fn.starts_with(prefix)) return feature;
    return nullptr;
}

// For each class of functions the qualifiers name (PMIX_CLIENT_FUNCTIONS ...: a comma list of
// function names, or "all"; none given: every client function), an info (PMIX_CLIENT_ATTRIBUTES
// ...) holding, per function, the array of pmix_regattr_t it honours.
pmix_status_t attribute_support(const pmix_query_t &q, pmix_value_t *out) {
    struct Class {
        const char *functions, *attributes;
        Role role;
    };
    static const Class kClasses[] = {
        {PMIX_CLIENT_FUNCTIONS, PMIX_CLIENT_ATTRIBUTES, Role::client},
        {PMIX_TOOL_FUNCTIONS, PMIX_TOOL_ATTRIBUTES, Role::tool},
        {PMIX_SERVER_FUNCTIONS, PMIX_SERVER_ATTRIBUTES, Role::server},
        {PMIX_HOST_FUNCTIONS, PMIX_HOST_ATTRIBUTES, Role::host},
    };
    std::vector<std::pair<const Class *, std::string>> asked;
    for (size_t n = 0; q.qualifiers && n < q.nqual; ++n)
        for (const auto &c : kClasses)
            if (is_key(q.qualifiers[n], c.functions))
                asked.push_back({&c, string_of(q.qualifiers[n].value)});
    if (asked.empty()) asked.push_back({&kClasses[0], "all"});
    const auto server = connected_server();
    void *outer = PMIx_Info_list_start();
    for (const auto &[cls, names] : asked) {
        const auto by_function = attributes_of(cls->role);
        std::vector<std::string> wanted;
        if (names.empty() || names == "all") {
            for (const auto &[fn, attrs] : by_function) wanted.push_back(fn);
        } else {
            for (size_t from = 0, at; from <= names.size(); from = at + 1) {
                at = names.find(',', from);
                if (at == std::string::npos) at = names.size();
                wanted.push_back(names.substr(from, at - from));
            }
        }
        void *functions = PMIx_Info_list_start();
        for (const auto &fn : wanted) {
            const auto it = by_function.find(fn);
            if (it == by_function.end()) continue;  // a function that honours nothing
            // A client's or tool's function the connected server cannot serve honours nothing.
            if (const char *f = feature_of_function(fn);
                f && server && (cls->role == Role::client || cls->role == Role::tool) &&
                !server->has(f))
                continue;
            pmix_data_array_t *d = nullptr;
            PMIX_DATA_ARRAY_CREATE(d, it->second.size(), PMIX_REGATTR);
            auto *regs = static_cast<pmix_regattr_t *>(d->array);
            for (size_t i = 0; i < it->second.size(); ++i)
                PMIX_REGATTR_LOAD(&regs[i], it->second[i].name.c_str(), it->second[i].key.c_str(),
                                  PMIX_UNDEF, nullptr);
            PMIx_Info_list_add(functions, fn.c_str(), d, PMIX_DATA_ARRAY);
            PMIX_DATA_ARRAY_FREE(d);
        }
        pmix_value_t v{};
        list_to_value(functions, &v);
        add_value(outer, cls->attributes, v);
    }
    list_to_value(outer, out);
    return PMIX_SUCCESS;
}

pmix_status_t joined_attributes(const char *function, const char *prefix, pmix_value_t *out) {
    std::string list;
    const auto by_function = attributes_of(Role::client);
    const auto it = by_function.find(function);
    if (it != by_function.end())
        for (const auto &a : it->second)
            if (a.key.rfind(prefix, 0) == 0) list += (list.empty() ? "" : ",") + a.key;
    PMIx_Value_load(out, list.c_str(), PMIX_STRING);
    return PMIX_SUCCESS;
}

// The attributes PMIx_Spawn honours.
pmix_status_t spawn_support(const pmix_query_t &, pmix_value_t *out) {
    return joined_attributes("PMIx_Spawn", "", out);
}

// The debugger attributes PMIx_Spawn honours (pmix.dbg.*: stop in init, on exec, in app, targets).
pmix_status_t debug_support(const pmix_query_t &, pmix_value_t *out) {
    return joined_attributes("PMIx_Spawn", "pmix.dbg.", out);
}

// The level of the standard's API this library implements (pmix_version.h), both ABIs; once
// attached to a server, the lower of its level (as its Welcome said) and ours: what both serve.
pmix_status_t abi_version(const pmix_query_t &, pmix_value_t *out) {
    std::string v = msg::abi_level();
    if (const auto server = connected_server(); server && !server->abi().empty()) {
        auto number = [](const std::string &s) {
            unsigned major = 0, minor = 0;
            std::sscanf(s.c_str(), "%u.%u", &major, &minor);
            return std::pair{major, minor};
        };
        if (number(server->abi()) < number(v)) v = server->abi();
    }
    PMIx_Value_load(out, v.c_str(), PMIX_STRING);
    return PMIX_SUCCESS;
}

struct LocalKey {
    const char *key;
    pmix_status_t (*answer)(const pmix_query_t &, pmix_value_t *);
};
const LocalKey kLocalKeys[] = {
    {PMIX_QUERY_ATTRIBUTE_SUPPORT, attribute_support}, {PMIX_QUERY_SPAWN_SUPPORT, spawn_support},
    {PMIX_QUERY_DEBUG_SUPPORT, debug_support},         {PMIX_QUERY_STABLE_ABI_VERSION, abi_version},
    {PMIX_QUERY_PROVISIONAL_ABI_VERSION, abi_version},
};

const LocalKey *local_key(const char *key) {
    for (const auto &k : kLocalKeys)
        if (strncmp(k.key, key, PMIX_MAX_KEYLEN) == 0) return &k;
    return nullptr;
}

// ---- one call's queries and their answers

// Who answers a key: this library (kLocalKeys), the broker's query actor (the other query keys,
// "pmix.qry.*"), or the store as PMIx_Get would (any other key: job information such as
// PMIX_JOB_SIZE, of the PMIX_NSPACE qualifier's job or the caller's own), or the session
// (PMIX_SERVER_URI: the broker the caller is attached to).
enum class Source { local, broker, get, server_uri };

struct Answer {
    std::string key;
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    pmix_value_t value{};
    Source source = Source::local;
    std::string nspace;  // Source::get: the process whose information it is
    pmix_rank_t rank = PMIX_RANK_WILDCARD;
    std::string host;  // Source::server_uri: the node its PMIX_HOSTNAME qualifier names, if any
};

struct Call {
    const pmix_query_t *queries = nullptr;
    size_t nqueries = 0;
    std::vector<std::vector<Answer>> answers;  // by query, by key
    msg::QueryRequest request;                 // the keys for the broker
    std::uint32_t timeout_ms = 0;

    ~Call() {
        for (auto &q : answers)
            for (auto &a : q) PMIx_Value_destruct(&a.value);
    }
};

bool is_query_key(const char *key) {
    // The allocation's status is a query key of another spelling (the runtime answers it).
    return strncmp(key, "pmix.qry.", 9) == 0 || strcmp(key, PMIX_QUERY_ALLOC_STATUS) == 0;
}

// Whether every key of every query is answered by this library alone (as before PMIx_Init).
bool all_local(const pmix_query_t *queries, size_t nqueries) {
    for (size_t n = 0; n < nqueries; ++n)
        for (size_t k = 0; queries[n].keys && queries[n].keys[k] != nullptr; ++k)
            if (local_key(queries[n].keys[k]) == nullptr) return false;
    return true;
}

// Sorts each key to whoever answers it and answers the library's own. `me`: the caller (its
// namespace is a Get key's job when no PMIX_NSPACE or PMIX_PROCID qualifier names one).
pmix_status_t plan(Call &call, const pmix_proc_t &me) {
    call.answers.resize(call.nqueries);
    for (size_t n = 0; n < call.nqueries; ++n) {
        const pmix_query_t &q = call.queries[n];
        if (q.keys == nullptr || q.keys[0] == nullptr) return PMIX_ERR_BAD_PARAM;
        msg::Query remote;
        std::optional<pmix_rank_t> rank;
        std::string host;
        for (size_t i = 0; q.qualifiers && i < q.nqual; ++i) {
            const pmix_info_t &qi = q.qualifiers[i];
            if (is_key(qi, PMIX_NSPACE)) {
                remote.nspace = string_of(qi.value);
            } else if (is_key(qi, PMIX_RANK) && qi.value.type == PMIX_PROC_RANK) {
                remote.rank = qi.value.data.rank;
                rank = qi.value.data.rank;
            } else if (is_key(qi, PMIX_PROCID) && qi.value.type == PMIX_PROC &&
                       qi.value.data.proc) {
                remote.nspace = qi.value.data.proc->nspace;
                remote.rank = qi.value.data.proc->rank;
                rank = qi.value.data.proc->rank;
            } else if (is_key(qi, PMIX_PSET_NAME) || is_key(qi, PMIX_GROUP_ID)) {
                remote.name = string_of(qi.value);
            } else if (is_key(qi, PMIX_HOSTNAME)) {
                host = string_of(qi.value);
            } else if (is_key(qi, PMIX_QUERY_LOCAL_ONLY)) {
                remote.local_only = PMIX_INFO_TRUE(&qi);
            } else if (is_key(qi, PMIX_QUERY_REPORT_AVG)) {
                remote.report_avg = PMIX_INFO_TRUE(&qi);
            } else if (is_key(qi, PMIX_QUERY_REPORT_MINMAX)) {
                remote.report_minmax = PMIX_INFO_TRUE(&qi);
            } else if (is_key(qi, PMIX_TIMEOUT)) {
                pmix_status_t rc;
                int s = 0;
                PMIX_VALUE_GET_NUMBER(rc, &qi.value, s, int);
                if (rc == PMIX_SUCCESS && s > 0)
                    call.timeout_ms =
                        std::max(call.timeout_ms, static_cast<std::uint32_t>(s) * 1000);
            }
        }
        for (size_t k = 0; q.keys[k] != nullptr; ++k) {
            Answer a;
            a.key = std::string(q.keys[k], strnlen(q.keys[k], PMIX_MAX_KEYLEN));
            if (const LocalKey *local = local_key(q.keys[k])) {
                a.status = local->answer(q, &a.value);
            } else if (is_query_key(q.keys[k])) {
                a.source = Source::broker;
                remote.keys.push_back(a.key);
            } else if (a.key == PMIX_SERVER_URI) {
                a.source = Source::server_uri;
                a.host = host;
            } else {
                a.source = Source::get;
                a.nspace = remote.nspace.empty()
                               ? std::string(me.nspace, strnlen(me.nspace, PMIX_MAX_NSLEN))
                               : remote.nspace;
                a.rank = rank.value_or(PMIX_RANK_WILDCARD);
            }
            call.answers[n].push_back(std::move(a));
        }
        call.request.queries.push_back(std::move(remote));
    }
    return PMIX_SUCCESS;
}

bool has_remote(const Call &call) {
    for (const auto &q : call.request.queries)
        if (!q.keys.empty()) return true;
    return false;
}

// The namespaces whose job information Get keys need and the store does not have yet.
std::vector<std::string> missing_jobs(const Call &call, const client::ClientStore &store) {
    std::vector<std::string> out;
    for (const auto &q : call.answers)
        for (const auto &a : q)
            if (a.source == Source::get && !a.nspace.empty() && !store.has_job(a.nspace) &&
                std::find(out.begin(), out.end(), a.nspace) == out.end())
                out.push_back(a.nspace);
    return out;
}

// A broker's JobInfoReply for `nspace` into the store (as PMIx_Get's fetch does).
void store_job(client::ClientStore &store, const std::string &nspace, const Envelope &env) {
    try {
        auto reply = env.as<msg::JobInfoReply>();
        if (reply.job.nspace == nspace) store.add_job(reply.job);
    } catch (const DecodeError &) {
        // the keys stay unanswered (PMIX_ERR_NOT_FOUND)
    }
}

// Fetches each missing job in turn, then runs `then` (on the progress thread).
void fetch_jobs(client::Session &session, std::vector<std::string> nspaces,
                std::uint32_t timeout_ms, std::function<void()> then) {
    if (nspaces.empty()) return then();
    const std::string ns = nspaces.back();
    nspaces.pop_back();
    session.request(msg::JobInfoQuery{ns}, timeout_ms,
                    [&session, ns, nspaces = std::move(nspaces), timeout_ms,
                     then = std::move(then)](pmix_status_t status, const Envelope *env) mutable {
                        if (status == PMIX_SUCCESS && env) store_job(session.store(), ns, *env);
                        fetch_jobs(session, std::move(nspaces), timeout_ms, std::move(then));
                    });
}

// The Get keys and PMIX_SERVER_URI, from the store and the session.
void answer_here(Call &call, client::Session &session) {
    char host[256] = {};
    (void)gethostname(host, sizeof host - 1);
    for (auto &q : call.answers)
        for (auto &a : q) {
            if (a.source == Source::server_uri) {
                // The broker the caller is attached to answers for its own node only.
                if (!session.has_broker() || (!a.host.empty() && a.host != host)) continue;
                PMIx_Value_load(&a.value, session.uri().c_str(), PMIX_STRING);
                a.status = PMIX_SUCCESS;
            } else if (a.source == Source::get) {
                pmix_value_t *v = nullptr;
                a.status = session.store().get(a.nspace, a.rank, a.key, &v);
                if (a.status != PMIX_SUCCESS) continue;
                PMIx_Value_xfer(&a.value, v);
                PMIX_VALUE_RELEASE(v);
            }
        }
}

// The broker's answers (or, with no reply, `status` for each remote key).
void take(Call &call, pmix_status_t status, const Envelope *reply) {
    msg::QueryReply r;
    if (status == PMIX_SUCCESS && reply) {
        try {
            r = reply->as<msg::QueryReply>();
        } catch (const DecodeError &) {
            status = PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (status == PMIX_SUCCESS && r.results.size() != call.nqueries)
        status = PMIX_ERR_UNPACK_FAILURE;
    for (size_t n = 0; n < call.nqueries; ++n) {
        size_t next = 0;  // the broker answers the remote keys of a query in order
        for (auto &a : call.answers[n]) {
            if (a.source != Source::broker) continue;
            if (status != PMIX_SUCCESS) {
                a.status = status;
                continue;
            }
            const auto &answers = r.results[n].answers;
            if (next >= answers.size() || answers[next].key != a.key) {
                a.status = PMIX_ERR_UNPACK_FAILURE;
                continue;
            }
            const auto &got = answers[next++];
            a.status = got.status;
            if (a.status == PMIX_SUCCESS &&
                decode_value(got.value.data(), got.value.size(), &a.value) != PMIX_SUCCESS)
                a.status = PMIX_ERR_UNPACK_FAILURE;
        }
    }
}

// The results, one info per key of every query in order, at the top level (the shape OpenPMIx
// returns and its callers read, not the standard's PMIX_QUERY_RESULTS nesting); a key not
// answered holds its status (PMIX_STATUS), so result i is always key i. The call's status:
// nothing answered is PMIX_ERR_NOT_FOUND, unless every key failed alike for another reason (the
// broker did not answer in time, is gone, refused): that one.
pmix_status_t results_of(Call &call, pmix_info_t **results, size_t *nresults) {
    size_t found = 0, total = 0;
    std::optional<pmix_status_t> failed;  // the status every key failed with, if one
    for (const auto &q : call.answers)
        for (const auto &a : q) {
            ++total;
            found += a.status == PMIX_SUCCESS ? 1 : 0;
            failed = total == 1 || failed == a.status ? std::optional(a.status) : std::nullopt;
        }
    *results = nullptr;
    *nresults = 0;
    if (found == 0) return failed.value_or(PMIX_ERR_NOT_FOUND);
    pmix_info_t *out = nullptr;
    PMIX_INFO_CREATE(out, total);
    size_t i = 0;
    for (auto &q : call.answers)
        for (auto &a : q) {
            if (a.status == PMIX_SUCCESS && a.key == PMIX_QUERY_SUPPORTED_KEYS &&
                a.value.type == PMIX_STRING) {
                std::string keys = a.value.data.string ? a.value.data.string : "";
                for (const auto &k : kLocalKeys) keys += std::string(",") + k.key;
                PMIx_Value_destruct(&a.value);
                PMIx_Value_load(&a.value, keys.c_str(), PMIX_STRING);
            }
            if (a.status != PMIX_SUCCESS) {
                PMIx_Value_destruct(&a.value);
                PMIx_Value_load(&a.value, &a.status, PMIX_STATUS);
            }
            PMIX_LOAD_KEY(out[i].key, a.key.c_str());
            out[i].value = a.value;
            a.value = pmix_value_t{};
            ++i;
        }
    *results = out;
    *nresults = total;
    return found == total ? PMIX_SUCCESS : PMIX_QUERY_PARTIAL_SUCCESS;
}

}  // namespace

}  // namespace zpmix::c

using namespace zpmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t **results, size_t *nresults) {
    if (queries == nullptr || nqueries == 0 || results == nullptr || nresults == nullptr)
        return PMIX_ERR_BAD_PARAM;
    c::Call call;
    call.queries = queries;
    call.nqueries = nqueries;
    client::Session *session = nullptr;
    pmix_proc_t me{};
    if (pmix_status_t rc = c::with_client(false,
                                          [&](client::Session &s, const pmix_proc_t &p) {
                                              session = &s;
                                              me = p;
                                          });
        rc != PMIX_SUCCESS) {
        // Before PMIx_Init (or after PMIx_Finalize) the library's own keys, such as the ABI
        // versions, are still answered: the standard lets them be asked outside init.
        if (rc != PMIX_ERR_INIT || !c::all_local(queries, nqueries)) return rc;
        if (pmix_status_t prc = c::plan(call, me); prc != PMIX_SUCCESS) return prc;
        return c::results_of(call, results, nresults);
    }
    if (pmix_status_t rc = c::plan(call, me); rc != PMIX_SUCCESS) return rc;
    if (session->has_broker())
        for (const auto &ns : c::missing_jobs(call, session->store())) {
            auto reply = session->call(msg::JobInfoQuery{ns}, call.timeout_ms);
            if (reply.status == PMIX_SUCCESS) c::store_job(session->store(), ns, reply.env);
        }
    c::answer_here(call, *session);
    if (c::has_remote(call)) {
        client::Session::Reply reply;
        const pmix_status_t rc = c::ask(call.request, call.timeout_ms, reply);
        c::take(call, rc, rc == PMIX_SUCCESS ? &reply.env : nullptr);
    }
    return c::results_of(call, results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (queries == nullptr || nqueries == 0 || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    auto call = std::make_shared<c::Call>();
    call->queries = queries;  // read only in plan(): the caller keeps them
    call->nqueries = nqueries;
    client::Session *session = nullptr;
    pmix_proc_t me{};
    if (pmix_status_t rc = c::with_client(false,
                                          [&](client::Session &s, const pmix_proc_t &p) {
                                              session = &s;
                                              me = p;
                                          });
        rc != PMIX_SUCCESS)
        return rc;
    if (pmix_status_t rc = c::plan(*call, me); rc != PMIX_SUCCESS) return rc;
    auto deliver = [call, cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
        c::take(*call, status, env);
        auto *r = new std::pair<pmix_info_t *, size_t>(nullptr, 0);
        const pmix_status_t rc = c::results_of(*call, &r->first, &r->second);
        cbfunc(rc, r->first, r->second, cbdata, c::release_info_array, r);
    };
    // On the progress thread, as the standard asks (even when everything is answered here):
    // the jobs Get keys need, then the broker's keys (PMIX_ERR_UNREACH without a broker).
    std::vector<std::string> jobs;
    if (session->has_broker()) jobs = c::missing_jobs(*call, session->store());
    const std::uint32_t timeout_ms = call->timeout_ms;
    auto rest = [call, session, deliver] {
        c::answer_here(*call, *session);
        if (!c::has_remote(*call)) return deliver(PMIX_SUCCESS, nullptr);
        const pmix_status_t sent = c::submit(call->request, call->timeout_ms, deliver);
        if (sent != PMIX_SUCCESS) deliver(sent, nullptr);
    };
    if (!jobs.empty()) {
        c::fetch_jobs(*session, std::move(jobs), timeout_ms, rest);
        return PMIX_SUCCESS;
    }
    session->post(rest);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]) {
    if (function == nullptr || attrs == nullptr) return PMIX_ERR_BAD_PARAM;
    std::vector<c::Attribute> list;
    for (size_t i = 0; attrs[i] != nullptr; ++i) list.push_back({attrs[i], attrs[i]});
    c::register_attributes(c::Role::host, function, std::move(list));
    return PMIX_SUCCESS;
}

}  // extern "C"
