#include "client/events/stream_tracker.hpp"

namespace zpmix::client {

std::vector<msg::Event> StreamTracker::start(const std::string &stream, std::uint64_t head,
                                             std::optional<Gap> &gap) {
    std::vector<msg::Event> out;
    if (streams_.contains(stream)) return out;
    streams_[stream].next = head + 1;
    auto early = early_.extract(stream);
    if (!early.empty())
        for (auto &ev : early.mapped()) {
            std::optional<Gap> g;
            auto ready = accept(std::move(ev), g);
            out.insert(out.end(), ready.begin(), ready.end());
            if (g) gap = g;
        }
    return out;
}

std::vector<msg::Event> StreamTracker::accept(msg::Event ev, std::optional<Gap> &gap) {
    std::vector<msg::Event> out;
    auto it = streams_.find(ev.stream);
    if (it == streams_.end()) {
        // Subscribed, registration not answered yet: keep it until start() says where we are.
        if (early_[ev.stream].size() < 100000) early_[ev.stream].push_back(std::move(ev));
        return out;
    }
    Stream &s = it->second;
    if (ev.seq < s.next || s.pending.contains(ev.seq)) return out;  // a duplicate
    s.pending.emplace(ev.seq, std::move(ev));
    drain(s, out, 0, 0);
    gap = gap_of(it->first, s);
    return out;
}

std::vector<msg::Event> StreamTracker::fill(const std::string &stream, std::uint64_t from,
                                            std::uint64_t to, std::vector<msg::Event> events) {
    std::vector<msg::Event> out;
    auto it = streams_.find(stream);
    if (it == streams_.end()) return out;
    Stream &s = it->second;
    for (auto &ev : events)
        if (ev.seq >= s.next && ev.seq >= from && ev.seq <= to)
            s.pending.emplace(ev.seq, std::move(ev));
    drain(s, out, from, to);
    return out;
}

void StreamTracker::drain(Stream &s, std::vector<msg::Event> &out, std::uint64_t skip_from,
                          std::uint64_t skip_to) {
    for (;;) {
        if (!s.pending.empty() && s.pending.begin()->first == s.next) {
            out.push_back(std::move(s.pending.begin()->second));
            s.pending.erase(s.pending.begin());
            ++s.next;
        } else if (skip_to != 0 && s.next >= skip_from && s.next <= skip_to) {
            ++lost_;  // the broker no longer has it
            ++s.next;
        } else {
            return;
        }
    }
}

std::optional<StreamTracker::Gap> StreamTracker::gap_of(const std::string &name, Stream &s) {
    if (s.pending.empty()) return std::nullopt;
    std::uint64_t last_missing = s.pending.rbegin()->first - 1;
    while (last_missing >= s.next && s.pending.contains(last_missing)) --last_missing;
    std::uint64_t from = std::max(s.next, s.requested_to + 1);
    while (from <= last_missing && s.pending.contains(from)) ++from;
    if (from > last_missing) return std::nullopt;
    s.requested_to = last_missing;
    return Gap{name, from, last_missing};
}

std::map<std::string, std::uint64_t> StreamTracker::upto() const {
    std::map<std::string, std::uint64_t> out;
    for (const auto &[name, s] : streams_) out[name] = s.next - 1;
    return out;
}

}  // namespace zpmix::client
