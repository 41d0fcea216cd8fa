// zpmix: the event notification API (PMIx_Register_event_handler, PMIx_Deregister_event_handler,
// PMIx_Notify_event) over the process's ClientEvents.
#include "client_events.hpp"

#include <chrono>
#include <cstring>
#include <ctime>
#include <future>
#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>

#include "client/events/client_events.hpp"
#include "client_group.hpp"
#include "pmix.h"
#include "process.hpp"

namespace zpmix::c {

namespace {

using client::ClientEvents;
using client::EventHandler;
using client::LocalEvent;

// Guards `g_events` against a concurrent finalize; calls hold it only to take a reference.
std::mutex g_mu;
std::shared_ptr<ClientEvents> g_events;

std::shared_ptr<ClientEvents> events() {
    std::lock_guard lock(g_mu);
    return g_events;
}

}  // namespace

pmix_status_t events_start(client::Session &session, const pmix_proc_t &me, const msg::JobInfo &job,
                           const std::string &events_uri, const std::string &broker, bool tool) {
    std::shared_ptr<ClientEvents> ev;
    try {
        ev = std::make_shared<ClientEvents>(
            session, ClientEvents::Identity{client::to_msg(me), job, events_uri, broker, tool});
    } catch (const client::ZmtpError &e) {
        spdlog::error("pmix client: cannot subscribe to the broker's events: {}", e.what());
        return e.refused || e.denied() ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERR_UNREACH;
    }
    ev->observe({PMIX_GROUP_LEFT, PMIX_GROUP_MEMBERSHIP_UPDATE}, group_membership_changed);
    ev->after({PMIX_GROUP_LEADER_FAILED}, group_leader_failed);
    std::lock_guard lock(g_mu);
    g_events = std::move(ev);
    return PMIX_SUCCESS;
}

void events_follow(std::function<void()> then) {
    auto ev = events();
    if (!ev) {
        if (then) then();
        return;
    }
    if (then) return ev->follow(std::move(then));
    if (ev->on_progress_thread()) return ev->follow();
    auto followed = std::make_shared<std::promise<void>>();
    ev->follow([followed] { followed->set_value(); });
    followed->get_future().wait_for(std::chrono::seconds(10));
}

void events_stop() {
    std::shared_ptr<ClientEvents> ev;
    {
        std::lock_guard lock(g_mu);
        ev = std::move(g_events);  // from here every call (a handler's too) gets PMIX_ERR_INIT
    }
    if (!ev) return;
    // Closed here, on the finalizing thread, while the progress thread still runs: a handler
    // that took the object before finalize ran to its end first, so it never holds the last
    // reference of an open object (whose teardown would wait on the thread running it) nor
    // sees it freed under its caller. Another thread's call may still hold it: it frees it.
    ev->close();
}

void events_model_declared(const pmix_info_t info[], size_t ninfo) {
    auto ev = events();
    if (!ev) return;
    bool declared = false;
    for (size_t i = 0; i < ninfo; ++i)
        declared |= std::strncmp(info[i].key, PMIX_PROGRAMMING_MODEL, PMIX_MAX_KEYLEN) == 0;
    if (!declared) return;
    msg::Event wire;
    bool no_cache = false;
    // The declaration's attributes (model, library name, threading...) travel with the event.
    if (LocalEvent::to_wire(PMIX_MODEL_DECLARED, process().me, PMIX_RANGE_PROC_LOCAL, info, ninfo,
                            wire, no_cache) != PMIX_SUCCESS)
        return;
    // Only handlers registered for PMIX_MODEL_DECLARED get it: Open MPI's default handler
    // aborts on any event it is given.
    wire.non_default = true;
    ev->raise_local(std::move(wire));
}

}  // namespace zpmix::c

