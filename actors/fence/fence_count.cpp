#include "actors/fence/fence_count.hpp"

#include <algorithm>

namespace zpmix {

bool FenceCount::includes(const std::vector<msg::Proc> &participants, const msg::Proc &p) {
    return std::binary_search(participants.begin(), participants.end(), p) ||
           std::binary_search(participants.begin(), participants.end(),
                              msg::Proc{p.nspace, msg::kWildcardRank});
}

bool FenceCount::arrive(const msg::Proc &p,
                        const std::vector<std::pair<std::string, std::uint32_t>> &sizes) {
    if (!arrived_.insert(p).second) return false;
    for (const auto &[ns, size] : sizes)
        if (std::binary_search(participants_.begin(), participants_.end(),
                               msg::Proc{ns, msg::kWildcardRank}))
            sizes_.emplace(ns, size);
    return true;
}

long FenceCount::expected() const {
    if (expected_ >= 0) return expected_;
    long n = 0;
    for (const auto &p : participants_) {
        if (p.rank != msg::kWildcardRank) {
            ++n;
            continue;
        }
        auto size = sizes_.find(p.nspace);
        if (size == sizes_.end()) return -1;
        n += size->second;
    }
    return n;
}

}  // namespace zpmix
