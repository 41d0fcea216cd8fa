#pragma once
// Per-stream sequence numbers on the subscriber's side: events are handed on in order, exactly
// once; a gap (the broker's XPUB dropped some for this subscriber) yields the range to ask the
// broker for, and events after the gap wait until the answer fills it (or says they are gone).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/events.hpp"

namespace zpmix::client {

class StreamTracker {
  public:
    struct Gap {
        std::string stream;
        std::uint64_t from = 0, to = 0;
    };

    // The process is subscribed to `stream`, whose last event so far is `head`: events up to it
    // came with the registration's replay. Events that arrived early are accepted now.
    std::vector<msg::Event> start(const std::string &stream, std::uint64_t head,
                                  std::optional<Gap> &gap);
    bool tracking(const std::string &stream) const { return streams_.contains(stream); }

    // One event from the subscription: what may be handed on now, in order.
    std::vector<msg::Event> accept(msg::Event ev, std::optional<Gap> &gap);
    // The broker's answer for [from, to]: numbers it did not send are lost and skipped.
    std::vector<msg::Event> fill(const std::string &stream, std::uint64_t from, std::uint64_t to,
                                 std::vector<msg::Event> events);

    // Every stream's last number handed on (or skipped).
    std::map<std::string, std::uint64_t> upto() const;
    std::uint64_t lost() const { return lost_; }

  private:
    struct Stream {
        std::uint64_t next = 1;
        std::uint64_t requested_to = 0;  // highest number asked for
        std::map<std::uint64_t, msg::Event> pending;
    };
    std::map<std::string, Stream> streams_;
    std::map<std::string, std::vector<msg::Event>> early_;  // before start()
    std::uint64_t lost_ = 0;

    void drain(Stream &s, std::vector<msg::Event> &out, std::uint64_t skip_from,
               std::uint64_t skip_to);
    std::optional<Gap> gap_of(const std::string &name, Stream &s);
};

}  // namespace zpmix::client
