#pragma once
// Process groups (RFC0033): PMIx_Group_construct and PMIx_Group_destruct are collectives of the
// group's members, counted by each broker's `group` actor (actors/group/group_tracker.hpp) and,
// when the members are on several brokers' nodes, reduced over the broker tree (GroupUp,
// GroupDown) by the engine fences use (broker/tree/gather.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc, Blob

namespace zpmix::msg {

// Client -> group: the caller's part of PMIx_Group_construct (`destruct` false) or
// PMIx_Group_destruct. `members` as the caller named them (any order, wildcard ranks); every
// member names the same set. `seq` counts the caller's earlier calls of this kind for this name
// and set (whatever their outcome), so that a group built again after a destruct, or after a
// failed construct, is a new operation on every broker. Answered with GroupDone.
struct GroupContribute {
    static constexpr const char *type = "group.contribute";
    std::string grp;
    bool destruct = false;
    std::uint64_t seq = 0;
    Proc proc;  // the caller
    std::vector<Proc> members;
    std::uint32_t timeout_ms = 0;     // 0: the broker's default ([broker] group_timeout_ms)
    bool leader = false;              // PMIX_GROUP_LEADER
    bool optional = false;            // PMIX_GROUP_OPTIONAL: members that end first are left out
    bool ft_collective = false;       // PMIX_GROUP_FT_COLLECTIVE: the same, for the collective
    bool notify_termination = false;  // PMIX_GROUP_NOTIFY_TERMINATION
    bool assign_context_id = false;   // PMIX_GROUP_ASSIGN_CONTEXT_ID
    bool local_only = false;          // PMIX_GROUP_LOCAL_ONLY: every member is on this node
    Blob info;      // the value codec's [info...] of PMIX_GROUP_INFO's array (empty: none)
    Blob endpoint;  // PMIX_GROUP_ENDPT_DATA
    ZPMIX_MSG_MAP(grp, destruct, seq, proc, members, timeout_ms, leader, optional, ft_collective,
                  notify_termination, assign_context_id, local_only, info, endpoint);
};
inline const Proc *acting_proc(const GroupContribute &m) {
    return &m.proc;
}

// One member's contribution, as every member receives it.
struct GroupMember {
    Proc proc;
    bool leader = false;
    Blob info;
    Blob endpoint;
    ZPMIX_MSG_MAP(proc, leader, info, endpoint);
};

// group -> each local member (the answer to its GroupContribute): the operation's status
// (PMIX_SUCCESS, PMIX_ERR_TIMEOUT, PMIX_ERR_PROC_TERM_WO_SYNC when a member ended first,
// PMIX_ERR_UNREACH when a broker hosting members was lost ...). A construct's success carries the
// membership (explicit ranks, ascending; without the members left out), the context id when a
// member asked for one (0: none), and every member's contribution.
struct GroupDone {
    static constexpr const char *type = "group.done";
    std::string grp;
    std::int32_t status = 0;
    std::uint64_t context_id = 0;
    std::vector<Proc> membership;
    std::vector<GroupMember> contributions;
    ZPMIX_MSG_MAP(grp, status, context_id, membership, contributions);
};

// Between brokers' `group` actors, as fence.up/fence.down: `key` names the operation
// (GroupTracker::key), `status` PMIX_SUCCESS or why the subtree's part cannot come.
struct GroupUp {
    static constexpr const char *type = "group.up";
    std::string key;
    std::int32_t status = 0;
    Blob part;  // Gather::concatenate's array of GroupParts
    ZPMIX_MSG_MAP(key, status, part);
};
struct GroupDown {
    static constexpr const char *type = "group.down";
    std::string key;
    std::int32_t status = 0;
    Blob result;  // every taking-part broker's GroupPart, and the root's
    ZPMIX_MSG_MAP(key, status, result);
};
inline std::size_t payload_bytes(const GroupUp &m) {
    return m.part.size();
}
inline std::size_t payload_bytes(const GroupDown &m) {
    return m.result.size();
}

// Client, tool or operator -> group: the groups with members on this broker's node, or the one
// named `grp` (PMIx_Query_info's PMIX_QUERY_NUM_GROUPS, _GROUP_NAMES, _GROUP_MEMBERSHIP answer
// from it). Answered with GroupListed.
struct GroupList {
    static constexpr const char *type = "group.list";
    std::string grp;  // empty: every group
    ZPMIX_MSG_MAP(grp);
};
struct GroupSummary {
    std::string grp;
    std::uint64_t context_id = 0;
    std::vector<Proc> members;
    ZPMIX_MSG_MAP(grp, context_id, members);
};
struct GroupListed {
    static constexpr const char *type = "group.listed";
    std::vector<GroupSummary> groups;  // by name
    ZPMIX_MSG_MAP(groups);
};

// One broker's part of an operation over several nodes (not a message: the bytes a GroupUp
// carries): its node's contributions, and the members that ended there before contributing
// (left out when the operation allows it). The root adds one part of its own with the context
// id it assigned (`broker` = kRootVerdict).
struct GroupPart {
    static constexpr std::uint32_t kRootVerdict = 0xffffffffu;
    std::uint32_t broker = 0;
    std::vector<GroupMember> contributions;
    std::vector<Proc> left_out;
    bool assign_context_id = false;
    std::uint64_t context_id = 0;
    ZPMIX_MSG_MAP(broker, contributions, left_out, assign_context_id, context_id);
};

}  // namespace zpmix::msg
