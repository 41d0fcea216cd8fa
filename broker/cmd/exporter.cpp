// `zpmix exporter [--listen HOST:PORT] [--broker URI]...`: a Prometheus endpoint. Serves
// GET /metrics in the Prometheus text format with what this user's brokers of this node say at
// scrape time (each asked as `zpmix ps` asks them): jobs and ranks by state, jobs ended by outcome,
// fences (through the broker, and on the nodes' fence boards) and the broker's fence latency
// histogram, events published by code, events subscribers lost, and the brokers' resident memory.
//
// Series stay the same across brokers that come and go: the `broker` label is "standalone" for
// this user's standing broker and "run" for the brokers `zpmix run` embeds (several at once add
// up), or the URI given with --broker. A counter is the sum of its brokers' counters plus what
// the brokers that ended (or restarted: a counter went down) had counted at their last scrape, so
// it only grows while the exporter runs; what a broker counted after its last scrape is lost.
//
// HTTP and the text format are prometheus-cpp's (Debian's prometheus-cpp-dev: its Exposer, on
// civetweb's threads); a scrape asks the brokers from there, with sessions of its own, under one
// lock. The main thread only waits for SIGINT/SIGTERM.
#include <arpa/inet.h>
#include <pmix.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

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
    std::vector<std::string> runtime_dirs;  // none: every runtime directory of this user
};

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
    std::string label;     // the series' `broker` label
    std::string id() const { return uri + "#" + std::to_string(pid); }
};

// A sample: its family (or a histogram's _bucket/_sum/_count series) and labels but `broker`.
using Labels = std::map<std::string, std::string>;
using Key = std::pair<std::string, Labels>;
using Samples = std::map<Key, double>;

void add(Samples &to, const Samples &from) {
    for (const auto &[k, v] : from) to[k] += v;
}

struct Reading {
    Samples counters;
    Samples gauges;
};

const std::string kFenceHist = "zpmix_fence_duration_seconds";

// One broker's answer; throws when it does not answer.
Reading read_broker(const Target &t) {
    ToolSession s(t.uri, std::chrono::seconds(5));
    const auto jobs = s.ask<msg::JobList>(msg::JobsQuery{});
    const auto table = s.ask<msg::ProcTable>(msg::ProcTableQuery{});
    const std::string me = fmt::format("zpmix exporter (pid {})", ::getpid());
    const auto events = s.ask<msg::EventStats>(msg::EventStatsQuery{me});
    const auto fences = s.ask<msg::FenceStats>(msg::FenceStatsQuery{me});
    Reading r;
    auto &g = r.gauges;
    auto &c = r.counters;
    if (t.pid > 0)
        g[{"zpmix_broker_resident_memory_bytes", {}}] = static_cast<double>(resident_bytes(t.pid));
    for (const char *state : {"running", "finished"}) g[{"zpmix_jobs", {{"state", state}}}] += 0;
    for (const char *state : {"running", "paused", "exited", "killed", "unreachable"})
        g[{"zpmix_ranks", {{"state", state}}}] += 0;
    for (const auto &j : jobs.jobs)
        ++g[{"zpmix_jobs", {{"state", j.ended_us == 0 ? "running" : "finished"}}}];
    for (const auto &p : table.procs) ++g[{"zpmix_ranks", {{"state", p.state}}}];
    for (const char *outcome : {"succeeded", "failed", "signalled"})
        c[{"zpmix_jobs_ended_total", {{"outcome", outcome}}}] += 0;
    for (const auto &[outcome, n] : jobs.ended)
        c[{"zpmix_jobs_ended_total", {{"outcome", outcome}}}] += static_cast<double>(n);
    c[{"zpmix_fences_total", {{"result", "ok"}, {"path", "broker"}}}] =
        static_cast<double>(fences.completed);
    c[{"zpmix_fences_total", {{"result", "failed"}, {"path", "broker"}}}] =
        static_cast<double>(fences.failed);
    c[{"zpmix_fences_total", {{"result", "ok"}, {"path", "board"}}}] =
        static_cast<double>(fences.board_completed);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < fences.counts.size(); ++i) {
        cumulative += fences.counts[i];
        const std::string le =
            i < fences.bounds.size() ? fmt::format("{}", fences.bounds[i]) : "+Inf";
        c[{kFenceHist + "_bucket", {{"le", le}}}] = static_cast<double>(cumulative);
    }
    c[{kFenceHist + "_sum", {}}] = fences.sum_s;
    c[{kFenceHist + "_count", {}}] = static_cast<double>(cumulative);
    for (const auto &[code, n] : events.published)
        c[{"zpmix_events_published_total",
           {{"code", std::to_string(code)}, {"code_name", event_code_name(code)}}}] =
            static_cast<double>(n);
    c[{"zpmix_events_dropped_total", {}}] = static_cast<double>(events.dropped);
    g[{"zpmix_events_cached", {}}] = static_cast<double>(events.cached);
    return r;
}

