#pragma once
// FenceCount: who of one fence's participants has contributed on this node, out of whom, and
// whether all are in. A participant is a process or a whole namespace (a wildcard rank); a
// wildcard counts as its namespace's size, which the count learns from the contributions (each
// names its own namespace's size), so until then it cannot be complete. A fence over several
// nodes counts only this node's participants, a number its owner gives (expect()). It knows
// nothing of the fence's data, its timers or how it is answered: the FenceReducer counts with it.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/protocol/fence.hpp"

namespace zpmix {

class FenceCount {
  public:
    // Whether `p` is among the canonical `participants` (msg::canonical_participants), by rank
    // or by its namespace's wildcard.
    static bool includes(const std::vector<msg::Proc> &participants, const msg::Proc &p);

    // `participants`: canonical, not empty.
    explicit FenceCount(std::vector<msg::Proc> participants)
        : participants_(std::move(participants)) {}

    // `p` (a participant) contributed, knowing the sizes of the namespaces in `sizes`; false,
    // counting nothing, when it already had.
    bool arrive(const msg::Proc &p,
                const std::vector<std::pair<std::string, std::uint32_t>> &sizes);
    bool arrived(const msg::Proc &p) const { return arrived_.contains(p); }
    // Only `n` of the participants contribute here (the others are on other nodes): expected()
    // is n from now on, whatever the wildcards' namespaces' sizes.
    void expect(long n) { expected_ = n; }
    // How many processes take part, or -1 while a wildcard's namespace size is unknown.
    long expected() const;
    // Every participant has contributed.
    bool complete() const { return static_cast<long>(arrived_.size()) == expected(); }
    // The fence cannot complete without `p`: it takes part and has not contributed (when it
    // ends, the fence fails).
    bool waits_for(const msg::Proc &p) const { return includes(participants_, p) && !arrived(p); }
    const std::vector<msg::Proc> &participants() const { return participants_; }

  private:
    std::vector<msg::Proc> participants_;         // canonical
    std::map<std::string, std::uint32_t> sizes_;  // of the namespaces named by a wildcard
    std::set<msg::Proc> arrived_;
    long expected_ = -1;  // expect()'s, when given
};

}  // namespace zpmix
