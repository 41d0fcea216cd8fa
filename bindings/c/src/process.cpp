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

}  // namespace zpmix::c
