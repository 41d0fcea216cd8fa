#pragma once
// The broker's `monitor` actor (PMIx_Process_monitor, PMIx_Heartbeat): each monitor is a timer of
// this actor. A heartbeat monitor misses a beat each period without one; a file monitor misses a
// check when the file's watched properties (size, access, modification time) did not change. After
// `drops` misses in a row the monitor trips: once per stall, re-armed by the next beat or change.
// A trip raises the process's chosen event (its range, the process itself as source and affected
// process, so the process hears it too) and, unless the process keeps control
// (PMIX_MONITOR_APP_CONTROL), applies the configured response: report, or terminate the process.
// Monitors end with their process. Under a hosting resource manager that monitors its clients
// itself, requests go to its monitor upcall instead (heartbeats then reach nobody: the host has
// its own ways to watch).
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/monitor.hpp"
#include "actors/runtime/actor.hpp"

namespace zpmix {

class ProcessMonitor : public Actor {
  public:
    struct Settings {
        bool terminate = false;  // [monitor] response = "terminate" (else "report")
        // [monitor] time_unit_ms: the length of the standard's one-second time unit (testing).
        std::chrono::milliseconds time_unit{1000};
        // Under a hosting resource manager: requests go to its monitor upcall (`hostsvc`),
        // which answers them; or the alerts of the broker's own monitors also go to the host
        // (its notify_event, through `host`).
        bool by_host = false;
        bool alerts_to_host = false;
    };
    ProcessMonitor(Reactor &reactor, Bus &bus, Settings settings);

  private:
    struct Monitor {
        msg::MonitorRequest spec;
        std::uint32_t misses = 0;
        bool tripped = false;
        std::uint64_t beats_seen = 0;  // heartbeat: the process's beat count at the last check
        struct stat last {};           // file: its state at the last check
        bool last_ok = false;
        Reactor::TimerId timer = 0;
    };
    struct Watched {
        std::uint64_t beats = 0;
        std::vector<Monitor> monitors;
    };

    Settings settings_;
    std::map<msg::Proc, Watched> procs_;
    std::uint64_t next_id_ = 1;

    void request(const Envelope &env, msg::MonitorRequest &m);
    void beat(const Envelope &env, msg::MonitorBeat &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void ok(const Envelope &env, msg::Ok &m);
    void error(const Envelope &env, msg::ErrorReply &m);
    void signalled(const Envelope &env, msg::SignalledRanks &m);

    void check(const msg::Proc &proc, const std::string &id);
    void trip(const msg::Proc &proc, const Monitor &mon);
    void drop(const msg::Proc &proc, const std::string &id);  // empty id: all of them
};

}  // namespace zpmix
