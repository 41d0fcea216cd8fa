// `zpmix exporter [--listen HOST:PORT] [--broker URI]...`: a Prometheus endpoint. Serves
// GET /metrics in the Prometheus text format (version 0.0.4) with what this user's brokers of
// this node say at scrape time (each asked as `zpmix ps` asks them): jobs and ranks by state,
// fences and their latency histogram, events published by code, events subscribers lost, and each
// broker's resident memory. Nothing is kept between scrapes: a scrape is a few requests per
// broker, and counters are the brokers' own, so a restarted exporter loses nothing.
//
// HTTP is libmicrohttpd's (Debian's libmicrohttpd-dev), in its own polling thread: a scrape asks
// the brokers from there with sessions of its own, so nothing is shared with the main thread,
// which only waits for SIGINT/SIGTERM.
#include <microhttpd.h>
#include <pmix.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "actors/protocol/events.hpp"
#include "actors/protocol/fence.hpp"
#include "actors/protocol/jobctl.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct ExporterOptions {
    std::string listen = "127.0.0.1:9464";  // Prometheus's default port range for exporters
    std::vector<std::string> brokers;       // none: every broker of this user on this node
};

// A label value as the text format wants it: backslash, quote and newline escaped.
std::string label(const std::string &v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

// The resident memory of process pid, in bytes (0 when it cannot be read).
std::uint64_t resident_bytes(std::int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

struct Target {
    std::string uri;
    std::int64_t pid = 0;  // 0: not known (--broker): no memory figure
};

// Every metric family once, its samples from every broker.
class Metrics {
  public:
    void sample(const std::string &family, const std::string &labels, double value) {
        families_[family].push_back(fmt::format("{}{{{}}} {}", family, labels, value));
    }
    void sample_as(const std::string &family, const std::string &name, const std::string &labels,
                   double value) {
        families_[family].push_back(fmt::format("{}{{{}}} {}", name, labels, value));
    }
    std::string text(const std::map<std::string, std::pair<std::string, std::string>> &meta) const {
        std::string out;
        for (const auto &[family, m] : meta) {
            out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family, m.second, family, m.first);
            if (auto it = families_.find(family); it != families_.end())
                for (const auto &s : it->second) out += s + "\n";
        }
        return out;
    }

  private:
    std::map<std::string, std::vector<std::string>> families_;
};

const std::map<std::string, std::pair<std::string, std::string>> kMeta = {
    {"zpmix_broker_up", {"gauge", "Whether the broker answered this scrape"}},
    {"zpmix_broker_resident_memory_bytes", {"gauge", "The broker process's resident memory"}},
    {"zpmix_jobs", {"gauge", "Jobs by state (finished: within [broker] keep_finished_s)"}},
    {"zpmix_ranks", {"gauge", "Ranks of the listed jobs by state"}},
    {"zpmix_fences_total", {"counter", "Fences through the broker, by result"}},
    {"zpmix_fence_duration_seconds",
     {"histogram", "From a fence's first contribution at the broker to its answer"}},
    {"zpmix_events_published_total", {"counter", "Events the broker published, by code"}},
    {"zpmix_events_dropped_total",
     {"counter", "Event copies subscribers lost at their high-water mark"}},
    {"zpmix_events_cached", {"gauge", "Events in the broker's cache"}},
};

void scrape_one(const Target &t, Metrics &m) {
    const std::string b = fmt::format("broker=\"{}\"", label(t.uri));
    try {
        ToolSession s(t.uri, std::chrono::seconds(5));
        const auto jobs = s.ask<msg::JobList>(msg::JobsQuery{});
        const auto table = s.ask<msg::ProcTable>(msg::ProcTableQuery{});
        const std::string me = fmt::format("zpmix exporter (pid {})", ::getpid());
        const auto events = s.ask<msg::EventStats>(msg::EventStatsQuery{me});
        const auto fences = s.ask<msg::FenceStats>(msg::FenceStatsQuery{me});
        m.sample("zpmix_broker_up", b, 1);
        if (t.pid > 0)
            m.sample("zpmix_broker_resident_memory_bytes", b,
                     static_cast<double>(resident_bytes(t.pid)));
        std::map<std::string, std::uint64_t> job_states{{"running", 0}, {"finished", 0}};
        std::map<std::string, std::uint64_t> rank_states{
            {"running", 0}, {"paused", 0}, {"exited", 0}, {"killed", 0}, {"unreachable", 0}};
        for (const auto &j : jobs.jobs) ++job_states[j.ended_us == 0 ? "running" : "finished"];
        for (const auto &p : table.procs) ++rank_states[p.state];
        for (const auto &[state, n] : job_states)
            m.sample("zpmix_jobs", fmt::format("{},state=\"{}\"", b, state), n);
        for (const auto &[state, n] : rank_states)
            m.sample("zpmix_ranks", fmt::format("{},state=\"{}\"", b, label(state)), n);
        m.sample("zpmix_fences_total", b + ",result=\"ok\"", fences.completed);
        m.sample("zpmix_fences_total", b + ",result=\"failed\"", fences.failed);
        std::uint64_t cumulative = 0;
        const std::string h = "zpmix_fence_duration_seconds";
        for (std::size_t i = 0; i < fences.counts.size(); ++i) {
            cumulative += fences.counts[i];
            const std::string le =
                i < fences.bounds.size() ? fmt::format("{}", fences.bounds[i]) : "+Inf";
            m.sample_as(h, h + "_bucket", fmt::format("{},le=\"{}\"", b, le), cumulative);
        }
        m.sample_as(h, h + "_sum", b, fences.sum_s);
        m.sample_as(h, h + "_count", b, cumulative);
        for (const auto &[code, n] : events.published)
            m.sample("zpmix_events_published_total",
                     fmt::format("{},code=\"{}\",code_name=\"{}\"", b, code,
                                 label(event_code_name(code))),
                     n);
        m.sample("zpmix_events_dropped_total", b, events.dropped);
        m.sample("zpmix_events_cached", b, events.cached);
    } catch (const std::exception &e) {
        std::cerr << "zpmix exporter: " << t.uri << ": " << e.what() << "\n";
        m.sample("zpmix_broker_up", b, 0);
    }
}

std::string scrape(const ExporterOptions &o) {
    std::vector<Target> targets;
    // A broker given by its ipc address has its rendezvous file beside its socket: its pid.
    Metrics m;
    try {
        for (const auto &uri : o.brokers) {
            std::int64_t pid = 0;
            if (uri.starts_with("ipc://"))
                if (auto r = read_rendezvous(rendezvous_path(
                        std::filesystem::path(uri.substr(6)).parent_path().string())))
                    pid = r->pid;
            targets.push_back({uri, pid});
        }
        if (o.brokers.empty())
            for (const auto &r : find_user_brokers()) targets.push_back({r.uri, r.pid});
    } catch (const UntrustedPath &e) {  // scraped as no broker, and said why
        std::cerr << "zpmix exporter: " << e.what() << "\n";
    }
    for (const auto &t : targets) scrape_one(t, m);
    return m.text(kMeta);
}

MHD_Result serve(void *cls, MHD_Connection *conn, const char *url, const char *method, const char *,
                 const char *, size_t *, void **) {
    const auto &o = *static_cast<const ExporterOptions *>(cls);
    unsigned code = MHD_HTTP_OK;
    std::string body, type = "text/plain; version=0.0.4; charset=utf-8";
    if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
        code = MHD_HTTP_METHOD_NOT_ALLOWED;
        body = "only GET\n";
    } else if (std::strcmp(url, "/metrics") == 0) {
        body = scrape(o);
    } else if (std::strcmp(url, "/") == 0) {
        type = "text/html";
        body = "<html><body><a href=\"/metrics\">/metrics</a></body></html>\n";
    } else {
        code = MHD_HTTP_NOT_FOUND;
        body = "not found: try /metrics\n";
    }
    MHD_Response *r =
        MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type.c_str());
    const MHD_Result ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ret;
}

