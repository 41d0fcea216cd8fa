#include "actors/registry/namespace_table.hpp"

#include <chrono>

#include "actors/runtime/unix_time.hpp"

namespace zpmix {

msg::JobInfo NamespaceRecord::job_with_pids() const {
    msg::JobInfo out = *job;
    for (std::size_t r = 0; r < out.procs.size() && r < pids.size(); ++r)
        out.procs[r].pid = pids[r];
    return out;
}

NamespaceTable::NamespaceTable() : current_(std::make_shared<const Snapshot>()) {}

std::shared_ptr<const NamespaceTable::Snapshot> NamespaceTable::snapshot() const {
    std::lock_guard lock(mu_);
    return current_;
}

NamespaceTable::Record NamespaceTable::find(std::string_view nspace) const {
    const auto snap = snapshot();
    auto it = snap->find(nspace);
    return it == snap->end() ? nullptr : it->second;
}

bool NamespaceTable::job_ended(std::string_view nspace) const {
    std::lock_guard lock(mu_);
    return ended_set_.contains(nspace);
}

// Also keeps the ended jobs, in the same step: a reader never finds a namespace neither
// registered nor ended in between.
void NamespaceTable::replace(const std::string &nspace, Record record) {
    std::lock_guard lock(mu_);
    auto next = std::make_shared<Snapshot>(*current_);
    if (record) {
        if (ended_set_.erase(nspace)) std::erase(ended_, nspace);  // registered again
        (*next)[nspace] = std::move(record);
    } else {
        next->erase(nspace);
        if (ended_set_.insert(nspace).second) ended_.push_back(nspace);
        if (ended_.size() > kEndedKept) {
            ended_set_.erase(ended_.front());
            ended_.pop_front();
        }
    }
    current_ = std::move(next);
}

void NamespaceTable::add(msg::JobInfo job, std::string secret,
                         std::vector<msg::Proc> notify_completion, bool hosted, bool elsewhere) {
    auto r = std::make_shared<NamespaceRecord>();
    r->hosted = hosted;
    r->elsewhere = elsewhere;
    for (const auto &p : job.procs) r->pids.push_back(p.pid);
    r->ends.assign(job.procs.size(), {});
    const std::string nspace = job.nspace;
    r->job = std::make_shared<const msg::JobInfo>(std::move(job));
    r->secret = std::move(secret);
    r->notify_completion = std::move(notify_completion);
    // A part's registration replaces the coordinator's: the job started at the first.
    const auto old = find(nspace);
    r->registered_us = old ? old->registered_us : unix_time_us();
    replace(nspace, std::move(r));
}

bool NamespaceTable::change(const std::string &nspace, std::uint32_t rank,
                            const std::function<void(NamespaceRecord &)> &edit) {
    Record old = find(nspace);
    if (!old || rank >= old->size()) return false;
    auto r = std::make_shared<NamespaceRecord>(*old);
    edit(*r);
    replace(nspace, std::move(r));
    return true;
}

bool NamespaceTable::spawned(const std::string &nspace, std::uint32_t rank, std::int64_t pid) {
    return change(nspace, rank, [&](NamespaceRecord &r) { r.pids[rank] = pid; });
}

bool NamespaceTable::ended(const std::string &nspace, std::uint32_t rank, std::int32_t exit_code,
                           std::int32_t signal) {
    return change(nspace, rank, [&](NamespaceRecord &r) {
        r.ends[rank] = {true, exit_code, signal};
    });
}

bool NamespaceTable::remove(const std::string &nspace) {
    if (!find(nspace)) return false;
    replace(nspace, nullptr);
    return true;
}

}  // namespace zpmix
