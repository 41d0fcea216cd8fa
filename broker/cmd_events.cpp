// `zpmix events [--topic PREFIX]... [--json] [--count N]`: an external monitor. Subscribes to the
// broker's event publisher with a plain SUB socket and prints one line per event: a JSON object
// with --json (the event's msgpack body, its topic, and its info decoded to {key: value}),
// otherwise a short human-readable line.
//
// The subscription is confirmed with the broker's sync handshake (an "ev.register" without
// streams, answered once the broker's XPUB saw our sync topic), so no event published after the
// "subscribed" line on stderr is missed for a slow join.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/protocol/events.hpp"
#include "broker/commands.hpp"
#include "broker/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct EventsOptions {
    std::vector<std::string> topics;
    std::string broker;
    bool json = false;
    std::uint64_t count = 0;  // 0: until interrupted
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

nlohmann::json event_json(const std::string &topic, const msg::Event &ev) {
    auto procs = [](const std::vector<msg::Proc> &v) {
        auto a = nlohmann::json::array();
        for (const auto &p : v) a.push_back(proc_json(p));
        return a;
    };
    return {{"topic", topic},
            {"stream", ev.stream},
            {"seq", ev.seq},
            {"status", ev.status},
            {"source", proc_json(ev.source)},
            {"range", ev.range},
            {"custom_range", procs(ev.custom_range)},
            {"affected", procs(ev.affected)},
            {"non_default", ev.non_default},
            {"enviro", ev.enviro},
            {"text", ev.text},
            {"timestamp", ev.timestamp},
            {"info", info_of(ev.info)}};
}

int run_events(EventsOptions o) {
    if (o.topics.empty()) o.topics = {"ev/"};
    std::unique_ptr<ToolSession> session;
    zmq::context_t ctx;
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    try {
        session = std::make_unique<ToolSession>(o.broker, std::chrono::seconds(10));
        sub.set(zmq::sockopt::linger, 0);
        sub.set(zmq::sockopt::rcvhwm, 100000);
        for (const auto &t : o.topics) sub.set(zmq::sockopt::subscribe, t);
        const std::string sync = fmt::format("events.{}", ::getpid());
        sub.set(zmq::sockopt::subscribe, msg::topic::sync(sync));
        sub.connect(session->welcome().events_uri);
        session->ask<msg::EventRegistered>(msg::EventRegister{{}, sync, {}});
        sub.set(zmq::sockopt::unsubscribe, msg::topic::sync(sync));
    } catch (const std::exception &e) {
        std::cerr << "zpmix events: " << e.what() << "\n";
        return 1;
    }
    std::cerr << fmt::format("zpmix events: subscribed to {} at {}\n", fmt::join(o.topics, " "),
                             session->welcome().events_uri);
    std::map<std::string, std::uint64_t> last_seq;  // stream -> last number seen
    for (std::uint64_t n = 0; o.count == 0 || n < o.count;) {
        std::vector<zmq::message_t> frames;
        zmq::message_t frame;
        do {
            if (!sub.recv(frame)) return 1;
            frames.push_back(std::move(frame));
        } while (frames.back().more());
        if (frames.size() != 2) continue;
        const std::string topic = frames[0].to_string();
        msg::Event ev;
        nlohmann::json j;
        try {
            ev = decode(frames[1]).as<msg::Event>();
            j = event_json(topic, ev);
        } catch (const std::exception &e) {
            std::cerr << "zpmix events: skipped a malformed event on " << topic << ": " << e.what()
                      << "\n";
            continue;
        }
        // A plain subscriber does not recover events the publisher dropped: it says so.
        if (auto it = last_seq.find(ev.stream); it != last_seq.end() && ev.seq > it->second + 1)
            std::cerr << fmt::format("zpmix events: missed {}#{}..{}\n", ev.stream, it->second + 1,
                                     ev.seq - 1);
        last_seq[ev.stream] = ev.seq;
        if (o.json) {
            std::cout << j.dump() << std::endl;
        } else {
            std::cout << fmt::format("{} #{} status {} from {}:{}{}{}", ev.stream, ev.seq,
                                     ev.status, ev.source.nspace, ev.source.rank,
                                     ev.text.empty() ? "" : ": ", ev.text);
            if (!j["info"].empty()) std::cout << " " << j["info"].dump();
            std::cout << std::endl;
        }
        ++n;
    }
    return 0;
}

}  // namespace

void add_events_command(CLI::App &app, int &status) {
    auto o = std::make_shared<EventsOptions>();
    auto *cmd = app.add_subcommand("events", "Print the broker's events as they are published");
    cmd->add_option("--topic", o->topics,
                    "Topic prefix to subscribe to (repeatable; default ev/: everything)");
    cmd->add_flag("--json", o->json, "One JSON object per line");
    cmd->add_option("--count", o->count, "Exit after this many events (default: never)");
    cmd->add_option("--broker", o->broker, "The broker's URI (default: the standalone broker)");
    cmd->callback([o, &status] { status = run_events(*o); });
}

}  // namespace zpmix::cli
