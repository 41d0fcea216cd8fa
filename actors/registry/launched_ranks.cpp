#include "actors/registry/launched_ranks.hpp"

#include <fstream>

#include <unistd.h>
#include <string>

namespace zpmix {

namespace {

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) state ppid ..."), 0 when unknown. The
// command name may hold spaces and parentheses: the fields after it start at its last ')'.
std::int64_t parent_of(std::int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) return 0;
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) return 0;
    try {
        return std::stoll(stat.substr(close + 4));  // skip ") S "
    } catch (const std::exception &) {
        return 0;
    }
}

}  // namespace

bool descends_from(std::int64_t pid, std::int64_t ancestor) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
        if (pid == ancestor) return true;
        pid = parent_of(pid);
    }
    return pid == ancestor;
}

void LaunchedRanks::spawned(const std::string &nspace) {
    auto w = waiting_.find(nspace);
    if (w == waiting_.end()) return;
    auto retries = std::move(w->second);  // a retry may wait again
    waiting_.erase(w);
    for (auto &retry : retries) retry();
}

void LaunchedRanks::gone(const std::string &nspace) {
    waiting_.erase(nspace);
    descends_.clear();  // its pids may be reused
}

void LaunchedRanks::after_next_spawn(const std::string &nspace, std::function<void()> retry) {
    waiting_[nspace].push_back(std::move(retry));
}

LaunchedRanks::Verdict LaunchedRanks::may_act_as(const PeerCredentials &sender,
                                                 const NamespaceRecord *job, std::uint32_t rank) {
    // An ipc peer the kernel names no pid for runs outside the broker's pid namespace: it is no
    // process this broker launched (every one runs inside it), and nothing about it can be
    // checked.
    if (sender.ipc && sender.pid <= 0) return Verdict::refused;
    if (sender.pid <= 0 || !job) return Verdict::allowed;
    auto is = [&](std::int64_t rank_pid) {
        if (rank_pid == sender.pid) return true;
        auto [it, fresh] = descends_.try_emplace({sender.pid, rank_pid}, false);
        if (fresh) it->second = descends_from(sender.pid, rank_pid);
        return it->second;
    };
    if (const std::int64_t pid = rank < job->size() ? job->pids[rank] : 0; pid > 0)
        return is(pid) ? Verdict::allowed : Verdict::refused;
    // The rank's own pid is not known yet (its ns.spawned may come after a sibling's commit):
    // a sender that is another rank of the job is still not this one.
    bool unreported = false;
    for (std::uint32_t r = 0; r < job->size(); ++r) {
        if (job->pids[r] <= 0)
            unreported = true;
        else if (r != rank && is(job->pids[r]))
            return Verdict::refused;
    }
    // A process this broker launched, not reported yet, may be any of the unreported ranks. What
    // waits is bounded: a flood of such messages is refused rather than kept.
    if (unreported && sender.pid != ::getpid() && is(::getpid()))
        return waiting_[job->job->nspace].size() < kMaxWaiting ? Verdict::later : Verdict::refused;
    return Verdict::allowed;
}

}  // namespace zpmix
