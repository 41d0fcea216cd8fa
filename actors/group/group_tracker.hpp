#pragma once
// GroupTracker (`group`): process groups (RFC0033). PMIx_Group_construct and PMIx_Group_destruct
// are collectives of the group's members, counted here as fences are (actors/fence/): each member
// contributes once (GroupContribute); once this node's members are all in, the operation
// completes here when every member is on this node, else this node's part goes to the tree's
// reduction engine (tree::Gather, broker/tree/gather.hpp), fed as the fence actor feeds its own:
// its plan (the brokers hosting members, from the operation's key) is the same on every broker,
// parts go up as group.up to the parent's `group`, the root's verdict comes down as group.down.
// Every local member is answered with one GroupDone: the membership, every member's
// contribution (PMIX_GROUP_INFO, PMIX_GROUP_ENDPT_DATA) and the context id.
//
// The operation's key names the kind, the caller's sequence number of such calls for that name
// and set, the group's name and its members as a set (msg::fence_set of the canonical members,
// a namespace whose every rank is named written as its wildcard): members that name the same
// processes in any order, or by wildcard, meet in one operation; a group built again after a
// destruct, or after a failed construct, is a new one.
//
// Invariants and limits:
// - A member contributes only as itself (msg::acting_proc) and once per operation (a second
//   contribution is refused with PMIX_ERR_EXISTS).
// - Nothing waits without bound: every operation has a timer (PMIX_TIMEOUT, else the broker's
//   group_timeout_ms) and fails with PMIX_ERR_TIMEOUT on every broker when one's passes first.
// - A construct's member that ends before contributing fails it for every member at once
//   (PMIX_ERR_PROC_TERM_WO_SYNC), unless a member asked for PMIX_GROUP_OPTIONAL or
//   PMIX_GROUP_FT_COLLECTIVE: then it is left out of the membership. A destruct leaves ended
//   members out. A broker hosting members that is lost fails the operation (PMIX_ERR_UNREACH).
//   Over several nodes, only a member's own broker sees its end: a node whose members all end
//   before any contributed leaves the others to their timeout.
// - A failed operation is remembered (the last kRecentFailures): a member that comes later gets
//   its status at once.
// - Context ids (PMIX_GROUP_CONTEXT_ID) are unique in the allocation: broker r of n assigns
//   r + n, r + 2n, ... and an operation over several nodes takes the root's.
// - A construct of a name this broker has a group of is refused (PMIX_ERR_EXISTS) until its
//   destruct; a destruct of a name it has no group of, with PMIX_ERR_NOT_FOUND.
// - The groups kept are those with members on this node, until destructed or until every
//   member's job ended; group.list answers with them (for PMIx_Query_info's group queries).
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/protocol/group.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/broker_map.hpp"
#include "actors/runtime/namespace_table.hpp"
#include "broker/tree/gather.hpp"

namespace zpmix {

class GroupTracker : public Actor {
  public:
    struct Settings {
        std::chrono::milliseconds default_timeout{300000};
    };
    GroupTracker(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                 const BrokerMap &brokers, Settings settings);

    // An operation's key: "<c|d><seq>/<size of name>/<name><set>".
    static std::string key(bool destruct, std::uint64_t seq, std::string_view grp,
                           std::string_view set);

  private:
    struct Op {
        std::string grp;
        bool destruct = false;
        std::vector<msg::Proc> members;  // explicit ranks, ascending
        std::set<msg::Proc> here;        // members on this node
        std::map<msg::Proc, msg::GroupMember> arrived;
        std::set<msg::Proc> left_out;                                // ended first, allowed to
        std::vector<std::pair<std::string, std::uint64_t>> waiting;  // route, request id
        std::vector<std::uint32_t> brokers;  // hosting members, over several nodes; else empty
        bool tolerant = false;               // optional or ft_collective
        bool assign = false, notify = false;
        bool gathering = false;  // this node's members are all in
        Reactor::TimerId timer = 0;
    };
    struct Group {
        std::vector<msg::Proc> members;
        std::uint64_t context_id = 0;
        bool notify_termination = false;
        std::optional<msg::Proc> leader;
    };

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    const Settings settings_;
    std::unordered_map<std::string, Op> ops_;  // by key
    std::map<std::string, Group> groups_;      // constructed, with members here, by name
    std::uint64_t contexts_ = 0;               // context ids assigned here
    std::unique_ptr<tree::Gather> gather_;
    static constexpr std::size_t kRecentFailures = 1024;
    std::unordered_map<std::string, std::int32_t> failed_;
    std::deque<std::string> failed_order_;

    void contribute(const Envelope &env, msg::GroupContribute &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void from_child(const Envelope &env, msg::GroupUp &m);
    void from_parent(const Envelope &env, msg::GroupDown &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void list(const Envelope &env, msg::GroupList &m);

    std::uint64_t next_context_id();
    void maybe_complete(const std::string &key, Op &op);
    void fail(const std::string &key, std::int32_t status);
    // Answers every local member and forgets the operation; on success with every broker's
    // contributions and the members left out anywhere.
    void finish(const std::string &key, std::int32_t status, std::vector<msg::GroupMember> all = {},
                const std::set<msg::Proc> &left_out = {}, std::uint64_t context_id = 0,
                bool assign = false);
    void notify_end(const msg::Proc &gone);

    tree::Gather &gather();
    std::optional<tree::Parts> plan(const std::string &key) const;
    std::int32_t reduce(const std::string &key, const tree::Bytes *local,
                        const std::vector<tree::Bytes> &children, tree::Bytes &out);
    void verdict(const std::string &key, std::int32_t status, const tree::Bytes &result);
};

}  // namespace zpmix
