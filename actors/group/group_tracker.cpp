#include "actors/group/group_tracker.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "actors/protocol/fence.hpp"  // canonical_participants, fence_set

namespace zpmix {

using group::explicit_ranks;
using group::in_set;
using group::Normal;
using group::normalise;

namespace {

struct KeyParts {
    bool destruct = false;
    std::string_view grp;
    std::string_view set;
};

std::optional<KeyParts> parse_key(std::string_view key) {
    if (key.size() < 2 || (key[0] != 'c' && key[0] != 'd')) return std::nullopt;
    KeyParts k;
    k.destruct = key[0] == 'd';
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    key.remove_prefix(slash + 1);
    std::size_t size = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), size);
    if (ec != std::errc() || end == key.data() || *end != '/') return std::nullopt;
    key.remove_prefix(static_cast<std::size_t>(end - key.data()) + 1);
    if (size > key.size()) return std::nullopt;
    k.grp = key.substr(0, size);
    k.set = key.substr(size);
    return k;
}

// Whether a contribution carries more than its member's name (the membership has that).
bool says_something(const msg::GroupMember &c) {
    return c.leader || !c.info.empty() || !c.endpoint.empty();
}

tree::Bytes pack_part(const msg::GroupPart &part) {
    msgpack::sbuffer buf;
    msgpack::pack(buf, part);
    return tree::Bytes(buf.data(), buf.size());
}

}  // namespace

GroupTracker::GroupTracker(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                           const BrokerMap &brokers, Settings settings)
    : Actor("group", reactor, bus),
      namespaces_(namespaces),
      brokers_(brokers),
      settings_(settings),
      tree_(tree::Reduction::Messages<msg::GroupUp, msg::GroupDown>{}, bus, log(), brokers,
            {.owner = "group",
             .hosts = [this](const std::string &key,
                             const BrokerView &view) { return hosts(key, view); },
             .complete = [this](const std::string &key, tree::Status status,
                                const tree::Bytes &result) { verdict(key, status, result); },
             .reduce = [this](const std::string &key, const tree::Bytes *local,
                              const std::vector<tree::Bytes> &children,
                              tree::Bytes &out) { return reduce(key, local, children, out); }}) {
    on(&GroupTracker::contribute, Access::session);
    on(&GroupTracker::invite, Access::session);
    on(&GroupTracker::join, Access::session);
    on(&GroupTracker::leave, Access::session);
    on(&GroupTracker::leader_answer, Access::session);
    on(&GroupTracker::list, Access::session | Access::operator_);
    on(&GroupTracker::proc_ended, Access::internal);
    on(&GroupTracker::namespace_ended, Access::internal);
    on(&GroupTracker::from_child, Access::internal);
    on(&GroupTracker::from_parent, Access::internal);
    on(&GroupTracker::tree_lost, Access::internal);
    on(&GroupTracker::tree_joined, Access::internal);
    on(&GroupTracker::left, Access::internal);
    on(&GroupTracker::watch, Access::internal);
    on(&GroupTracker::unwatch, Access::internal);
    on(&GroupTracker::invitee_ended, Access::internal);
    on(&GroupTracker::relayed_done, Access::internal);
    on(&GroupTracker::relayed_error, Access::internal);
    on(&GroupTracker::host_done, Access::internal);
    on(&GroupTracker::host_event, Access::internal);
}

std::string GroupTracker::key(bool destruct, std::uint64_t seq, std::string_view grp,
                              std::string_view set) {
    std::string k;
    k += destruct ? 'd' : 'c';
    k += std::to_string(seq);
    k += '/';
    k += std::to_string(grp.size());
    k += '/';
    k += grp;
    k += set;
    return k;
}

std::uint64_t GroupTracker::next_context_id() {
    const auto view = brokers_.view();
    return ++contexts_ * std::max<std::uint64_t>(view->size(), 1) + view->rank;
}

