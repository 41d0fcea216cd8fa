#include "actors/events/event_cache.hpp"

#include <algorithm>

namespace zpmix {

void EventCache::add(const msg::Event &ev, std::set<msg::Proc> awaiting,
                     std::set<std::string> replay_to) {
    const std::uint64_t order = next_order_++;
    entries_.emplace(order, Entry{ev, std::move(awaiting), std::move(replay_to), true});
    index_[ev.stream][ev.seq] = order;
    ring_.push_back(order);
    while (ring_.size() > ring_size_) {
        auto it = entries_.find(ring_.front());
        ring_.pop_front();
        it->second.in_ring = false;
        drop_if_done(it);
    }
}

void EventCache::drop_if_done(std::map<std::uint64_t, Entry>::iterator it) {
    if (it->second.in_ring || !it->second.awaiting.empty()) return;
    auto s = index_.find(it->second.event.stream);
    s->second.erase(it->second.event.seq);
    if (s->second.empty()) index_.erase(s);
    entries_.erase(it);
}

std::vector<msg::Event> EventCache::range(const std::string &stream, std::uint64_t from,
                                          std::uint64_t to) const {
    std::vector<msg::Event> out;
    auto s = index_.find(stream);
    if (s == index_.end() || from > to) return out;
    for (auto it = s->second.lower_bound(from); it != s->second.end() && it->first <= to; ++it)
        out.push_back(entries_.at(it->second).event);
    return out;
}

std::vector<msg::Event> EventCache::of_streams(const std::vector<std::string> &streams,
                                               const std::string &who) const {
    std::vector<std::uint64_t> orders;
    for (const auto &stream : streams) {
        auto s = index_.find(stream);
        if (s == index_.end()) continue;
        for (const auto &[seq, order] : s->second) orders.push_back(order);
    }
    std::sort(orders.begin(), orders.end());
    orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
    std::vector<msg::Event> out;
    out.reserve(orders.size());
    for (auto order : orders) {
        const Entry &e = entries_.at(order);
        if (who.empty() || e.replay_to.empty() || e.replay_to.contains(who)) out.push_back(e.event);
    }
    return out;
}

void EventCache::ack(const msg::Proc &proc, const std::string &stream, std::uint64_t upto) {
    auto s = index_.find(stream);
    if (s == index_.end()) return;
    std::vector<std::uint64_t> orders;
    for (auto it = s->second.begin(); it != s->second.end() && it->first <= upto; ++it)
        orders.push_back(it->second);
    // drop_if_done may erase the stream's index: iterate over a copy of the orders
    for (auto order : orders) {
        auto it = entries_.find(order);
        if (it->second.awaiting.erase(proc) > 0) drop_if_done(it);
    }
}

void EventCache::forget(const msg::Proc &proc) {
    constexpr std::uint32_t wildcard = 0xfffffffe;
    for (auto it = entries_.begin(); it != entries_.end();) {
        auto next = std::next(it);
        auto &awaiting = it->second.awaiting;
        const auto before = awaiting.size();
        std::erase_if(awaiting, [&](const msg::Proc &p) {
            return p.nspace == proc.nspace && (proc.rank == wildcard || p.rank == proc.rank);
        });
        if (awaiting.size() != before) drop_if_done(it);
        it = next;
    }
}

}  // namespace zpmix
