#pragma once
// What a host registered that belongs to no namespace (PMIx_server_register_resources: the
// cluster's name, the resource manager's, node descriptions as PMIX_NODE_INFO_ARRAY) and the node
// inventories it delivered (PMIx_server_deliver_inventory). Every namespace registered afterwards
// carries them before its own infos, so the namespace's own keys win (job_registration.hpp reads
// them: plain keys are job-level, this node's array too, another node's array is that node's
// node-level information for Gets that name it). A namespace registered before keeps what it had:
// its clients hold their job's information from PMIx_Init on.
//
// Entries are copies the library owns. A plain key registered again replaces the earlier value; a
// node's array (named by PMIX_HOSTNAME, else PMIX_NODEID) merges into that node's, key by key.
// Removal (PMIx_server_deregister_resources) as OpenPMIx documents it: a key with a plain value
// removes every entry of that key; a PMIX_NODE_INFO_ARRAY narrows by its identifiers (the node)
// and its targets (members equal to them, or arrays such as PMIX_FABRIC_DEVICE that contain them);
// a node left with nothing is removed. Removing what is not there succeeds.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pmix_common.h"

namespace zpmix::server {

// A pmix_info_t the library owns (a deep copy).
class OwnedInfo {
  public:
    explicit OwnedInfo(const pmix_info_t &src);
    OwnedInfo(OwnedInfo &&o) noexcept;
    OwnedInfo &operator=(OwnedInfo &&o) noexcept;
    OwnedInfo(const OwnedInfo &) = delete;
    OwnedInfo &operator=(const OwnedInfo &) = delete;
    ~OwnedInfo();
    const pmix_info_t &info() const { return i_; }

  private:
    pmix_info_t i_{};
};

class Resources {
  public:
    // PMIx_server_register_resources. PMIX_ERR_BAD_PARAM for a node array that names no node;
    // PMIX_ERR_NOT_SUPPORTED for OpenPMIx's group bootstrap keys (groups cross nodes through the
    // host's `group` upcall here). Nothing is kept when the call fails.
    pmix_status_t add(const pmix_info_t info[], std::size_t ninfo);
    // PMIx_server_deliver_inventory: one node's inventory (PMIX_HOSTNAME and its keys, as
    // PMIx_server_collect_inventory answers) or node arrays, kept as that node's information.
    pmix_status_t add_inventory(const pmix_info_t info[], std::size_t ninfo);
    // PMIx_server_deregister_resources.
    pmix_status_t remove(const pmix_info_t info[], std::size_t ninfo);
    // Calls f with these entries followed by `info` (shallow copies, valid during the call).
    void with(const pmix_info_t info[], std::size_t ninfo,
              const std::function<void(const pmix_info_t *, std::size_t)> &f) const;

  private:
    struct Node {
        std::optional<std::string> host;
        std::optional<std::uint32_t> id;
        std::vector<OwnedInfo> ids;  // PMIX_HOSTNAME, PMIX_NODEID as given
        std::vector<OwnedInfo> members;
    };
    Node *find(const std::optional<std::string> &host, const std::optional<std::uint32_t> &id);
    void add_node(const pmix_info_t *items, std::size_t n);

    mutable std::mutex mu_;
    std::vector<OwnedInfo> plain_;
    std::vector<Node> nodes_;
};

}  // namespace zpmix::server