using namespace zpmix;
using namespace zpmix::c;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    auto ev = events();
    if (!ev) return PMIX_ERR_INIT;
    if (evhdlr == nullptr) return PMIX_ERR_BAD_PARAM;
    EventHandler h;
    if (pmix_status_t rc = EventHandler::parse(codes, ncodes, info, ninfo, h); rc != PMIX_SUCCESS)
        return rc;
    h.fn = evhdlr;
    if (cbfunc != nullptr) {
        ev->register_handler(std::move(h), [cbfunc, cbdata](pmix_status_t status, std::size_t id) {
            cbfunc(status, id, cbdata);
        });
        return PMIX_SUCCESS;
    }
    // Blocking: the id (>= 0) or an error. Not from a handler: it would wait on its own thread.
    if (ev->on_progress_thread()) return PMIX_ERR_WOULD_BLOCK;
    std::promise<std::pair<pmix_status_t, std::size_t>> done;
    ev->register_handler(std::move(h), [&done](pmix_status_t status, std::size_t id) {
        done.set_value({status, id});
    });
    auto [status, id] = done.get_future().get();
    return status == PMIX_SUCCESS ? static_cast<pmix_status_t>(id) : status;
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata) {
    auto ev = events();
    if (!ev) return PMIX_ERR_INIT;
    if (ev->on_progress_thread()) {
        // From a handler (deregistering itself): done at once.
        pmix_status_t result = PMIX_SUCCESS;
        ev->deregister(evhdlr_ref, [&result](pmix_status_t s) { result = s; });
        return result == PMIX_SUCCESS && cbfunc != nullptr ? PMIX_OPERATION_SUCCEEDED : result;
    }
    if (cbfunc != nullptr) {
        ev->deregister(evhdlr_ref, [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); });
        return PMIX_SUCCESS;
    }
    std::promise<pmix_status_t> done;
    ev->deregister(evhdlr_ref, [&done](pmix_status_t s) { done.set_value(s); });
    return done.get_future().get();
}

PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range, const pmix_info_t info[],
                                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    auto ev = events();
    if (!ev) return PMIX_ERR_INIT;
    if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
    if (range == PMIX_RANGE_UNDEF) range = PMIX_RANGE_SESSION;  // the standard's default range
    if (range > PMIX_RANGE_PROC_LOCAL) return PMIX_ERR_BAD_PARAM;
    msg::Event wire;
    bool no_cache = false;
    const pmix_proc_t me = process().me;  // written once, before init returned
    // A host (the server library in this process) relays other nodes' events with their source;
    // a client notifies as itself (a source naming another process would be a forgery).
    const auto host = host_notify();
    const pmix_proc_t &from = host && source ? *source : me;
    if (pmix_status_t rc = LocalEvent::to_wire(status, from, range, info, ninfo, wire, no_cache);
        rc != PMIX_SUCCESS)
        return rc;
    if (host) {
        if (wire.timestamp == 0) wire.timestamp = static_cast<std::int64_t>(std::time(nullptr));
        if (cbfunc == nullptr) {
            std::promise<pmix_status_t> done;
            auto f = done.get_future();
            host(std::move(wire), no_cache, [&done](pmix_status_t s) { done.set_value(s); });
            return f.get();
        }
        host(std::move(wire), no_cache, [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); });
        return PMIX_SUCCESS;
    }
    if (!expand_groups(wire.custom_range)) return PMIX_ERR_BAD_PARAM;  // a group: its members
    if (wire.timestamp == 0) wire.timestamp = static_cast<std::int64_t>(std::time(nullptr));
    if (cbfunc != nullptr) {
        ev->notify(std::move(wire), no_cache,
                   [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); });
        return PMIX_SUCCESS;
    }
    if (ev->on_progress_thread()) {  // from a handler: do not wait on our own thread
        ev->notify(std::move(wire), no_cache, [](pmix_status_t) {});
        return PMIX_SUCCESS;
    }
    std::promise<pmix_status_t> done;
    ev->notify(std::move(wire), no_cache, [&done](pmix_status_t s) { done.set_value(s); });
    return done.get_future().get();
}

}  // extern "C"