void GroupTracker::contribute(const Envelope &env, msg::GroupContribute &m) {
    if (m.grp.empty() || m.grp.size() > PMIX_MAX_NSLEN)
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a group's name has 1 to 255 characters");
    const auto snapshot = namespaces_.snapshot();
    const auto known = groups_.find(m.grp);
    if (m.destruct && known == groups_.end())
        return reply_error(env, PMIX_ERR_NOT_FOUND, "no group '" + m.grp + "' here");
    // A destruct's members are the group's.
    Normal n;
    if (m.destruct)
        n.set = known->second.set;
    else
        n = normalise(std::move(m.members), *snapshot);
    if (n.status != PMIX_SUCCESS) return reply_error(env, n.status, n.why);
    if (!in_set(n.set, m.proc))
        return reply_error(env, PMIX_ERR_BAD_PARAM, "the caller is not among the members");
    // For all: the set is the caller's own job, whose ranks all met on its board.
    if (m.for_all &&
        (n.set.size() != 1 || n.set[0] != msg::Proc{m.proc.nspace, msg::kWildcardRank}))
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           "a contribution for all is over the caller's whole job only");
    const std::string k = key(m.destruct, m.seq, m.grp, msg::fence_set(n.set));
    // A latecomer to a failed operation.
    if (const auto f = failed_.find(k))
        return reply(env, msg::GroupDone{m.grp, *f, 0, {}, {}, false});
    auto it = ops_.find(k);
    const bool fresh = it == ops_.end();
    if (fresh) {
        if (!m.destruct && known != groups_.end())
            return reply_error(env, PMIX_ERR_EXISTS, "group '" + m.grp + "' exists");
        Op op;
        op.grp = m.grp;
        op.destruct = m.destruct;
        op.members = m.destruct ? known->second.members : explicit_ranks(n.set, *snapshot);
        const auto view = brokers_.view();
        // A host's processes run where its job information says, with no tree to tell.
        op.to_host = hosted(op.members, *snapshot);
        op.timeout_ms = m.timeout_ms;
        for (const auto &p : op.members) {
            const auto &job = *snapshot->find(p.nspace)->second;
            if ((view->alone() && !op.to_host) ||
                (!job.elsewhere && job.job->procs[p.rank].hostname == view->node()))
                op.here.insert(p);
        }
        if (op.here.size() != op.members.size() && op.to_host) {
            if (m.local_only)
                return reply_error(env, PMIX_ERR_BAD_PARAM,
                                   "PMIX_GROUP_LOCAL_ONLY, but members are on other nodes");
        } else if (op.here.size() != op.members.size()) {
            if (m.local_only)
                return reply_error(env, PMIX_ERR_BAD_PARAM,
                                   "PMIX_GROUP_LOCAL_ONLY, but members are on other nodes");
            auto hosts = tree::hosting_brokers(op.members, *snapshot, *view);
            if (!hosts)
                return reply_error(env, PMIX_ERR_NOT_FOUND, "a member's node has no broker");
            op.brokers = std::move(*hosts);
        }
        op.set = std::move(n.set);
        arm_timeout(k, op);
        it = ops_.emplace(k, std::move(op)).first;
    }
    Op &op = it->second;
    if (m.for_all && op.here.size() != op.members.size()) {  // no board met them
        if (fresh) {
            if (op.timer) reactor().cancel(op.timer);
            ops_.erase(it);
        }
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a contribution for all, not all on this node");
    }
    if (op.arrived.contains(m.proc))
        return reply_error(env, PMIX_ERR_EXISTS, "this process already contributed");
    op.arrived.emplace(
        m.proc, msg::GroupMember{m.proc, m.leader, std::move(m.info), std::move(m.endpoint)});
    if (m.for_all)
        for (const auto &p : op.members)
            op.arrived.try_emplace(p, msg::GroupMember{p, false, {}, {}});
    op.waiting.emplace_back(env.from, env.id);
    op.tolerant = op.tolerant || m.optional || m.ft_collective;
    op.assign = op.assign || m.assign_context_id;
    op.notify = op.notify || m.notify_termination;
    // Members here that ended before this operation began (later ends come as proc_ended).
    if (fresh) {
        std::vector<msg::Proc> gone;
        for (const auto &p : op.here) {
            const auto ns = snapshot->find(p.nspace);
            if (!op.arrived.contains(p) && ns->second->ended(p.rank)) gone.push_back(p);
        }
        for (const auto &p : gone) {
            if (!op.destruct && !op.tolerant) {
                log().info("group {} fails: {}:{} ended before contributing", k, p.nspace, p.rank);
                return fail(k, PMIX_ERR_PROC_TERM_WO_SYNC);
            }
            op.left_out.insert(p);
        }
    }
    maybe_complete(k, op);
}

