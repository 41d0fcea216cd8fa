#include "actors/tree/reduction.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

namespace zpmix::tree {

Parts parts_over(const std::vector<std::uint32_t> &hosts, const BrokerView &view) {
    const Topology topology(view.size(), view.radix);
    Parts parts{false, {}};
    for (std::uint32_t b : hosts) {
        if (b == view.rank)
            parts.local = true;
        else if (auto child = topology.child_toward(view.rank, b))
            parts.children.push_back(*child);
    }
    return parts;
}

bool loss_reaches(const msg::TreeLost &lost, const std::vector<std::uint32_t> &hosts) {
    if (lost.parent) return !hosts.empty();
    return std::any_of(hosts.begin(), hosts.end(), [&](std::uint32_t b) {
        return std::find(lost.brokers.begin(), lost.brokers.end(), b) != lost.brokers.end();
    });
}

Reduction::Reduction(const BrokerMap &brokers, Wiring wiring)
    : brokers_(brokers), wiring_(std::move(wiring)) {}

Gather &Reduction::gather() {
    if (gather_) return *gather_;
    const auto view = brokers_.view();
    Gather::Callbacks cb{
        .send_up =
            [this](Rank parent, const std::string &key, Status status, const Bytes &part) {
                wiring_.up(remote_address(parent, wiring_.owner), key, status, part);
            },
        .send_down =
            [this](Rank child, const std::string &key, Status status, const Bytes &result) {
                wiring_.down(remote_address(child, wiring_.owner), key, status, result);
            },
        .complete = wiring_.complete,
        .log = wiring_.log,
    };
    gather_ = std::make_unique<Gather>(Topology(view->size(), view->radix), view->rank,
                                       std::move(cb), wiring_.reduce, wiring_.plan);
    return *gather_;
}

std::optional<Outcome> Reduction::from_child(std::string_view from, const std::string &key,
                                             Status status, Bytes part) {
    const auto sender = sender_broker(from);
    if (!sender) {
        wiring_.log(fmt::format("a part of {} not from a broker ('{}'): dropped", key, from));
        return std::nullopt;
    }
    return gather().from_child(*sender, key, status, std::move(part));
}

void Reduction::from_parent(std::string_view from, const std::string &key, Status status,
                            const Bytes &result) {
    const auto view = brokers_.view();
    const auto sender = sender_broker(from);
    if (!sender || view->alone() ||
        Topology(view->size(), view->radix).parent(view->rank) != sender)
        return wiring_.log(
            fmt::format("the verdict of {} not from the parent broker: dropped", key));
    gather().from_parent(key, status, result);
}

void Reduction::lost(const msg::TreeLost &m) {
    const auto view = brokers_.view();
    if (view->alone()) return;
    const Topology topology(view->size(), view->radix);
    for (std::uint32_t b : std::set<std::uint32_t>(m.brokers.begin(), m.brokers.end()))
        if (b < view->size() && topology.parent(b) == view->rank) gather().child_lost(b);
    if (m.parent) gather().parent_lost();
}

void Reduction::joined(const msg::TreeJoined &m) {
    const auto view = brokers_.view();
    if (view->alone() || m.rank >= view->size()) return;
    if (Topology(view->size(), view->radix).parent(m.rank) == view->rank)
        gather().child_joined(m.rank);
}

}  // namespace zpmix::tree
