#pragma once
// Where `zpmix run`'s ranks run: the hosts (-H, --hostfile, the Slurm allocation, else this host)
// and their slots, the ranks mapped onto them as mpirun maps them (--np, --npernode, --map-by,
// --oversubscribe: the allocation), and for a job across nodes, each rank's node and the nodes
// of the brokers that run it (the spread). How the ranks then go onto a node's cores (--bind-to)
// is the launcher's placement on that node (actors/launcher/placement.hpp).
//
// Invariants and limits:
// - A job whose allocation is this host alone has no spread (no brokers): this node's broker
//   runs it alone. A job across nodes has one broker per node of the allocation, as mpirun has a
//   daemon on each, this node's first (the root of their tree): the jobs its ranks spawn may go
//   to any of them. On a standing tree (on_standing_tree), the tree's brokers, its nodes named as
//   the tree names them (the allocation's nodes outside the tree are left out).
// - "localhost" (and 127.0.0.1, this host's short or full name) is this host.
#include <cstdint>
#include <string>
#include <vector>

#include "actors/launcher/allocation.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "broker/cmd/run/options.hpp"

namespace zpmix::cli::run {

// A job across nodes: its nodes (those of the allocation with ranks) and each rank's, the
// allocation's other nodes, and the brokers' nodes (this one's first: the root).
struct Spread {
    std::vector<std::string> nodes;
    std::vector<std::uint32_t> node_of_rank;
    std::vector<std::string> brokers;
    std::vector<std::uint32_t> slots;      // by node: the allocation's (what spawned jobs may use)
    std::vector<std::string> spare_nodes;  // the allocation's nodes without ranks
    std::vector<std::uint32_t> spare_slots;  // and their slots
};

struct Layout {
    std::string hostname;  // this host's
    alloc::Allocation allocation;
    Spread spread;  // no brokers when the allocation is this host alone

    bool across() const { return !spread.brokers.empty(); }
    std::uint32_t np() const { return static_cast<std::uint32_t>(allocation.ranks.size()); }
    // Whether every node of the job is a host of the standing tree `b` is a member of; if so, the
    // job runs on that tree: its nodes named as the tree names them, its brokers the tree's (a
    // job on this host alone too).
    bool on_standing_tree(const RendezvousInfo &b);
    // The brokers (as the launch names them: 0 the root) of the ranks `stdin_target` names
    // (msg::Launch's: a rank, or msg::kStdinAll), ascending.
    std::vector<std::uint32_t> brokers_of(std::int64_t stdin_target) const;
};

// The job's layout, as mpirun would make it; an error when the hosts or the mapping are wrong.
alloc::Result<Layout> lay_out(const RunOptions &o);

// A warning on stderr when --bind-to binds more ranks on a node than it has cores (hardware
// threads with hwthread), as counted on this node's topology, unless :overload-allowed.
void warn_overloaded(const RunOptions &o, const Layout &layout);

// --report-bindings: each rank's binding, on stderr, as the launcher places it (the same
// Placement on this node's topology).
void report_bindings(const RunOptions &o, const std::string &map_by, std::uint32_t n,
                     const std::string &hostname);

}  // namespace zpmix::cli::run