void GroupTracker::maybe_complete(const std::string &key, Op &op) {
    if (op.gathering || op.arrived.size() + op.left_out.size() < op.here.size()) return;
    op.gathering = true;
    if (op.to_host) return ask_host(key, op);
    if (op.brokers.empty()) return complete_here(key, op);
    msg::GroupPart part = local_part(op);
    part.broker = tree_.gather().rank();
    if (!tree_.contribute(key, part)) finish(key, PMIX_ERROR);
}

msg::GroupPart GroupTracker::local_part(const Op &op) const {
    msg::GroupPart part{0, local_contributions(op), {}, op.assign, 0};
    part.left_out.assign(op.left_out.begin(), op.left_out.end());
    return part;
}

std::vector<msg::GroupMember> GroupTracker::local_contributions(const Op &op) {
    std::vector<msg::GroupMember> all;
    for (const auto &[p, c] : op.arrived)
        if (says_something(c)) all.push_back(c);
    return all;
}

void GroupTracker::complete_here(const std::string &key, Op &op, std::uint64_t context_id) {
    std::vector<msg::GroupMember> all = local_contributions(op);
    const std::set<msg::Proc> left = op.left_out;
    const bool assign = op.assign;
    if (op.destruct)
        context_id = 0;
    else if (context_id == 0)
        context_id = next_context_id();
    finish(key, PMIX_SUCCESS, std::move(all), left, context_id, assign);
}

void GroupTracker::arm_timeout(const std::string &key, Op &op) {
    const auto timeout =
        op.timeout_ms ? std::chrono::milliseconds(op.timeout_ms) : settings_.default_timeout;
    if (timeout.count() <= 0) return;
    op.timer = reactor().after(timeout, [this, key] {
        if (auto t = ops_.find(key); t != ops_.end()) {
            t->second.timer = 0;
            log().info("group {} timed out", key);
            fail(key, PMIX_ERR_TIMEOUT);
        }
    });
}

void GroupTracker::fail(const std::string &key, std::int32_t status) {
    auto it = ops_.find(key);
    if (it == ops_.end()) return;
    const Op &op = it->second;
    if (op.to_host && !op.gathering && !op.destruct && op.here.size() != op.members.size())
        ask_host(key, op, status);  // group_host.cpp: the other nodes fail with it
    if (op.brokers.empty()) return finish(key, status);
    tree_.fail(key, status);  // the root's verdict comes back through verdict()
}

void GroupTracker::finish(const std::string &key, std::int32_t status,
                          std::vector<msg::GroupMember> all, const std::set<msg::Proc> &left_out,
                          std::uint64_t context_id, bool assign) {
    if (status != PMIX_SUCCESS) failed_.add(key, status);
    auto node = ops_.extract(key);
    if (!node) return;
    Op &op = node.mapped();
    if (op.timer) reactor().cancel(op.timer);
    msg::GroupDone done{op.grp, status, 0, {}, {}, op.notify};
    if (status == PMIX_SUCCESS) {
        if (op.destruct) {
            groups_.erase(op.grp);
        } else {
            Group g{{}, {}, context_id, op.notify, std::nullopt};
            for (const auto &p : op.members)
                if (!left_out.contains(p)) g.members.push_back(p);
            if (left_out.empty())
                g.set = std::move(op.set);
            else
                g.set = normalise(g.members, *namespaces_.snapshot()).set;
            std::sort(all.begin(), all.end(),
                      [](const auto &a, const auto &b) { return a.proc < b.proc; });
            for (const auto &c : all)
                if (c.leader) g.leader = c.proc;
            done.membership = msg::to_runs(g.members);
            relate_jobs(g.members);
            groups_[op.grp] = std::move(g);
            done.context_id = assign || op.assign ? context_id : 0;
            done.contributions = std::move(all);
        }
    }
    log().debug("group {}: status {}", key, status);
    const bool partial = op.partial || !left_out.empty();
    for (const auto &[route, id] : op.waiting) {
        done.status = status == PMIX_SUCCESS && partial && op.invite_call &&
                              *op.invite_call == std::pair{route, id}
                          ? PMIX_ERR_PARTIAL_SUCCESS
                          : status;
        bus().send(route, encode(msg::GroupDone::type, id, done, name()));
    }
}

