#pragma once
// The client library's job control, process monitoring and logging (client_jobctl.cpp), as
// client_api.cpp starts and stops it.
#include "actors/client/client_actor.hpp"
#include "pmix_common.h"

namespace zpmix::c {

// After a successful PMIx_Init, and before the actor goes.
void jobctl_start(client::ClientActor &actor, const pmix_proc_t &me);
void jobctl_stop();

}  // namespace zpmix::c
