#pragma once
// PMIX_DEBUG_STOP_IN_INIT on the rank's side (debugger.cpp), and how a stop directive reads.
#include <optional>

#include "pmix_common.h"

namespace zpmix::c {

// Called by PMIx_Init, once initialised, when the job was started with PMIX_DEBUG_STOP_IN_INIT:
// returns once PMIX_DEBUGGER_RELEASE came for this rank (PMIX_SUCCESS), or with the loss of the
// broker (PMIX_ERR_LOST_CONNECTION) or a refusal of the launcher.
pmix_status_t wait_for_debugger(const pmix_proc_t &me);

// The value of a stop directive (PMIX_DEBUG_STOP_IN_INIT, _STOP_IN_APP, _STOP_ON_EXEC), whose type
// varies: true, or every rank (a wildcard rank or proc), gives true; false gives false; chosen
// ranks (a rank, a proc, an array of them) give nullopt: not supported, every rank stops or none.
// PMIx_Spawn's directives and a host's PMIx_server_register_nspace read them alike.
std::optional<bool> stops_every_rank(const pmix_value_t &v);

}  // namespace zpmix::c
