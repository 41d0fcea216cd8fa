#pragma once
// PMIX_DEBUG_STOP_IN_INIT on the rank's side (debugger.cpp).
#include "pmix_common.h"

namespace zpmix::c {

// Called by PMIx_Init, once initialised, when the job was started with PMIX_DEBUG_STOP_IN_INIT:
// returns once PMIX_DEBUGGER_RELEASE came for this rank (PMIX_SUCCESS), or with the loss of the
// broker (PMIX_ERR_LOST_CONNECTION) or a refusal of the launcher.
pmix_status_t wait_for_debugger(const pmix_proc_t &me);

}  // namespace zpmix::c
