#pragma once
// The node's picture of its namespaces: every job the launcher registered on this broker, each
// rank's pid once spawned and its end once it ended. One writer, the registry actor, which
// applies the launcher's reports; every other actor reads it.
//
// Readers take a snapshot: an immutable map of immutable records, replaced as a whole on every
// change (copy on write; a change copies one namespace's record, and its job information is
// shared, not copied). A snapshot stays valid and unchanged for as long as a reader holds it, on
// any thread. What happens when a rank or a job ends (fail its fences, publish its event, drop
// its data) is not read from here: the registry tells the actors that react, after the table
// says so (ns.proc_ended, ns.ended).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "actors/protocol/job.hpp"

namespace zpmix {

struct NamespaceRecord {
    struct End {
        bool ended = false;
        std::int32_t exit_code = 0;
        std::int32_t signal = 0;  // the signal that killed it, 0 when it exited
    };

    std::shared_ptr<const msg::JobInfo> job;   // as registered (pids: see `pids`)
    std::string secret;                        // what a tcp client proves at Hello
    std::vector<msg::Proc> notify_completion;  // who gets PMIX_EVENT_JOB_END when it ends
    std::vector<std::int64_t> pids;            // by rank; 0 until the rank is spawned
    std::vector<End> ends;                     // by rank
    std::int64_t registered_us = 0;            // when first registered here (Unix epoch)
    // A namespace a host registered (the PMIx server library, actors/protocol/host.hpp): its
    // ranks are the clients the host registered (the registry keeps them), each a process of the
    // uid the host named that proves the job's secret; the broker knows no pid of theirs.
    bool hosted = false;
    // A host's job that this server serves no rank of (registered with no local processes, as
    // mpirun registers a job of another mpirun that its job connected to): its ranks are
    // elsewhere, even when their host name is this node's (two hosts on one machine).
    bool elsewhere = false;

    std::uint32_t size() const { return static_cast<std::uint32_t>(pids.size()); }
    bool ended(std::uint32_t rank) const { return rank < ends.size() && ends[rank].ended; }
    // The job information with the pids known so far (what a client is told at Hello).
    msg::JobInfo job_with_pids() const;
};

class NamespaceTable {
  public:
    using Record = std::shared_ptr<const NamespaceRecord>;
    using Snapshot = std::map<std::string, Record, std::less<>>;

    NamespaceTable();

    std::shared_ptr<const Snapshot> snapshot() const;
    Record find(std::string_view nspace) const;  // null when not registered
    // Whether `nspace` was registered here and removed since, not registered again: a job that
    // ended (one of the last kEndedKept). A collective naming it learns that its processes
    // ended, not that it never existed, whenever the collective comes.
    bool job_ended(std::string_view nspace) const;
    static constexpr std::size_t kEndedKept = 1024;

    // The registry's changes. Each replaces the snapshot; a change naming an unknown namespace
    // or rank changes nothing and returns false.
    void add(msg::JobInfo job, std::string secret, std::vector<msg::Proc> notify_completion,
             bool hosted = false, bool elsewhere = false);
    bool spawned(const std::string &nspace, std::uint32_t rank, std::int64_t pid);
    bool ended(const std::string &nspace, std::uint32_t rank, std::int32_t exit_code,
               std::int32_t signal);
    bool remove(const std::string &nspace);

  private:
    mutable std::mutex mu_;                    // guards the pointer and the ended jobs
    std::shared_ptr<const Snapshot> current_;  // what it points to never changes
    std::deque<std::string> ended_;            // removed namespaces, the oldest first
    std::set<std::string, std::less<>> ended_set_;

    void replace(const std::string &nspace, Record record);  // null record: erase
    bool change(const std::string &nspace, std::uint32_t rank,
                const std::function<void(NamespaceRecord &)> &edit);
};

}  // namespace zpmix
