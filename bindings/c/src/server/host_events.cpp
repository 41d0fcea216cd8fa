// The host's register_events and deregister_events upcalls: handlers for environment events.
// As OpenPMIx does, a hosted client's handler that asks for environment events
// (PMIX_EVENT_ENVIRO_LEVEL) is registered once the host agreed (the host is where such events
// come from: it delivers them with PMIx_Notify_event); without the upcall the registration is
// PMIX_ERR_NOT_SUPPORTED. The host hears of each code once while any handler of the node wants
// it (a handler for every code: no codes), and through deregister_events when none does any
// more: the last handler deregistered, or its client ended.
#include <algorithm>
#include <memory>
#include <vector>

#include "pmix.h"
#include "server/completions.hpp"
#include "server/host_module.hpp"

namespace zpmix::server {

namespace {

std::vector<std::int32_t> wanted_codes(const std::vector<std::int32_t> &codes) {
    if (codes.empty()) return {HostModule::kAllCodes};
    std::vector<std::int32_t> out = codes;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The codes as the upcalls take them: none for every code.
std::shared_ptr<std::vector<pmix_status_t>> upcall_codes(const std::vector<std::int32_t> &codes) {
    auto out = std::make_shared<std::vector<pmix_status_t>>();
    for (std::int32_t c : codes)
        if (c != HostModule::kAllCodes) out->push_back(c);
    return out;
}

}  // namespace

void HostModule::register_events(const Envelope &env, msg::HostRegisterEvents &m) {
    const std::uint64_t id = env.id;
    // Not a client the host registered (the host's own process): nothing to ask.
    if (!clients_.contains(m.proc)) return send("events", msg::Ok{}, id);
    if (!module_.register_events)
        return send("events",
                    msg::ErrorReply{PMIX_ERR_NOT_SUPPORTED,
                                    "the resource manager delivers no environment events (no "
                                    "register_events upcall)"},
                    id);
    const std::vector<std::int32_t> wanted = wanted_codes(m.codes);
    std::vector<std::int32_t> fresh;
    for (std::int32_t c : wanted)
        if (event_codes_[c]++ == 0) fresh.push_back(c);
    client_event_codes_[m.proc].push_back(wanted);
    if (fresh.empty()) return send("events", msg::Ok{}, id);

    const msg::Proc proc = m.proc;
    auto codes = upcall_codes(fresh);
    auto undo = [this, proc, wanted] {
        for (std::int32_t c : wanted)
            if (auto it = event_codes_.find(c); it != event_codes_.end() && --it->second == 0)
                event_codes_.erase(it);
        if (auto it = client_event_codes_.find(proc); it != client_event_codes_.end()) {
            auto &handlers = it->second;
            if (auto h = std::find(handlers.begin(), handlers.end(), wanted); h != handlers.end())
                handlers.erase(h);
            if (handlers.empty()) client_event_codes_.erase(it);
        }
    };
    auto answer = [this, id, undo](pmix_status_t status) {
        if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
            return send("events", msg::Ok{}, id);
        undo();
        send("events", msg::ErrorReply{status, "the resource manager refused the handler's codes"},
             id);
    };
    auto timer = std::make_shared<Reactor::TimerId>(0);
    void *cbdata =
        expect(reactor(), [this, answer, timer, codes](pmix_status_t status, std::string) {
            reactor().cancel(*timer);
            answer(status);
        });
    *timer = reactor().after(kUpcallTimeout, [this, cbdata, answer] {
        if (!give_up(cbdata)) return;
        log().warn("the host's register_events upcall did not call back in time");
        answer(PMIX_ERR_TIMEOUT);
    });
    const pmix_status_t rc = module_.register_events(codes->empty() ? nullptr : codes->data(),
                                                     codes->size(), nullptr, 0, op_done, cbdata);
    if (rc == PMIX_SUCCESS || !give_up(cbdata)) return;  // its callback answers
    reactor().cancel(*timer);
    if (rc != PMIX_OPERATION_SUCCEEDED)
        log().info("the host's register_events failed: {}", PMIx_Error_string(rc));
    answer(rc);
}

void HostModule::deregister_events(const Envelope &, msg::HostDeregisterEvents &m) {
    auto it = client_event_codes_.find(m.proc);
    if (it == client_event_codes_.end()) return;
    const std::vector<std::int32_t> wanted = wanted_codes(m.codes);
    auto &handlers = it->second;
    auto h = std::find(handlers.begin(), handlers.end(), wanted);
    if (h == handlers.end()) return;  // a registration the host refused, or never saw
    handlers.erase(h);
    if (handlers.empty()) client_event_codes_.erase(it);
    drop_event_codes(wanted);
}

void HostModule::forget_event_codes(const msg::Proc &proc) {
    auto node = client_event_codes_.extract(proc);
    if (!node) return;
    for (const auto &codes : node.mapped()) drop_event_codes(codes);
}

void HostModule::drop_event_codes(const std::vector<std::int32_t> &codes) {
    std::vector<std::int32_t> gone;
    for (std::int32_t c : codes)
        if (auto it = event_codes_.find(c); it != event_codes_.end() && --it->second == 0) {
            event_codes_.erase(it);
            gone.push_back(c);
        }
    if (gone.empty() || !module_.deregister_events) return;
    auto lent = upcall_codes(gone);
    // Nobody waits for it: the codes live until the host called back (or never does).
    void *cbdata = expect(reactor(), [lent](pmix_status_t, std::string) {});
    const pmix_status_t rc = module_.deregister_events(lent->empty() ? nullptr : lent->data(),
                                                       lent->size(), op_done, cbdata);
    if (rc != PMIX_SUCCESS && give_up(cbdata) && rc != PMIX_OPERATION_SUCCEEDED)
        log().info("the host's deregister_events refused: {}", PMIx_Error_string(rc));
}

}  // namespace zpmix::server
