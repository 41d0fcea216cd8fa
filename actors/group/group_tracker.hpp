#pragma once
// GroupTracker (`group`): process groups (RFC0033). PMIx_Group_construct and PMIx_Group_destruct
// are collectives of the group's members, counted here as fences are (actors/fence/): each member
// contributes once (GroupContribute); once this node's members are all in, the operation
// completes here when every member is on this node, else this node's part goes to the tree's
// reduction engine (tree::Gather, actors/tree/gather.hpp), fed as the fence actor feeds its own:
// its plan (the brokers hosting members, from the operation's key) is the same on every broker,
// parts go up as group.up to the parent's `group`, the root's verdict comes down as group.down.
// Every local member is answered with one GroupDone: the membership, every member's
// contribution (PMIX_GROUP_INFO, PMIX_GROUP_ENDPT_DATA) and the context id. A job on one node
// whose every rank met on its fence board (bindings/c/src/client_group.cpp) sends one contribution
// for all (GroupContribute.for_all): taken only over the sender's own whole job, all here.
//
// The operation's key names the kind, the caller's sequence number of such calls for that name
// and set, the group's name and its members as a set (msg::fence_set of the canonical members,
// a namespace whose every rank is named written as its wildcard): members that name the same
// processes in any order, or by wildcard, meet in one operation; a group built again after a
// destruct, or after a failed construct, is a new one.
//
// Invariants and limits:
// - A member contributes only as itself (msg::acting_proc), or for its whole job on one node, and
//   once per operation (a second contribution is refused with PMIX_ERR_EXISTS).
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
//
// Groups by invitation (group_invitations.cpp): PMIx_Group_invite opens an invitation on the
// inviter's broker, which publishes PMIX_GROUP_INVITED to the invitees (cached, so a handler
// registered later still gets it) and gathers their answers (group.join naming the inviter,
// relayed by an invitee's broker to the inviter's); it tells the leader of each
// (PMIX_GROUP_INVITE_ACCEPTED, _DECLINED, _FAILED). The group forms once every invitee answered or
// is out: one that declined, ended or did not answer within the invitation's timeout (PMIX_TIMEOUT,
// else group_timeout_ms) is left out (PMIX_GROUP_INVITE_FAILED), and the leader gets
// PMIX_ERR_PARTIAL_SUCCESS. An invitee's end is seen by its own broker: the inviter's asks the
// brokers of its invitees on other nodes to watch them while the invitation is open (group.watch,
// group.invitee_ended). The members hear PMIX_GROUP_CONSTRUCT_COMPLETE (info
// PMIX_GROUP_MEMBERSHIP), and PMIX_GROUP_MEMBERSHIP_UPDATE with it when some invitee is out, and
// every pending call returns.
// A leader that ends first is replaced as the standard says (v4/v5 "Process Sets and Groups",
// PMIx_Group_invite and _join, RFC0033): "Failure of the inviting process at any time will cause a
// PMIX_GROUP_LEADER_FAILED event to be delivered to all participants so they can optionally
// declare a new leader. A new leader is identified by providing the PMIX_GROUP_LEADER attribute in
// the results array in the return of the event handler. Only one process is allowed to return that
// attribute [...]. Results of the leader selection will be communicated to all participants via a
// PMIX_GROUP_LEADER_SELECTED event identifying the new leader. If no leader was selected, then the
// status code provided in the event handler will provide an error value", and "any participant
// that returns PMIX_GROUP_CONSTRUCT_ABORT from the leader failed event handler will cause all
// participants to receive an event notifying them of that status". So: the participants (the
// invitees still in) hear PMIX_GROUP_LEADER_FAILED (source and affected proc the leader); the
// library of each that accepted answers once its handlers ran (group.leader_answer: whether a
// handler returned PMIX_GROUP_LEADER true, or the status PMIX_GROUP_CONSTRUCT_ABORT). The first
// that volunteers leads: the participants hear PMIX_GROUP_LEADER_SELECTED (source and affected
// proc the new leader), the new leader hears the leader's events from then on, and its pending
// join returns as the invite would have (PMIX_ERR_PARTIAL_SUCCESS when some invitee is out; the
// ended leader is no invitee). Only an invitee that accepted may lead (a leader is a member with
// a call to answer), and answers are awaited from those that had accepted when the leader ended.
// When all of them answered without volunteering, one aborts, none accepted, or the invitation's
// timeout passes first, the construct aborts: the participants hear PMIX_GROUP_CONSTRUCT_ABORT
// and the pending joins return it. The invitation stays on the inviter's broker (joins name the
// inviter), so a new leader on another node is watched as an invitee and may fail in turn. When
// the inviter's broker itself is lost, what it knew of the invitation goes with it: no one can
// take over, and the accepted joins relayed there fail with PMIX_ERR_UNREACH at once (tree.lost).
// A relayed answer is bounded by group_timeout_ms.
// PMIx_Group_leave: the others hear PMIX_GROUP_LEFT, then PMIX_GROUP_MEMBERSHIP_UPDATE (info
// PMIX_GROUP_MEMBERSHIP, without the leaver), and every broker hosting members drops the leaver
// (group.left); a group formed either way is destructed the same way. Every group event carries
// PMIX_GROUP_ID.
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

#include "actors/group/group_members.hpp"
#include "actors/protocol/group.hpp"
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
    tree::Reduction tree_;
    static constexpr std::size_t kRecentFailures = 1024;
    std::unordered_map<std::string, std::int32_t> failed_;
    std::deque<std::string> failed_order_;

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
    void fail(const std::string &key, std::int32_t status);
    // Answers every local member and forgets the operation; on success with every broker's
    // contributions and the members left out anywhere.
    void finish(const std::string &key, std::int32_t status, std::vector<msg::GroupMember> all = {},
                const std::set<msg::Proc> &left_out = {}, std::uint64_t context_id = 0,
                bool assign = false);
    void notify_end(const msg::Proc &gone);

    // Invitations (group_invitations.cpp).
    void tell(std::int32_t code, const msg::Proc &source, std::vector<msg::Proc> recipients,
              const std::string &grp, const msg::Proc *affected = nullptr,
              const std::vector<msg::Proc> *members = nullptr);
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

    std::optional<tree::Parts> plan(const std::string &key) const;
    std::int32_t reduce(const std::string &key, const tree::Bytes *local,
                        const std::vector<tree::Bytes> &children, tree::Bytes &out);
    void verdict(const std::string &key, std::int32_t status, const tree::Bytes &result);
};

}  // namespace zpmix
