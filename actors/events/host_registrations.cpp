// Handlers for environment events under a host (the server library): as OpenPMIx does, a hosted
// client's registration of one waits for the host's register_events upcall (the host is where
// such events come from), and fails with the host's status (PMIX_ERR_NOT_SUPPORTED without the
// upcall). The host actor keeps the node's count of each code and tells the host only of codes
// no handler wanted before, and through deregister_events of those no handler wants any more.
#include "actors/events/event_broker.hpp"
#include "actors/protocol/host.hpp"

namespace zpmix {

bool EventBroker::asks_host(const Envelope &env, msg::EventRegister &m) {
    if (!opts_.to_host || !m.enviro || !env.session || !env.session->is_client()) return false;
    const std::uint64_t id = next_host_request_++;
    send("host", msg::HostRegisterEvents{m.proc, m.codes}, id);
    awaiting_host_.emplace(id, PendingRegister{env, std::move(m), 0});
    return true;
}

void EventBroker::host_agreed(const Envelope &env, msg::Ok &) {
    auto node = awaiting_host_.extract(env.id);
    if (!node) return;
    subscribe_handler(node.mapped().req, node.mapped().body);
}

void EventBroker::host_refused(const Envelope &env, msg::ErrorReply &m) {
    auto node = awaiting_host_.extract(env.id);
    if (!node) return;
    log_peer(node.mapped().req, spdlog::level::info, "a handler for environment events refused: {}",
             m.message);
    reply_error(node.mapped().req, m.status, m.message);
}

void EventBroker::deregister_handler(const Envelope &env, msg::EventDeregister &m) {
    if (!opts_.to_host || !env.session || !env.session->is_client()) return;
    send("host", msg::HostDeregisterEvents{m.proc, m.codes});
}

}  // namespace zpmix
