// Groups of a host's processes (the server library, actors/protocol/host.hpp): there is no tree
// of brokers under a host, so once this node's members are in, the construct or destruct goes to
// the host's group upcall, which carries it across the host's nodes and may assign the context
// id. Without the upcall the group is this node's to serve when every member runs here, and
// PMIX_ERR_NOT_SUPPORTED otherwise.
//
// A construct's data crosses the host as a fence's does (PRRTE's group upcall gathers it so): this
// node's part (its members' PMIX_GROUP_INFO, with their local context ids, their endpoint data, the
// members left out) goes to the upcall as one self-delimiting bin, PMIX_GROUP_ENDPT_DATA; the host
// answers the concatenation of every node's parts under the same key, and each node's members get
// every contribution, as under `zpmix run`. A host that answers none has carried no data: the
// members get this node's contributions only. Each part proposes a context id, and when the host
// assigns none every node takes the least proposed, so the members agree on it (unique only among
// this broker's; a host spanning nodes assigns it, as PRRTE's does). A construct that fails on a
// node before its members are all in (one ended first, its timeout) still goes to the upcall, its
// part saying the failure, so that the other nodes' members, who wait for the host's answer, fail
// with it instead of waiting out their timeout.
#include <algorithm>
#include <map>

#include <pmix_common.h>

#include "actors/group/group_tracker.hpp"
#include "actors/protocol/fence.hpp"  // fence_set
#include "actors/protocol/host.hpp"

