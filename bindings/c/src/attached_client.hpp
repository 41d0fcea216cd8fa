#pragma once
// The client session that PMIx_Init attached and the caller's identity, for the API files that
// send requests of their own (client_jobctl.cpp, client_spawn.cpp). PMIx_Finalize detaches it; a
// call holds the lock only while it submits, never while it waits.
#include <mutex>
#include <string>

#include "client/events/local_event.hpp"  // to_msg
#include "client/session.hpp"
#include "pmix_common.h"

namespace zpmix::c {

// After a successful PMIx_Init, and before the session goes.
void attach(client::Session &session, const pmix_proc_t &me);
void detach();

namespace detail {
extern std::mutex attached_mu;
extern client::Session *attached_session;
extern pmix_proc_t attached_me;
}  // namespace detail

using client::to_msg;

// The caller, as attached (empty before PMIx_Init).
inline msg::Proc attached_proc() {
    std::lock_guard lock(detail::attached_mu);
    return to_msg(detail::attached_me);
}

// Runs fn(session, me) under the lock: PMIX_ERR_INIT when the library is not initialised, and
// with `need_broker`, PMIX_ERR_UNREACH for a singleton (no broker to ask).
template <class Fn>
pmix_status_t with_client(bool need_broker, Fn fn) {
    std::lock_guard lock(detail::attached_mu);
    if (!detail::attached_session) return PMIX_ERR_INIT;
    if (need_broker && !detail::attached_session->has_broker()) return PMIX_ERR_UNREACH;
    fn(*detail::attached_session, detail::attached_me);
    return PMIX_SUCCESS;
}

// Sends a request; done(status, reply) runs on the progress thread. The refusals of with_client.
template <class Msg>
pmix_status_t submit(const Msg &m, std::uint32_t timeout_ms, client::Session::Done done) {
    return with_client(true, [&](client::Session &session, const pmix_proc_t &) {
        session.request(m, timeout_ms, std::move(done));
    });
}

// The blocking form: sends a request and waits for its answer on this thread (the session's call);
// the status of the exchange, or the refusals of with_client.
template <class Msg>
pmix_status_t ask(const Msg &m, std::uint32_t timeout_ms, client::Session::Reply &reply) {
    client::Session *session = nullptr;
    if (pmix_status_t rc =
            with_client(true, [&](client::Session &a, const pmix_proc_t &) { session = &a; });
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
