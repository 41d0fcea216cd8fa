#pragma once
// The broker's memory of published events, for replay to late registrants and for subscribers
// that lost some (RFC0002). The most recent `ring_size` events are kept; a job-level event is also
// kept, past the ring, until every local process it was meant for has acknowledged it (or exited).
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/protocol/events.hpp"

namespace zpmix {

class EventCache {
  public:
    explicit EventCache(std::size_t ring_size) : ring_size_(ring_size) {}

    // Keeps `ev` (numbered already); `awaiting` are the local processes that must acknowledge it
    // before it may leave the cache once it falls out of the ring; `replay_to`, when not empty,
    // the only namespaces whose late registrants it is replayed to.
    void add(const msg::Event &ev, std::set<msg::Proc> awaiting,
             std::set<std::string> replay_to = {});

    // The cached events of `stream` numbered from..to, in order.
    std::vector<msg::Event> range(const std::string &stream, std::uint64_t from,
                                  std::uint64_t to) const;
    // The cached events of any of `streams`, oldest first, that a registrant of namespace `who`
    // may be replayed (empty `who`: every one).
    std::vector<msg::Event> of_streams(const std::vector<std::string> &streams,
                                       const std::string &who = {}) const;

    // `proc` has every event of `stream` up to `upto`.
    void ack(const msg::Proc &proc, const std::string &stream, std::uint64_t upto);
    // `proc` will never acknowledge anything again (it exited); rank WILDCARD: its whole job.
    void forget(const msg::Proc &proc);

    std::size_t size() const { return entries_.size(); }
    std::size_t in_ring() const { return ring_.size(); }

  private:
    struct Entry {
        msg::Event event;
        std::set<msg::Proc> awaiting;
        std::set<std::string> replay_to;  // empty: any namespace
        bool in_ring = true;
    };
    void drop_if_done(std::map<std::uint64_t, Entry>::iterator it);

    std::size_t ring_size_;
    std::uint64_t next_order_ = 1;
    std::map<std::uint64_t, Entry> entries_;  // by arrival order
    std::deque<std::uint64_t> ring_;          // arrival orders of the most recent events
    std::unordered_map<std::string, std::map<std::uint64_t, std::uint64_t>>
        index_;  // stream -> seq -> order
};

}  // namespace zpmix
