// zpmix: PMIx_Query_info(_nb) for clients and tools, and PMIx_Register_attributes (RFC0010).
// Keys about this library (attribute support, ABI versions) are answered here, from the
// attribute registry (attributes.hpp); every other key goes to the broker's `query` actor
// (actors/query/, whose key table says which it answers). Results have the standard's shape: one
// PMIX_QUERY_RESULTS info per query, an array holding PMIX_QUERY_QUALIFIERS (the query's
// qualifiers) and one info per key. A key nobody answers holds its status (PMIX_STATUS,
// PMIX_ERR_NOT_FOUND) instead of a value, and the call returns PMIX_QUERY_PARTIAL_SUCCESS;
// PMIX_ERR_NOT_FOUND when no key was answered (or the status every key failed with, such as
// PMIX_ERR_TIMEOUT when the broker did not answer). There is no cache: every query asks afresh, so
// PMIX_QUERY_REFRESH_CACHE always holds.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_version.h>

#include "actors/protocol/query.hpp"
#include "attributes.hpp"
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

// The level of the standard's API this library implements (pmix_version.h), both ABIs.
pmix_status_t abi_version(const pmix_query_t &, pmix_value_t *out) {
    const std::string v =
        std::to_string(PMIX_VERSION_MAJOR) + "." + std::to_string(PMIX_VERSION_MINOR);
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

struct Answer {
    std::string key;
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    pmix_value_t value{};
    bool remote = false;
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

pmix_status_t plan(Call &call) {
    call.answers.resize(call.nqueries);
    for (size_t n = 0; n < call.nqueries; ++n) {
        const pmix_query_t &q = call.queries[n];
        if (q.keys == nullptr || q.keys[0] == nullptr) return PMIX_ERR_BAD_PARAM;
        msg::Query remote;
        for (size_t i = 0; q.qualifiers && i < q.nqual; ++i) {
            const pmix_info_t &qi = q.qualifiers[i];
            if (is_key(qi, PMIX_NSPACE)) {
                remote.nspace = string_of(qi.value);
            } else if (is_key(qi, PMIX_RANK) && qi.value.type == PMIX_PROC_RANK) {
                remote.rank = qi.value.data.rank;
            } else if (is_key(qi, PMIX_PROCID) && qi.value.type == PMIX_PROC &&
                       qi.value.data.proc) {
                remote.nspace = qi.value.data.proc->nspace;
                remote.rank = qi.value.data.proc->rank;
            } else if (is_key(qi, PMIX_PSET_NAME) || is_key(qi, PMIX_GROUP_ID)) {
                remote.name = string_of(qi.value);
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
            } else {
                a.remote = true;
                remote.keys.push_back(a.key);
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
            if (!a.remote) continue;
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

// The results array; the call's status. Nothing answered is PMIX_ERR_NOT_FOUND, unless every key
// failed alike for another reason (the broker did not answer in time, is gone, refused): that one.
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
    PMIX_INFO_CREATE(out, call.nqueries);
    for (size_t n = 0; n < call.nqueries; ++n) {
        const pmix_query_t &q = call.queries[n];
        void *list = PMIx_Info_list_start();
        if (q.qualifiers && q.nqual > 0) {
            void *quals = PMIx_Info_list_start();
            for (size_t i = 0; i < q.nqual; ++i) PMIx_Info_list_xfer(quals, &q.qualifiers[i]);
            pmix_value_t v{};
            list_to_value(quals, &v);
            add_value(list, PMIX_QUERY_QUALIFIERS, v);
        }
        for (auto &a : call.answers[n]) {
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
            add_value(list, a.key.c_str(), a.value);
        }
        pmix_value_t v{};
        list_to_value(list, &v);
        PMIX_LOAD_KEY(out[n].key, PMIX_QUERY_RESULTS);
        out[n].value = v;
    }
    *results = out;
    *nresults = call.nqueries;
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
    if (pmix_status_t rc = c::with_client(false, [](auto &, const auto &) {}); rc != PMIX_SUCCESS)
        return rc;
    if (pmix_status_t rc = c::plan(call); rc != PMIX_SUCCESS) return rc;
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
    call->queries = queries;  // read only until plan() and results_of(): the caller keeps them
    call->nqueries = nqueries;
    if (pmix_status_t rc = c::with_client(false, [](auto &, const auto &) {}); rc != PMIX_SUCCESS)
        return rc;
    if (pmix_status_t rc = c::plan(*call); rc != PMIX_SUCCESS) return rc;
    auto deliver = [call, cbfunc, cbdata](pmix_status_t status, const Envelope *env) {
        c::take(*call, status, env);
        auto *r = new std::pair<pmix_info_t *, size_t>(nullptr, 0);
        const pmix_status_t rc = c::results_of(*call, &r->first, &r->second);
        cbfunc(rc, r->first, r->second, cbdata, c::release_info_array, r);
    };
    pmix_status_t sent = PMIX_SUCCESS;
    if (c::has_remote(*call)) sent = c::submit(call->request, call->timeout_ms, deliver);
    if (c::has_remote(*call) && sent == PMIX_SUCCESS) return PMIX_SUCCESS;
    // Answered here (or the broker's keys failed at once, PMIX_ERR_UNREACH without a broker):
    // still called back from the progress thread, as the standard asks.
    return c::with_client(false, [&](client::Session &session, const pmix_proc_t &) {
        session.post([deliver, sent] { deliver(sent, nullptr); });
    });
}

PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]) {
    if (function == nullptr || attrs == nullptr) return PMIX_ERR_BAD_PARAM;
    std::vector<c::Attribute> list;
    for (size_t i = 0; attrs[i] != nullptr; ++i) list.push_back({attrs[i], attrs[i]});
    c::register_attributes(c::Role::host, function, std::move(list));
    return PMIX_SUCCESS;
}

}  // extern "C"
