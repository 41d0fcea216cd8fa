// Groups of a host's processes (the server library, actors/protocol/host.hpp): there is no tree
// of brokers under a host, so once this node's members are in, the construct or destruct goes to
// the host's group upcall, which carries it across the host's nodes and may assign the context
// id. Without the upcall the group is this node's to serve when every member runs here, and
// PMIX_ERR_NOT_SUPPORTED otherwise.
#include <pmix_common.h>

#include "actors/group/group_tracker.hpp"
#include "actors/protocol/host.hpp"

namespace zpmix {

bool GroupTracker::hosted(const std::vector<msg::Proc> &members,
                          const NamespaceTable::Snapshot &snapshot) const {
    for (const auto &p : members)
        if (auto ns = snapshot.find(p.nspace); ns != snapshot.end() && ns->second->hosted)
            return true;
    return false;
}

void GroupTracker::ask_host(const std::string &key, const Op &op) {
    send("host", msg::HostGroup{key, op.grp, op.destruct, op.members, op.timeout_ms, op.assign});
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
    complete_here(m.key, op, m.context_id);
}

}  // namespace zpmix
