// What a host tells the library of its nodes, and what the library tells of this one.
// PMIx_server_collect_inventory: this node's inventory, for a host that gathers its nodes' (a
// scheduler's view): the node's name (PMIX_HOSTNAME, as the broker names it) and its hwloc
// topology as XML (OpenPMIx's PMIX_HWLOC_XML_V2, "pmix.hwlocxml2"), which any node's hwloc reads
// back. No fabric: zpmix has none to report. PMIx_server_deliver_inventory keeps another node's
// inventory as that node's information, and PMIx_server_register_resources /
// _deregister_resources the host's resources that belong to no namespace (resources.hpp): every
// namespace registered afterwards carries them, and its clients read another node's with a Get
// that names the node (PMIX_HOSTNAME or PMIX_NODEID). Read on the caller's thread; a callback runs
// on the broker's, as every server call's does.
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

// What the library keeps of the host's infos is copied before the call returns, so the host may
// release them at once; the callback (or PMIX_OPERATION_SUCCEEDED without one) says it is done.
pmix_status_t kept(const std::shared_ptr<Core> &c, pmix_status_t rc, pmix_op_cbfunc_t cbfunc,
                   void *cbdata) {
    if (rc != PMIX_SUCCESS) return rc;
    return finish(
        *c, [] {}, cbfunc, cbdata);
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

PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)directives;  // none is defined that changes where an inventory is kept
    (void)ndirs;
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    return kept(c, c->resources.add_inventory(info, ninfo), cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    return kept(c, c->resources.add(info, ninfo), cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    return kept(c, c->resources.remove(info, ninfo), cbfunc, cbdata);
}

}  // extern "C"