namespace zpmix {

using group::explicit_ranks;
using group::Normal;
using group::normalise;

bool GroupTracker::hosted(const std::vector<msg::Proc> &members,
                          const NamespaceTable::Snapshot &snapshot) const {
    for (const auto &p : members)
        if (auto ns = snapshot.find(p.nspace); ns != snapshot.end() && ns->second->hosted)
            return true;
    return false;
}

void GroupTracker::ask_host(const std::string &key, const Op &op, std::int32_t failed) {
    msg::HostGroup m{key, op.grp, op.destruct, op.members, op.timeout_ms, op.assign, {}};
    if (!op.destruct) {
        msg::GroupPart part = local_part(op);
        part.status = failed;
        part.context_id = next_context_id();
        msgpack::sbuffer packed, bin;
        msgpack::pack(packed, part);
        msgpack::packer<msgpack::sbuffer>(bin).pack_bin(static_cast<std::uint32_t>(packed.size()));
        bin.write(packed.data(), packed.size());
        m.part.assign(bin.data(), bin.data() + bin.size());
    }
    send("host", m);
}

void GroupTracker::host_done(const Envelope &, msg::HostGroupDone &m) {
    auto it = ops_.find(m.key);
    if (it == ops_.end()) return;  // failed meanwhile (a timeout, a member's end)
    Op &op = it->second;
    if (m.no_upcall) {
        if (op.here.size() == op.members.size()) return complete_here(m.key, op);
        log().info("group {} spans the host's nodes, and the host has no group upcall", m.key);
        return finish(m.key, PMIX_ERR_NOT_SUPPORTED);
    }
    if (m.status != PMIX_SUCCESS) return finish(m.key, m.status);
    if (op.destruct || m.parts.empty()) return complete_here(m.key, op, m.context_id);
    auto parts = tree_.parts_of<msg::GroupPart>(m.key, tree::Bytes(m.parts.begin(), m.parts.end()));
    if (!parts) return finish(m.key, PMIX_ERR_UNPACK_FAILURE);
    complete_from_parts(m.key, op, std::move(*parts), m.context_id);
}

void GroupTracker::complete_from_parts(const std::string &key, Op &op,
                                       std::vector<msg::GroupPart> parts,
                                       std::uint64_t context_id) {
    auto member = [&op](const msg::Proc &p) {
        return std::binary_search(op.members.begin(), op.members.end(), p);
    };
    // This node's own, then the others' (the host's answer holds this node's part too).
    std::map<msg::Proc, msg::GroupMember> all;
    for (auto &c : local_contributions(op)) all.emplace(c.proc, std::move(c));
    std::set<msg::Proc> left_out = op.left_out;
    bool assign = op.assign;
    std::uint64_t proposed = 0;
    for (const auto &part : parts)
        if (part.status != PMIX_SUCCESS) {
            log().info("group {} fails on another of the host's nodes: {}", key, part.status);
            return finish(key, part.status);
        }
    for (auto &part : parts) {
        for (auto &c : part.contributions) {
            if (!member(c.proc)) {
                log().warn("group {}: the host's answer names {}:{}, not a member", key,
                           c.proc.nspace, c.proc.rank);
                return finish(key, PMIX_ERR_BAD_PARAM);
            }
            all.try_emplace(c.proc, std::move(c));
        }
        for (const auto &p : part.left_out)
            if (member(p) && !all.contains(p)) left_out.insert(p);
        assign = assign || part.assign_context_id;
        if (part.context_id && (proposed == 0 || part.context_id < proposed))
            proposed = part.context_id;
    }
    std::vector<msg::GroupMember> contributions;
    for (auto &[p, c] : all) contributions.push_back(std::move(c));
    if (context_id == 0) context_id = proposed ? proposed : next_context_id();
    finish(key, PMIX_SUCCESS, std::move(contributions), left_out, context_id, assign);
}

bool GroupTracker::on_other_host_node(const msg::Proc &p,
                                      const NamespaceTable::Snapshot &snapshot) const {
    const auto ns = snapshot.find(p.nspace);
    if (ns == snapshot.end() || !ns->second->hosted) return false;
    if (ns->second->elsewhere) return true;
    const auto &procs = ns->second->job->procs;
    return p.rank < procs.size() && procs[p.rank].hostname != brokers_.view()->node();
}

// A group formed by invitation over the host's nodes: each node constructs it, as
// PMIx_Group_construct does, with the members here that take part, and waits for the host.
void GroupTracker::construct_across_host(const std::string &grp,
                                         const std::vector<msg::Proc> &members,
                                         std::map<msg::Proc, msg::GroupMember> arrived,
                                         std::vector<std::pair<std::string, std::uint64_t>> waiting,
                                         const Invitation *inv) {
    const auto snapshot = namespaces_.snapshot();
    Normal n = normalise(members, *snapshot);
    const std::string k = key(false, kInvitedSeq, grp, msg::fence_set(n.set));
    std::int32_t status = n.status;
    if (status == PMIX_SUCCESS && (groups_.contains(grp) || ops_.contains(k)))
        status = PMIX_ERR_EXISTS;
    if (status != PMIX_SUCCESS) {
        log().info("group {}: its construct across the host's nodes cannot start: {}", grp, status);
        const msg::GroupDone done{grp, status, 0, {}, {}, false};
        for (const auto &[route, id] : waiting)
            bus().send(route, encode(msg::GroupDone::type, id, done, name()));
        return;
    }
    Op op;
    op.grp = grp;
    op.members = explicit_ranks(n.set, *snapshot);
    op.set = std::move(n.set);
    op.to_host = true;
    for (const auto &p : op.members)
        if (!on_other_host_node(p, *snapshot)) {
            op.here.insert(p);
            if (!arrived.contains(p)) op.left_out.insert(p);  // it can take part no more
        }
    op.arrived = std::move(arrived);
    op.waiting = std::move(waiting);
    if (inv) {
        op.assign = inv->assign;
        op.notify = inv->notify;
        op.timeout_ms = inv->timeout_ms;
        op.partial = !inv->out.empty();
        if (auto call = inv->waiting.find(inv->leader); call != inv->waiting.end())
            op.invite_call = call->second;
    }
    arm_timeout(k, op);  // fail() is finish() here: the node's part is with the host at once
    auto it = ops_.emplace(k, std::move(op)).first;
    maybe_complete(k, it->second);
}

}  // namespace zpmix
