#include "broker/cmd/pmix_tool.hpp"

#include <cstdint>
#include <stdexcept>

#include "broker/cmd/commands.hpp"

namespace zpmix::cli {

namespace {

// A broker being started is waited for, as long as the commands wait for an answer: tried 10
// times, a second apart.
void load_patience(pmix_info_t info[2]) {
    const std::uint32_t retries = 10, delay_s = 1;
    PMIX_INFO_LOAD(&info[0], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_CONNECT_RETRY_DELAY, &delay_s, PMIX_UINT32);
}

}  // namespace

PmixTool::PmixTool(const std::string &command, const char *key, const std::string &value) {
    setup_logging(command, "warn", 0, 0);
    pmix_info_t info[3];
    bool yes = true;
    if (key)
        PMIX_INFO_LOAD(&info[0], key, value.c_str(), PMIX_STRING);
    else
        PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    load_patience(&info[1]);
    pmix_proc_t me;
    const pmix_status_t rc = PMIx_tool_init(&me, info, 3);
    for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
    if (rc != PMIX_SUCCESS) throw std::runtime_error("PMIx_tool_init: " + failure_text(rc));
}

PmixTool::~PmixTool() {
    PMIx_tool_finalize();
}

pmix_status_t PmixTool::use(const std::string &uri) {
    if (used_) {
        (void)PMIx_tool_disconnect(&*used_);
        used_.reset();
    }
    pmix_info_t info[4];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, uri.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_PRIMARY_SERVER, &yes, PMIX_BOOL);
    load_patience(&info[2]);
    pmix_proc_t me, server;
    const pmix_status_t rc = PMIx_tool_attach_to_server(&me, &server, info, 4);
    for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
    if (rc == PMIX_SUCCESS) used_ = server;
    return rc;
}

pmix_status_t query(const char *key,
                    const std::vector<std::pair<const char *, std::string>> &qualifiers,
                    int timeout_s, const std::function<void(const pmix_value_t &)> &use) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, key);
    PMIX_QUERY_QUALIFIERS_CREATE(&q, qualifiers.size() + 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
    for (size_t i = 0; i < qualifiers.size(); ++i)
        PMIX_INFO_LOAD(&q.qualifiers[i + 1], qualifiers[i].first, qualifiers[i].second.c_str(),
                       PMIX_STRING);
    pmix_info_t *results = nullptr;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &results, &n);
    if (rc == PMIX_SUCCESS && n == 1 && PMIX_CHECK_KEY(&results[0], key))
        use(results[0].value);  // one result per key, at the top level
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

std::pair<const pmix_info_t *, size_t> infos_of(const pmix_value_t &v) {
    if (v.type != PMIX_DATA_ARRAY || !v.data.darray || v.data.darray->type != PMIX_INFO)
        return {nullptr, 0};
    return {static_cast<const pmix_info_t *>(v.data.darray->array), v.data.darray->size};
}

}  // namespace zpmix::cli
