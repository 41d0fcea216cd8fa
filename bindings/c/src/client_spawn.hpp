#pragma once
// The client library's PMIx_Spawn and PMIx_Spawn_nb (client_spawn.cpp), as client_api.cpp
// starts and stops it.
#include "actors/client/client_actor.hpp"
#include "pmix_common.h"

namespace zpmix::c {

// After a successful PMIx_Init, and before the actor goes.
void spawn_start(client::ClientActor &actor, const pmix_proc_t &me);
void spawn_stop();

}  // namespace zpmix::c
