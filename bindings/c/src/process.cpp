#include "process.hpp"

namespace zpmix::c {

Process &process() {
    static Process *p = new Process;  // never destroyed: see process.hpp
    return *p;
}

void attach(client::Session &session) {
    Process &p = process();
    std::lock_guard lock(p.mu);
    p.attached = &session;
}

void detach() {
    Process &p = process();
    std::lock_guard lock(p.mu);
    p.attached = nullptr;
}

namespace {
std::mutex host_notify_mu;
HostNotify host_notify_fn;
}  // namespace

void set_host_notify(HostNotify fn) {
    std::lock_guard lock(host_notify_mu);
    host_notify_fn = std::move(fn);
}

HostNotify host_notify() {
    std::lock_guard lock(host_notify_mu);
    return host_notify_fn;
}

}  // namespace zpmix::c
