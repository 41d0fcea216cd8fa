#include "actors/launcher/placement.hpp"

#include <cstdlib>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace zpmix {

namespace {

std::string list_string(hwloc_const_bitmap_t set) {
    char *s = nullptr;
    hwloc_bitmap_list_asprintf(&s, set);
    std::string out = s ? s : "";
    std::free(s);
    return out;
}

}  // namespace

Placement::Placement(const std::string &synthetic) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc: cannot init a topology");
    if (hwloc_topology_set_synthetic(t, synthetic.c_str()) != 0 || hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        throw std::runtime_error("hwloc: cannot load the synthetic topology '" + synthetic + "'");
    }
    topo_ = t;
}

Placement::~Placement() {
    if (topo_) hwloc_topology_destroy(topo_);
}

// Loading costs a few ms (hwloc opens its plugins and reads /sys): only jobs that bind need it.
hwloc_topology_t Placement::topology() {
    if (topo_) return topo_;
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc: cannot init a topology");
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        throw std::runtime_error("hwloc: cannot load topology");
    }
    return topo_ = t;
}

std::string Placement::locality_of(hwloc_const_bitmap_t set) const {
    // One field per level: the logical indexes of the objects the cpuset touches (read back by
    // PMIx_Get_relative_locality, bindings/c/src/client_topology.cpp).
    static constexpr std::pair<hwloc_obj_type_t, const char *> levels[] = {
        {HWLOC_OBJ_NUMANODE, "NM"}, {HWLOC_OBJ_PACKAGE, "SK"},  {HWLOC_OBJ_L3CACHE, "L3s"},
        {HWLOC_OBJ_L2CACHE, "L2s"}, {HWLOC_OBJ_L1CACHE, "L1s"}, {HWLOC_OBJ_CORE, "CRs"},
        {HWLOC_OBJ_PU, "HTs"}};
    std::string out;
    hwloc_bitmap_t idx = hwloc_bitmap_alloc();
    for (const auto &[type, prefix] : levels) {
        const int n = hwloc_get_nbobjs_by_type(topo_, type);
        if (n <= 0) continue;
        hwloc_bitmap_zero(idx);
        for (int i = 0; i < n; ++i) {
            hwloc_obj_t o = hwloc_get_obj_by_type(topo_, type, static_cast<unsigned>(i));
            if (hwloc_bitmap_intersects(o->cpuset, set)) hwloc_bitmap_set(idx, o->logical_index);
        }
        if (!out.empty()) out += ':';
        out += prefix + list_string(idx);
    }
    hwloc_bitmap_free(idx);
    return out;
}

bool Placement::binds_to(const std::string &bind_to) {
    return bind_to == "none" || bind_to == "core" || bind_to == "package" || bind_to == "socket" ||
           bind_to == "numa" || bind_to == "hwthread";
}

// The object rank i (on core `core`, the (i / ncores)-th time round) is bound to.
hwloc_obj_t Placement::target_of(const std::string &bind_to, hwloc_obj_t core,
                                 std::uint32_t round) {
    if (bind_to == "package" || bind_to == "socket") {
        hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, core);
        return package ? package : hwloc_get_root_obj(topo_);
    }
    if (bind_to == "numa") {
        // NUMA nodes hang beside the CPU objects (hwloc 2): the one whose CPUs hold the core's.
        for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, nullptr);
             numa; numa = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, numa))
            if (hwloc_bitmap_isincluded(core->cpuset, numa->cpuset)) return numa;
        return hwloc_get_root_obj(topo_);
    }
    if (bind_to == "hwthread") {
        const int threads =
            hwloc_get_nbobjs_inside_cpuset_by_type(topo_, core->cpuset, HWLOC_OBJ_PU);
        if (threads <= 0) return core;
        return hwloc_get_obj_inside_cpuset_by_type(topo_, core->cpuset, HWLOC_OBJ_PU,
                                                   round % static_cast<unsigned>(threads));
    }
    return core;
}

// Map-by slot and core coincide on one node with a slot per core.
std::string Placement::place(const std::string &map_by, const std::string &bind_to, std::uint32_t n,
                             std::vector<Rank> &ranks) {
    if (map_by != "slot" && map_by != "core") return "unknown --map-by '" + map_by + "'";
    if (!binds_to(bind_to)) return "unknown --bind-to '" + bind_to + "'";
    ranks.clear();
    ranks.resize(n);
    const int ncores = bind_to == "none" ? 0 : hwloc_get_nbobjs_by_type(topology(), HWLOC_OBJ_CORE);
    if (ncores <= 0) return {};
    const auto cores = static_cast<unsigned>(ncores);
    for (std::uint32_t i = 0; i < n; ++i) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_CORE, i % cores);
        hwloc_obj_t target = target_of(bind_to, core, i / cores);
        Rank &r = ranks[i];
        r.set.reset(hwloc_bitmap_dup(target->cpuset));
        r.cpuset = list_string(r.set.get());
        r.locality = locality_of(r.set.get());
    }
    return {};
}

std::string Placement::overloaded(const std::string &bind_to, std::uint32_t n) {
    if (bind_to == "none" || !binds_to(bind_to)) return {};
    const bool threads = bind_to == "hwthread";
    const int cpus = hwloc_get_nbobjs_by_type(topology(), threads ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE);
    if (cpus <= 0 || n <= static_cast<std::uint32_t>(cpus)) return {};
    return fmt::format("{} {}", cpus, threads ? "hardware threads" : "cores");
}

}  // namespace zpmix
