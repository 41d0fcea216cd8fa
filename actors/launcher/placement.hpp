#pragma once
// Where a job's ranks run on this node: rank i goes on core (i mod ncores), and bind-to says
// which cpuset it is held to: none, that core, its package (socket), its NUMA node, or one
// hardware thread of it (hwthread: the core's first for the first ncores ranks, its second for the
// next, ...). Owns the hwloc topology, loaded on the first placement that binds. More ranks than
// cores share cores (rank ncores is where rank 0 is: overloaded() says so); a machine where hwloc
// sees no core leaves every rank unbound.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hwloc.h>

namespace zpmix {

class Placement {
  public:
    struct FreeBitmap {
        void operator()(hwloc_bitmap_t b) const { hwloc_bitmap_free(b); }
    };
    using Bitmap = std::unique_ptr<hwloc_bitmap_s, FreeBitmap>;
    // One rank's place; all empty (set null) when it is not bound.
    struct Rank {
        Bitmap set;
        std::string cpuset;    // the set as an hwloc list ("0-1,4")
        std::string locality;  // the objects it touches per level ("SK0:L3s0:...:HTs0")
    };

    Placement() = default;
    // On a synthetic topology instead of this machine's (hwloc's description, "pack:2 core:2
    // pu:2"): what places ranks on nodes unlike this one, for tests. Throws when hwloc refuses it.
    explicit Placement(const std::string &synthetic);
    Placement(const Placement &) = delete;
    Placement &operator=(const Placement &) = delete;
    ~Placement();

    // The bindings place() knows.
    static bool binds_to(const std::string &bind_to);
    // Places n ranks with the plan's map_by ("slot" or "core") and bind_to ("none", "core",
    // "package", "socket" (the same), "numa" or "hwthread") into ranks (resized to n). Returns an
    // error for an unknown map_by or bind_to. Throws when hwloc cannot load the topology.
    std::string place(const std::string &map_by, const std::string &bind_to, std::uint32_t n,
                      std::vector<Rank> &ranks);
    // Whether binding n ranks with bind_to overloads this node (more ranks bound than its cores,
    // or hardware threads with hwthread, as mpirun counts them): what it has ("2 cores"), or
    // empty. Throws as place.
    std::string overloaded(const std::string &bind_to, std::uint32_t n);
    // The loaded topology (for binding a thread to a placed set); loads it if needed.
    hwloc_topology_t topology();
    // The PMIx locality string of a cpuset ("NM0:SK0:L3s0:L2s1:L1s1:CRs1:HTs2-3"), read back by
    // PMIx_Get_relative_locality. The topology must be loaded.
    std::string locality_of(hwloc_const_bitmap_t set) const;

  private:
    hwloc_topology_t topo_ = nullptr;

    hwloc_obj_t target_of(const std::string &bind_to, hwloc_obj_t core, std::uint32_t round);
};

}  // namespace zpmix
