// GroupTracker's asynchronous groups (RFC0033): PMIx_Group_invite, _join and _leave, and their
// events. The invitation lives on the inviter's broker, which publishes every event of it; an
// invitee's broker relays its answers there. Under a host, whose nodes' brokers do not reach each
// other, the events and answers cross its nodes as events through the host, and a group formed
// over several of them is constructed through its group upcall (at the end). See
// group_tracker.hpp.
#include <algorithm>
#include <map>

#include <pmix_common.h>

#include "actors/events/event_broker.hpp"  // InfoBlob
#include "actors/group/group_tracker.hpp"

namespace zpmix {

using group::explicit_ranks;
using group::Normal;
using group::normalise;

void GroupTracker::tell(std::int32_t code, const msg::Proc &source,
                        std::vector<msg::Proc> recipients, const std::string &grp,
                        const msg::Proc *affected, const std::vector<msg::Proc> *members,
                        bool host_only) {
    if (recipients.empty()) return;
    const auto snapshot = namespaces_.snapshot();
    const bool to_host = std::any_of(recipients.begin(), recipients.end(), [&](const auto &p) {
        return on_other_host_node(p, *snapshot);
    });
    msg::NotifyEvent n;
    n.event.status = code;
    n.event.source = source;
    n.event.range = static_cast<std::uint8_t>(msg::Range::custom);
    n.event.custom_range = std::move(recipients);
    if (affected) n.event.affected = {*affected};
    InfoBlob info;
    info.add_string(PMIX_GROUP_ID, grp);
    if (members) info.add_procs(PMIX_GROUP_MEMBERSHIP, *members);
    n.event.info = info.bytes();
    n.event.text = "group " + grp;
    // An invitation must reach an invitee that registers its handler later: cached.
    n.do_not_cache = code != PMIX_GROUP_INVITED;
    if (to_host) send("host", msg::HostNotify{n.event});
    if (!host_only) send("events", n);
}

void GroupTracker::invite(const Envelope &env, msg::GroupInvite &m) {
    if (m.grp.empty() || m.grp.size() > PMIX_MAX_NSLEN)
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a group's name has 1 to 255 characters");
    if (groups_.contains(m.grp) || invitations_.contains(m.grp))
        return reply_error(env, PMIX_ERR_EXISTS, "group '" + m.grp + "' exists");
    const auto snapshot = namespaces_.snapshot();
    Normal n = normalise(std::move(m.invitees), *snapshot);
    if (n.status != PMIX_SUCCESS) return reply_error(env, n.status, n.why);
    Invitation inv;
    inv.inviter = inv.leader = m.proc;
    inv.invitees = explicit_ranks(n.set, *snapshot);
    std::erase(inv.invitees, m.proc);
    if (inv.invitees.empty())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "nobody to invite but the leader");
    inv.waiting.emplace(m.proc, std::pair{env.from, env.id});
    inv.assign = m.assign_context_id;
    inv.notify = m.notify_termination;
    inv.timeout_ms = m.timeout_ms;
    const auto timeout =
        m.timeout_ms ? std::chrono::milliseconds(m.timeout_ms) : settings_.default_timeout;
    if (timeout.count() > 0)
        inv.timer = reactor().after(timeout, [this, grp = m.grp] {
            auto it = invitations_.find(grp);
            if (it == invitations_.end()) return;
            it->second.timer = 0;
            if (it->second.failed)
                return abort_invitation(grp, "no participant took over from the leader in time");
            log().info("group {}: invitees did not answer in time", grp);
            for (const auto &p : it->second.invitees)
                if (!it->second.accepted.contains(p) && !it->second.out.contains(p))
                    drop_invitee(grp, it->second, p, PMIX_GROUP_INVITE_FAILED);
            form(grp);
        });
    inv.id = next_invitation_++;
    auto &at = invitations_.emplace(m.grp, std::move(inv)).first->second;
    watch_invitees(at, m.grp);
    tell(PMIX_GROUP_INVITED, at.leader, at.invitees, m.grp);
    // Invitees of this node that ended already never answer.
    for (const auto &p : at.invitees) {
        const auto ns = snapshot->find(p.nspace);
        if (ns != snapshot->end() && ns->second->ended(p.rank))
            drop_invitee(m.grp, at, p, PMIX_GROUP_INVITE_FAILED);
    }
    settle(m.grp);
}