// A group of several jobs' processes: a client of one may name the others in a custom range
// (event_rights.hpp).
void GroupTracker::relate_jobs(const std::vector<msg::Proc> &members) {
    std::set<std::string> jobs;
    for (const auto &p : members) jobs.insert(p.nspace);
    if (jobs.size() > 1) broadcast(msg::JobsRelated{{jobs.begin(), jobs.end()}});
}

void GroupTracker::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc gone{m.nspace, m.rank};
    std::vector<std::string> failed, maybe;
    for (auto &[key, op] : ops_) {
        if (op.gathering || !op.here.contains(gone) || op.arrived.contains(gone)) continue;
        if (op.destruct || op.tolerant) {
            op.left_out.insert(gone);
            maybe.push_back(key);
        } else {
            failed.push_back(key);
        }
    }
    for (const auto &key : failed) {
        log().info("group {} fails: {}:{} ended before contributing", key, m.nspace, m.rank);
        fail(key, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    for (const auto &key : maybe)
        if (auto it = ops_.find(key); it != ops_.end()) maybe_complete(key, it->second);
    invitees_ended(gone);
    std::erase_if(hosted_joins_, [&](auto &j) {  // its call went with its session
        if (j.second.proc != gone) return false;
        reactor().cancel(j.second.timer);
        return true;
    });
    if (m.lost_with.empty()) {
        host_watched_ended(gone);
        notify_end(gone);
        watched_ended(gone);
    }
}

// PMIX_GROUP_NOTIFY_TERMINATION: the other members of the groups `gone` was in hear of its end
// (PMIX_GROUP_LEADER_FAILED when it led the group, else PMIX_GROUP_MEMBER_FAILED). Told by the
// member's own broker; the events actor relays it to the others.
void GroupTracker::notify_end(const msg::Proc &gone) {
    for (auto &[grp, g] : groups_) {
        if (!g.notify_termination || !std::binary_search(g.members.begin(), g.members.end(), gone))
            continue;
        std::vector<msg::Proc> others;
        for (const auto &p : g.members)
            if (p != gone) others.push_back(p);
        tell(g.leader == gone ? PMIX_GROUP_LEADER_FAILED : PMIX_GROUP_MEMBER_FAILED, gone,
             std::move(others), grp, &gone);
    }
}

void GroupTracker::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    for (auto &w : watches_)
        std::erase_if(w.procs, [&](const msg::Proc &p) { return p.nspace == m.nspace; });
    std::erase_if(watches_, [](const Watch &w) { return w.procs.empty(); });
    for (auto &w : host_watches_)
        std::erase_if(w.procs, [&](const msg::Proc &p) { return p.nspace == m.nspace; });
    std::erase_if(host_watches_, [](const HostWatch &w) { return w.procs.empty(); });
    const auto snapshot = namespaces_.snapshot();
    std::erase_if(groups_, [&](const auto &g) {
        return std::all_of(g.second.members.begin(), g.second.members.end(), [&](const auto &p) {
            return p.nspace == m.nspace || !snapshot->contains(p.nspace);
        });
    });
}

void GroupTracker::list(const Envelope &env, msg::GroupList &m) {
    msg::GroupListed out;
    for (const auto &[grp, g] : groups_)
        if (m.grp.empty() || m.grp == grp) out.groups.push_back({grp, g.context_id, g.members});
    reply(env, out);
}

