#include "process.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace zpmix::c {

void log_to_stderr() {
    static std::once_flag once;
    std::call_once(once, [] {
        const auto current = spdlog::default_logger();
        const auto &sinks = current->sinks();
        const bool spdlogs_own =
            current->name().empty() && sinks.size() == 1 &&
            dynamic_cast<spdlog::sinks::stdout_color_sink_mt *>(sinks.front().get()) != nullptr;
        if (!spdlogs_own) return;
        auto logger = std::make_shared<spdlog::logger>(
            "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        logger->set_level(current->level());
        logger->flush_on(current->flush_level());
        spdlog::set_default_logger(std::move(logger));
    });
}

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
