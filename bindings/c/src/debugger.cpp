// zpmix: a rank stopped for its debugger (PMIX_DEBUG_STOP_IN_INIT) in PMIx_Init. It registers a
// handler for PMIX_DEBUGGER_RELEASE (and for the loss of its broker), then tells its launcher it
// waits (msg::StoppedInInit: once every rank of the job does, the debugger hears
// PMIX_READY_FOR_DEBUG), then waits. The release comes as an event targeted at the job, so a
// release sent before the handler was registered is replayed from the broker's cache. The wait has
// no deadline, as a debugger takes its time: it ends with the release, the broker's loss, or the
// rank itself (job control and the job's end kill a stopped rank as any other).
#include "debugger.hpp"

#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include <spdlog/spdlog.h>

#include "actors/protocol/job.hpp"
#include "pmix.h"
#include "process.hpp"

namespace zpmix::c {

namespace {

// How long the launcher may take to acknowledge that the rank waits.
constexpr std::uint32_t kStoppedAckTimeoutMs = 10000;

struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<pmix_status_t> outcome;
};

Waiter &waiter() {
    static Waiter *w = new Waiter;  // never destroyed: a handler may run during exit
    return *w;
}

void on_event(size_t, pmix_status_t status, const pmix_proc_t *, pmix_info_t[], size_t,
              pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    Waiter &w = waiter();
    {
        std::lock_guard lock(w.mu);
        if (!w.outcome) w.outcome = status;
    }
    w.cv.notify_all();
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

std::optional<bool> stops_every_rank(const pmix_value_t &v) {
    switch (v.type) {
        case PMIX_BOOL:
            return v.data.flag;
        case PMIX_PROC_RANK:
            if (v.data.rank == PMIX_RANK_WILDCARD) return true;
            return std::nullopt;
        case PMIX_PROC:
            if (v.data.proc != nullptr && v.data.proc->rank == PMIX_RANK_WILDCARD) return true;
            return std::nullopt;
        default:
            return std::nullopt;
    }
}

pmix_status_t wait_for_debugger(const pmix_proc_t &me) {
    pmix_status_t codes[] = {PMIX_DEBUGGER_RELEASE, PMIX_ERR_LOST_CONNECTION};
    const pmix_status_t id =
        PMIx_Register_event_handler(codes, 2, nullptr, 0, on_event, nullptr, nullptr);
    if (id < 0) return id;
    client::Session::Reply reply;
    pmix_status_t rc = ask(msg::StoppedInInit{to_msg(me)}, kStoppedAckTimeoutMs, reply);
    if (rc == PMIX_SUCCESS) {
        spdlog::info("pmix client: {}:{} (pid {}) waits in PMIx_Init for its debugger", me.nspace,
                     me.rank, ::getpid());
        Waiter &w = waiter();
        std::unique_lock lock(w.mu);
        w.cv.wait(lock, [&] { return w.outcome.has_value(); });
        rc = *w.outcome == PMIX_DEBUGGER_RELEASE ? PMIX_SUCCESS : *w.outcome;
    }
    (void)PMIx_Deregister_event_handler(static_cast<size_t>(id), nullptr, nullptr);
    if (rc != PMIX_SUCCESS)
        spdlog::error("pmix client: PMIx_Init: waiting for the debugger failed: {}",
                      PMIx_Error_string(rc));
    return rc;
}

}  // namespace zpmix::c
