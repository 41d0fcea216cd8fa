#pragma once
// GroupTracker (`group`): process groups (RFC0033). Construct and destruct are collectives of the
// members, counted here as fences are; over members on several nodes, this node's part goes up
// the tree through a tree::Gather fed by a tree::Reduction (group.up, group.down), as the fence
// actor feeds its own. Every local member gets one GroupDone:
// the membership, the contributions that carry something, the context id. Invitations, a failed
// leader's replacement and leaving are in group_invitations.cpp. The whole story: docs/groups.md.
//
// Invariants and limits:
// - A member contributes only as itself (msg::acting_proc), or for its whole job when every
//   member is its job on this node (GroupContribute.for_all), and once per operation
//   (PMIX_ERR_EXISTS). Members naming the same processes in any order meet: the operation's key
//   spells them one way (group_members.hpp).
// - Nothing waits without bound: every operation has a timer (PMIX_TIMEOUT, else
//   group_timeout_ms). A member that ends first fails a construct (PMIX_ERR_PROC_TERM_WO_SYNC)
//   unless PMIX_GROUP_OPTIONAL or _FT_COLLECTIVE leave it out; a lost broker hosting members fails
//   it (PMIX_ERR_UNREACH). Only a member's own broker sees its end.
// - The last 1024 failures are kept (tree::RecentFailures): a member that comes later gets the
//   status at once.
// - Context ids are unique in the allocation (broker r of n assigns r + n, r + 2n, ...; the root's
//   over several nodes). Over a host's nodes the host's, else the least its nodes' brokers
//   proposed (group_host.cpp).
// - A construct of a name this broker has a group of is PMIX_ERR_EXISTS until its destruct; a
//   destruct of a name it has none of, PMIX_ERR_NOT_FOUND.
// - Kept: the groups with members on this node, until destructed or their jobs end (group.list).
// - An invitation lives on the inviter's broker, and goes if that broker is lost. Under a host
//   its events and answers cross the host's nodes as events (notify_event), and a group formed
//   over several of them is constructed through the host's group upcall.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/group/group_members.hpp"
#include "actors/protocol/group.hpp"
#include "actors/protocol/host.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"
#include "actors/tree/reduction.hpp"

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
        std::vector<msg::Proc> set;      // as the key spells it (whole namespaces by wildcard)
        std::set<msg::Proc> here;        // members on this node
        std::map<msg::Proc, msg::GroupMember> arrived;
        std::set<msg::Proc> left_out;                                // ended first, allowed to
        std::vector<std::pair<std::string, std::uint64_t>> waiting;  // route, request id
        std::vector<std::uint32_t> brokers;  // hosting members, over several nodes; else empty
        bool tolerant = false;               // optional or ft_collective
        bool assign = false, notify = false;
        bool gathering = false;  // this node's members are all in
        Reactor::TimerId timer = 0;
        std::uint32_t timeout_ms = 0;  // as the members gave it
        bool to_host = false;          // a host's processes (the server library): its group upcall
        // An invitation's construct across a host's nodes (group_host.cpp): the leader's invite,
        // which returns PMIX_ERR_PARTIAL_SUCCESS when `partial` or a member was left out.
        std::optional<std::pair<std::string, std::uint64_t>> invite_call;
        bool partial = false;
    };
    struct Group {
        std::vector<msg::Proc> members;  // explicit ranks, ascending
        std::vector<msg::Proc> set;      // as a destruct's key spells them
        std::uint64_t context_id = 0;
        bool notify_termination = false;
        std::optional<msg::Proc> leader;
    };

    // An invitation, on the inviter's broker, by group name. While `failed` names a leader that
    // ended, there is none: the invitation waits for its participants' answers.
    struct Invitation {
        msg::Proc inviter;                // the invitees' joins name it
        msg::Proc leader;                 // the inviter, or the participant that took over
        std::vector<msg::Proc> invitees;  // explicit ranks, ascending, without the inviter
        std::set<msg::Proc> accepted, out;
        // The calls to answer: the inviter's invite, the accepted joins (route, request id).
        std::map<msg::Proc, std::pair<std::string, std::uint64_t>> waiting;
        std::optional<msg::Proc> failed;
        std::set<msg::Proc> to_answer;  // accepted when the leader ended, not answered yet
        bool assign = false, notify = false;
        std::uint32_t timeout_ms = 0;  // as the leader gave it
        Reactor::TimerId timer = 0;
        std::uint64_t id = 0;                 // this broker's number for it (watches name it)
        std::vector<std::uint32_t> watchers;  // brokers watching invitees for it
    };
    // Invitees here that an invitation on another broker waits on.
    struct Watch {
        std::uint32_t broker = 0;
        std::uint64_t invitation = 0;
        std::string grp;
        std::vector<msg::Proc> procs;
    };
    // An invitee's answer relayed to the leader's broker, by this broker's request id.
    struct Relayed {
        std::string route;
        std::uint64_t id = 0;
        std::string grp;
        bool accept = false;
        std::uint32_t broker = 0;
        Reactor::TimerId timer = 0;
    };
    // An invitee's acceptance of an invitation on another of a host's nodes, sent to the leader's
    // node through the host (PMIX_GROUP_INVITE_ACCEPTED): its call waits for the group, which
    // forms here once the host brings PMIX_GROUP_CONSTRUCT_COMPLETE.
    struct HostedJoin {
        std::string route;
        std::uint64_t id = 0;
        std::string grp;
        msg::Proc proc, leader;
        Reactor::TimerId timer = 0;
    };
    // Invitees here of an invitation on another of a host's nodes (PMIX_GROUP_INVITED brought by
    // the host), watched until they declined or the group formed: one that ends is out, and the
    // leader's node hears so (PMIX_GROUP_INVITE_FAILED through the host).
    struct HostWatch {
        std::string grp;
        msg::Proc leader;
        std::vector<msg::Proc> procs;
    };
    // The key sequence of an invitation's construct across a host's nodes (no caller counts so).
    static constexpr std::uint64_t kInvitedSeq = ~std::uint64_t{0};
    // A membership an answer may name (beyond it, the answer is refused).
    static constexpr std::size_t kMaxMembers = std::size_t{1} << 24;

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    const Settings settings_;
    std::unordered_map<std::string, Op> ops_;  // by key
    std::map<std::string, Group> groups_;      // constructed, with members here, by name
    std::uint64_t contexts_ = 0;               // context ids assigned here
    std::map<std::string, Invitation> invitations_;
    std::uint64_t next_invitation_ = 1;
    std::vector<Watch> watches_;
    std::map<std::uint64_t, Relayed> relayed_;
    std::uint64_t next_relay_ = 1;
    std::map<std::uint64_t, HostedJoin> hosted_joins_;  // by this broker's number (next_relay_)
    std::vector<HostWatch> host_watches_;
    tree::Reduction tree_;
    tree::RecentFailures failed_;  // operations that failed, for members that come later

    void contribute(const Envelope &env, msg::GroupContribute &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void from_child(const Envelope &env, msg::GroupUp &m);
    void from_parent(const Envelope &env, msg::GroupDown &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void tree_joined(const Envelope &env, msg::TreeJoined &m);
    void list(const Envelope &env, msg::GroupList &m);
    void invite(const Envelope &env, msg::GroupInvite &m);
    void join(const Envelope &env, msg::GroupJoin &m);
    void leave(const Envelope &env, msg::GroupLeave &m);
    void left(const Envelope &env, msg::GroupLeft &m);
    void watch(const Envelope &env, msg::GroupWatch &m);
    void unwatch(const Envelope &env, msg::GroupUnwatch &m);
    void invitee_ended(const Envelope &env, msg::GroupInviteeEnded &m);
    void leader_answer(const Envelope &env, msg::GroupLeaderAnswer &m);
    void relayed_done(const Envelope &env, msg::GroupDone &m);
    void relayed_error(const Envelope &env, msg::ErrorReply &m);

    std::uint64_t next_context_id();
    void maybe_complete(const std::string &key, Op &op);
    // This node's members are in, and nothing else is awaited: the group completes, with
    // `context_id` (0: one assigned here).
    void complete_here(const std::string &key, Op &op, std::uint64_t context_id = 0);
    // Under a host (group_host.cpp): whether the members are a host's, its group upcall's answer.
    bool hosted(const std::vector<msg::Proc> &members,
                const NamespaceTable::Snapshot &snapshot) const;
    // This node's part of an operation over several nodes: its members' contributions that say
    // something, the members left out, whether a context id is asked for.
    msg::GroupPart local_part(const Op &op) const;
    static std::vector<msg::GroupMember> local_contributions(const Op &op);
    // `failed`: the part says this node's failure instead, so the other nodes' members, who wait
    // for the host's answer, fail with it.
    void ask_host(const std::string &key, const Op &op, std::int32_t failed = 0);
    void host_done(const Envelope &env, msg::HostGroupDone &m);
    // A host's process that runs on another of its nodes.
    bool on_other_host_node(const msg::Proc &p, const NamespaceTable::Snapshot &snapshot) const;
    // The host's answer carried every node's parts: the group is theirs together.
    void complete_from_parts(const std::string &key, Op &op, std::vector<msg::GroupPart> parts,
                             std::uint64_t context_id);
    void fail(const std::string &key, std::int32_t status);
    // The operation fails with PMIX_ERR_TIMEOUT once op.timeout_ms (0: the default) passes.
    void arm_timeout(const std::string &key, Op &op);
    // Answers every local member and forgets the operation; on success with every broker's
    // contributions and the members left out anywhere.
    void finish(const std::string &key, std::int32_t status, std::vector<msg::GroupMember> all = {},
                const std::set<msg::Proc> &left_out = {}, std::uint64_t context_id = 0,
                bool assign = false);
    void notify_end(const msg::Proc &gone);

    // Invitations (group_invitations.cpp).
    // Publishes a group event; recipients on a host's other nodes get it through the host's
    // notify_event (only those, with `host_only`).
    void tell(std::int32_t code, const msg::Proc &source, std::vector<msg::Proc> recipients,
              const std::string &grp, const msg::Proc *affected = nullptr,
              const std::vector<msg::Proc> *members = nullptr, bool host_only = false);
    // `p` is out; the leader, if there is one, hears `code`.
    void drop_invitee(const std::string &grp, Invitation &inv, const msg::Proc &p,
                      std::int32_t code);
    std::vector<msg::Proc> participants(const Invitation &inv) const;  // the invitees still in
    // After a change: forms the group once every invitee answered or is out; while no one leads,
    // aborts once no answer is awaited.
    void settle(const std::string &grp);
    void form(const std::string &grp);
    void relate_jobs(const std::vector<msg::Proc> &members);
    void leader_failed(const std::string &grp, Invitation &inv);
    void select_leader(const std::string &grp, Invitation &inv, const msg::Proc &p);
    void abort_invitation(const std::string &grp, std::string_view why);
    void invitees_ended(const msg::Proc &gone);
    // `gone` ended: it is out of `grp`'s invitation; true when it was still in (or led it).
    bool participant_gone(const std::string &grp, Invitation &inv, const msg::Proc &gone);
    void watch_invitees(Invitation &inv, const std::string &grp);
    void unwatch_invitees(const Invitation &inv);
    void watched_ended(const msg::Proc &gone);
    void answer_relayed(std::uint64_t id, std::int32_t status, const std::string &why,
                        msg::GroupDone *done);
    void drop_member(const std::string &grp, const msg::Proc &p);

    // Invitations across a host's nodes (group_invitations.cpp): answers and outcomes travel as
    // the invitation's events through the host (notify_event there, PMIx_Notify_event here), and
    // the group forms through the host's group upcall as a construct of its members.
    void join_across_host(const Envelope &env, msg::GroupJoin &m);
    void host_event(const Envelope &env, msg::HostGroupEvent &m);
    void hosted_joins_formed(const std::string &grp, const msg::Proc &leader,
                             const std::vector<msg::Proc> &members);
    void answer_hosted_joins(const std::string &grp, std::int32_t status);
    void host_watch(const std::string &grp, const msg::Proc &leader,
                    const std::vector<msg::Proc> &invitees);
    // `p` (none: every invitee) is no longer watched for `grp`; `gone` ended: the leader hears.
    void host_unwatch(const std::string &grp, const msg::Proc *p);
    void host_watched_ended(const msg::Proc &gone);
    // This node's part of the construct of `members`: `arrived` are those here that take part,
    // `waiting` their calls (the others here are left out).
    void construct_across_host(const std::string &grp, const std::vector<msg::Proc> &members,
                               std::map<msg::Proc, msg::GroupMember> arrived,
                               std::vector<std::pair<std::string, std::uint64_t>> waiting,
                               const Invitation *inv);

    // The tree's side: the brokers hosting a key's members (its plan), the parts combined, the
    // verdict.
    std::optional<std::vector<std::uint32_t>> hosts(const std::string &key,
                                                    const BrokerView &view) const;
    std::int32_t reduce(const std::string &key, const tree::Bytes *local,
                        const std::vector<tree::Bytes> &children, tree::Bytes &out);
    void verdict(const std::string &key, std::int32_t status, const tree::Bytes &result);
};

}  // namespace zpmix
