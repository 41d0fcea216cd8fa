// `zpmix events [--topic PREFIX]... [--json] [--count N]`: an external monitor. Subscribes to the
// broker's event publisher with a plain SUB socket and prints one line per event: a JSON object
// with --json (the event's msgpack body, its topic, and its info decoded to {key: value}),
// otherwise a short human-readable line.
//
// The subscription is confirmed with the broker's sync handshake (an "ev.register" without
// streams, answered once the broker's XPUB saw our sync topic), so no event published after the
// "subscribed" line on stderr is missed for a slow join.
//
// All of it is the monitoring interface (docs/events.md: topics, the msgpack schema, the sync
// handshake, the replay ring), not the standard's tool API, on purpose: PMIx_Register_event_handler
// would deliver to this tool only the events whose range includes it, each as a status, a source
// and infos, without the topic, epoch and numbers that --json prints, --since replays and gaps
// are found by. The "registration" here confirms a SUB socket's subscription, which no PMIx call
// does.
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include <pmix.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/events.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct EventsOptions {
    std::vector<std::string> topics;
    std::string broker;
    bool json = false;
    std::uint64_t count = 0;             // 0: until interrupted
    std::optional<std::uint64_t> since;  // --since: replay what came after this number
    std::string epoch;                   // --epoch: the epoch --since counts in
};

nlohmann::json to_json(const msgpack::object &o) {
    switch (o.type) {
        case msgpack::type::NIL:
            return nullptr;
        case msgpack::type::BOOLEAN:
            return o.via.boolean;
        case msgpack::type::POSITIVE_INTEGER:
            return o.via.u64;
        case msgpack::type::NEGATIVE_INTEGER:
            return o.via.i64;
        case msgpack::type::FLOAT32:
        case msgpack::type::FLOAT64:
            return o.via.f64;
        case msgpack::type::STR:
            return std::string(o.via.str.ptr, o.via.str.size);
        case msgpack::type::BIN: {
            auto bytes = nlohmann::json::array();
            for (std::uint32_t i = 0; i < o.via.bin.size; ++i)
                bytes.push_back(static_cast<unsigned char>(o.via.bin.ptr[i]));
            return bytes;
        }
        case msgpack::type::ARRAY: {
            auto a = nlohmann::json::array();
            for (std::uint32_t i = 0; i < o.via.array.size; ++i)
                a.push_back(to_json(o.via.array.ptr[i]));
            return a;
        }
        case msgpack::type::MAP: {
            auto m = nlohmann::json::object();
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                const auto &kv = o.via.map.ptr[i];
                m[kv.key.type == msgpack::type::STR ? kv.key.as<std::string>()
                                                    : to_json(kv.key).dump()] = to_json(kv.val);
            }
            return m;
        }
        default:
            return nullptr;
    }
}

// The info blob ([[key, flags, [type, payload]], ...]) as {key: payload}.
nlohmann::json info_of(const msg::Blob &blob) {
    auto out = nlohmann::json::object();
    if (blob.empty()) return out;
    const auto handle = msgpack::unpack(blob.data(), blob.size());
    const msgpack::object &items = handle.get();
    if (items.type != msgpack::type::ARRAY) throw std::runtime_error("info is not an array");
    for (std::uint32_t i = 0; i < items.via.array.size; ++i) {
        const msgpack::object &item = items.via.array.ptr[i];
        if (item.type != msgpack::type::ARRAY || item.via.array.size != 3 ||
            item.via.array.ptr[0].type != msgpack::type::STR)
            throw std::runtime_error("malformed info item");
        const msgpack::object &value = item.via.array.ptr[2];
        const bool typed = value.type == msgpack::type::ARRAY && value.via.array.size == 2;
        out[item.via.array.ptr[0].as<std::string>()] =
            to_json(typed ? value.via.array.ptr[1] : value);
    }
    return out;
}

nlohmann::json proc_json(const msg::Proc &p) {
    return {{"nspace", p.nspace}, {"rank", p.rank}};
}

const char *range_name(std::uint8_t r) {
    switch (static_cast<msg::Range>(r)) {
        case msg::Range::rm:
            return "rm";
        case msg::Range::local:
            return "local";
        case msg::Range::nspace:
            return "namespace";
        case msg::Range::session:
            return "session";
        case msg::Range::global:
            return "global";
        case msg::Range::custom:
            return "custom";
        case msg::Range::proc_local:
            return "proc_local";
        default:
            return "undef";
    }
}

// UTC, ISO 8601 with microseconds: what log pipelines parse without being told the format.
std::string iso_time(std::int64_t us) {
    const std::time_t secs = static_cast<std::time_t>(us / 1000000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:06d}Z", buf, us % 1000000);
}

