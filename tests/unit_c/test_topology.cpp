// Unit tests of the node's hardware as PMIx gives it (bindings/c/src/client_topology.cpp):
// PMIx_Load_topology, PMIx_Get_cpuset, PMIx_Get_relative_locality over the launcher's locality
// strings, PMIx_Compute_distances.
#define BOOST_TEST_MODULE pmix_topology
#include <boost/test/unit_test.hpp>

#include <hwloc.h>
#include <sched.h>

#include <string>
#include <vector>

#include <pmix.h>

#include "actors/launcher/placement.hpp"

// As the standard has it (and OpenPMIx does): one read-only description, the library's, which
// callers never destruct; one that does anyway (as zpmix's earlier releases asked) only lets go
// of it. A source the caller named stays the caller's.
BOOST_AUTO_TEST_CASE(load_topology_is_the_librarys_own_description) {
    pmix_topology_t a, b;
    PMIX_TOPOLOGY_CONSTRUCT(&a);
    PMIX_TOPOLOGY_CONSTRUCT(&b);
    BOOST_REQUIRE_EQUAL(PMIx_Load_topology(&a), PMIX_SUCCESS);
    BOOST_REQUIRE_EQUAL(PMIx_Load_topology(&b), PMIX_SUCCESS);
    BOOST_TEST(std::string(a.source).rfind("hwloc", 0) == 0u);
    BOOST_REQUIRE(a.topology != nullptr);
    BOOST_TEST(a.topology == b.topology);
    const int pus =
        hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(a.topology), HWLOC_OBJ_PU);
    BOOST_TEST(pus >= 1);
    PMIX_TOPOLOGY_DESTRUCT(&a);  // lets go of it: b's is still there
    BOOST_TEST(a.topology == nullptr);
    BOOST_TEST(hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(b.topology), HWLOC_OBJ_PU) ==
               pus);

    pmix_topology_t named;
    PMIX_TOPOLOGY_CONSTRUCT(&named);
    char hwloc[] = "hwloc";  // the caller's (on its stack: freeing it would crash)
    named.source = hwloc;
    BOOST_REQUIRE_EQUAL(PMIx_Load_topology(&named), PMIX_SUCCESS);
    BOOST_TEST(named.source == hwloc);
    BOOST_TEST(named.topology == b.topology);

    pmix_topology_t other;
    PMIX_TOPOLOGY_CONSTRUCT(&other);
    other.source = strdup("another-library");
    BOOST_TEST(PMIx_Load_topology(&other) == PMIX_ERR_NOT_SUPPORTED);
    PMIX_TOPOLOGY_DESTRUCT(&other);
}

