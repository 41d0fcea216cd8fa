#include "actors/tree/topology.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zpmix::tree {

namespace {
void check(Rank rank, Rank size) {
    if (rank >= size)
        throw std::out_of_range("broker rank " + std::to_string(rank) + " outside a tree of " +
                                std::to_string(size));
}
}  // namespace

Topology::Topology(Rank size, Rank radix) : size_(size), radix_(radix) {
    if (size == 0 || radix == 0)
        throw std::invalid_argument("a broker tree needs at least one broker and a radix of 1+");
}

std::optional<Rank> Topology::parent(Rank rank) const {
    check(rank, size_);
    if (rank == 0) return std::nullopt;
    return (rank - 1) / radix_;
}

std::vector<Rank> Topology::children(Rank rank) const {
    check(rank, size_);
    std::vector<Rank> out;
    // 64 bits: rank * radix may not fit in a Rank.
    const std::uint64_t first = std::uint64_t{rank} * radix_ + 1;
    for (std::uint64_t c = first; c < first + radix_ && c < size_; ++c)
        out.push_back(static_cast<Rank>(c));
    return out;
}

Rank Topology::depth(Rank rank) const {
    check(rank, size_);
    Rank d = 0;
    for (; rank != 0; rank = (rank - 1) / radix_) ++d;
    return d;
}

std::vector<Rank> Topology::subtree(Rank rank) const {
    check(rank, size_);
    // Level by level the subtree is one run of consecutive ranks: [lo, hi] -> the children of
    // lo up to the last child of hi (hi clipped to the tree, so that nothing overflows).
    std::vector<Rank> out;
    const std::uint64_t last = size_ - 1;
    for (std::uint64_t lo = rank, hi = rank; lo < size_;
         lo = lo * radix_ + 1, hi = std::min(hi * radix_ + radix_, last))
        for (std::uint64_t r = lo; r <= hi && r < size_; ++r) out.push_back(static_cast<Rank>(r));
    return out;
}

std::optional<Rank> Topology::child_toward(Rank rank, Rank below) const {
    check(rank, size_);
    check(below, size_);
    while (below > rank) {
        const Rank up = (below - 1) / radix_;
        if (up == rank) return below;
        below = up;
    }
    return std::nullopt;
}

}  // namespace zpmix::tree
