#include "actors/events/notify_rights.hpp"

#include <fmt/format.h>
#include <pmix_common.h>

#include "actors/protocol/event_rights.hpp"

namespace zpmix {

namespace {

constexpr int kMaxGenerations = 64;  // a spawn chain longer than this is not walked further

}  // namespace

std::string NotifyRights::refusal(const PeerSession &session, const msg::Event &ev) const {
    const auto own = namespaces_.find(session.nspace);
    const std::string target = own ? own->job->debug_target.nspace : std::string();
    const bool custom = static_cast<msg::Range>(ev.range) == msg::Range::custom;
    bool all_of_target = custom && !target.empty() && !ev.custom_range.empty();
    for (const auto &p : ev.custom_range) all_of_target = all_of_target && p.nspace == target;
    if (auto why = msg::client_may_not_notify(ev.status, ev.range, all_of_target); !why.empty())
        return why;
    if (!custom || all_of_target) return {};
    std::set<std::string> checked;
    for (const auto &p : ev.custom_range) {
        if (p.nspace.empty() || p.nspace == session.nspace || !checked.insert(p.nspace).second)
            continue;
        if (!related(session.nspace, p.nspace))
            return fmt::format(
                "its custom range names {}:{}, of job {}, which is neither its own ({}) nor "
                "related to it (spawned by or with it, in a group or connected with it)",
                p.nspace, p.rank, p.nspace, session.nspace);
    }
    return {};
}

void NotifyRights::relate(const std::vector<std::string> &nspaces) {
    for (const auto &a : nspaces)
        for (const auto &b : nspaces)
            if (a != b) related_[a].insert(b);
}

void NotifyRights::forget(const std::string &nspace) {
    auto it = related_.find(nspace);
    if (it == related_.end()) return;
    for (const auto &other : it->second)
        if (auto o = related_.find(other); o != related_.end()) {
            o->second.erase(nspace);
            if (o->second.empty()) related_.erase(o);
        }
    related_.erase(it);
}

bool NotifyRights::related(const std::string &a, const std::string &b) const {
    if (a == b) return true;
    if (auto it = related_.find(a); it != related_.end() && it->second.contains(b)) return true;
    const auto snapshot = namespaces_.snapshot();
    return family_root(*snapshot, a) == family_root(*snapshot, b);
}

std::string NotifyRights::family_root(const NamespaceTable::Snapshot &s,
                                      const std::string &nspace) const {
    std::string at = nspace;
    for (int n = 0; n < kMaxGenerations; ++n) {
        const auto it = s.find(at);
        if (it == s.end() || it->second->job->parent.nspace.empty()) break;
        at = it->second->job->parent.nspace;
    }
    return at;
}

}  // namespace zpmix
