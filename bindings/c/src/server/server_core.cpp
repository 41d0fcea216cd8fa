#include "server/server_core.hpp"

#include <chrono>
#include <cstring>
#include <future>

namespace zpmix::server {

namespace {
// How long a call waits for the broker's thread to take it.
constexpr auto kBrokerWait = std::chrono::seconds(30);
}  // namespace

ServerLibrary &state() {
    static ServerLibrary *s =
        new ServerLibrary;  // never destroyed: hosts may call us from exit handlers
    return *s;
}

std::shared_ptr<Core> core() {
    ServerLibrary &s = state();
    std::lock_guard lock(s.mu);
    return s.core;
}

bool on_broker(Core &c, std::function<void()> fn) {
    Reactor &r = c.broker->reactor();
    if (r.on_reactor_thread()) {
        fn();
        return true;
    }
    auto done = std::make_shared<std::promise<void>>();
    auto f = done->get_future();
    r.post([fn = std::move(fn), done] {
        fn();
        done->set_value();
    });
    return f.wait_for(kBrokerWait) == std::future_status::ready;
}

pmix_status_t finish(Core &c, std::function<void()> work, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc) {
        c.broker->reactor().post([work = std::move(work), cbfunc, cbdata] {
            work();
            cbfunc(PMIX_SUCCESS, cbdata);
        });
        return PMIX_SUCCESS;
    }
    return on_broker(c, std::move(work)) ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_TIMEOUT;
}

msg::Proc proc_of(const pmix_proc_t &p) {
    return {std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
}

}  // namespace zpmix::server
