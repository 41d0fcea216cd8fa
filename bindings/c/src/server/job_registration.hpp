#pragma once
// What a host registers of a namespace (PMIx_server_register_nspace's info array), as the
// broker's job information: the nodes (PMIX_NODE_MAP), each rank's node (PMIX_PROC_MAP), each
// rank's placement (PMIX_PROC_DATA, or computed: local and node ranks in node order), sizes and
// directories; and every key zpmix has no field for, kept as the host gave it for the clients'
// Gets (JobInfo.job_infos and proc_infos). The maps are PMIx_generate_regex/_ppn's (maps.hpp).
//
// Node-level arrays (PMIX_NODE_INFO_ARRAY, naming their node by PMIX_HOSTNAME or PMIX_NODEID):
// this node's (`this_node`) keys become job-level keys of its clients; another node's are kept by
// its name (JobInfo.node_infos) for Gets that name the node.
//
// The debugger's stops (PMIX_DEBUG_STOP_IN_INIT, PMIX_DEBUG_STOP_IN_APP, job-level or in app 0's
// array) are read as PMIx_Spawn reads them: every rank or none; chosen ranks are refused
// (`unsupported`). PMIX_DEBUG_STOP_ON_EXEC is the host's to do (it starts the processes): a key.
//
// Limits: app-level arrays (PMIX_APP_INFO_ARRAY) are read for the app numbers, their keys kept
// job-level for app 0.
#include <string>

#include "actors/protocol/job.hpp"
#include "pmix_common.h"

namespace zpmix::server {

struct JobRegistration {
    msg::JobInfo job;
    bool no_data = false;      // PMIX_REGISTER_NODATA: the host's own namespace, nothing in it
    std::string error;         // why the info array cannot be a job; empty when it can
    bool unsupported = false;  // the error is a directive zpmix does not support
};

JobRegistration job_from_infos(const std::string &nspace, int nlocalprocs, const pmix_info_t info[],
                               std::size_t ninfo, const std::string &this_node);

}  // namespace zpmix::server
