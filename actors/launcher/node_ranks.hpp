#pragma once
// PMIX_NODE_RANK: a rank's number among every rank started on its node, all jobs together, where
// PMIX_LOCAL_RANK numbers only its own job's there. As PRRTE numbers them, a job's ranks on a
// node come after those of every job started there before it (ended or not), so two jobs sharing
// a node (a job and the jobs it spawns) never share a node rank. Kept by whoever lays jobs out:
// the launcher for a job on its node alone, the coordinator for jobs across the tree.
#include <cstdint>
#include <map>
#include <string>

#include "actors/protocol/job.hpp"

namespace zpmix {

class NodeRanks {
  public:
    // Sets every proc's node_rank from its hostname and its local_rank (set before), and counts
    // the job's ranks on each of its nodes for the jobs after it. The standard's type is uint16:
    // past 65535 ranks started on a node, the numbers wrap.
    void number(msg::JobInfo &info);
    // A job numbered elsewhere (one a restarted root adopts): the jobs after it come after its
    // ranks.
    void count(const msg::JobInfo &info);

  private:
    std::map<std::string, std::uint32_t> started_;  // node -> ranks numbered there so far
};

}  // namespace zpmix