nlohmann::json event_json(const std::string &topic, const msg::Event &ev) {
    auto procs = [](const std::vector<msg::Proc> &v) {
        auto a = nlohmann::json::array();
        for (const auto &p : v) a.push_back(proc_json(p));
        return a;
    };
    return {{"topic", topic},
            {"epoch", ev.epoch},
            {"bseq", ev.bseq},
            {"stream", ev.stream},
            {"seq", ev.seq},
            {"status", ev.status},
            {"code", ev.status},
            {"code_name", event_code_name(ev.status)},
            {"source", proc_json(ev.source)},
            {"range", ev.range},
            {"range_name", range_name(ev.range)},
            {"custom_range", procs(ev.custom_range)},
            {"affected", procs(ev.affected)},
            {"non_default", ev.non_default},
            {"enviro", ev.enviro},
            {"text", ev.text},
            {"timestamp", ev.timestamp},
            {"time_us", ev.time_us},
            {"time", iso_time(ev.time_us)},
            {"info", info_of(ev.info)}};
}

// Prints events in order and once: live ones, and those the broker's replay ring gives back for
// numbers this monitor missed (asked for with --since, or on a gap in a stream, or when the
// broker's epoch changed under it); what the ring no longer has is a gap marker. A restarted
// broker knows no session of ours: a request it refuses is asked again once, in a new session
// (`reconnect`, which also moves the subscription when the new broker publishes elsewhere).
class Printer {
  public:
    Printer(const EventsOptions &o, std::unique_ptr<ToolSession> &session,
            std::function<void()> reconnect)
        : o_(o), session_(session), reconnect_(std::move(reconnect)) {}

    bool done() const { return o_.count != 0 && printed_ >= o_.count; }

    // The events after number `after` of `epoch` (empty: the broker's current one); false when
    // the broker did not answer.
    bool catch_up(const std::string &epoch, std::uint64_t after) {
        msg::EventsSinceReply r;
        const msg::EventsSince ask{epoch, after, o_.topics};
        try {
            r = session_->ask<msg::EventsSinceReply>(ask);
        } catch (const std::exception &first) {
            try {
                reconnect_();
                r = session_->ask<msg::EventsSinceReply>(ask);
            } catch (const std::exception &e) {
                std::cerr << "zpmix events: cannot ask for the events after #" << after << ": "
                          << first.what() << "; in a new session: " << e.what() << "\n";
                return false;
            }
        }
        if (r.restarted || r.lost > 0) gap(epoch.empty() ? r.epoch : epoch, after, r);
        epoch_ = r.epoch;
        if (!r.restarted)
            last_ = std::max(last_, after);
        else
            last_ = 0;
        for (const auto &p : r.events) {
            if (done()) return true;
            if (p.event.bseq > last_) print(p.topic, p.event);
        }
        // The rest up to the head matched none of our topics.
        last_ = std::max(last_, r.head);
        return true;
    }

    void live(const std::string &topic, const msg::Event &ev) {
        // The broker restarted: say so, then take the new epoch's events. Our session did not
        // survive it (a new broker knows no Hello of ours): the gap is then of unknown size.
        if (!epoch_.empty() && ev.epoch != epoch_ && !catch_up(epoch_, last_)) {
            msg::EventsSinceReply unknown;
            unknown.restarted = true;
            unknown.epoch = ev.epoch;
            gap(epoch_, last_, unknown, false);
            epoch_ = ev.epoch;
            last_ = 0;
        }
        if (epoch_.empty()) epoch_ = ev.epoch;
        if (ev.bseq != 0 && ev.bseq <= last_) return;  // had it from the ring
        if (auto it = last_seq_.find(ev.stream);
            it != last_seq_.end() && ev.seq > it->second + 1 && ev.bseq > last_ + 1)
            catch_up(epoch_, last_);
        if (ev.bseq != 0 && ev.bseq <= last_) return;
        if (!done()) print(topic, ev);
    }

  private:
    const EventsOptions &o_;
    std::unique_ptr<ToolSession> &session_;
    std::function<void()> reconnect_;
    std::string epoch_;
    std::uint64_t last_ = 0;  // the last number printed (or known seen) in epoch_
    std::uint64_t printed_ = 0;
    std::map<std::string, std::uint64_t> last_seq_;  // stream -> last number printed

    // lost_known: false when the broker could not be asked (lost is then null).
    void gap(const std::string &epoch, std::uint64_t after, const msg::EventsSinceReply &r,
             bool lost_known = true) {
        if (o_.json) {
            std::cout << nlohmann::json{{"gap",
                                         {{"epoch", epoch},
                                          {"after", after},
                                          {"restarted", r.restarted},
                                          {"lost", lost_known ? nlohmann::json(r.lost) : nullptr},
                                          {"new_epoch", r.epoch}}}}
                             .dump()
                      << std::endl;
            return;
        }
        if (r.restarted)
            std::cout << fmt::format(
                             "gap: the broker restarted (epoch {} after #{} is gone; now "
                             "epoch {}, whose first {} are gone)",
                             epoch, after, r.epoch, r.lost)
                      << std::endl;
        else
            std::cout << fmt::format("gap: {} events of epoch {} after #{} are gone", r.lost, epoch,
                                     after)
                      << std::endl;
    }

