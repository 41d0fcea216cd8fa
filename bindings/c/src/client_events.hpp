#pragma once
// The client library's event notification (client_events.cpp), as client_api.cpp starts it.
#include <functional>
#include <string>

#include "actors/protocol/job.hpp"
#include "client/events/client_events.hpp"
#include "client/session.hpp"
#include "pmix_common.h"

namespace zpmix::c {

// After a successful PMIx_Init (events_uri empty for a singleton), and before the session goes.
// Connects to the broker's event publisher; fails when it cannot. `tool`: PMIx_tool_init's (its
// notifications are not bound by a client's rules, event_rights.hpp).
pmix_status_t events_start(client::Session &session, const pmix_proc_t &me, const msg::JobInfo &job,
                           const std::string &events_uri, const std::string &broker,
                           bool tool = false);
void events_stop();
// PMIx_Init with PMIX_PROGRAMMING_MODEL: PMIX_MODEL_DECLARED to this process's handlers.
void events_model_declared(const pmix_info_t info[], size_t ninfo);
// This process now follows its events for the library's own bookkeeping (a group's membership,
// client_group.hpp), whether or not it registered a handler (client::ClientEvents::follow).
// Without `then`, returns once it does (10 s at most; from the progress thread, at once); with
// it, returns at once and calls `then` (on the progress thread) once it does.
void events_follow(std::function<void()> then = {});

}  // namespace zpmix::c