BOOST_AUTO_TEST_CASE(get_cpuset_reports_the_binding) {
    cpu_set_t saved, one;
    BOOST_REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
    int first = 0;
    while (!CPU_ISSET(first, &saved)) ++first;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    BOOST_REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    pmix_cpuset_t set;
    PMIX_CPUSET_CONSTRUCT(&set);
    BOOST_REQUIRE_EQUAL(PMIx_Get_cpuset(&set, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    BOOST_TEST(std::string(set.source) == "hwloc");
    auto bitmap = static_cast<hwloc_bitmap_t>(set.bitmap);
    BOOST_TEST(hwloc_bitmap_weight(bitmap) == 1);
    BOOST_TEST(hwloc_bitmap_isset(bitmap, static_cast<unsigned>(first)));
    PMIx_Cpuset_destruct(&set);
    sched_setaffinity(0, sizeof saved, &saved);
    BOOST_TEST(PMIx_Get_cpuset(&set, 7) == PMIX_ERR_BAD_PARAM);
}

BOOST_AUTO_TEST_CASE(relative_locality_reads_the_launchers_strings) {
    pmix_locality_t loc = 0;
    const char *a = "NM0:SK0:L3s0:L2s0:L1s0:CRs0:HTs0-1";
    const char *b = "NM0:SK0:L3s0:L2s1:L1s1:CRs1:HTs2-3";
    const char *c = "NM1:SK1:L3s1:L2s4:L1s4:CRs4:HTs8";
    BOOST_REQUIRE_EQUAL(PMIx_Get_relative_locality(a, b, &loc), PMIX_SUCCESS);
    BOOST_TEST(loc == (PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_NUMA |
                       PMIX_LOCALITY_SHARE_PACKAGE | PMIX_LOCALITY_SHARE_L3CACHE));
    BOOST_REQUIRE_EQUAL(PMIx_Get_relative_locality(a, a, &loc), PMIX_SUCCESS);
    BOOST_TEST(loc == (PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_NUMA |
                       PMIX_LOCALITY_SHARE_PACKAGE | PMIX_LOCALITY_SHARE_L3CACHE |
                       PMIX_LOCALITY_SHARE_L2CACHE | PMIX_LOCALITY_SHARE_L1CACHE |
                       PMIX_LOCALITY_SHARE_CORE | PMIX_LOCALITY_SHARE_HWTHREAD));
    BOOST_REQUIRE_EQUAL(PMIx_Get_relative_locality(a, c, &loc), PMIX_SUCCESS);
    BOOST_TEST(loc == PMIX_LOCALITY_SHARE_NODE);
    BOOST_TEST(PMIx_Get_relative_locality(a, nullptr, &loc) == PMIX_ERR_BAD_PARAM);

    // what the launcher gives two ranks bound to cores of this machine
    zpmix::Placement p;
    std::vector<zpmix::Placement::Rank> ranks;
    BOOST_REQUIRE(p.place("core", "core", 2, ranks).empty());
    if (ranks[0].locality.empty()) return;  // hwloc sees no core here: nothing is bound
    BOOST_TEST(ranks[0].locality.find("NM") == 0u, ranks[0].locality);
    BOOST_REQUIRE_EQUAL(
        PMIx_Get_relative_locality(ranks[0].locality.c_str(), ranks[0].locality.c_str(), &loc),
        PMIX_SUCCESS);
    BOOST_TEST((loc & PMIX_LOCALITY_SHARE_CORE) != 0);
    BOOST_REQUIRE_EQUAL(
        PMIx_Get_relative_locality(ranks[0].locality.c_str(), ranks[1].locality.c_str(), &loc),
        PMIX_SUCCESS);
    BOOST_TEST((loc & PMIX_LOCALITY_SHARE_NODE) != 0);
    if (ranks[0].cpuset != ranks[1].cpuset) BOOST_TEST((loc & PMIX_LOCALITY_SHARE_CORE) == 0);
}

BOOST_AUTO_TEST_CASE(distances_to_the_nodes_devices) {
    pmix_topology_t topo;
    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    BOOST_REQUIRE_EQUAL(PMIx_Load_topology(&topo), PMIX_SUCCESS);
    pmix_cpuset_t set;
    PMIX_CPUSET_CONSTRUCT(&set);
    BOOST_REQUIRE_EQUAL(PMIx_Get_cpuset(&set, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    auto t = static_cast<hwloc_topology_t>(topo.topology);
    int devices = 0;
    for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_osdev(t, d));) ++devices;

    pmix_device_distance_t *dist = nullptr;
    size_t n = 0;
    const pmix_status_t rc = PMIx_Compute_distances(&topo, &set, nullptr, 0, &dist, &n);
    if (devices == 0) {
        BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);
    } else {
        BOOST_REQUIRE_EQUAL(rc, PMIX_SUCCESS);
        BOOST_TEST(n == static_cast<size_t>(devices));
        for (size_t i = 0; i < n; ++i) {
            BOOST_TEST(dist[i].osname != nullptr);
            BOOST_TEST(dist[i].mindist <= dist[i].maxdist);
        }
        PMIX_DEVICE_DIST_FREE(dist, n);
        // a type the node has none of
        pmix_info_t only;
        pmix_device_type_t coproc = PMIX_DEVTYPE_COPROC;
        PMIX_INFO_LOAD(&only, PMIX_DEVICE_TYPE, &coproc, PMIX_DEVTYPE);
        bool has_coproc = false;
        for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_osdev(t, d));)
            has_coproc |= d->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
        if (!has_coproc)
            BOOST_TEST(PMIx_Compute_distances(&topo, &set, &only, 1, &dist, &n) ==
                       PMIX_ERR_NOT_FOUND);
        PMIX_INFO_DESTRUCT(&only);
    }
    pmix_cpuset_t foreign;
    PMIX_CPUSET_CONSTRUCT(&foreign);
    foreign.source = strdup("another-library");
    BOOST_TEST(PMIx_Compute_distances(&topo, &foreign, nullptr, 0, &dist, &n) ==
               PMIX_ERR_NOT_SUPPORTED);
    PMIx_Cpuset_destruct(&foreign);
    PMIx_Cpuset_destruct(&set);
    PMIX_TOPOLOGY_DESTRUCT(&topo);
}
