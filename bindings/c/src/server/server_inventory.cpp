// PMIx_server_collect_inventory: what this node has, for a host that gathers its nodes'
// inventories (a scheduler's view): the node's name (PMIX_HOSTNAME, as the broker names it) and
// its hwloc topology as XML (OpenPMIx's PMIX_HWLOC_XML_V2, "pmix.hwlocxml2"), which any node's
// hwloc reads back. No fabric: zpmix has none to report. Read on the caller's thread; the
// callback runs on the broker's, as every server call's does. The inventory's other half,
// PMIx_server_deliver_inventory, is PMIX_ERR_NOT_SUPPORTED (not_supported.c): it feeds a library's
// scheduling and fabric planning, which zpmix's does not do.
#include <cstdlib>
#include <memory>
#include <string>

#include <hwloc.h>

#include "pmix.h"
#include "pmix_server.h"
#include "server/server_core.hpp"

using namespace zpmix;
using namespace zpmix::server;

namespace {

constexpr const char *kHwlocXmlV2 = "pmix.hwlocxml2";  // PMIX_HWLOC_XML_V2 of OpenPMIx's header

// This machine's topology as hwloc's v2 XML; empty when hwloc cannot read it.
std::string topology_xml() {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return {};
    std::string out;
    if (hwloc_topology_load(topo) == 0) {
        char *xml = nullptr;
        int len = 0;
        if (hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) == 0 && xml) {
            out.assign(xml, len > 0 ? static_cast<std::size_t>(len - 1) : 0);  // len counts the NUL
            hwloc_free_xmlbuffer(topo, xml);
        }
    }
    hwloc_topology_destroy(topo);
    return out;
}

struct Inventory {
    pmix_info_t info[2];
    std::size_t ninfo = 0;
    ~Inventory() {
        for (std::size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    }
};

void release_inventory(void *cbdata) {
    delete static_cast<Inventory *>(cbdata);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)directives;
    (void)ndirs;
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    const std::string xml = topology_xml();
    if (xml.empty()) return PMIX_ERR_NOT_AVAILABLE;  // hwloc cannot read this machine
    auto *inv = new Inventory;
    PMIX_INFO_LOAD(&inv->info[inv->ninfo++], PMIX_HOSTNAME, c->broker->node().c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&inv->info[inv->ninfo++], kHwlocXmlV2, xml.c_str(), PMIX_STRING);
    c->broker->reactor().post([inv, cbfunc, cbdata] {
        cbfunc(PMIX_SUCCESS, inv->info, inv->ninfo, cbdata, release_inventory, inv);
    });
    return PMIX_SUCCESS;
}

}  // extern "C"