    void print(const std::string &topic, const msg::Event &ev) {
        if (ev.epoch == epoch_) last_ = std::max(last_, ev.bseq);
        last_seq_[ev.stream] = std::max(last_seq_[ev.stream], ev.seq);
        ++printed_;
        nlohmann::json j = event_json(topic, ev);
        if (o_.json) {
            std::cout << j.dump() << std::endl;
            return;
        }
        std::cout << fmt::format("{} #{} status {} {} at {} (#{}) from {}:{}{}{}", ev.stream,
                                 ev.seq, ev.status, event_code_name(ev.status),
                                 iso_time(ev.time_us), ev.bseq, ev.source.nspace, ev.source.rank,
                                 ev.text.empty() ? "" : ": ", ev.text);
        if (!j["info"].empty()) std::cout << " " << j["info"].dump();
        std::cout << std::endl;
    }
};

int run_events(EventsOptions o) {
    if (o.topics.empty()) o.topics = {"ev/"};
    std::unique_ptr<ToolSession> session;
    zmq::context_t ctx;
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    try {
        session = std::make_unique<ToolSession>(events_broker(o.broker), std::chrono::seconds(10));
        sub.set(zmq::sockopt::linger, 0);
        sub.set(zmq::sockopt::rcvhwm, 100000);
        for (const auto &t : o.topics) sub.set(zmq::sockopt::subscribe, t);
        const std::string sync = fmt::format("events.{}", ::getpid());
        sub.set(zmq::sockopt::subscribe, msg::topic::sync(sync));
        check_ipc_endpoint(session->welcome().events_uri);
        sub.connect(session->welcome().events_uri);
        session->ask<msg::EventRegistered>(msg::EventRegister{{}, sync, {}});
        sub.set(zmq::sockopt::unsubscribe, msg::topic::sync(sync));
    } catch (const std::exception &e) {
        std::cerr << "zpmix events: " << e.what() << "\n";
        return 1;
    }
    std::cerr << fmt::format("zpmix events: subscribed to {} at {}\n", fmt::join(o.topics, " "),
                             session->welcome().events_uri);
    // A new session with the broker at the same address (a restarted one), and the subscription
    // moved when it publishes elsewhere; the SUB socket keeps its topics.
    std::string events_uri = session->welcome().events_uri;
    auto reconnect = [&] {
        session = std::make_unique<ToolSession>(events_broker(o.broker), std::chrono::seconds(10));
        const std::string now = session->welcome().events_uri;
        if (now == events_uri) return;
        check_ipc_endpoint(now);
        sub.disconnect(events_uri);
        sub.connect(now);
        std::cerr << fmt::format("zpmix events: the broker now publishes at {}\n", now);
        events_uri = now;
    };
    Printer printer(o, session, reconnect);
    // Subscribed first, then the ring: an event published in between comes both ways, once printed.
    if (o.since) printer.catch_up(o.epoch, *o.since);
    while (!printer.done()) {
        std::vector<zmq::message_t> frames;
        zmq::message_t frame;
        do {
            if (!sub.recv(frame)) return 1;
            frames.push_back(std::move(frame));
        } while (frames.back().more());
        if (frames.size() != 2) continue;
        const std::string topic = frames[0].to_string();
        msg::Event ev;
        try {
            ev = decode(frames[1]).as<msg::Event>();
            (void)info_of(ev.info);
        } catch (const std::exception &e) {
            std::cerr << "zpmix events: skipped a malformed event on " << topic << ": " << e.what()
                      << "\n";
            continue;
        }
        printer.live(topic, ev);
    }
    return 0;
}

}  // namespace

const char *event_code_name(std::int32_t code) {
    switch (code) {
        case msg::kJobPaused:
            return "ZPMIX_EVENT_JOB_PAUSED";
        case msg::kJobResumed:
            return "ZPMIX_EVENT_JOB_RESUMED";
        case msg::kJobSignalled:
            return "ZPMIX_EVENT_JOB_SIGNALLED";
        default:
            return PMIx_Error_string(code);
    }
}

void add_events_command(CLI::App &app, int &status) {
    auto o = std::make_shared<EventsOptions>();
    auto *cmd = app.add_subcommand("events", "Print the broker's events as they are published");
    cmd->add_option("--topic", o->topics,
                    "Topic prefix to subscribe to (repeatable; default ev/: everything)");
    cmd->add_flag("--json", o->json, "One JSON object per line");
    cmd->add_option("--count", o->count, "Exit after this many events (default: never)");
    cmd->add_option("--since", o->since,
                    "First print the events published after this number (an event's \"bseq\"), "
                    "from the broker's replay ring, or a gap marker for those it no longer has");
    cmd->add_option("--epoch", o->epoch,
                    "The broker epoch --since counts in (an event's \"epoch\"); another epoch "
                    "than the broker's is reported as a restart");
    cmd->add_option("--broker", o->broker,
                    "The broker's URI (default: the standalone broker, else the only one of this "
                    "user, standalone or in `zpmix run`)");
    cmd->callback([o, &status] { status = run_events(*o); });
}

}  // namespace zpmix::cli