// ---- The tree's side: operations over several nodes ----------------------------------------

// Every broker's parts, as Gather::concatenate combines them; the root adds its verdict's part,
// with the context id of a construct.
std::int32_t GroupTracker::reduce(const std::string &key, const tree::Bytes *local,
                                  const std::vector<tree::Bytes> &children, tree::Bytes &out) {
    if (brokers_.view()->rank != 0) return tree::Gather::concatenate(key, local, children, out);
    const auto k = parse_key(key);
    msg::GroupPart root{
        msg::GroupPart::kRootVerdict, {}, {}, false, k && !k->destruct ? next_context_id() : 0};
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pk.pack_array(1);
    const tree::Bytes bytes = pack_part(root);
    pk.pack_bin(static_cast<std::uint32_t>(bytes.size()));
    pk.pack_bin_body(bytes.data(), static_cast<std::uint32_t>(bytes.size()));
    std::vector<tree::Bytes> all = children;
    all.emplace_back(buf.data(), buf.size());
    return tree::Gather::concatenate(key, local, all, out);
}

std::optional<std::vector<std::uint32_t>> GroupTracker::hosts(const std::string &key,
                                                              const BrokerView &view) const {
    const auto k = parse_key(key);
    if (!k) return std::nullopt;
    const auto members = msg::fence_key_participants(k->set);
    if (!members) return std::nullopt;
    const auto snapshot = namespaces_.snapshot();
    Normal n = normalise(*members, *snapshot);
    if (n.status != PMIX_SUCCESS) return std::nullopt;
    return tree::hosting_brokers(explicit_ranks(n.set, *snapshot), *snapshot, view);
}

void GroupTracker::verdict(const std::string &key, std::int32_t status, const tree::Bytes &result) {
    if (!ops_.contains(key)) {  // no member here: this broker relayed
        if (status != PMIX_SUCCESS) failed_.add(key, status);
        return;
    }
    if (status != PMIX_SUCCESS) return finish(key, status);
    // Every taking-part broker's GroupPart, and the root's (Gather::concatenate).
    auto parts = tree_.parts_of<msg::GroupPart>(key, result);
    if (!parts) return finish(key, PMIX_ERR_UNPACK_FAILURE);
    std::vector<msg::GroupMember> all;
    std::set<msg::Proc> left_out;
    std::uint64_t context_id = 0;
    bool assign = false;
    for (auto &part : *parts) {
        if (part.broker == msg::GroupPart::kRootVerdict) context_id = part.context_id;
        assign = assign || part.assign_context_id;
        std::move(part.contributions.begin(), part.contributions.end(), std::back_inserter(all));
        left_out.insert(part.left_out.begin(), part.left_out.end());
    }
    finish(key, PMIX_SUCCESS, std::move(all), left_out, context_id, assign);
}

void GroupTracker::from_child(const Envelope &env, msg::GroupUp &m) {
    tree_.from_child(env, m);
}

void GroupTracker::from_parent(const Envelope &env, msg::GroupDown &m) {
    tree_.from_parent(env, m);
}

// A standing tree's broker that joined again takes part again.
void GroupTracker::tree_joined(const Envelope &, msg::TreeJoined &m) {
    tree_.joined(m);
}

// As the fence's: operations with members under a lost broker fail (PMIX_ERR_UNREACH), and the
// Gather fails those waiting on a lost child or parent. Answers relayed there fail too.
void GroupTracker::tree_lost(const Envelope &, msg::TreeLost &m) {
    if (brokers_.view()->alone()) return;
    std::vector<std::uint64_t> relays;
    for (const auto &[id, r] : relayed_)
        if (tree::loss_reaches(m, {r.broker})) relays.push_back(id);
    tree_.lost(m, ops_);
    for (auto id : relays)
        answer_relayed(id, PMIX_ERR_UNREACH, "the leader's broker is lost", nullptr);
}

}  // namespace zpmix
