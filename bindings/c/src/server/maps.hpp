#pragma once
// The node and process maps hosts hand to PMIx_server_register_nspace (PMIX_NODE_MAP,
// PMIX_PROC_MAP), as PMIx_generate_regex and PMIx_generate_ppn make them: "raw:" and the host's
// list (`n1,n2,n3`; `0,1;2,3`: a node's ranks, ';' between nodes), which every host reads back
// only through this library. Parsing also takes the list without the prefix, and OpenPMIx's
// "pmix[...]" form of a node list of plain names (prefix[start-end] ranges are expanded).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zpmix::server {

std::string generate_regex(const std::string &nodes);
std::string generate_ppn(const std::string &ranks_per_node);

// The node names, in order; none when it cannot be read.
std::optional<std::vector<std::string>> parse_node_map(const std::string &map);
// Each node's ranks, in node order; none when it cannot be read.
std::optional<std::vector<std::vector<std::uint32_t>>> parse_proc_map(const std::string &map);

}  // namespace zpmix::server
