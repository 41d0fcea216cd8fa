#pragma once
// Topology: the brokers of an allocation as a k-ary tree, numbered 0..size-1 in breadth-first
// order (a heap: the children of r are r*radix+1 .. r*radix+radix). Broker 0 is the root, beside
// `zpmix run`. Radix 1 is a chain. Pure arithmetic: which node a participant's host maps to is
// the caller's business.
#include <cstdint>
#include <optional>
#include <vector>

namespace zpmix::tree {

using Rank = std::uint32_t;

class Topology {
  public:
    // Throws std::invalid_argument when size or radix is 0.
    Topology(Rank size, Rank radix);

    Rank size() const { return size_; }
    Rank radix() const { return radix_; }
    // None for the root. `rank` < size() for these and every function below.
    std::optional<Rank> parent(Rank rank) const;
    // Ascending.
    std::vector<Rank> children(Rank rank) const;
    // Edges from the root (the root's is 0).
    Rank depth(Rank rank) const;
    // The greatest depth of any broker.
    Rank height() const { return depth(size_ - 1); }
    // `rank` and every broker under it, ascending.
    std::vector<Rank> subtree(Rank rank) const;
    // The child of `rank` whose subtree holds `below` (a broker under `rank`, not `rank`); none
    // when `below` is not under `rank`.
    std::optional<Rank> child_toward(Rank rank, Rank below) const;

  private:
    Rank size_;
    Rank radix_;
};

}  // namespace zpmix::tree
