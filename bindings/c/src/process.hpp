#pragma once
// The process's one PMIx state, whatever its role: what PMIx_Init (client_api.cpp) or
// PMIx_tool_init (tool_api.cpp) made of this process, and the session every other API call of the
// C binding sends through. Never destroyed: a program may exit without PMIx_Finalize while the
// progress thread runs, and static destructors must not race it.
//
// Locks: `init_mu` orders PMIx_Init and PMIx_Finalize (the client role; the tool role has its own,
// tool_api.cpp); `mu` guards the attached session, and a call holds it only while it submits or
// takes a reference, never while it waits. `me` is written once, before the session is attached
// (with_client reads it after seeing the session), and read freely once `initialized`.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "client/events/local_event.hpp"  // to_msg
#include "client/node_fence.hpp"
#include "client/session.hpp"
#include "client/store.hpp"
#include "pmix_common.h"

namespace zpmix::c {

struct Process {
    // The client role: PMIx_Init and PMIx_Finalize.
    std::mutex init_mu;
    int refs = 0;
    std::atomic<bool> initialized{false};
    std::uint32_t job_size = 1;
    std::uint64_t max_message = 0;  // the broker's; 0: not told
    bool stop_in_init = false;      // PMIX_DEBUG_STOP_IN_INIT: wait for the debugger at init
    bool hosted = false;            // a host's client: connect and disconnect go to its upcalls
    // The server library's host itself (init_as): its Gets of other processes' data are answered
    // from what its broker holds, never waited for, as a PMIx server answers its own Gets. A host
    // calls PMIx_Get from the thread that serves its upcalls (ORTE's direct_modex first looks
    // whether the data is in): a Get waiting on the host's own direct_modex would never end.
    bool server_host = false;
    std::unique_ptr<client::ClientStore> store;
    std::unique_ptr<client::Session> session;       // the client's own
    std::unique_ptr<client::NodeFence> node_fence;  // a job on one node: its fence board
    std::mutex seq_mu;
    std::unordered_map<std::string, std::uint64_t> fence_seq;  // participant set -> next fence id
    std::uint32_t held_seq = 0;  // the next held collective on the fence board (client_group.cpp)

    // Whichever role: who this process is, and the session the API's requests go through (the
    // client's own, or the tool's server; null before init and after finalize).
    pmix_proc_t me{};
    std::mutex mu;
    client::Session *attached = nullptr;
};

Process &process();

// The library's diagnostics go to stderr: spdlog's own default logger writes to stdout, which is
// the application's output (a job's results, a pipe). A process that set a logger of its own
// keeps it. Called first by PMIx_Init, PMIx_tool_init and PMIx_server_init; once per process.
void log_to_stderr();

// The server library's, while it runs in this process: PMIx_Notify_event of the host publishes
// through its broker with the source the host names (a host relays its other nodes' events), and
// `done` follows. Set by PMIx_server_init, cleared by PMIx_server_finalize.
using HostNotify = std::function<void(msg::Event event, bool do_not_cache,
                                      std::function<void(pmix_status_t)> done)>;
void set_host_notify(HostNotify fn);
HostNotify host_notify();

// PMIx_Init for a process that is told who it is instead of reading its environment: the server
// library's host, a client of the broker it embeds (client_api.cpp). PMIx_Finalize undoes it.
pmix_status_t init_as(const std::string &uri, const std::string &nspace, std::uint32_t rank,
                      const std::string &secret);

// After a successful PMIx_Init or PMIx_tool_init (`me` set), and before the session goes.
void attach(client::Session &session);
void detach();

using client::to_msg;

// The caller, as attached (empty before init).
inline msg::Proc attached_proc() {
    Process &p = process();
    std::lock_guard lock(p.mu);
    return p.attached ? to_msg(p.me) : msg::Proc{};
}

// Runs fn(session, me) under the lock: PMIX_ERR_INIT when the library is not initialised, and
// with `need_broker`, PMIX_ERR_UNREACH for a singleton (no broker to ask).
template <class Fn>
pmix_status_t with_client(bool need_broker, Fn fn) {
    Process &p = process();
    std::lock_guard lock(p.mu);
    if (!p.attached) return PMIX_ERR_INIT;
    if (need_broker && !p.attached->has_broker()) return PMIX_ERR_UNREACH;
    fn(*p.attached, p.me);
    return PMIX_SUCCESS;
}

// Sends a request; done(status, reply) runs on the progress thread. The refusals of with_client.
template <class Msg>
pmix_status_t submit(const Msg &m, std::uint32_t timeout_ms, client::Session::Done done) {
    return with_client(true, [&](client::Session &session, const pmix_proc_t &) {
        session.request(m, timeout_ms, std::move(done));
    });
}

// The blocking form: sends a request and waits for its answer on this thread (the session's
// call); the status of the exchange, or the refusals of with_client.
template <class Msg>
pmix_status_t ask(const Msg &m, std::uint32_t timeout_ms, client::Session::Reply &reply) {
    client::Session *session = nullptr;
    if (pmix_status_t rc =
            with_client(true, [&](client::Session &s, const pmix_proc_t &) { session = &s; });
        rc != PMIX_SUCCESS)
        return rc;
    reply = session->call(m, timeout_ms);
    return reply.status;
}

// The node's topology as hwloc v2 XML, through the file dir/topology.xml that the broker or the
// first process of the node that asks writes (actors/topology/node_topology.hpp).
// PMIX_ERR_NOT_FOUND when it can be neither read nor made.
pmix_status_t shared_topology_xml(const std::string &dir, std::string &xml);

}  // namespace zpmix::c
