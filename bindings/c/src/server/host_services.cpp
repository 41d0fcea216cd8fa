#include "server/host_services.hpp"

#include <cstring>

#include <spdlog/spdlog.h>

#include "client/values/value_codec.hpp"
#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"

namespace zpmix::server {

LentInfos::~LentInfos() {
    for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
}

void LentInfos::add_string(const char *key, const std::string &value) {
    info.emplace_back();
    PMIX_INFO_LOAD(&info.back(), key, value.c_str(), PMIX_STRING);
}

Results::~Results() {
    if (info) PMIX_INFO_FREE(info, ninfo);
}

HostServices::HostServices(Reactor &reactor, Bus &bus, const pmix_server_module_t &module)
    : Actor("hostsvc", reactor, bus), module_(module) {
    on(&HostServices::tool_connected, Access::internal);
    on(&HostServices::iof_pull, Access::internal);
    on(&HostServices::push_stdin, Access::internal);
    on(&HostServices::allocate, Access::session | Access::operator_);
    on(&HostServices::job_control, Access::internal);
    on(&HostServices::monitor, Access::internal);
    on(&HostServices::query, Access::internal);
    on(&HostServices::log_request, Access::internal);
}

std::chrono::milliseconds HostServices::wait_for(std::uint32_t timeout_ms) {
    using namespace std::chrono_literals;
    return timeout_ms > 0
               ? std::chrono::milliseconds(timeout_ms) + 1s
               : std::chrono::duration_cast<std::chrono::milliseconds>(HostModule::kUpcallTimeout);
}

void *HostServices::expect_infos(const std::string &what, std::chrono::milliseconds wait, Then then,
                                 std::shared_ptr<void> keep) {
    // The timer and the callback each end the wait; whichever comes second finds it over.
    auto timer = std::make_shared<Reactor::TimerId>(0);
    auto shared_then = std::make_shared<Then>(std::move(then));
    void *cbdata = expect(
        reactor(), [this, timer, shared_then, keep, what](pmix_status_t status, std::string data) {
            reactor().cancel(*timer);
            Results r;
            if (!data.empty() &&
                c::decode_infos(data.data(), data.size(), &r.info, &r.ninfo) != PMIX_SUCCESS) {
                log().error("the host's {} results do not decode", what);
                if (status == PMIX_SUCCESS) status = PMIX_ERR_UNPACK_FAILURE;
            }
            (*shared_then)(status, r);
        });
    *timer = reactor().after(wait, [this, cbdata, shared_then, what] {
        if (!give_up(cbdata)) return;
        log().warn("the host's {} upcall did not call back in time", what);
        (*shared_then)(PMIX_ERR_TIMEOUT, Results{});
    });
    return cbdata;
}

void *HostServices::expect_op(const std::string &what, std::chrono::milliseconds wait,
                              std::function<void(pmix_status_t)> then, std::shared_ptr<void> keep) {
    auto timer = std::make_shared<Reactor::TimerId>(0);
    auto shared_then = std::make_shared<std::function<void(pmix_status_t)>>(std::move(then));
    void *cbdata =
        expect(reactor(), [this, timer, shared_then, keep](pmix_status_t status, std::string) {
            reactor().cancel(*timer);
            (*shared_then)(status);
        });
    *timer = reactor().after(wait, [this, cbdata, shared_then, what] {
        if (!give_up(cbdata)) return;
        log().warn("the host's {} upcall did not call back in time", what);
        (*shared_then)(PMIX_ERR_TIMEOUT);
    });
    return cbdata;
}

void HostServices::returned(pmix_status_t rc, void *cbdata,
                            const std::function<void(pmix_status_t)> &now) {
    if (rc == PMIX_SUCCESS) return;  // its callback answers
    if (!give_up(cbdata)) return;    // it called back already
    now(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
}

}  // namespace zpmix::server
