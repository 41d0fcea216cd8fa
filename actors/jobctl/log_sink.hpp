#pragma once
// The broker's `log` actor (PMIx_Log): writes what processes log to the broker's stderr or stdout,
// one line per entry tagged with its source, and to syslog as an RFC 3164 datagram on a Unix
// socket ([log] syslog_socket, /dev/log by default; no daemon listening: the channel fails).
// Email is not a channel zpmix has; under a hosting resource manager it and every channel the
// broker does not have go to the host's log upcall.
#include <string>

#include "actors/protocol/log.hpp"
#include "actors/runtime/actor.hpp"

namespace zpmix {

class LogSink : public Actor {
  public:
    struct Settings {
        std::string syslog_socket = "/dev/log";
        // Under a hosting resource manager: the channels the broker does not have go to the
        // host's log upcall (`hostsvc`), which answers the request.
        bool to_host = false;
    };
    LogSink(Reactor &reactor, Bus &bus, Settings settings);
    ~LogSink() override;

  private:
    Settings settings_;
    std::string host_;
    int syslog_fd_ = -1;

    void log_request(const Envelope &env, msg::Log &m);
    // Writes one entry; returns a PMIx status.
    int write_entry(const msg::Log &m, const msg::LogEntry &e, const std::string &prefix);
};

}  // namespace zpmix
