#pragma once
// Debuggers (RFC0010): which ranks of a job started with PMIX_DEBUG_STOP_IN_INIT wait in PMIx_Init
// (each says so once its PMIX_DEBUGGER_RELEASE handler is registered: msg::StoppedInInit), and
// the PMIX_READY_FOR_DEBUG event once all of them do. The launcher keeps one per job; for a job
// across nodes the root broker's launcher counts (the others pass their ranks' messages on), so
// the event goes out once.
//
// A job started with PMIX_DEBUG_STOP_ON_EXEC has each rank stopped at its first instruction
// (caller_spawn.hpp): it counts as waiting once the launch is answered, and is continued when
// PMIX_DEBUGGER_RELEASE for it goes out; once the release for the whole job came, ranks started
// later do not stop. DebugStop is what the launcher's Job holds of its debugger; the launcher's
// handlers for it are in debug_stop.cpp.
//
// Under a host (the server library) the host registers a job with PMIX_DEBUG_STOP_IN_INIT and
// starts its ranks: the launcher has no Job for it, and counts the job's ranks on this node
// (HostedStop, from the broker's namespace table). Once they all wait, PMIX_READY_FOR_DEBUG for
// them goes out on this node, to the tools attached to the host's server; each of the host's
// nodes counts its own ranks, and its event names them (docs/debuggers.md).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/protocol/events.hpp"
#include "actors/protocol/job.hpp"

namespace zpmix {

class StoppedRanks {
  public:
    // True the first time every rank of a job of `size` ranks has stopped; a rank out of range or
    // counted already changes nothing.
    bool add(std::uint32_t rank, std::uint32_t size) { return rank < size && add_of(rank, size); }
    // True the first time `expected` ranks (validated by the caller) have stopped.
    bool add_of(std::uint32_t rank, std::size_t expected);

  private:
    std::set<std::uint32_t> stopped_;
    bool announced_ = false;
};

// PMIX_READY_FOR_DEBUG for `nspace`, its affected procs the whole job: to the tool that spawned it
// (`debugger`), else on the session's range, where any tool attached to the allocation hears it
// (cached, so one that registers later hears it too).
// `affected`: the ranks it is for, when not the whole job (a hosted job's ranks on this node).
msg::NotifyEvent ready_for_debug(const std::string &nspace,
                                 const std::optional<msg::Proc> &debugger,
                                 const std::vector<std::uint32_t> &affected = {});

struct DebugStop {
    StoppedRanks stopped;               // its ranks waiting (in PMIx_Init, or stopped at exec)
    std::optional<msg::Proc> debugger;  // the tool that spawned it, which hears the event
    bool released = false;              // PMIX_DEBUGGER_RELEASE came for every rank
    std::set<std::uint32_t> at_exec;    // its ranks stopped at exec, until their release

    // Whether a rank started now stops at exec.
    bool stops_at_exec(const msg::JobInfo &info) const { return info.stop_on_exec && !released; }
    // PMIX_DEBUGGER_RELEASE for `rank` of the job (PMIX_RANK_WILDCARD: all of it): the ranks
    // stopped at exec that it releases, ascending.
    std::vector<std::uint32_t> release(std::uint32_t rank);
};

// A job the host registered, whose ranks on this node stop in PMIx_Init: those waiting. Its
// registration time tells a namespace registered again (counted afresh) from the one counted.
struct HostedStop {
    std::int64_t registered_us = 0;
    StoppedRanks stopped;
};

}  // namespace zpmix