struct Family {
    const char *name;
    prometheus::MetricType type;
    const char *help;
};
const Family kFamilies[] = {
    {"zpmix_broker_up", prometheus::MetricType::Gauge,
     "Whether every broker of this label answered this scrape"},
    {"zpmix_brokers", prometheus::MetricType::Gauge, "Brokers of this label that answered"},
    {"zpmix_broker_resident_memory_bytes", prometheus::MetricType::Gauge,
     "The brokers' resident memory"},
    {"zpmix_jobs", prometheus::MetricType::Gauge,
     "Jobs by state (finished: within [broker] keep_finished_s)"},
    {"zpmix_ranks", prometheus::MetricType::Gauge, "Ranks of the listed jobs by state"},
    {"zpmix_jobs_ended_total", prometheus::MetricType::Counter,
     "Jobs that ran and ended, by outcome (succeeded, failed, signalled)"},
    {"zpmix_fences_total", prometheus::MetricType::Counter,
     "Fences by result and path (broker: through the broker; board: on a node's fence board)"},
    {"zpmix_fence_duration_seconds", prometheus::MetricType::Histogram,
     "From a fence's first contribution at the broker to its answer (path broker)"},
    {"zpmix_events_published_total", prometheus::MetricType::Counter,
     "Events the brokers published, by code"},
    {"zpmix_events_dropped_total", prometheus::MetricType::Counter,
     "Event copies subscribers lost at their high-water mark"},
    {"zpmix_events_cached", prometheus::MetricType::Gauge, "Events in the brokers' caches"},
};

std::vector<prometheus::ClientMetric::Label> labels_of(const std::string &broker,
                                                       const Labels &rest) {
    std::vector<prometheus::ClientMetric::Label> out{{"broker", broker}};
    for (const auto &[k, v] : rest) out.push_back({k, v});
    return out;
}

class BrokerCollector : public prometheus::Collectable {
  public:
    explicit BrokerCollector(ExporterOptions o) : o_(std::move(o)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        std::lock_guard lock(mutex_);
        const auto targets = find_targets();
        std::map<std::string, Samples> counters, gauges;      // by broker label
        std::map<std::string, std::pair<int, int>> answered;  // label -> {answered, listed}
        std::set<std::string> listed;
        for (const auto &t : targets) {
            listed.insert(t.id());
            auto &a = answered[t.label];
            ++a.second;
            Instance &inst = instances_[t.id()];
            inst.label = t.label;
            try {
                Reading r = read_broker(t);
                ++a.first;
                add(gauges[t.label], r.gauges);
                // A counter that went down: the broker restarted under the same identity.
                for (const auto &[k, v] : r.counters)
                    if (auto it = inst.last.find(k); it != inst.last.end() && v < it->second) {
                        add(retired_[t.label], inst.last);
                        break;
                    }
                inst.last = std::move(r.counters);
            } catch (const std::exception &e) {  // its last counts stand until it is gone
                std::cerr << "zpmix exporter: " << t.uri << ": " << e.what() << "\n";
            }
        }
        for (auto it = instances_.begin(); it != instances_.end();) {
            if (listed.contains(it->first)) {
                ++it;
                continue;
            }
            add(retired_[it->second.label], it->second.last);
            it = instances_.erase(it);
        }
        for (const auto &[label, r] : retired_) add(counters[label], r);
        for (const auto &[id, inst] : instances_) add(counters[inst.label], inst.last);
        for (const auto &[label, a] : answered) {
            gauges[label][{"zpmix_broker_up", {}}] = a.first == a.second ? 1 : 0;
            gauges[label][{"zpmix_brokers", {}}] = a.first;
        }
        return families(counters, gauges);
    }

  private:
    struct Instance {
        std::string label;
        Samples last;  // its counters at its last answer
    };
    ExporterOptions o_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, Instance> instances_;  // by Target::id()
    mutable std::map<std::string, Samples> retired_;     // by label: ended brokers' counts

    std::vector<Target> find_targets() const {
        std::vector<Target> targets;
        try {
            // A broker given by its ipc address has its rendezvous file beside its socket: its pid.
            for (const auto &uri : o_.brokers) {
                std::int64_t pid = 0;
                if (uri.starts_with("ipc://"))
                    if (auto r = read_rendezvous(rendezvous_path(
                            std::filesystem::path(uri.substr(6)).parent_path().string())))
                        pid = r->pid;
                targets.push_back({uri, pid, uri});
            }
            std::vector<RendezvousInfo> found;
            if (o_.brokers.empty() && o_.runtime_dirs.empty()) found = find_user_brokers();
            for (const auto &dir : o_.runtime_dirs)
                for (auto &r : find_brokers(dir)) found.push_back(std::move(r));
            if (o_.brokers.empty())
                for (const auto &r : found) {
                    // `zpmix run`'s broker lives in <base>/broker-<pid>-<n>/.
                    const std::string dir =
                        std::filesystem::path(r.uri.substr(r.uri.find("://") + 3))
                            .parent_path()
                            .filename()
                            .string();
                    targets.push_back(
                        {r.uri, r.pid, dir.starts_with("broker-") ? "run" : "standalone"});
                }
        } catch (const UntrustedPath &e) {  // scraped as no broker, and said why
            std::cerr << "zpmix exporter: " << e.what() << "\n";
        }
        return targets;
    }