void GroupTracker::drop_invitee(const std::string &grp, Invitation &inv, const msg::Proc &p,
                                std::int32_t code) {
    inv.out.insert(p);
    if (!inv.failed) tell(code, p, {inv.leader}, grp, &p);
}

std::vector<msg::Proc> GroupTracker::participants(const Invitation &inv) const {
    std::vector<msg::Proc> in;
    for (const auto &p : inv.invitees)
        if (!inv.out.contains(p)) in.push_back(p);
    return in;
}

void GroupTracker::join(const Envelope &env, msg::GroupJoin &m) {
    const auto snapshot = namespaces_.snapshot();
    const auto view = brokers_.view();
    const auto leader_ns = snapshot->find(m.leader.nspace);
    if (leader_ns == snapshot->end() || m.leader.rank >= leader_ns->second->job->procs.size())
        return reply_error(env, PMIX_ERR_BAD_PARAM, "no such leader");
    const auto &host = leader_ns->second->job->procs[m.leader.rank].hostname;
    if (on_other_host_node(m.leader, *snapshot)) return join_across_host(env, m);
    if (!view->alone() && host != view->node()) {
        // The invitation is on the inviter's broker: relay, once (never what came over the tree).
        const auto broker = view->broker_of(host);
        if (!broker || sender_broker(env.from))
            return reply_error(env, PMIX_ERR_NOT_FOUND, "the leader's node has no broker");
        const std::uint64_t id = next_relay_++;
        Relayed r{env.from, env.id, m.grp, m.accept, *broker, 0};
        r.timer = reactor().after(settings_.default_timeout, [this, id] {
            answer_relayed(id, PMIX_ERR_TIMEOUT, "the leader's broker did not answer", nullptr);
        });
        relayed_.emplace(id, std::move(r));
        return send(remote_address(*broker, name()), m, id);
    }
    auto it = invitations_.find(m.grp);
    if (it == invitations_.end() || it->second.inviter != m.leader)
        return reply_error(env, PMIX_ERR_NOT_FOUND,
                           "no invitation to group '" + m.grp + "' from that leader");
    Invitation &inv = it->second;
    if (!std::binary_search(inv.invitees.begin(), inv.invitees.end(), m.proc))
        return reply_error(env, PMIX_ERR_BAD_PARAM, "not invited");
    if (inv.accepted.contains(m.proc) || inv.out.contains(m.proc))
        return reply_error(env, PMIX_ERR_EXISTS, "this process already answered");
    if (m.accept) {
        inv.accepted.insert(m.proc);
        inv.waiting.emplace(m.proc, std::pair{env.from, env.id});
        if (!inv.failed) tell(PMIX_GROUP_INVITE_ACCEPTED, m.proc, {inv.leader}, m.grp, &m.proc);
    } else {
        drop_invitee(m.grp, inv, m.proc, PMIX_GROUP_INVITE_DECLINED);
        reply(env, msg::GroupDone{m.grp, PMIX_SUCCESS, 0, {}, {}, false});
    }
    settle(m.grp);
}

void GroupTracker::settle(const std::string &grp) {
    auto it = invitations_.find(grp);
    if (it == invitations_.end()) return;
    const Invitation &inv = it->second;
    if (inv.failed) {
        if (inv.to_answer.empty())
            abort_invitation(grp, "no participant that accepted took over from the leader");
    } else if (inv.accepted.size() + inv.out.size() == inv.invitees.size()) {
        form(grp);
    }
}

