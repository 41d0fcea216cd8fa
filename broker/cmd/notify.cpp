// `zpmix notify --code N --range R [--info key=value ...]`: a site injects an event through the
// broker, as the resource manager (the source is the broker). By default it is an environment
// event (only handlers registered with PMIX_EVENT_ENVIRO_LEVEL get it); --job-level makes it a
// job-level one.
#include <charconv>
#include <iostream>

#include <pmix_common.h>

#include "actors/events/event_broker.hpp"
#include "actors/protocol/events.hpp"
#include "broker/cmd/commands.hpp"
#include "broker/cmd/tool_session.hpp"

namespace zpmix::cli {

namespace {

struct NotifyOptions {
    int code = 0;
    std::string range, nspace, text, broker;
    std::vector<std::string> procs, affected, info;
    bool job_level = false, non_default = false, no_cache = false;
};

// "nspace:rank" or "nspace:*"
msg::Proc parse_proc(const std::string &s) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
        throw std::invalid_argument("not nspace:rank: " + s);
    const std::string rank = s.substr(colon + 1);
    msg::Proc p{s.substr(0, colon), PMIX_RANK_WILDCARD};
    if (rank != "*") {
        auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), p.rank);
        if (ec != std::errc{} || end != rank.data() + rank.size())
            throw std::invalid_argument("bad rank in " + s);
    }
    return p;
}

// key=value: an integer, true/false, or else a string.
void add_info(InfoBlob &blob, const std::string &kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("not key=value: " + kv);
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key.size() > PMIX_MAX_KEYLEN) throw std::invalid_argument("key too long: " + key);
    std::int64_t i = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), i);
    if (!value.empty() && ec == std::errc{} && end == value.data() + value.size())
        blob.add_int(key, i);
    else if (value == "true" || value == "false")
        blob.add_bool(key, value == "true");
    else
        blob.add_string(key, value);
}

int run_notify(const NotifyOptions &o) {
    msg::NotifyEvent n;
    msg::Event &ev = n.event;
    try {
        static const std::map<std::string, msg::Range> ranges = {{"rm", msg::Range::rm},
                                                                 {"local", msg::Range::local},
                                                                 {"namespace", msg::Range::nspace},
                                                                 {"session", msg::Range::session},
                                                                 {"global", msg::Range::global},
                                                                 {"custom", msg::Range::custom}};
        const auto r = ranges.find(o.range);
        if (r == ranges.end()) throw std::invalid_argument("unknown range " + o.range);
        ev.range = static_cast<std::uint8_t>(r->second);
        if (r->second == msg::Range::nspace) {
            // The broker is the source: the namespace is named as a custom range of all its ranks.
            if (o.nspace.empty()) throw std::invalid_argument("--range namespace needs --nspace");
            ev.range = static_cast<std::uint8_t>(msg::Range::custom);
            ev.custom_range = {{o.nspace, PMIX_RANK_WILDCARD}};
        }
        if (r->second == msg::Range::custom) {
            if (o.procs.empty()) throw std::invalid_argument("--range custom needs --proc");
            for (const auto &p : o.procs) ev.custom_range.push_back(parse_proc(p));
        }
        for (const auto &p : o.affected) ev.affected.push_back(parse_proc(p));
        InfoBlob blob;
        for (const auto &kv : o.info) add_info(blob, kv);
        ev.info = blob.bytes();
    } catch (const std::invalid_argument &e) {
        std::cerr << "zpmix notify: " << e.what() << "\n";
        return 2;
    }
    ev.status = o.code;
    ev.enviro = !o.job_level;
    ev.non_default = o.non_default;
    ev.text = o.text;
    n.do_not_cache = o.no_cache;
    try {
        ToolSession session(o.broker, std::chrono::seconds(10));
        ev.source = {session.welcome().broker, 0};
        session.ask<msg::Ok>(n);
    } catch (const std::exception &e) {
        std::cerr << "zpmix notify: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

void add_notify_command(CLI::App &app, int &status) {
    auto o = std::make_shared<NotifyOptions>();
    auto *cmd = app.add_subcommand("notify", "Publish an event (as the resource manager)");
    cmd->add_option("--code", o->code, "The event's status code")->required();
    cmd->add_option("--range", o->range, "rm | local | namespace | session | global | custom")
        ->required();
    cmd->add_option("--nspace", o->nspace, "The job of --range namespace");
    cmd->add_option("--proc", o->procs, "A member of --range custom: nspace:rank or nspace:*");
    cmd->add_option("--affected", o->affected, "PMIX_EVENT_AFFECTED_PROC(S): nspace:rank");
    cmd->add_option("--info", o->info, "key=value (integer, true/false, or string; repeatable)");
    cmd->add_option("--text", o->text, "PMIX_EVENT_TEXT_MESSAGE");
    cmd->add_flag("--job-level", o->job_level, "A job-level event (default: an environment event)");
    cmd->add_flag("--non-default", o->non_default, "PMIX_EVENT_NON_DEFAULT");
    cmd->add_flag("--no-cache", o->no_cache, "PMIX_EVENT_DO_NOT_CACHE");
    cmd->add_option("--broker", o->broker, "The broker's URI (default: the standalone broker)");
    cmd->callback([o, &status] { status = run_notify(*o); });
}

}  // namespace zpmix::cli
