#pragma once
// A job as `zpmix ps` shows it (msg::JobRow), from the namespace table's record: its program,
// size, nodes, psets, start and its ranks by state. The registry writes the row of a job as it
// ends (msg::JobFinished), while its record is still in the table (a job across nodes with its
// ranks' ends on every node, as its coordinator counted them: DeregisterNamespace.states); jobctl
// the rows of the jobs running, with the ranks it paused.
#include <cstdint>
#include <set>
#include <string>

#include "actors/protocol/jobctl.hpp"
#include "actors/registry/namespace_table.hpp"

namespace zpmix {

msg::JobRow job_row(const std::string &nspace, const NamespaceRecord &job,
                    const std::set<std::uint32_t> &paused = {});

}  // namespace zpmix