// The group is the leader and those who accepted; every pending call gets its GroupDone.
void GroupTracker::form(const std::string &grp) {
    auto node = invitations_.extract(grp);
    if (!node) return;
    Invitation &inv = node.mapped();
    if (inv.timer) reactor().cancel(inv.timer);
    unwatch_invitees(inv);
    std::set<msg::Proc> members(inv.accepted.begin(), inv.accepted.end());
    members.insert(inv.leader);  // a leader that took over accepted already
    const auto snapshot = namespaces_.snapshot();
    if (std::any_of(members.begin(), members.end(),
                    [&](const auto &p) { return on_other_host_node(p, *snapshot); })) {
        // Over a host's nodes: every node's members construct it through the host's group upcall,
        // the others' nodes once the host brought them PMIX_GROUP_CONSTRUCT_COMPLETE.
        const std::vector<msg::Proc> all(members.begin(), members.end());
        tell(PMIX_GROUP_CONSTRUCT_COMPLETE, inv.leader, all, grp, nullptr, &all);
        if (!inv.out.empty())
            tell(PMIX_GROUP_MEMBERSHIP_UPDATE, inv.leader, all, grp, nullptr, &all);
        std::map<msg::Proc, msg::GroupMember> arrived;
        std::vector<std::pair<std::string, std::uint64_t>> waiting;
        for (const auto &p : members)
            if (!on_other_host_node(p, *snapshot))
                arrived.emplace(p, msg::GroupMember{p, p == inv.leader, {}, {}});
        for (const auto &[p, call] : inv.waiting) waiting.push_back(call);
        return construct_across_host(grp, all, std::move(arrived), std::move(waiting), &inv);
    }
    Group g{{members.begin(), members.end()}, {}, next_context_id(), inv.notify, inv.leader};
    g.set = normalise(g.members, *snapshot).set;
    msg::GroupDone done{grp,
                        PMIX_SUCCESS,
                        inv.assign ? g.context_id : 0,
                        msg::to_runs(g.members),
                        {msg::GroupMember{inv.leader, true, {}, {}}},
                        inv.notify};
    tell(PMIX_GROUP_CONSTRUCT_COMPLETE, inv.leader, g.members, grp, nullptr, &g.members);
    // Fewer than invited: the members hear the membership they ended with.
    if (!inv.out.empty())
        tell(PMIX_GROUP_MEMBERSHIP_UPDATE, inv.leader, g.members, grp, nullptr, &g.members);
    log().debug("group {} formed by invitation: {} members", grp, g.members.size());
    relate_jobs(g.members);
    groups_[grp] = std::move(g);
    for (const auto &[p, call] : inv.waiting) {
        done.status = p == inv.leader && !inv.out.empty() ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS;
        bus().send(call.first, encode(msg::GroupDone::type, call.second, done, name()));
    }
}

// The leader ended: no one leads until a participant that accepted volunteers (leader_answer).
void GroupTracker::leader_failed(const std::string &grp, Invitation &inv) {
    const msg::Proc gone = inv.leader;
    log().info("group {}: its leader {}:{} ended before the group formed", grp, gone.nspace,
               gone.rank);
    inv.failed = gone;
    if (gone == inv.inviter) inv.waiting.erase(gone);  // its invite call went with its session
    inv.to_answer = inv.accepted;
    tell(PMIX_GROUP_LEADER_FAILED, gone, participants(inv), grp, &gone);
}

void GroupTracker::select_leader(const std::string &grp, Invitation &inv, const msg::Proc &p) {
    log().info("group {}: {}:{} leads it now", grp, p.nspace, p.rank);
    inv.leader = p;
    inv.failed.reset();
    inv.to_answer.clear();
    tell(PMIX_GROUP_LEADER_SELECTED, p, participants(inv), grp, &p);
    settle(grp);
}

// No one leads: the participants hear PMIX_GROUP_CONSTRUCT_ABORT, as the pending calls.
void GroupTracker::abort_invitation(const std::string &grp, std::string_view why) {
    auto node = invitations_.extract(grp);
    if (!node) return;
    Invitation &inv = node.mapped();
    if (inv.timer) reactor().cancel(inv.timer);
    unwatch_invitees(inv);
    log().info("group {}: the construct aborts: {}", grp, why);
    tell(PMIX_GROUP_CONSTRUCT_ABORT, inv.leader, participants(inv), grp, &inv.leader);
    const msg::GroupDone done{grp, PMIX_GROUP_CONSTRUCT_ABORT, 0, {}, {}, false};
    for (const auto &[p, call] : inv.waiting)
        bus().send(call.first, encode(msg::GroupDone::type, call.second, done, name()));
}

