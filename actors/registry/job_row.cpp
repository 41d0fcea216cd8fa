#include "actors/registry/job_row.hpp"

#include <algorithm>

namespace zpmix {

msg::JobRow job_row(const std::string &nspace, const NamespaceRecord &job,
                    const std::set<std::uint32_t> &paused) {
    msg::JobRow row;
    row.nspace = nspace;
    row.program = job.job->program;
    row.np = job.size();
    row.started_us = job.registered_us;
    for (const auto &p : job.job->procs)
        if (std::find(row.hosts.begin(), row.hosts.end(), p.hostname) == row.hosts.end())
            row.hosts.push_back(p.hostname);
    for (const auto &[name, ranks] : job.job->psets) row.psets.push_back(name);
    for (std::uint32_t r = 0; r < job.size(); ++r) {
        const auto &e = job.ends[r];
        ++row.states[e.ended ? (e.signal ? "killed" : "exited")
                             : (paused.contains(r) ? "paused" : "running")];
    }
    return row;
}

}  // namespace zpmix
