#pragma once
// Process groups (RFC0033): PMIx_Group_construct and PMIx_Group_destruct are collectives of the
// group's members, counted by each broker's `group` actor (actors/group/group_tracker.hpp) and,
// when the members are on several brokers' nodes, reduced over the broker tree (GroupUp,
// GroupDown) by the engine fences use (actors/tree/gather.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc, Blob

namespace zpmix::msg {

// Ranks of one namespace as runs: `runs` is [first, count, first, count, ...], ascending.
struct RankRuns {
    std::string nspace;
    std::vector<std::uint32_t> runs;
    ZPMIX_MSG_MAP(nspace, runs);
};
// `procs` (explicit ranks, ascending by namespace then rank) as runs, and back. to_procs refuses
// (none) runs that are malformed or name more than `max` processes.
inline std::vector<RankRuns> to_runs(const std::vector<Proc> &procs) {
    std::vector<RankRuns> out;
    for (const auto &p : procs) {
        if (out.empty() || out.back().nspace != p.nspace) out.push_back({p.nspace, {}});
        auto &runs = out.back().runs;
        if (!runs.empty() && runs[runs.size() - 2] + runs.back() == p.rank)
            ++runs.back();
        else
            runs.insert(runs.end(), {p.rank, 1});
    }
    return out;
}
inline std::optional<std::vector<Proc>> to_procs(const std::vector<RankRuns> &runs,
                                                 std::size_t max) {
    std::vector<Proc> out;
    for (const auto &r : runs) {
        if (r.runs.size() % 2 != 0) return std::nullopt;
        for (std::size_t i = 0; i < r.runs.size(); i += 2) {
            const std::uint64_t first = r.runs[i], count = r.runs[i + 1];
            if (count > max - out.size() || first + count > kWildcardRank) return std::nullopt;
            for (std::uint64_t k = 0; k < count; ++k)
                out.push_back({r.nspace, static_cast<std::uint32_t>(first + k)});
        }
    }
    return out;
}

// Client -> group: the caller's part of PMIx_Group_construct (`destruct` false) or
// PMIx_Group_destruct. `members` as the caller named them (any order, wildcard ranks); every
// member names the same set. `seq` counts the caller's earlier calls of this kind for this name
// and set (whatever their outcome), so that a group built again after a destruct, or after a
// failed construct, is a new operation on every broker. A destruct names no members: the broker
// takes the group's membership (so the request stays small whatever the group's size). Answered
// with GroupDone.
struct GroupContribute {
    static constexpr const char *type = "group.contribute";
    std::string grp;
    bool destruct = false;
    std::uint64_t seq = 0;
    Proc proc;                        // the caller
    std::vector<Proc> members;        // a construct's; empty for a destruct
    std::uint32_t timeout_ms = 0;     // 0: the broker's default ([broker] group_timeout_ms)
    bool leader = false;              // PMIX_GROUP_LEADER
    bool optional = false;            // PMIX_GROUP_OPTIONAL: members that end first are left out
    bool ft_collective = false;       // PMIX_GROUP_FT_COLLECTIVE: the same, for the collective
    bool notify_termination = false;  // PMIX_GROUP_NOTIFY_TERMINATION
    bool assign_context_id = false;   // PMIX_GROUP_ASSIGN_CONTEXT_ID
    bool local_only = false;          // PMIX_GROUP_LOCAL_ONLY: every member is on this node
    Blob info;      // the value codec's [info...] of PMIX_GROUP_INFO's array (empty: none)
    Blob endpoint;  // PMIX_GROUP_ENDPT_DATA
    // The caller's whole job, on one node, met on its fence board (client_group.cpp): this
    // contribution is every member's, and the caller (the last to arrive) tells them the outcome.
    bool for_all = false;
    ZPMIX_MSG_MAP(grp, destruct, seq, proc, members, timeout_ms, leader, optional, ft_collective,
                  notify_termination, assign_context_id, local_only, info, endpoint, for_all);
};
inline const Proc *acting_proc(const GroupContribute &m) {
    return &m.proc;
}

// One member's contribution, as every member receives it. Only contributions that say
// something (a leader, info or endpoint data) travel: the membership names the others.
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
// membership (without the members left out) as runs of ranks, so that its size does not grow
// with the members' count when they are whole namespaces or ranges; the context id when a member
// asked for one (0: none), and the contributions that say something.
struct GroupDone {
    static constexpr const char *type = "group.done";
    std::string grp;
    std::int32_t status = 0;
    std::uint64_t context_id = 0;
    std::vector<RankRuns> membership;
    std::vector<GroupMember> contributions;
    bool notify_termination = false;  // a member asked for PMIX_GROUP_NOTIFY_TERMINATION
    ZPMIX_MSG_MAP(grp, status, context_id, membership, contributions, notify_termination);
};

// Client (the leader) -> group: PMIx_Group_invite. The leader's broker publishes
// PMIX_GROUP_INVITED to the invitees (source the leader, info PMIX_GROUP_ID) and gathers their
// answers (GroupJoin), telling the leader of each (PMIX_GROUP_INVITE_ACCEPTED, _DECLINED, and
// _INVITE_FAILED for one that ended or did not answer in time). Once every invitee answered,
// ended or timed out, the group is formed of the leader and those who accepted: its members
// hear PMIX_GROUP_CONSTRUCT_COMPLETE and each pending call gets a GroupDone (PMIX_SUCCESS, or
// PMIX_ERR_PARTIAL_SUCCESS for the leader when some invitee is not in). A leader that ends first
// may be replaced by a participant (GroupLeaderAnswer), else the construct aborts
// (PMIX_GROUP_CONSTRUCT_ABORT).
struct GroupInvite {
    static constexpr const char *type = "group.invite";
    std::string grp;
    Proc proc;                        // the leader
    std::vector<Proc> invitees;       // as the leader named them (wildcards allowed)
    std::uint32_t timeout_ms = 0;     // 0: the broker's default
    bool assign_context_id = false;   // PMIX_GROUP_ASSIGN_CONTEXT_ID
    bool notify_termination = false;  // PMIX_GROUP_NOTIFY_TERMINATION
    ZPMIX_MSG_MAP(grp, proc, invitees, timeout_ms, assign_context_id, notify_termination);
};
inline const Proc *acting_proc(const GroupInvite &m) {
    return &m.proc;
}

// Client -> group: PMIx_Group_join, an invitee's answer to `leader`'s invitation (the inviter,
// even once another participant took the lead); its broker relays it to the inviter's when that
// is on another node. Answered with GroupDone: an acceptance once the group is formed (or why
// not), a decline once the inviter's broker has it.
struct GroupJoin {
    static constexpr const char *type = "group.join";
    std::string grp;
    Proc proc;  // the invitee
    Proc leader;
    bool accept = false;
    ZPMIX_MSG_MAP(grp, proc, leader, accept);
};
inline const Proc *acting_proc(const GroupJoin &m) {
    return &m.proc;
}

// Client -> group: a participant's answer to PMIX_GROUP_LEADER_FAILED during a construct by
// invitation, sent by its library once the event's handlers have run (RFC0033: a handler that
// returns PMIX_GROUP_LEADER true in its results declares itself the new leader; one that returns
// PMIX_GROUP_CONSTRUCT_ABORT aborts the construct). Relayed, as GroupJoin, to the broker of
// `inviter`, where the invitation is. Not answered.
struct GroupLeaderAnswer {
    static constexpr const char *type = "group.leader_answer";
    std::string grp;
    Proc proc;     // the participant
    Proc inviter;  // who invited it, as its join named them
    Proc failed;   // the leader whose end this answers (the event's source)
    bool volunteer = false;
    bool abort = false;
    ZPMIX_MSG_MAP(grp, proc, inviter, failed, volunteer, abort);
};
inline const Proc *acting_proc(const GroupLeaderAnswer &m) {
    return &m.proc;
}

// Client -> group: PMIx_Group_leave. The other members hear PMIX_GROUP_LEFT, and every broker
// hosting members drops the leaver from its copy of the group (GroupLeft). Answered with Ok.
struct GroupLeave {
    static constexpr const char *type = "group.leave";
    std::string grp;
    Proc proc;
    ZPMIX_MSG_MAP(grp, proc);
};
inline const Proc *acting_proc(const GroupLeave &m) {
    return &m.proc;
}
// group -> the group actor of every other broker hosting members: `proc` left `grp`.
struct GroupLeft {
    static constexpr const char *type = "group.left";
    std::string grp;
    Proc proc;
    ZPMIX_MSG_MAP(grp, proc);
};

// An invitation's broker -> the `group` actor of a broker hosting invitees: tell me if one of
// `procs` ends while invitation `invitation` (that broker's number) of `grp` is open; unwatch
// when it closes. Only a process's own broker sees its end.
struct GroupWatch {
    static constexpr const char *type = "group.watch";
    std::string grp;
    std::uint64_t invitation = 0;
    std::vector<Proc> procs;
    ZPMIX_MSG_MAP(grp, invitation, procs);
};
struct GroupUnwatch {
    static constexpr const char *type = "group.unwatch";
    std::uint64_t invitation = 0;
    ZPMIX_MSG_MAP(invitation);
};
// The answer to a watch: `proc` ended.
struct GroupInviteeEnded {
    static constexpr const char *type = "group.invitee_ended";
    std::string grp;
    std::uint64_t invitation = 0;
    Proc proc;
    ZPMIX_MSG_MAP(grp, invitation, proc);
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
    // Under a host: this node's operation failed (a member ended first, its timeout); every
    // node's members fail with this status. 0: none.
    std::int32_t status = 0;
    ZPMIX_MSG_MAP(broker, contributions, left_out, assign_context_id, context_id, status);
};

}  // namespace zpmix::msg
