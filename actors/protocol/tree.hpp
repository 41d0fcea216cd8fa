#pragma once
// The broker tree as the actors see it (the link itself is broker/tree/link.hpp): which brokers
// were lost. Messages between brokers are the actors' own types, addressed "@<rank>/<actor>"
// (actors/runtime/broker_map.hpp).
#include <cstdint>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// tree link -> every actor that handles it (broadcast): brokers this one can no longer reach,
// because a child's subtree or its parent went silent (heartbeats) or away. `parent`: the parent
// is lost, and with it every broker outside this one's subtree (`brokers` lists the children's
// subtrees lost). Status for what waited on them: PMIX_ERR_UNREACH (or _LOST_CONNECTION).
struct TreeLost {
    static constexpr const char *type = "tree.lost";
    std::vector<std::uint32_t> brokers;  // lost brokers under this one, ascending
    bool parent = false;
    ZPMIX_MSG_MAP(brokers, parent);
};

}  // namespace zpmix::msg
