#pragma once
// The operators' commands as tools of the standard API (`zpmix ctl`, `zpmix ps`): libpmix's tool
// (one per process) for as long as the command needs it, and a PMIx status as operators read it.
#include <pmix_tool.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zpmix::cli {

// A PMIx status as operators read it: its name, then its number ("PMIX_ERR_NOT_FOUND (-46)").
inline std::string status_text(std::int32_t status) {
    return std::string(PMIx_Error_string(status)) + " (" + std::to_string(status) + ")";
}

// Why a call through the broker failed, as operators read it: the status, after what a timeout
// means.
inline std::string failure_text(std::int32_t status) {
    return (status == PMIX_ERR_TIMEOUT ? "no answer from the broker: " : "") + status_text(status);
}

// PMIx_tool_init until destroyed (PMIx_tool_finalize then): connected to the broker that `key`
// (PMIX_SERVER_URI, PMIX_SERVER_NSPACE) names by `value`, or without `key` to none yet. libpmix's
// warnings and errors (why no broker was reached) go to stderr as `command`'s log lines. Throws
// std::runtime_error naming the status when PMIx_tool_init fails.
class PmixTool {
  public:
    explicit PmixTool(const std::string &command, const char *key = nullptr,
                      const std::string &value = {});
    ~PmixTool();
    PmixTool(const PmixTool &) = delete;
    PmixTool &operator=(const PmixTool &) = delete;

    // Attaches to the broker at `uri` as the primary server, the one the next calls go through,
    // in place of the one `use` attached before.
    pmix_status_t use(const std::string &uri);

  private:
    std::optional<pmix_proc_t> used_;
};

// PMIx_Query_info of one key, with `qualifiers` (attributes with string values) and PMIX_TIMEOUT
// timeout_s; use() is given the key's answer. The call's status.
pmix_status_t query(const char *key,
                    const std::vector<std::pair<const char *, std::string>> &qualifiers,
                    int timeout_s, const std::function<void(const pmix_value_t &)> &use);

// The infos of a PMIX_DATA_ARRAY of PMIX_INFO (none when it is not one).
std::pair<const pmix_info_t *, size_t> infos_of(const pmix_value_t &v);

}  // namespace zpmix::cli
