#include "attached_client.hpp"

namespace zpmix::c {

namespace detail {
std::mutex attached_mu;
client::Session *attached_session = nullptr;
pmix_proc_t attached_me{};
}  // namespace detail

void attach(client::Session &session, const pmix_proc_t &me) {
    std::lock_guard lock(detail::attached_mu);
    detail::attached_session = &session;
    detail::attached_me = me;
}

void detach() {
    std::lock_guard lock(detail::attached_mu);
    detail::attached_session = nullptr;
}

}  // namespace zpmix::c
