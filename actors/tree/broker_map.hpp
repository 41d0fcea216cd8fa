#pragma once
// The allocation's brokers as this broker knows them: its own rank, and every broker's node (by
// rank) in the k-ary tree that joins them (actors/tree/topology.hpp). A broker alone is rank 0 of
// 1. Written once by the broker's tree link when the tree is up (before any job spans it), read by
// every actor that must tell where a process runs. Thread-safe, like NamespaceTable: readers take
// an immutable view. Addresses of other brokers' actors: actors/runtime/address.hpp.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime/address.hpp"

namespace zpmix {

struct BrokerView {
    std::uint32_t rank = 0;          // this broker's
    std::uint32_t radix = 2;         // of the tree
    std::vector<std::string> nodes;  // by broker rank: the node (host) each broker serves
    // A standing tree's (a site's service): its brokers join when they start, not all at once;
    // tree.joined and tree.lost tell who is up.
    bool standing = false;
    std::uint32_t size() const { return static_cast<std::uint32_t>(nodes.size()); }
    bool alone() const { return nodes.size() <= 1; }
    const std::string &node() const { return nodes[rank]; }
    // The broker serving `node`; none when no broker does.
    std::optional<std::uint32_t> broker_of(std::string_view node) const {
        for (std::uint32_t r = 0; r < nodes.size(); ++r)
            if (nodes[r] == node) return r;
        return std::nullopt;
    }
};

class BrokerMap {
  public:
    explicit BrokerMap(std::string node) {
        auto v = std::make_shared<BrokerView>();
        v->nodes.push_back(std::move(node));
        view_ = std::move(v);
    }
    std::shared_ptr<const BrokerView> view() const {
        std::lock_guard lock(mu_);
        return view_;
    }
    void set(BrokerView v) {
        auto p = std::make_shared<const BrokerView>(std::move(v));
        std::lock_guard lock(mu_);
        view_ = std::move(p);
    }

  private:
    mutable std::mutex mu_;
    std::shared_ptr<const BrokerView> view_;
};

}  // namespace zpmix
