// zpmix: the node's hardware as PMIx gives it to a process (hwloc): PMIx_Load_topology,
// PMIx_Get_cpuset, PMIx_Get_relative_locality, PMIx_Compute_distances(_nb).
//
// The topology is hwloc's of this node, with its important I/O devices (network, OpenFabrics,
// GPUs ... for the distances), loaded once per process (a few ms: hwloc reads /sys). As the
// standard and OpenPMIx have it, PMIx_Load_topology hands out that one description, read-only and
// the library's; its source is a static string unless the caller named one (which stays the
// caller's). A caller that destructs it anyway (PMIX_TOPOLOGY_DESTRUCT) only lets go of it.
//
// Locality strings are what the launcher gives each bound rank (PMIX_LOCALITY_STRING,
// actors/launcher/placement.cpp): one field per level, a prefix then hwloc's list of the logical
// indexes the rank's cpuset touches ("NM0:SK0:L3s0:L2s0-1:L1s0-1:CRs0-1:HTs0-3"). Two ranks share
// a level when their fields for it intersect.
//
// The node's topology as hwloc's XML (PMIX_HWLOC_XML_V2, which Open MPI loads instead of
// discovering the node itself) is shared through <job's PMIX_TMPDIR>/topology.xml
// (actors/topology/node_topology.hpp), which the broker writes as an Open MPI job starts.
//
// A device's distance from a cpuset is counted in hwloc's tree: from each PU of the cpuset up to
// the lowest object it shares with the device's locality (its first non-I/O ancestor), then down
// to that locality; mindist and maxdist are the least and the most over the cpuset's PUs.
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "actors/topology/node_topology.hpp"
#include "client/values/pmix_objects.hpp"
#include "pmix.h"
#include "process.hpp"

namespace {

// The node's topology, loaded on first use; null when hwloc cannot load it.
hwloc_topology_t node_topology() {
    static std::once_flag once;
    static hwloc_topology_t topo = nullptr;
    std::call_once(once, [] { topo = zpmix::load_node_topology(); });
    return topo;
}

bool is_hwloc(const char *source) {
    return source != nullptr && std::strncmp(source, "hwloc", 5) == 0;
}

struct Level {
    std::string_view prefix;
    pmix_locality_t share;
};
constexpr Level kLevels[] = {
    {"NM", PMIX_LOCALITY_SHARE_NUMA},     {"SK", PMIX_LOCALITY_SHARE_PACKAGE},
    {"L3s", PMIX_LOCALITY_SHARE_L3CACHE}, {"L2s", PMIX_LOCALITY_SHARE_L2CACHE},
    {"L1s", PMIX_LOCALITY_SHARE_L1CACHE}, {"CRs", PMIX_LOCALITY_SHARE_CORE},
    {"HTs", PMIX_LOCALITY_SHARE_HWTHREAD}};

// The index list after `prefix` in a locality string; empty when it has no such field.
std::string field(std::string_view locality, std::string_view prefix) {
    for (std::size_t from = 0; from <= locality.size();) {
        std::size_t end = locality.find(':', from);
        if (end == std::string_view::npos) end = locality.size();
        std::string_view f = locality.substr(from, end - from);
        // the prefix, then the list, which starts with a digit
        if (f.size() > prefix.size() && f.substr(0, prefix.size()) == prefix &&
            (f[prefix.size()] >= '0' && f[prefix.size()] <= '9'))
            return std::string(f.substr(prefix.size()));
        from = end + 1;
    }
    return {};
}

pmix_device_type_t device_type(hwloc_obj_t o) {
    switch (o->attr->osdev.type) {
        case HWLOC_OBJ_OSDEV_BLOCK:
            return PMIX_DEVTYPE_BLOCK;
        case HWLOC_OBJ_OSDEV_GPU:
            return PMIX_DEVTYPE_GPU;
        case HWLOC_OBJ_OSDEV_NETWORK:
            return PMIX_DEVTYPE_NETWORK;
        case HWLOC_OBJ_OSDEV_OPENFABRICS:
            return PMIX_DEVTYPE_OPENFABRICS;
        case HWLOC_OBJ_OSDEV_DMA:
            return PMIX_DEVTYPE_DMA;
        case HWLOC_OBJ_OSDEV_COPROC:
            return PMIX_DEVTYPE_COPROC;
    }
    return PMIX_DEVTYPE_UNKNOWN;
}

// Hops between `pu` and `place` through their lowest common ancestor.
unsigned hops(hwloc_topology_t topo, hwloc_obj_t pu, hwloc_obj_t place) {
    hwloc_obj_t common = hwloc_get_common_ancestor_obj(topo, pu, place);
    return static_cast<unsigned>((pu->depth - common->depth) + (place->depth - common->depth));
}

pmix_status_t distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset, const pmix_info_t info[],
                        size_t ninfo, pmix_device_distance_t **out, size_t *nout) {
    *out = nullptr;
    *nout = 0;
    if (topo == nullptr || cpuset == nullptr) return PMIX_ERR_BAD_PARAM;
    if (!is_hwloc(topo->source) || topo->topology == nullptr || !is_hwloc(cpuset->source) ||
        cpuset->bitmap == nullptr)
        return PMIX_ERR_NOT_SUPPORTED;
    pmix_device_type_t wanted = ~pmix_device_type_t{0};
    for (size_t i = 0; info && i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_DEVICE_TYPE) && info[i].value.type == PMIX_DEVTYPE)
            wanted = info[i].value.data.devtype;
    auto t = static_cast<hwloc_topology_t>(topo->topology);
    auto set = static_cast<hwloc_const_bitmap_t>(cpuset->bitmap);
    std::vector<hwloc_obj_t> pus;
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu));)
        if (hwloc_bitmap_isset(set, pu->os_index)) pus.push_back(pu);
    if (pus.empty()) return PMIX_ERR_BAD_PARAM;  // a cpuset of no PU of this topology

    std::vector<pmix_device_distance_t> found;
    for (hwloc_obj_t dev = nullptr; (dev = hwloc_get_next_osdev(t, dev));) {
        const pmix_device_type_t type = device_type(dev);
        if ((type & wanted) == 0) continue;
        hwloc_obj_t place = hwloc_get_non_io_ancestor_obj(t, dev);
        if (place == nullptr) continue;
        pmix_device_distance_t d;
        PMIX_DEVICE_DIST_CONSTRUCT(&d);
        const char *id = hwloc_obj_get_info_by_name(dev, "NodeGUID");
        if (id == nullptr) id = hwloc_obj_get_info_by_name(dev, "Address");
        d.uuid = strdup((std::string(id ? id : "osdev") + ":" + dev->name).c_str());
        d.osname = strdup(dev->name);
        d.type = type;
        d.mindist = UINT16_MAX;
        d.maxdist = 0;
        for (hwloc_obj_t pu : pus) {
            const auto h = static_cast<uint16_t>(std::min(hops(t, pu, place), 65535u));
            d.mindist = std::min(d.mindist, h);
            d.maxdist = std::max(d.maxdist, h);
        }
        found.push_back(d);
    }
    if (found.empty()) return PMIX_ERR_NOT_FOUND;
    PMIX_DEVICE_DIST_CREATE(*out, found.size());
    if (*out == nullptr) {
        for (auto &d : found) PMIX_DEVICE_DIST_DESTRUCT(&d);
        return PMIX_ERR_NOMEM;
    }
    std::memcpy(*out, found.data(), found.size() * sizeof(pmix_device_distance_t));
    *nout = found.size();
    return PMIX_SUCCESS;
}

