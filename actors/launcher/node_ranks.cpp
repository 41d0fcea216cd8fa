#include "actors/launcher/node_ranks.hpp"

#include <algorithm>

namespace zpmix {

void NodeRanks::number(msg::JobInfo &info) {
    std::map<std::string, std::uint32_t> here;  // this job's ranks per node
    for (auto &p : info.procs) {
        p.node_rank = static_cast<std::uint16_t>(started_[p.hostname] + p.local_rank);
        ++here[p.hostname];
    }
    for (const auto &[node, n] : here) started_[node] += n;
}

void NodeRanks::count(const msg::JobInfo &info) {
    for (const auto &p : info.procs)
        started_[p.hostname] = std::max(started_[p.hostname], std::uint32_t{p.node_rank} + 1);
}

}  // namespace zpmix
