#include "actors/tree/reduction.hpp"

#include <algorithm>
#include <set>

namespace zpmix::tree {

std::optional<std::vector<std::uint32_t>> hosting_brokers(
    const std::vector<msg::Proc> &procs, const NamespaceTable::Snapshot &namespaces,
    const BrokerView &view, std::optional<std::uint32_t> fallback) {
    // Every broker and rank on an operation's path runs this per operation: hosts are looked up
    // once each (a 64-node job's 64 lookups over 64 brokers were ~8% of the brokers' time).
    std::vector<char> hosting(std::max<std::size_t>(view.size(), fallback ? *fallback + 1 : 0), 0);
    std::unordered_map<std::string_view, std::optional<std::uint32_t>> seen;
    auto mark = [&](std::uint32_t b) { hosting[b] = 1; };
    const std::string *last = nullptr;  // a job's ranks come in runs of one node
    auto place = [&](const std::string &host) {
        if (last && *last == host) return true;
        last = &host;
        auto [it, fresh] = seen.try_emplace(host);
        if (fresh) {
            it->second = view.broker_of(host);
            if (!it->second) it->second = fallback;
        }
        if (it->second) mark(*it->second);
        return it->second.has_value();
    };
    for (const auto &p : procs) {
        auto ns = namespaces.find(p.nspace);
        if (ns == namespaces.end()) {
            if (!fallback) return std::nullopt;
            mark(*fallback);
            continue;
        }
        const auto &job_procs = ns->second->job->procs;
        if (p.rank == msg::kWildcardRank) {
            for (const auto &info : job_procs)
                if (!place(info.hostname)) return std::nullopt;
        } else if (p.rank >= job_procs.size() || !place(job_procs[p.rank].hostname)) {
            return std::nullopt;
        }
    }
    std::vector<std::uint32_t> brokers;
    for (std::uint32_t b = 0; b < hosting.size(); ++b)
        if (hosting[b]) brokers.push_back(b);
    return brokers;
}

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

// ---- RecentFailures ------------------------------------------------------------------------

void RecentFailures::add(const std::string &key, Status status) {
    if (!status_.emplace(key, status).second) return;
    order_.push_back(key);
    if (order_.size() > max_) {
        status_.erase(order_.front());
        order_.pop_front();
    }
}

std::optional<Status> RecentFailures::find(const std::string &key) const {
    const auto it = status_.find(key);
    if (it == status_.end()) return std::nullopt;
    return it->second;
}

// ---- Reduction -----------------------------------------------------------------------------

Reduction::Reduction(Bus &bus, spdlog::logger &log, const BrokerMap &brokers, Wiring wiring,
                     Encode up, Encode down)
    : bus_(bus), log_(log), brokers_(brokers), wiring_(std::move(wiring)), up_(up), down_(down) {}

Gather &Reduction::gather() {
    if (gather_) return *gather_;
    const auto view = brokers_.view();
    Gather::Callbacks cb{
        .send_up =
            [this](Rank parent, const std::string &key, Status status, const Bytes &part) {
                bus_.send(remote_address(parent, wiring_.owner),
                          up_(wiring_.owner, key, status, part));
            },
        .send_down =
            [this](Rank child, const std::string &key, Status status, const Bytes &result) {
                bus_.send(remote_address(child, wiring_.owner),
                          down_(wiring_.owner, key, status, result));
            },
        .complete = wiring_.complete,
        .log = [this](std::string_view line) { log_.warn("{}", line); },
    };
    Gather::Plan plan = [this](const std::string &key) -> std::optional<Parts> {
        const auto view = brokers_.view();
        const auto hosts = wiring_.hosts(key, *view);
        if (!hosts) return std::nullopt;
        return parts_over(*hosts, *view);
    };
    gather_ = std::make_unique<Gather>(Topology(view->size(), view->radix), view->rank,
                                       std::move(cb), wiring_.reduce, std::move(plan));
    return *gather_;
}

bool Reduction::contribute_bytes(const std::string &key, Bytes part) {
    if (gather().contribute_local(key, std::move(part)) == Outcome::taken) return true;
    log_.warn("{} {}: the tree no longer takes this node's part", wiring_.owner, key);
    return false;
}

std::optional<Outcome> Reduction::from_child(std::string_view from, const std::string &key,
                                             Status status, Bytes part) {
    const auto sender = sender_broker(from);
    if (!sender) {
        log_.warn("a part of {} not from a broker ('{}'): dropped", key, from);
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
        return log_.warn("the verdict of {} not from the parent broker: dropped", key);
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
    const Topology topology(view->size(), view->radix);
    if (topology.parent(m.rank) == view->rank) gather().child_joined(m.rank);
    if (view->rank != 0 && topology.parent(view->rank) == m.rank) gather().parent_joined();
}

}  // namespace zpmix::tree
