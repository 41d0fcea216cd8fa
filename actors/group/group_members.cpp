#include "actors/group/group_members.hpp"

#include <algorithm>

#include <pmix_common.h>

#include "actors/protocol/fence.hpp"  // canonical_participants

namespace zpmix::group {

Normal normalise(std::vector<msg::Proc> members, const NamespaceTable::Snapshot &table) {
    Normal n;
    const auto canonical = msg::canonical_participants(std::move(members));
    for (std::size_t i = 0, j = 0; i < canonical.size(); i = j) {
        const std::string &nspace = canonical[i].nspace;
        auto ns = table.find(nspace);
        if (ns == table.end()) {
            n.status = PMIX_ERR_NOT_FOUND;
            n.why = "unknown namespace '" + nspace + "' among the members";
            return n;
        }
        for (j = i; j < canonical.size() && canonical[j].nspace == nspace; ++j) {
            const auto rank = canonical[j].rank;
            if (rank != msg::kWildcardRank && rank >= ns->second->size()) {
                n.status = PMIX_ERR_BAD_PARAM;
                n.why = nspace + " has no rank " + std::to_string(rank);
                return n;
            }
        }
        // Canonical: a wildcard stands alone in its namespace, explicit ranks are distinct.
        if (canonical[i].rank == msg::kWildcardRank || j - i == ns->second->size())
            n.set.push_back({nspace, msg::kWildcardRank});
        else
            n.set.insert(n.set.end(), canonical.begin() + static_cast<std::ptrdiff_t>(i),
                         canonical.begin() + static_cast<std::ptrdiff_t>(j));
    }
    return n;
}

std::vector<msg::Proc> explicit_ranks(const std::vector<msg::Proc> &set,
                                      const NamespaceTable::Snapshot &table) {
    std::vector<msg::Proc> out;
    for (const auto &p : set) {
        if (p.rank != msg::kWildcardRank) {
            out.push_back(p);
            continue;
        }
        const std::uint32_t size = table.find(p.nspace)->second->size();
        for (std::uint32_t r = 0; r < size; ++r) out.push_back({p.nspace, r});
    }
    return out;
}

bool in_set(const std::vector<msg::Proc> &set, const msg::Proc &p) {
    return std::binary_search(set.begin(), set.end(), msg::Proc{p.nspace, msg::kWildcardRank}) ||
           std::binary_search(set.begin(), set.end(), p);
}

std::optional<std::uint32_t> host_broker(const msg::Proc &p, const NamespaceTable::Snapshot &table,
                                         const BrokerView &view) {
    const auto ns = table.find(p.nspace);
    if (ns == table.end() || p.rank >= ns->second->job->procs.size()) return std::nullopt;
    return view.broker_of(ns->second->job->procs[p.rank].hostname);
}

}  // namespace zpmix::group
