#pragma once
// PMIx_Log: a process asks the broker's `log` actor to write data to the broker's channels.
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc

namespace zpmix::msg {

struct LogEntry {
    std::string channel;  // stderr | stdout | syslog | email (and whatever a newer peer adds)
    std::string text;
    ZPMIX_MSG_MAP(channel, text);
};

// Client -> log. Answered by Ok when every entry (or, with `once`, one of them) was written,
// else an ErrorReply (PMIX_ERR_NOT_SUPPORTED for a channel the broker does not have).
struct Log {
    static constexpr const char *type = "log.request";
    Proc source;  // PMIX_LOG_SOURCE, else the caller
    std::vector<LogEntry> entries;
    std::int64_t timestamp = 0;        // PMIX_LOG_TIMESTAMP (s since the epoch); 0: none
    bool generate_timestamp = false;   // PMIX_LOG_GENERATE_TIMESTAMP: the broker stamps it
    bool once = false;                 // PMIX_LOG_ONCE: the first channel that works, only
    std::int32_t syslog_priority = 6;  // PMIX_LOG_SYSLOG_PRI (LOG_INFO by default)
    ZPMIX_MSG_MAP(source, entries, timestamp, generate_timestamp, once, syslog_priority);
};

}  // namespace zpmix::msg