int run_exporter(ExporterOptions o) {
    const auto colon = o.listen.rfind(':');
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    int port = -1;
    try {
        port = colon == std::string::npos ? -1 : std::stoi(o.listen.substr(colon + 1));
    } catch (const std::exception &) {
    }
    const std::string host = colon == std::string::npos ? "" : o.listen.substr(0, colon);
    if (port < 0 || port > 65535 ||
        ::inet_pton(AF_INET, host.empty() ? "0.0.0.0" : host.c_str(), &addr.sin_addr) != 1) {
        std::cerr << "zpmix exporter: --listen wants IPV4-ADDRESS:PORT, not " << o.listen << "\n";
        return 2;
    }
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    // The signals the main thread waits for: blocked before the server's thread inherits them.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
                                     static_cast<std::uint16_t>(port), nullptr, nullptr, &serve, &o,
                                     MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr *>(&addr),
                                     MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!d) {
        std::cerr << "zpmix exporter: cannot listen on " << o.listen << ": " << strerror(errno)
                  << "\n";
        return 1;
    }
    const MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    std::cerr << fmt::format("zpmix exporter: serving http://{}:{}/metrics\n",
                             host.empty() ? "0.0.0.0" : host, info ? info->port : port)
              << std::flush;
    int sig = 0;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    return 0;
}

}  // namespace

void add_exporter_command(CLI::App &app, int &status) {
    auto o = std::make_shared<ExporterOptions>();
    auto *cmd = app.add_subcommand("exporter", "Serve the brokers' metrics for Prometheus");
    cmd->add_option("--listen", o->listen,
                    "IPV4-ADDRESS:PORT to serve /metrics on (default 127.0.0.1:9464; port 0: any)");
    cmd->add_option("--broker", o->brokers,
                    "A broker's URI (repeatable; default: every broker of this user on this node)");
    cmd->callback([o, &status] { status = run_exporter(*o); });
}

}  // namespace zpmix::cli