void GroupTracker::invitees_ended(const msg::Proc &gone) {
    std::vector<std::string> touched;
    for (auto &[grp, inv] : invitations_)
        if (participant_gone(grp, inv, gone)) touched.push_back(grp);
    for (const auto &grp : touched) settle(grp);
}

bool GroupTracker::participant_gone(const std::string &grp, Invitation &inv,
                                    const msg::Proc &gone) {
    const bool leads = !inv.failed && inv.leader == gone;
    const bool invited = std::binary_search(inv.invitees.begin(), inv.invitees.end(), gone) &&
                         !inv.out.contains(gone);
    if (invited) {
        // One that accepted and then ended is out too: it cannot be a member.
        inv.accepted.erase(gone);
        inv.to_answer.erase(gone);
        if (leads)
            inv.out.insert(gone);
        else
            drop_invitee(grp, inv, gone, PMIX_GROUP_INVITE_FAILED);
    }
    if (leads) leader_failed(grp, inv);
    return leads || invited;
}

// A participant's answer to PMIX_GROUP_LEADER_FAILED, sent by its library once its handlers ran.
// The first that volunteers leads; answers to an earlier leader's end, or from a process that
// has not accepted, lead to nothing.
void GroupTracker::leader_answer(const Envelope &env, msg::GroupLeaderAnswer &m) {
    const auto view = brokers_.view();
    if (!view->alone()) {
        const auto broker = group::host_broker(m.inviter, *namespaces_.snapshot(), *view);
        if (broker && *broker != view->rank) {
            // The invitation is on the inviter's broker: relay, once (not what came over the tree).
            if (!sender_broker(env.from)) send(remote_address(*broker, name()), m);
            return;
        }
    }
    auto it = invitations_.find(m.grp);
    if (it == invitations_.end() || it->second.inviter != m.inviter || !it->second.failed ||
        *it->second.failed != m.failed)
        return;
    Invitation &inv = it->second;
    const bool awaited = inv.to_answer.erase(m.proc) > 0;
    if (!inv.accepted.contains(m.proc)) return;
    if (m.abort)
        return abort_invitation(m.grp,
                                m.proc.nspace + ":" + std::to_string(m.proc.rank) + " aborted it");
    if (m.volunteer) return select_leader(m.grp, inv, m.proc);
    if (awaited) settle(m.grp);
}

// ---- Invitees on other nodes: their brokers watch them for the invitation ------------------

void GroupTracker::watch_invitees(Invitation &inv, const std::string &grp) {
    const auto view = brokers_.view();
    if (view->alone()) return;
    const auto snapshot = namespaces_.snapshot();
    std::map<std::uint32_t, std::vector<msg::Proc>> by_broker;
    for (const auto &p : inv.invitees)
        if (const auto broker = group::host_broker(p, *snapshot, *view);
            broker && *broker != view->rank)
            by_broker[*broker].push_back(p);
    for (auto &[broker, procs] : by_broker) {
        send(remote_address(broker, name()), msg::GroupWatch{grp, inv.id, std::move(procs)});
        inv.watchers.push_back(broker);
    }
}

void GroupTracker::unwatch_invitees(const Invitation &inv) {
    for (std::uint32_t broker : inv.watchers)
        send(remote_address(broker, name()), msg::GroupUnwatch{inv.id});
}

void GroupTracker::watch(const Envelope &env, msg::GroupWatch &m) {
    const auto from = sender_broker(env.from);
    if (!from) return;
    const auto snapshot = namespaces_.snapshot();
    Watch w{*from, m.invitation, m.grp, {}};
    for (const auto &p : m.procs) {
        const auto ns = snapshot->find(p.nspace);
        if (ns != snapshot->end() && p.rank < ns->second->job->procs.size() &&
            ns->second->ended(p.rank))
            send(remote_address(*from, name()), msg::GroupInviteeEnded{m.grp, m.invitation, p});
        else
            w.procs.push_back(p);
    }
    if (!w.procs.empty()) watches_.push_back(std::move(w));
}

void GroupTracker::unwatch(const Envelope &env, msg::GroupUnwatch &m) {
    const auto from = sender_broker(env.from);
    std::erase_if(watches_, [&](const Watch &w) {
        return from && w.broker == *from && w.invitation == m.invitation;
    });
}

