#include "attached_client.hpp"

namespace zpmix::c {

namespace detail {
std::mutex attached_mu;
client::ClientActor *attached_actor = nullptr;
pmix_proc_t attached_me{};
}  // namespace detail

void attach(client::ClientActor &actor, const pmix_proc_t &me) {
    std::lock_guard lock(detail::attached_mu);
    detail::attached_actor = &actor;
    detail::attached_me = me;
}

void detach() {
    std::lock_guard lock(detail::attached_mu);
    detail::attached_actor = nullptr;
}

}  // namespace zpmix::c
