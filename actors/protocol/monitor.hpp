#pragma once
// Process monitoring (PMIx_Process_monitor, PMIx_Heartbeat): a process asks the broker's
// `monitor` actor to watch it; when a monitor trips, the broker raises the event code the process
// chose.
#include <cstdint>
#include <string>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc

namespace zpmix::msg {

// Client -> monitor: start (heartbeat | file) or cancel monitors of `proc`. Answered by Ok or an
// ErrorReply.
struct MonitorRequest {
    static constexpr const char *type = "mon.request";
    Proc proc;
    std::string kind;          // heartbeat | file | cancel
    std::string id;            // PMIX_MONITOR_ID; cancel: the one to cancel, empty: all of proc's
    std::uint32_t time = 0;    // heartbeat: PMIX_MONITOR_HEARTBEAT_TIME; file: _FILE_CHECK_TIME (s)
    std::uint32_t drops = 1;   // misses before the alert (_HEARTBEAT_DROPS, _FILE_DROPS)
    std::string file;          // PMIX_MONITOR_FILE
    bool file_size = false;    // watch the file's size (growing)
    bool file_access = false;  // its access time
    bool file_modify = false;  // its modification time
    std::int32_t code = 0;     // the event to raise
    std::uint8_t range = 3;    // its range (Range), PMIX_RANGE_NAMESPACE by default
    bool app_control = false;  // PMIX_MONITOR_APP_CONTROL: report only, whatever the config says
    ZPMIX_MSG_MAP(proc, kind, id, time, drops, file, file_size, file_access, file_modify, code,
                  range, app_control);
};
inline const Proc *acting_proc(const MonitorRequest &m) {
    return &m.proc;
}

// Client -> monitor, one-way (PMIx_Heartbeat): `proc` is alive.
struct MonitorBeat {
    static constexpr const char *type = "mon.beat";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};
inline const Proc *acting_proc(const MonitorBeat &m) {
    return &m.proc;
}

}  // namespace zpmix::msg
