#pragma once
// PMIx_Query_info (RFC0010): what a client or tool asks the broker's `query` actor. The library
// answers the keys it knows itself (attribute support, ABI versions) and sends the rest here.
#include <cstdint>
#include <string>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// One pmix_query_t: its keys and the qualifiers the broker's answers use.
struct Query {
    std::vector<std::string> keys;
    std::string nspace;                  // PMIX_NSPACE qualifier; empty: every job
    std::uint32_t rank = kWildcardRank;  // PMIX_RANK qualifier
    bool local_only = false;             // PMIX_QUERY_LOCAL_ONLY
    bool report_avg = false;             // PMIX_QUERY_REPORT_AVG
    bool report_minmax = false;          // PMIX_QUERY_REPORT_MINMAX
    std::string name;                    // PMIX_PSET_NAME or PMIX_GROUP_ID qualifier
    ZPMIX_MSG_MAP(keys, nspace, rank, local_only, report_avg, report_minmax, name);
};

// Client or tool -> query: answered by QueryReply, one result per query in order.
struct QueryRequest {
    static constexpr const char *type = "query.request";
    std::vector<Query> queries;
    ZPMIX_MSG_MAP(queries);
};

// One key's answer: a status (PMIX_ERR_NOT_FOUND for a key nobody answers) and, on success, the
// value in libpmix's wire form ([type, payload], client/values/value_codec.hpp).
struct QueryAnswer {
    std::string key;
    std::int32_t status = 0;
    Blob value;
    ZPMIX_MSG_MAP(key, status, value);
};
struct QueryResult {
    std::vector<QueryAnswer> answers;  // one per key, in the query's order
    ZPMIX_MSG_MAP(answers);
};
struct QueryReply {
    static constexpr const char *type = "query.reply";
    std::vector<QueryResult> results;
    ZPMIX_MSG_MAP(results);
};
inline std::size_t payload_bytes(const QueryReply &m) {
    std::size_t n = 0;
    for (const auto &r : m.results)
        for (const auto &a : r.answers) n += a.value.size();
    return n;
}

}  // namespace zpmix::msg
