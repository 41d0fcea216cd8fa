#include "actors/monitor/process_monitor.hpp"

#include <signal.h>

#include <pmix_common.h>

#include "actors/protocol/events.hpp"
#include "actors/protocol/host.hpp"
#include "actors/protocol/host_services.hpp"
#include "actors/runtime/unix_time.hpp"

namespace zpmix {

namespace {

std::string proc_name(const msg::Proc &p) {
    return p.nspace + ":" + std::to_string(p.rank);
}

// Whether a file's watched properties moved between two checks.
bool progressed(const struct stat &a, const struct stat &b, const msg::MonitorRequest &m) {
    auto same = [](const timespec &x, const timespec &y) {
        return x.tv_sec == y.tv_sec && x.tv_nsec == y.tv_nsec;
    };
    return (m.file_size && a.st_size != b.st_size) ||
           (m.file_access && !same(a.st_atim, b.st_atim)) ||
           (m.file_modify && !same(a.st_mtim, b.st_mtim));
}

}  // namespace

ProcessMonitor::ProcessMonitor(Reactor &reactor, Bus &bus, Settings settings)
    : Actor("monitor", reactor, bus), settings_(settings) {
    on(&ProcessMonitor::request, Access::session);
    on(&ProcessMonitor::beat, Access::session);
    on(&ProcessMonitor::proc_ended, Access::internal);
    on(&ProcessMonitor::namespace_ended, Access::internal);
    on(&ProcessMonitor::ok, Access::internal);
    on(&ProcessMonitor::error, Access::internal);
    on(&ProcessMonitor::signalled, Access::internal);
}

void ProcessMonitor::request(const Envelope &env, msg::MonitorRequest &m) {
    if (m.proc.nspace.empty() || m.proc.rank == msg::kWildcardRank)
        return reply_error(env, PMIX_ERR_BAD_PARAM, "a monitor watches one process");
    if (settings_.by_host) {
        const msg::Proc requester = env.session && env.session->is_client()
                                        ? msg::Proc{env.session->nspace, env.session->rank}
                                        : m.proc;
        return send("hostsvc", msg::HostMonitor{requester, std::move(m), env.from, env.id});
    }
    if (m.kind == "cancel") {
        auto it = procs_.find(m.proc);
        const bool found =
            it != procs_.end() &&
            std::any_of(it->second.monitors.begin(), it->second.monitors.end(),
                        [&](const Monitor &x) { return m.id.empty() || x.spec.id == m.id; });
        if (!found)
            return reply_error(env, PMIX_ERR_NOT_FOUND,
                               m.id.empty() ? "no monitor to cancel" : "no monitor '" + m.id + "'");
        drop(m.proc, m.id);
        log_peer(env, spdlog::level::info, "{} cancelled {}", proc_name(m.proc),
                 m.id.empty() ? "its monitors" : m.id);
        return reply(env, msg::Ok{});
    }
    if (m.kind != "heartbeat" && m.kind != "file")
        return reply_error(env, PMIX_ERR_NOT_SUPPORTED, "unknown monitor '" + m.kind + "'");
    if (m.time == 0) return reply_error(env, PMIX_ERR_BAD_PARAM, "a monitor needs a time > 0");
    if (m.drops == 0) m.drops = 1;
    if (m.kind == "file") {
        if (m.file.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "no file to monitor");
        if (!m.file_size && !m.file_access && !m.file_modify) m.file_size = true;
    }
    if (m.range == static_cast<std::uint8_t>(msg::Range::undef) ||
        m.range == static_cast<std::uint8_t>(msg::Range::custom) ||
        m.range > static_cast<std::uint8_t>(msg::Range::proc_local))
        m.range = static_cast<std::uint8_t>(msg::Range::nspace);
    Watched &w = procs_[m.proc];
    if (m.id.empty()) m.id = fmt::format("{}-{}", m.kind, next_id_++);
    for (const auto &x : w.monitors)
        if (x.spec.id == m.id)
            return reply_error(env, PMIX_ERR_BAD_PARAM, "monitor id '" + m.id + "' is in use");
    Monitor mon;
    mon.spec = m;
    mon.beats_seen = w.beats;
    if (m.kind == "file") mon.last_ok = ::stat(m.file.c_str(), &mon.last) == 0;
    const msg::Proc proc = m.proc;
    const std::string id = m.id;
    mon.timer =
        reactor().every(settings_.time_unit * m.time, [this, proc, id] { check(proc, id); });
    w.monitors.push_back(std::move(mon));
    log_peer(env, spdlog::level::info,
             "{} monitored: {} {} every {} x {} ms, {} drop(s), event {}{}", proc_name(proc),
             m.kind, m.kind == "file" ? m.file : id, m.time, settings_.time_unit.count(), m.drops,
             m.code, m.app_control ? ", application control" : "");
    reply(env, msg::Ok{});
}

void ProcessMonitor::beat(const Envelope &, msg::MonitorBeat &m) {
    auto it = procs_.find(m.proc);
    if (it != procs_.end()) ++it->second.beats;  // no monitor yet: nothing to count for
}

void ProcessMonitor::check(const msg::Proc &proc, const std::string &id) {
    auto it = procs_.find(proc);
    if (it == procs_.end()) return;
    for (auto &mon : it->second.monitors) {
        if (mon.spec.id != id) continue;
        bool alive;
        if (mon.spec.kind == "heartbeat") {
            alive = it->second.beats != mon.beats_seen;
            mon.beats_seen = it->second.beats;
        } else {
            struct stat now {};
            const bool ok = ::stat(mon.spec.file.c_str(), &now) == 0;
            alive = ok && (!mon.last_ok || progressed(mon.last, now, mon.spec));
            if (ok) mon.last = now;
            mon.last_ok = ok;
        }
        if (alive) {
            if (mon.tripped) log().info("{}: {} is progressing again", proc_name(proc), id);
            mon.misses = 0;
            mon.tripped = false;
        } else if (++mon.misses >= mon.spec.drops && !mon.tripped) {
            mon.tripped = true;
            trip(proc, mon);
        }
        return;
    }
}

void ProcessMonitor::trip(const msg::Proc &proc, const Monitor &mon) {
    const auto &m = mon.spec;
    const bool terminate = settings_.terminate && !m.app_control;
    log().warn("{}: monitor {} tripped ({} missed {}){}", proc_name(proc), m.id, m.drops,
               m.kind == "heartbeat" ? "heartbeat(s)" : "check(s) of " + m.file,
               terminate ? ": terminating it" : "");
    msg::NotifyEvent n;
    n.event.status = m.code;
    n.event.source = proc;
    n.event.range = m.range;
    n.event.affected = {proc};
    n.event.text = fmt::format("{} {} stalled: monitor {} missed {} {}", proc_name(proc),
                               m.kind == "heartbeat" ? "heartbeat" : "file " + m.file, m.id,
                               m.drops, m.kind == "heartbeat" ? "beat(s)" : "check(s)");
    n.event.timestamp = unix_time_s();
    n.do_not_cache = true;
    // The monitored process hears it too, whatever the range reaches.
    const auto range = static_cast<msg::Range>(m.range);
    if (range == msg::Range::rm || range == msg::Range::proc_local) {
        msg::NotifyEvent self = n;
        self.event.range = static_cast<std::uint8_t>(msg::Range::custom);
        self.event.custom_range = {proc};
        send("events", self, next_id_++);
    }
    if (range != msg::Range::proc_local) send("events", n, next_id_++);
    if (settings_.alerts_to_host) send("host", msg::HostNotify{n.event});
    if (terminate)  // as PMIX_JOB_CTRL_TERMINATE does it: SIGTERM, then SIGKILL if need be
        send("jobctl",
             msg::TerminateRanks{proc.nspace, {proc.rank}, "monitor " + m.id + " tripped"},
             next_id_++);
}

void ProcessMonitor::drop(const msg::Proc &proc, const std::string &id) {
    auto it = procs_.find(proc);
    if (it == procs_.end()) return;
    std::erase_if(it->second.monitors, [&](const Monitor &m) {
        if (!id.empty() && m.spec.id != id) return false;
        reactor().cancel(m.timer);
        return true;
    });
    if (it->second.monitors.empty()) procs_.erase(it);
}

void ProcessMonitor::proc_ended(const Envelope &, msg::ProcEnded &m) {
    const msg::Proc proc{m.nspace, m.rank};
    if (procs_.contains(proc)) log().info("{} ended: its monitors end", proc_name(proc));
    drop(proc, {});
}

void ProcessMonitor::namespace_ended(const Envelope &, msg::NamespaceEnded &m) {
    std::vector<msg::Proc> gone;
    for (const auto &[p, w] : procs_)
        if (p.nspace == m.nspace) gone.push_back(p);
    for (const auto &p : gone) drop(p, {});
}

void ProcessMonitor::ok(const Envelope &, msg::Ok &) {}

void ProcessMonitor::error(const Envelope &env, msg::ErrorReply &m) {
    log().warn("{} refused a monitor's request: {}", env.from, m.message);
}

void ProcessMonitor::signalled(const Envelope &, msg::SignalledRanks &) {}

}  // namespace zpmix
