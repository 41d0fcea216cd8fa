#include "actors/launcher/debug_stop.hpp"

#include <pmix_common.h>

namespace zpmix {

bool StoppedRanks::add(std::uint32_t rank, std::uint32_t size) {
    if (announced_ || rank >= size) return false;
    stopped_.insert(rank);
    announced_ = stopped_.size() == size;
    return announced_;
}

msg::NotifyEvent ready_for_debug(const std::string &nspace,
                                 const std::optional<msg::Proc> &debugger) {
    msg::NotifyEvent n;
    msg::Event &ev = n.event;
    ev.status = PMIX_READY_FOR_DEBUG;
    ev.source = {nspace, PMIX_RANK_WILDCARD};
    ev.affected = {{nspace, PMIX_RANK_WILDCARD}};
    if (debugger) {
        ev.range = static_cast<std::uint8_t>(msg::Range::custom);
        ev.custom_range = {*debugger};
    } else {
        ev.range = static_cast<std::uint8_t>(msg::Range::session);
    }
    ev.text = "every rank of " + nspace + " waits for the debugger's release";
    return n;
}

std::vector<std::uint32_t> DebugStop::release(std::uint32_t rank) {
    if (rank == PMIX_RANK_WILDCARD) released = true;
    std::vector<std::uint32_t> ranks;
    for (auto it = at_exec.begin(); it != at_exec.end();)
        if (rank == PMIX_RANK_WILDCARD || rank == *it) {
            ranks.push_back(*it);
            it = at_exec.erase(it);
        } else {
            ++it;
        }
    return ranks;
}

}  // namespace zpmix