void GroupTracker::watched_ended(const msg::Proc &gone) {
    for (auto &w : watches_) {
        const auto at = std::find(w.procs.begin(), w.procs.end(), gone);
        if (at == w.procs.end()) continue;
        w.procs.erase(at);
        send(remote_address(w.broker, name()), msg::GroupInviteeEnded{w.grp, w.invitation, gone});
    }
    std::erase_if(watches_, [](const Watch &w) { return w.procs.empty(); });
}

void GroupTracker::invitee_ended(const Envelope &, msg::GroupInviteeEnded &m) {
    auto it = invitations_.find(m.grp);
    if (it == invitations_.end() || it->second.id != m.invitation) return;  // closed since
    log().info("group {}: invitee {}:{} ended on its node", m.grp, m.proc.nspace, m.proc.rank);
    if (participant_gone(m.grp, it->second, m.proc)) settle(m.grp);
}

// ---- An answer relayed to the leader's broker ---------------------------------------------

void GroupTracker::relayed_done(const Envelope &env, msg::GroupDone &m) {
    answer_relayed(env.id, m.status, {}, &m);
}

void GroupTracker::relayed_error(const Envelope &env, msg::ErrorReply &m) {
    answer_relayed(env.id, m.status, m.message, nullptr);
}

void GroupTracker::answer_relayed(std::uint64_t id, std::int32_t status, const std::string &why,
                                  msg::GroupDone *done) {
    auto node = relayed_.extract(id);
    if (!node) return;  // answered already (or an answer to no relay: ignored)
    Relayed &r = node.mapped();
    if (r.timer) reactor().cancel(r.timer);
    if (!done) {
        log().info("group {}: a relayed answer failed: {}", r.grp, why);
        return bus().send(
            r.route, encode(msg::ErrorReply::type, r.id, msg::ErrorReply{status, why}, name()));
    }
    // An acceptance that formed the group (the partial success of a participant that took over
    // the lead): this broker keeps its copy, as for a construct.
    if (r.accept && (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS)) {
        if (auto members = msg::to_procs(done->membership, kMaxMembers)) {
            std::optional<msg::Proc> leader;
            for (const auto &c : done->contributions)
                if (c.leader) leader = c.proc;
            Group g{std::move(*members), {}, done->context_id, done->notify_termination, leader};
            g.set = normalise(g.members, *namespaces_.snapshot()).set;
            relate_jobs(g.members);
            groups_[r.grp] = std::move(g);
        }
    }
    bus().send(r.route, encode(msg::GroupDone::type, r.id, *done, name()));
}

// ---- Leaving ------------------------------------------------------------------------------

void GroupTracker::leave(const Envelope &env, msg::GroupLeave &m) {
    auto it = groups_.find(m.grp);
    if (it == groups_.end() ||
        !std::binary_search(it->second.members.begin(), it->second.members.end(), m.proc))
        return reply_error(env, PMIX_ERR_NOT_FOUND, "not a member of group '" + m.grp + "'");
    std::vector<msg::Proc> others = it->second.members;
    std::erase(others, m.proc);
    tell(PMIX_GROUP_LEFT, m.proc, others, m.grp, &m.proc);
    tell(PMIX_GROUP_MEMBERSHIP_UPDATE, m.proc, others, m.grp, &m.proc, &others);
    const auto snapshot = namespaces_.snapshot();
    const auto view = brokers_.view();
    if (!view->alone())
        if (auto hosts = tree::hosting_brokers(it->second.members, *snapshot, *view))
            for (std::uint32_t b : *hosts)
                if (b != view->rank) send(remote_address(b, name()), msg::GroupLeft{m.grp, m.proc});
    drop_member(m.grp, m.proc);
    reply(env, msg::Ok{});
}

void GroupTracker::left(const Envelope &, msg::GroupLeft &m) {
    drop_member(m.grp, m.proc);
}

void GroupTracker::drop_member(const std::string &grp, const msg::Proc &p) {
    auto it = groups_.find(grp);
    if (it == groups_.end()) return;
    Group &g = it->second;
    std::erase(g.members, p);
    if (g.members.empty()) {
        groups_.erase(it);
        return;
    }
    if (g.leader == p) g.leader.reset();
    g.set = normalise(g.members, *namespaces_.snapshot()).set;
}

