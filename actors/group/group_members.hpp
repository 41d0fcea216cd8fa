#pragma once
// The members of a group as the group tracker reads them (actors/group/group_tracker.hpp): the
// set every member spells alike (the operation's key), its explicit ranks, a member's broker (the
// brokers hosting them all: tree::hosting_brokers).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/common.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix::group {

// The members as a set every member spells alike: canonical, and a namespace whose every rank is
// named written as its wildcard. A namespace this broker does not know, or a rank its job does
// not have, is an error (status, why). Its cost is the named procs', not the namespaces' sizes.
struct Normal {
    std::vector<msg::Proc> set;
    std::int32_t status = 0;
    std::string why;
};
Normal normalise(std::vector<msg::Proc> members, const NamespaceTable::Snapshot &table);

// The members a normal set names, with explicit ranks (ascending).
std::vector<msg::Proc> explicit_ranks(const std::vector<msg::Proc> &set,
                                      const NamespaceTable::Snapshot &table);

bool in_set(const std::vector<msg::Proc> &set, const msg::Proc &p);

// The broker hosting `p`; none when its namespace, rank or node's broker is unknown.
std::optional<std::uint32_t> host_broker(const msg::Proc &p, const NamespaceTable::Snapshot &table,
                                         const BrokerView &view);

}  // namespace zpmix::group
