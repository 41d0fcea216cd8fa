// HostServices' queries and logging (RFC0010): the keys the broker could not answer go to the
// host's query upcall, each query with its qualifiers; the host's results are matched to the
// keys by name. The entries of a PMIx_Log on channels the broker does not have go to its log
// upcall.
#include <cstring>

#include <fmt/format.h>
#include <msgpack.hpp>

#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_services.hpp"

namespace zpmix::server {

namespace {

// The queries an upcall lends the host: keys (NULL-terminated) and qualifiers.
struct LentQueries {
    std::vector<std::vector<std::string>> keys;
    std::vector<std::vector<char *>> argv;
    std::vector<std::vector<pmix_info_t>> qualifiers;
    std::vector<pmix_query_t> queries;
    LentQueries() = default;
    LentQueries(const LentQueries &) = delete;
    LentQueries &operator=(const LentQueries &) = delete;
    ~LentQueries() {
        for (auto &q : qualifiers)
            for (auto &i : q) PMIX_INFO_DESTRUCT(&i);
    }
};

template <class T>
void load_qualifier(std::vector<pmix_info_t> &into, const char *key, T value,
                    pmix_data_type_t type) {
    into.emplace_back();
    PMIX_INFO_LOAD(&into.back(), key, &value, type);
}

std::shared_ptr<LentQueries> lend_queries(const std::vector<msg::Query> &in) {
    auto l = std::make_shared<LentQueries>();
    const std::size_t n = in.size();
    l->keys.resize(n);
    l->argv.resize(n);
    l->qualifiers.resize(n);
    l->queries.resize(n);
    for (std::size_t q = 0; q < n; ++q) {
        const msg::Query &m = in[q];
        l->keys[q] = m.keys;
        for (auto &k : l->keys[q]) l->argv[q].push_back(k.data());
        l->argv[q].push_back(nullptr);
        auto &qual = l->qualifiers[q];
        qual.reserve(6);  // no reallocation: the infos hold pointers
        if (!m.nspace.empty()) {
            qual.emplace_back();
            PMIX_INFO_LOAD(&qual.back(), PMIX_NSPACE, m.nspace.c_str(), PMIX_STRING);
        }
        if (m.rank != msg::kWildcardRank) load_qualifier(qual, PMIX_RANK, m.rank, PMIX_PROC_RANK);
        if (m.local_only) load_qualifier(qual, PMIX_QUERY_LOCAL_ONLY, true, PMIX_BOOL);
        if (m.report_avg) load_qualifier(qual, PMIX_QUERY_REPORT_AVG, true, PMIX_BOOL);
        if (m.report_minmax) load_qualifier(qual, PMIX_QUERY_REPORT_MINMAX, true, PMIX_BOOL);
        if (!m.name.empty()) {
            qual.emplace_back();
            PMIX_INFO_LOAD(&qual.back(), PMIX_PSET_NAME, m.name.c_str(), PMIX_STRING);
        }
        pmix_query_t &pq = l->queries[q];
        PMIX_QUERY_CONSTRUCT(&pq);
        pq.keys = l->argv[q].data();
        pq.qualifiers = qual.empty() ? nullptr : qual.data();
        pq.nqual = qual.size();
    }
    return l;
}

// A process table as an array of infos each holding one PMIX_PROC_INFO (Open MPI 4.1's mpirun
// answers so, its component's conversion of its own lists): the rows, else null.
const pmix_data_array_t *proc_rows_in_infos(const std::string &key, const pmix_value_t &v) {
    if (key != PMIX_QUERY_PROC_TABLE && key != PMIX_QUERY_LOCAL_PROC_TABLE) return nullptr;
    if (v.type != PMIX_DATA_ARRAY || !v.data.darray || v.data.darray->type != PMIX_INFO)
        return nullptr;
    const auto *infos = static_cast<const pmix_info_t *>(v.data.darray->array);
    for (std::size_t i = 0; i < v.data.darray->size; ++i)
        if (infos[i].value.type != PMIX_PROC_INFO || !infos[i].value.data.pinfo) return nullptr;
    return v.data.darray;
}

// The host's answer of `key`, encoded; a process table in the standard's form (an array of
// PMIX_PROC_INFO), which the clients read.
pmix_status_t encode_answer(c::Packer &pk, const std::string &key, const pmix_value_t &v) {
    const pmix_data_array_t *rows = proc_rows_in_infos(key, v);
    if (!rows) return c::encode_value(pk, v);
    pmix_data_array_t *table;
    PMIX_DATA_ARRAY_CREATE(table, rows->size, PMIX_PROC_INFO);
    auto *out = static_cast<pmix_proc_info_t *>(table->array);
    const auto *in = static_cast<const pmix_info_t *>(rows->array);
    for (std::size_t i = 0; i < rows->size; ++i) {
        const pmix_proc_info_t &p = *in[i].value.data.pinfo;
        out[i].proc = p.proc;
        out[i].hostname = p.hostname ? strdup(p.hostname) : nullptr;
        out[i].executable_name = p.executable_name ? strdup(p.executable_name) : nullptr;
        out[i].pid = p.pid;
        out[i].exit_code = p.exit_code;
        out[i].state = p.state;
    }
    pmix_value_t standard;
    PMIX_VALUE_CONSTRUCT(&standard);
    standard.type = PMIX_DATA_ARRAY;
    standard.data.darray = table;
    const pmix_status_t rc = c::encode_value(pk, standard);
    PMIX_VALUE_DESTRUCT(&standard);
    return rc;
}

// The host's results as one answer per key asked (PMIX_ERR_NOT_FOUND for a key it did not
// answer): a result is matched to the first key of that name still unanswered. A partial
// success's results are taken as a success's.
msg::QueryReply host_answers(const std::vector<msg::Query> &asked, pmix_status_t status,
                             const Results &r) {
    if (status == PMIX_QUERY_PARTIAL_SUCCESS) status = PMIX_SUCCESS;
    msg::QueryReply out;
    std::vector<bool> used(r.ninfo, false);
    for (const auto &q : asked) {
        msg::QueryResult res;
        for (const auto &key : q.keys) {
            msg::QueryAnswer a{key, PMIX_ERR_NOT_FOUND, {}};
            for (std::size_t i = 0; status == PMIX_SUCCESS && i < r.ninfo; ++i) {
                if (used[i] ||
                    key != std::string(r.info[i].key, strnlen(r.info[i].key, PMIX_MAX_KEYLEN)))
                    continue;
                msgpack::sbuffer buf;
                c::Packer pk(buf);
                if (encode_answer(pk, key, r.info[i].value) != PMIX_SUCCESS) continue;
                used[i] = true;
                a.status = PMIX_SUCCESS;
                a.value = msg::Blob(buf.data(), buf.data() + buf.size());
                break;
            }
            res.answers.push_back(std::move(a));
        }
        out.results.push_back(std::move(res));
    }
    return out;
}

}  // namespace

void HostServices::query(const Envelope &env, msg::HostQuery &m) {
    const std::string to = env.from;
    const std::uint64_t id = env.id;
    auto asked = std::make_shared<std::vector<msg::Query>>(std::move(m.queries));
    auto answer = [this, to, id, asked](pmix_status_t status, const Results &r) {
        send(to, host_answers(*asked, status, r), id);
    };
    if (!module_.query) return answer(PMIX_ERR_NOT_SUPPORTED, Results{});
    auto lent = lend_queries(*asked);
    pmix_proc_t requestor;
    PMIX_LOAD_PROCID(&requestor, m.requester.nspace.c_str(), m.requester.rank);
    void *cbdata = expect_infos("query", wait_for(0), answer, lent);
    const pmix_status_t rc =
        module_.query(&requestor, lent->queries.data(), lent->queries.size(), infos_done, cbdata);
    returned(rc, cbdata, [answer](pmix_status_t status) {
        answer(status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status, Results{});
    });
}

void HostServices::log_request(const Envelope &, msg::HostLog &m) {
    const std::string peer = m.peer;
    const std::uint64_t id = m.id;
    const bool once = m.request.once, logged = m.logged;
    const pmix_status_t local = m.local_status;
    auto answer = [this, peer, id, once, logged, local](pmix_status_t host) {
        pmix_status_t status = local;
        if (host == PMIX_SUCCESS || host == PMIX_OPERATION_SUCCEEDED) {
            if (once) status = PMIX_SUCCESS;
        } else if (status == PMIX_SUCCESS) {
            status = host;
        }
        if (once && logged) status = PMIX_SUCCESS;
        if (status == PMIX_SUCCESS) return send(peer, msg::Ok{}, id);
        send(peer,
             msg::ErrorReply{status, host == PMIX_ERR_NOT_SUPPORTED
                                         ? "a channel neither zpmix nor the resource manager has"
                                         : "some channels failed"},
             id);
    };
    // The host's log returns nothing: without it, a channel nobody has.
    if (!module_.log) return answer(PMIX_ERR_NOT_SUPPORTED);
    auto data = std::make_shared<LentInfos>();
    data->info.reserve(m.request.entries.size() + 4);
    for (const auto &e : m.request.entries) {
        const char *key = e.channel == "email" ? PMIX_LOG_EMAIL : e.channel.c_str();
        data->info.emplace_back();
        PMIX_INFO_LOAD(&data->info.back(), key, e.text.c_str(), PMIX_STRING);
    }
    auto dirs = std::make_shared<LentInfos>();
    dirs->info.reserve(4);
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, m.request.source.nspace.c_str(), m.request.source.rank);
    dirs->add(PMIX_LOG_SOURCE, source, PMIX_PROC);
    if (m.request.timestamp != 0)
        dirs->add(PMIX_LOG_TIMESTAMP, static_cast<time_t>(m.request.timestamp), PMIX_TIME);
    if (once) dirs->add(PMIX_LOG_ONCE, true, PMIX_BOOL);
    auto keep = std::make_shared<std::pair<std::shared_ptr<LentInfos>, std::shared_ptr<LentInfos>>>(
        data, dirs);
    void *cbdata = expect_op("log", wait_for(0), answer, keep);
    module_.log(&source, data->infos(), data->info.size(), dirs->infos(), dirs->info.size(),
                op_done, cbdata);
}

}  // namespace zpmix::server