// ---- Across a host's nodes: the invitation's events carry it --------------------------------

// The leader runs on another of the host's nodes: the answer goes to it as the event the leader
// hears (PMIX_GROUP_INVITE_ACCEPTED or _DECLINED, source and affected proc the invitee), which the
// host brings to the leader's node; there the invitation takes it in (host_event). A decline
// returns once handed to the host; an acceptance waits for the group (hosted_joins_formed).
void GroupTracker::join_across_host(const Envelope &env, msg::GroupJoin &m) {
    for (const auto &[id, j] : hosted_joins_)
        if (j.grp == m.grp && j.proc == m.proc)
            return reply_error(env, PMIX_ERR_EXISTS, "this process already answered");
    tell(m.accept ? PMIX_GROUP_INVITE_ACCEPTED : PMIX_GROUP_INVITE_DECLINED, m.proc, {m.leader},
         m.grp, &m.proc, nullptr, true);
    if (!m.accept) {
        host_unwatch(m.grp, &m.proc);
        return reply(env, msg::GroupDone{m.grp, PMIX_SUCCESS, 0, {}, {}, false});
    }
    const std::uint64_t id = next_relay_++;
    HostedJoin j{env.from, env.id, m.grp, m.proc, m.leader, 0};
    j.timer = reactor().after(settings_.default_timeout, [this, id] {
        auto node = hosted_joins_.extract(id);
        if (!node) return;
        log().info("group {}: the leader's node did not form the group in time", node.mapped().grp);
        bus().send(
            node.mapped().route,
            encode(msg::ErrorReply::type, node.mapped().id,
                   msg::ErrorReply{PMIX_ERR_TIMEOUT, "the group did not form in time"}, name()));
    });
    hosted_joins_.emplace(id, std::move(j));
}

// An event of an invitation or a group that the host brought from another of its nodes.
void GroupTracker::host_event(const Envelope &, msg::HostGroupEvent &m) {
    const msg::Event &ev = m.event;
    const bool answer = ev.status == PMIX_GROUP_INVITE_ACCEPTED ||
                        ev.status == PMIX_GROUP_INVITE_DECLINED ||
                        ev.status == PMIX_GROUP_INVITE_FAILED;
    if (auto it = invitations_.find(m.grp); answer && it != invitations_.end() &&
                                            ev.custom_range.size() == 1 &&
                                            ev.custom_range[0] == it->second.inviter) {
        // An invitee's answer to this node's invitation, or its end seen by its node's broker:
        // the leader hears it from here.
        Invitation &inv = it->second;
        const msg::Proc &p = ev.source;
        if (ev.status == PMIX_GROUP_INVITE_FAILED) {
            log().info("group {}: invitee {}:{} ended on its node", m.grp, p.nspace, p.rank);
            if (participant_gone(m.grp, inv, p)) settle(m.grp);
            return;
        }
        if (!std::binary_search(inv.invitees.begin(), inv.invitees.end(), p) ||
            inv.accepted.contains(p) || inv.out.contains(p)) {
            log().info("group {}: an answer of {}:{} that is not awaited is ignored", m.grp,
                       p.nspace, p.rank);
            return;
        }
        if (ev.status == PMIX_GROUP_INVITE_ACCEPTED) {
            inv.accepted.insert(p);
            if (!inv.failed) tell(PMIX_GROUP_INVITE_ACCEPTED, p, {inv.leader}, m.grp, &p);
        } else {
            drop_invitee(m.grp, inv, p, PMIX_GROUP_INVITE_DECLINED);
        }
        return settle(m.grp);
    }
    const msg::Proc source = ev.source;
    const std::int32_t code = ev.status;
    const std::vector<msg::Proc> to = ev.custom_range;
    send("events", msg::NotifyEvent{std::move(m.event), m.no_cache});
    if (code == PMIX_GROUP_INVITED) host_watch(m.grp, source, to);
    if (code == PMIX_GROUP_CONSTRUCT_COMPLETE || code == PMIX_GROUP_CONSTRUCT_ABORT)
        host_unwatch(m.grp, nullptr);
    if (code == PMIX_GROUP_CONSTRUCT_COMPLETE) hosted_joins_formed(m.grp, source, m.members);
    if (code == PMIX_GROUP_CONSTRUCT_ABORT) answer_hosted_joins(m.grp, PMIX_GROUP_CONSTRUCT_ABORT);
    if (code == PMIX_GROUP_LEFT) drop_member(m.grp, source);
}

