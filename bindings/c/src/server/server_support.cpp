// The server API's calls that need no host upcall: process sets the host defines, and the
// cpuset and locality strings a host registers for its clients (the forms zpmix's own launcher
// registers and PMIx_Parse_cpuset_string / PMIx_Get_relative_locality read back).
#include <cstdlib>
#include <cstring>
#include <string>

#include <hwloc.h>

#include "actors/launcher/placement.hpp"
#include "actors/protocol/pset.hpp"
#include "pmix.h"
#include "pmix_server.h"
#include "server/server_core.hpp"

using namespace zpmix;
using namespace zpmix::server;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string) {
    if (cpuset == nullptr || cpuset_string == nullptr) return PMIX_ERR_BAD_PARAM;
    if (cpuset->source == nullptr || std::strcmp(cpuset->source, "hwloc") != 0 ||
        cpuset->bitmap == nullptr)
        return PMIX_ERR_NOT_SUPPORTED;  // only hwloc's bitmaps are known here
    char *list = nullptr;
    if (hwloc_bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(cpuset->bitmap)) < 0)
        return PMIX_ERR_NOMEM;
    const std::string out = std::string("hwloc:") + list;
    std::free(list);
    *cpuset_string = strdup(out.c_str());
    return *cpuset_string ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality) {
    if (cpuset == nullptr || locality == nullptr) return PMIX_ERR_BAD_PARAM;
    if (cpuset->source == nullptr || std::strcmp(cpuset->source, "hwloc") != 0 ||
        cpuset->bitmap == nullptr)
        return PMIX_ERR_NOT_SUPPORTED;
    try {
        Placement placement;
        (void)placement.topology();
        *locality = strdup(
            placement.locality_of(static_cast<hwloc_const_bitmap_t>(cpuset->bitmap)).c_str());
    } catch (const std::exception &) {
        return PMIX_ERR_NOT_AVAILABLE;  // hwloc cannot read this machine
    }
    return *locality ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

// A set the host defines: every process here (and the set's members) see it, as a set an
// operator defines with `zpmix ctl pset define`.
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members,
                                                         size_t nmembers, const char *pset_name) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (members == nullptr || nmembers == 0 || pset_name == nullptr || pset_name[0] == '\0')
        return PMIX_ERR_BAD_PARAM;
    msg::PsetDefine m{pset_name, {}};
    for (size_t i = 0; i < nmembers; ++i) m.members.push_back(proc_of(members[i]));
    HostModule *host = c->host;
    return on_broker(*c, [host, m = std::move(m)] { host->tell("pset", m); }) ? PMIX_SUCCESS
                                                                              : PMIX_ERR_TIMEOUT;
}

PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name) {
    auto c = core();
    if (!c) return PMIX_ERR_INIT;
    if (pset_name == nullptr || pset_name[0] == '\0') return PMIX_ERR_BAD_PARAM;
    HostModule *host = c->host;
    const std::string name = pset_name;
    return on_broker(*c, [host, name] { host->tell("pset", msg::PsetDelete{name}); })
               ? PMIX_SUCCESS
               : PMIX_ERR_TIMEOUT;
}

}  // extern "C"
