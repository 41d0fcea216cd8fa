#pragma once
// What PMIx_server_init started (the broker in the host's process, its `host` actor), shared by
// the server API's calls (server_api.cpp, server_support.cpp) while PMIx_server_finalize takes it
// away; and how a call runs on the broker's thread.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "actors/protocol/common.hpp"
#include "broker/broker.hpp"
#include "pmix_common.h"
#include "server/host_module.hpp"
#include "server/resources.hpp"

namespace zpmix::server {

struct Core {
    std::unique_ptr<Broker> broker;
    HostModule *host = nullptr;
    std::string uri;
    std::string own_nspace;  // the host process's own (PMIX_SERVER_NSPACE)
    int write_timeout_ms = 30000, group_timeout_ms = 300000;
    Resources resources;  // PMIx_server_register_resources, _deliver_inventory
};

struct ServerLibrary {
    std::mutex mu;  // the fields; never held while waiting for the broker
    int refs = 0;
    std::shared_ptr<Core> core;
    std::map<std::string, std::string> secrets;  // by namespace, for setup_fork
};

ServerLibrary &state();
// The running server's core; null before PMIx_server_init and after PMIx_server_finalize.
std::shared_ptr<Core> core();
// Runs fn on the broker's thread and waits for it; at once when called from there (an upcall
// calling back). False when the broker did not take it in time (it is stopping).
bool on_broker(Core &c, std::function<void()> fn);
// Completes a registration call: the callback (on the broker's thread), or, without one, the
// status to return (PMIX_OPERATION_SUCCEEDED when done).
pmix_status_t finish(Core &c, std::function<void()> work, pmix_op_cbfunc_t cbfunc, void *cbdata);
msg::Proc proc_of(const pmix_proc_t &p);

}  // namespace zpmix::server