// The leader's node formed the group: this node's members that accepted construct it with the
// others' nodes; an acceptance the group went without is answered.
void GroupTracker::hosted_joins_formed(const std::string &grp, const msg::Proc &leader,
                                       const std::vector<msg::Proc> &members) {
    const auto snapshot = namespaces_.snapshot();
    if (!on_other_host_node(leader, *snapshot)) return;  // this node's own, back from the host
    std::map<msg::Proc, msg::GroupMember> arrived;
    std::vector<std::pair<std::string, std::uint64_t>> waiting;
    for (auto it = hosted_joins_.begin(); it != hosted_joins_.end();) {
        HostedJoin &j = it->second;
        if (j.grp != grp || j.leader != leader) {
            ++it;
            continue;
        }
        reactor().cancel(j.timer);
        if (std::find(members.begin(), members.end(), j.proc) != members.end()) {
            arrived.emplace(j.proc, msg::GroupMember{j.proc, false, {}, {}});
            waiting.emplace_back(j.route, j.id);
        } else {
            bus().send(j.route, encode(msg::ErrorReply::type, j.id,
                                       msg::ErrorReply{PMIX_ERR_TIMEOUT,
                                                       "the group formed before this answer "
                                                       "reached its leader"},
                                       name()));
        }
        it = hosted_joins_.erase(it);
    }
    if (std::any_of(members.begin(), members.end(),
                    [&](const auto &p) { return !on_other_host_node(p, *snapshot); }))
        construct_across_host(grp, members, std::move(arrived), std::move(waiting), nullptr);
}

void GroupTracker::answer_hosted_joins(const std::string &grp, std::int32_t status) {
    const msg::GroupDone done{grp, status, 0, {}, {}, false};
    for (auto it = hosted_joins_.begin(); it != hosted_joins_.end();) {
        if (it->second.grp != grp) {
            ++it;
            continue;
        }
        reactor().cancel(it->second.timer);
        bus().send(it->second.route, encode(msg::GroupDone::type, it->second.id, done, name()));
        it = hosted_joins_.erase(it);
    }
}

void GroupTracker::host_watch(const std::string &grp, const msg::Proc &leader,
                              const std::vector<msg::Proc> &invitees) {
    const auto snapshot = namespaces_.snapshot();
    if (!on_other_host_node(leader, *snapshot)) return;  // this node's own, back from the host
    Normal n = normalise(invitees, *snapshot);
    if (n.status != PMIX_SUCCESS) return;
    HostWatch w{grp, leader, {}};
    for (const auto &p : explicit_ranks(n.set, *snapshot)) {
        const auto ns = snapshot->find(p.nspace);
        if (ns == snapshot->end() || !ns->second->hosted || on_other_host_node(p, *snapshot))
            continue;
        if (ns->second->ended(p.rank))
            tell(PMIX_GROUP_INVITE_FAILED, p, {leader}, grp, &p, nullptr, true);
        else
            w.procs.push_back(p);
    }
    if (!w.procs.empty()) host_watches_.push_back(std::move(w));
}

void GroupTracker::host_unwatch(const std::string &grp, const msg::Proc *p) {
    for (auto &w : host_watches_)
        if (w.grp == grp) std::erase_if(w.procs, [&](const auto &q) { return !p || q == *p; });
    std::erase_if(host_watches_, [](const HostWatch &w) { return w.procs.empty(); });
}

void GroupTracker::host_watched_ended(const msg::Proc &gone) {
    for (auto &w : host_watches_)
        if (std::erase(w.procs, gone) > 0)
            tell(PMIX_GROUP_INVITE_FAILED, gone, {w.leader}, w.grp, &gone, nullptr, true);
    std::erase_if(host_watches_, [](const HostWatch &w) { return w.procs.empty(); });
}

}  // namespace zpmix