// Reads a whole file; false if it cannot.
}  // namespace

namespace zpmix::c {

pmix_status_t shared_topology_xml(const std::string &dir, std::string &xml) {
    return zpmix::shared_topology_xml(dir, xml, node_topology) ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}

}  // namespace zpmix::c

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo) {
    if (topo == nullptr) return PMIX_ERR_BAD_PARAM;
    if (topo->source != nullptr && !is_hwloc(topo->source)) return PMIX_ERR_NOT_SUPPORTED;
    static char source[] = "hwloc " HWLOC_VERSION;
    hwloc_topology_t node = node_topology();
    if (node == nullptr) return PMIX_ERR_NOT_AVAILABLE;
    zpmix::c::set_shared_topology(node, source);
    if (topo->source == nullptr) topo->source = source;
    topo->topology = node;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref) {
    if (cpuset == nullptr || (ref != PMIX_CPUBIND_PROCESS && ref != PMIX_CPUBIND_THREAD))
        return PMIX_ERR_BAD_PARAM;
    hwloc_topology_t node = node_topology();
    if (node == nullptr) return PMIX_ERR_NOT_AVAILABLE;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == nullptr) return PMIX_ERR_NOMEM;
    const int flags = ref == PMIX_CPUBIND_THREAD ? HWLOC_CPUBIND_THREAD : HWLOC_CPUBIND_PROCESS;
    if (hwloc_get_cpubind(node, set, flags) != 0) {
        hwloc_bitmap_free(set);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    cpuset->source = strdup("hwloc");
    cpuset->bitmap = set;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                                     pmix_locality_t *locality) {
    if (locality1 == nullptr || locality2 == nullptr || locality == nullptr)
        return PMIX_ERR_BAD_PARAM;
    pmix_locality_t shared = PMIX_LOCALITY_SHARE_NODE;  // both strings describe this node
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    for (const Level &level : kLevels) {
        const std::string fa = field(locality1, level.prefix), fb = field(locality2, level.prefix);
        if (fa.empty() || fb.empty()) continue;
        if (hwloc_bitmap_list_sscanf(a, fa.c_str()) == 0 &&
            hwloc_bitmap_list_sscanf(b, fb.c_str()) == 0 && hwloc_bitmap_intersects(a, b))
            shared |= level.share;
    }
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
    *locality = shared;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t *distances_out[],
                                                 size_t *ndist) {
    if (distances_out == nullptr || ndist == nullptr) return PMIX_ERR_BAD_PARAM;
    return distances(topo, cpuset, info, ninfo, distances_out, ndist);
}

// Computed at once; the answer goes to cbfunc on the library's progress thread, as every _nb
// answer does.
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc,
                                                    void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_device_distance_t *d = nullptr;
    size_t n = 0;
    const pmix_status_t rc = distances(topo, cpuset, info, ninfo, &d, &n);
    if (rc == PMIX_ERR_BAD_PARAM || rc == PMIX_ERR_NOT_SUPPORTED) return rc;
    const pmix_status_t posted =
        zpmix::c::with_client(false, [&](zpmix::client::Session &session, const pmix_proc_t &) {
            session.post([rc, d, n, cbfunc, cbdata] {
                cbfunc(rc, d, n, cbdata, nullptr, nullptr);
                zpmix_array_free(PMIX_DEVICE_DIST, d, n);
            });
        });
    if (posted != PMIX_SUCCESS) zpmix_array_free(PMIX_DEVICE_DIST, d, n);
    return posted;
}

}  // extern "C"
