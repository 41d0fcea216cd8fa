#pragma once
// Debuggers (RFC0010): which ranks of a job started with PMIX_DEBUG_STOP_IN_INIT wait in PMIx_Init
// (each says so once its PMIX_DEBUGGER_RELEASE handler is registered: msg::StoppedInInit), and
// the PMIX_READY_FOR_DEBUG event once all of them do. The launcher keeps one per job; for a job
// across nodes the root broker's launcher counts (the others pass their ranks' messages on), so
// the event goes out once.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "actors/protocol/events.hpp"

namespace zpmix {

class StoppedRanks {
  public:
    // True the first time every rank of a job of `size` ranks has stopped; a rank out of range or
    // counted already changes nothing.
    bool add(std::uint32_t rank, std::uint32_t size);

  private:
    std::set<std::uint32_t> stopped_;
    bool announced_ = false;
};

// PMIX_READY_FOR_DEBUG for `nspace`, its affected procs the whole job: to the tool that spawned it
// (`debugger`), else on the session's range, where any tool attached to the allocation hears it
// (cached, so one that registers later hears it too).
msg::NotifyEvent ready_for_debug(const std::string &nspace,
                                 const std::optional<msg::Proc> &debugger);

}  // namespace zpmix