    static std::vector<prometheus::MetricFamily> families(
        const std::map<std::string, Samples> &counters,
        const std::map<std::string, Samples> &gauges) {
        std::vector<prometheus::MetricFamily> out;
        for (const auto &f : kFamilies) {
            prometheus::MetricFamily mf{f.name, f.help, f.type, {}};
            if (f.type == prometheus::MetricType::Histogram) {
                for (const auto &[label, samples] : counters) {
                    prometheus::ClientMetric m;
                    m.label = labels_of(label, {});
                    std::vector<prometheus::ClientMetric::Bucket> buckets;
                    for (const auto &[k, v] : samples) {
                        if (k.first == std::string(f.name) + "_bucket") {
                            const std::string &le = k.second.at("le");
                            buckets.push_back({static_cast<std::uint64_t>(v),
                                               le == "+Inf"
                                                   ? std::numeric_limits<double>::infinity()
                                                   : std::stod(le)});
                        } else if (k.first == std::string(f.name) + "_sum") {
                            m.histogram.sample_sum = v;
                        } else if (k.first == std::string(f.name) + "_count") {
                            m.histogram.sample_count = static_cast<std::uint64_t>(v);
                        }
                    }
                    if (buckets.empty()) continue;
                    std::sort(buckets.begin(), buckets.end(), [](const auto &a, const auto &b) {
                        return a.upper_bound < b.upper_bound;
                    });
                    m.histogram.bucket = std::move(buckets);
                    mf.metric.push_back(std::move(m));
                }
            } else {
                const bool counter = f.type == prometheus::MetricType::Counter;
                for (const auto &[label, samples] : counter ? counters : gauges)
                    for (const auto &[k, v] : samples) {
                        if (k.first != f.name) continue;
                        prometheus::ClientMetric m;
                        m.label = labels_of(label, k.second);
                        (counter ? m.counter.value : m.gauge.value) = v;
                        mf.metric.push_back(std::move(m));
                    }
            }
            out.push_back(std::move(mf));
        }
        return out;
    }
};

int run_exporter(ExporterOptions o) {
    const auto colon = o.listen.rfind(':');
    int port = -1;
    try {
        port = colon == std::string::npos ? -1 : std::stoi(o.listen.substr(colon + 1));
    } catch (const std::exception &) {
    }
    const std::string host = colon == std::string::npos ? "" : o.listen.substr(0, colon);
    in_addr ignored{};
    if (port < 0 || port > 65535 ||
        ::inet_pton(AF_INET, host.empty() ? "0.0.0.0" : host.c_str(), &ignored) != 1) {
        std::cerr << "zpmix exporter: --listen wants IPV4-ADDRESS:PORT, not " << o.listen << "\n";
        return 2;
    }
    // The signals the main thread waits for: blocked before the server's threads inherit them.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    const std::string bind = fmt::format("{}:{}", host.empty() ? "0.0.0.0" : host, port);
    std::unique_ptr<prometheus::Exposer> exposer;
    try {
        exposer = std::make_unique<prometheus::Exposer>(bind, 2);
    } catch (const std::exception &e) {
        std::cerr << "zpmix exporter: cannot listen on " << o.listen << ": " << e.what() << "\n";
        return 1;
    }
    auto collector = std::make_shared<BrokerCollector>(o);
    exposer->RegisterCollectable(collector, "/metrics");
    const auto ports = exposer->GetListeningPorts();
    std::cerr << fmt::format("zpmix exporter: serving http://{}:{}/metrics\n",
                             host.empty() ? "0.0.0.0" : host, ports.empty() ? port : ports[0])
              << std::flush;
    int sig = 0;
    sigwait(&stop, &sig);
    return 0;
}

}  // namespace

void add_exporter_command(CLI::App &app, int &status) {
    auto o = std::make_shared<ExporterOptions>();
    auto *cmd = app.add_subcommand("exporter", "Serve the brokers' metrics for Prometheus");
    cmd->add_option("--listen", o->listen,
                    "IPV4-ADDRESS:PORT to serve /metrics on (default 127.0.0.1:9464; port 0: any)")
        ->type_name("ADDRESS:PORT");
    cmd->add_option("--broker", o->brokers,
                    "A broker's URI (repeatable; default: every broker of this user on this node)")
        ->type_name("URI");
    cmd->add_option("--runtime-dir", o->runtime_dirs,
                    "Only the brokers of this runtime directory: its standing broker and its "
                    "`zpmix run`s' (repeatable; default: every one of this user's)")
        ->type_name("DIR");
    cmd->callback([o, &status] { status = run_exporter(*o); });
}

}  // namespace zpmix::cli
