#pragma once
// Event notification (RFC0002): the event as published on the broker's XPUB, the requests a
// client makes over its request channel, and the topic scheme that maps PMIx ranges to ZeroMQ
// prefix subscriptions. docs/events.md describes the scheme for subscribers in other languages.
//
// Topics: every published event is two frames, [topic][envelope of type "event"], where
//   topic  = stream + <code> + "/"            e.g. "ev/n/job1/j/-201/"
//   stream = <range prefix> + <class> + "/"   class "j" (job-level) or "e" (environment)
// and the range prefixes are
//   ev/g/                  GLOBAL                ev/s/<session>/   SESSION
//   ev/n/<nspace>/         NAMESPACE             ev/node/<host>/   LOCAL (the node)
//   ev/p/<nspace>/<rank>/  one process (a CUSTOM range's members)
//   ev/rm/                 RM: the resource manager's (monitors') feed, no client subscribes
// Each stream numbers its events 1, 2, 3... so a subscriber sees a gap and asks for the rest.
//
// The published envelope's "v" is kEventSchemaVersion, not the internal protocol version: monitors
// in any language read the XPUB, and the schema they read stays put while zpmix's own peers,
// which come from one release, change their protocol at will.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

#include "actors/protocol/modex.hpp"  // Proc, Blob

namespace zpmix::msg {

// The published event schema (docs/events.md). It changes only when a published field changes
// meaning or goes away; a new field does not change it (readers skip fields they do not know).
inline constexpr std::uint32_t kEventSchemaVersion = 1;

// PMIx range values (pmix_data_range_t), repeated so that the broker needs no PMIx header.
enum class Range : std::uint8_t {
    undef = 0,
    rm = 1,
    local = 2,
    nspace = 3,
    session = 4,
    global = 5,
    custom = 6,
    proc_local = 7
};

// One event. `info` is the msgpack bytes of an array of pmix_info_t in the C binding's value codec
// ([[key, flags, [type, payload]], ...]): the broker forwards it without decoding it.
struct Event {
    static constexpr const char *type = "event";
    std::string stream;              // the stream it was numbered in
    std::uint64_t seq = 0;           // 1, 2, ... within the stream
    std::int32_t status = 0;         // the event code
    Proc source;                     // the notifying process, or the broker for runtime events
    std::uint8_t range = 0;          // Range
    std::vector<Proc> custom_range;  // members when range is custom
    std::vector<Proc> affected;      // PMIX_EVENT_AFFECTED_PROC(S)
    bool non_default = false;        // PMIX_EVENT_NON_DEFAULT: default handlers skip it
    bool enviro = false;             // an environment event (PMIX_EVENT_ENVIRO_LEVEL)
    std::string text;                // PMIX_EVENT_TEXT_MESSAGE
    std::int64_t timestamp = 0;      // PMIX_EVENT_TIMESTAMP, seconds since the epoch
    Blob info;
    bool retained = false;  // the broker keeps it until every local recipient acknowledged it
    // For monitors (docs/events.md "Monitors that lose nothing"): the publishing broker's stream
    // id, new at each start, and its number there over everything that broker published (1, 2,
    // ...), so a monitor asks for what it missed (EventsSince) and sees a restart as a new epoch.
    std::string epoch;
    std::uint64_t bseq = 0;
    std::int64_t time_us = 0;  // when it was first published, microseconds since the Unix epoch
    ZPMIX_MSG_MAP(stream, seq, status, source, range, custom_range, affected, non_default, enviro,
                  text, timestamp, info, retained, epoch, bseq, time_us);
};

// Whether a broker can route ev: a range it serves, with a source namespace for NAMESPACE and a
// target for CUSTOM. PMIx_Notify_event checks it before sending, so the broker need not answer.
inline bool routable(const Event &ev) {
    switch (static_cast<Range>(ev.range)) {
        case Range::rm:
        case Range::local:
        case Range::session:
        case Range::global:
            return true;
        case Range::nspace:
            return !ev.source.nspace.empty();
        case Range::custom:
            for (const auto &p : ev.custom_range)
                if (!p.nspace.empty()) return true;
            return false;
        default:
            return false;
    }
}

// Client or tool -> events: PMIx_Notify_event (ranges other than PROC_LOCAL). Answered by Ok once
// published, or an ErrorReply (bad range, empty custom range...).
struct NotifyEvent {
    static constexpr const char *type = "ev.notify";
    Event event;  // stream and seq are assigned by the broker
    bool do_not_cache = false;
    ZPMIX_MSG_MAP(event, do_not_cache);
};
inline const Proc *acting_proc(const NotifyEvent &m) {
    return &m.event.source;
}

// events -> the events actor of every other broker of the tree: an event published here on
// `prefix`, for the subscribers of their nodes (each numbers it in its own stream). Events for
// this node only (ev/node/...) are not relayed.
struct EventRelay {
    static constexpr const char *type = "ev.relay";
    std::string prefix;
    Event event;
    bool cache = true;
    std::uint32_t origin = 0;  // the broker that published it first
    // A client's (a rank's) event: its cached copy on a stream of every job is replayed only to
    // the jobs there when it was published.
    bool from_client = false;
    ZPMIX_MSG_MAP(prefix, event, cache, origin, from_client);
};

// fence, group -> events, one-way: processes of these jobs took part together in a collective (a
// fence or PMIx_Connect across jobs, a group's construction), so a client of one may name
// processes of the others in a custom range (event_rights.hpp), until they end.
struct JobsRelated {
    static constexpr const char *type = "ev.related";
    std::vector<std::string> nspaces;
    ZPMIX_MSG_MAP(nspaces);
};

// Client -> events: a handler registration. The client has subscribed its SUB socket to
// `streams` and then to "ev/sync/<sync>/" (empty `sync`: no new subscription); the broker answers
// only once its XPUB has seen that sync subscription, so every event published after the answer
// reaches the client. The answer carries the cached events of `streams`, replayed to the new
// handler, and each stream's last sequence number.
// `codes` and `enviro` are the new handler's (none: every code; enviro: it asked for environment
// events, which under a host the host's register_events upcall must agree to first).
struct EventRegister {
    static constexpr const char *type = "ev.register";
    Proc proc;
    std::string sync;
    std::vector<std::string> streams;
    std::vector<std::int32_t> codes = {};
    bool enviro = false;
    ZPMIX_MSG_MAP(proc, sync, streams, codes, enviro);
};
inline const Proc *acting_proc(const EventRegister &m) {
    return m.proc.nspace.empty() ? nullptr : &m.proc;  // a monitor registers as nobody
}
// Client -> events, unanswered: a handler for environment events is gone (its codes; none: every
// code). Under a host, what no handler of the node wants any more goes to deregister_events.
struct EventDeregister {
    static constexpr const char *type = "ev.deregister";
    Proc proc;
    std::vector<std::int32_t> codes;
    ZPMIX_MSG_MAP(proc, codes);
};
inline const Proc *acting_proc(const EventDeregister &m) {
    return &m.proc;
}
struct EventRegistered {
    static constexpr const char *type = "ev.registered";
    std::string session;                         // for the client's "ev/s/<session>/" streams
    std::string host;                            // for its "ev/node/<host>/" streams
    std::map<std::string, std::uint64_t> heads;  // stream -> last sequence number published
    std::vector<Event> replay;                   // cached events of those streams, oldest first
    ZPMIX_MSG_MAP(session, host, heads, replay);
};

// Client -> events: the streams (and session/host) a process may receive, before it subscribes.
struct EventStreamsQuery {
    static constexpr const char *type = "ev.streams";
    Proc proc;
    ZPMIX_MSG_MAP(proc);
};
struct EventStreams {
    static constexpr const char *type = "ev.streams.reply";
    std::string session;
    std::string host;
    ZPMIX_MSG_MAP(session, host);
};

// Client -> events: a gap in a stream; answered by EventResent with the cached events of
// [from, to]. Numbers in that interval the answer lacks were not cached and are lost.
struct EventResend {
    static constexpr const char *type = "ev.resend";
    std::string stream;
    std::uint64_t from = 0, to = 0;
    ZPMIX_MSG_MAP(stream, from, to);
};
struct EventResent {
    static constexpr const char *type = "ev.resent";
    std::string stream;
    std::uint64_t from = 0, to = 0;
    std::vector<Event> events;
    ZPMIX_MSG_MAP(stream, from, to, events);
};

// Client -> events, one-way: the process has received every event up to seq in these streams, so
// the broker may drop job-level events that all of the job's local processes now have.
struct EventAck {
    static constexpr const char *type = "ev.ack";
    Proc proc;
    std::map<std::string, std::uint64_t> upto;
    ZPMIX_MSG_MAP(proc, upto);
};
inline const Proc *acting_proc(const EventAck &m) {
    return &m.proc;
}

// Client -> events: tell me when this job ends (PMIX_NOTIFY_COMPLETION); the broker then sends
// PMIX_EVENT_JOB_END on the requester's own process stream.
struct NotifyCompletion {
    static constexpr const char *type = "ev.notify_completion";
    Proc requester;
    std::string nspace;
    ZPMIX_MSG_MAP(requester, nspace);
};
inline const Proc *acting_proc(const NotifyCompletion &m) {
    return &m.requester;
}

// Monitor -> events: the events this broker published after number `after` of epoch `epoch`
// (empty: the current one) on topics starting with one of `topics` (none: every topic), from its
// bounded replay ring ([events] replay_size); the ZeroMQ guide's Clone pattern: subscribe first,
// then ask for what came before and drop live events already had. Answered by EventsSinceReply.
struct EventsSince {
    static constexpr const char *type = "ev.since";
    std::string epoch;
    std::uint64_t after = 0;
    std::vector<std::string> topics;
    ZPMIX_MSG_MAP(epoch, after, topics);
};
struct PublishedEvent {
    std::string topic;
    Event event;
    ZPMIX_MSG_MAP(topic, event);
};
struct EventsSinceReply {
    static constexpr const char *type = "ev.since.reply";
    std::string epoch;       // this broker's current epoch
    std::uint64_t head = 0;  // the last number published in it
    // `epoch` named another start of this broker (or another broker): nothing of it is kept, and
    // the events below are this epoch's from its first kept one.
    bool restarted = false;
    // How many of the asked-for numbers (of any topic) left the ring before they were asked for.
    std::uint64_t lost = 0;
    std::vector<PublishedEvent> events;  // oldest first
    ZPMIX_MSG_MAP(epoch, head, restarted, lost, events);
};

// Tool (`zpmix exporter`) -> events: the broker's event counters. Answered by EventStats.
struct EventStatsQuery {
    static constexpr const char *type = "ev.stats";
    std::string scraper;  // who asks, for the broker's debug log
    ZPMIX_MSG_MAP(scraper);
};
struct EventStats {
    static constexpr const char *type = "ev.stats.reply";
    std::map<std::int32_t, std::uint64_t> published;  // events published here, by code
    std::uint64_t dropped = 0;  // copies a subscriber lost at its high-water mark
    std::uint64_t cached = 0;   // events in the cache now
    ZPMIX_MSG_MAP(published, dropped, cached);
};

// Job lifecycle codes without a PMIx standard one, in the range the standard leaves to others
// (below PMIX_EXTERNAL_ERR_BASE, -3000); docs/events.md lists them with the standard ones used.
inline constexpr std::int32_t kJobPaused = -3101;
inline constexpr std::int32_t kJobResumed = -3102;
inline constexpr std::int32_t kJobSignalled = -3103;

// launcher, job coordinator, jobctl -> events, one-way: a step of a job's life, published for
// monitors on the RM range (ev/rm/j/<code>/), so no client handler sees it. `code`:
// PMIX_EVENT_JOB_START (launched), PMIX_LAUNCH_COMPLETE (every rank running), kJobPaused,
// kJobResumed, kJobSignalled (`signal`), PMIX_EVENT_JOB_END (`status`, as `zpmix run` exits).
// Sent by the broker that holds the job's state: the root's coordinator for a job across nodes;
// relayed to every broker like any event beyond one node.
struct JobLifecycle {
    static constexpr const char *type = "ev.job";
    std::string nspace;
    std::int32_t code = 0;
    std::vector<std::uint32_t> ranks;  // the ranks concerned; empty: the whole job
    std::int32_t status = 0;
    std::int32_t signal = 0;
    std::uint32_t np = 0;  // the job's size, when launched
    std::string text;
    ZPMIX_MSG_MAP(nspace, code, ranks, status, signal, np, text);
};

// JobLifecycle's text for PMIX_EVENT_JOB_END.
inline std::string job_ended_text(const std::string &nspace, std::int32_t status,
                                  const std::string &message) {
    return nspace + " ended with status " + std::to_string(status) +
           (message.empty() ? "" : ": " + message);
}

namespace topic {

inline std::string global() {
    return "ev/g/";
}
inline std::string session(const std::string &sid) {
    return "ev/s/" + sid + "/";
}
inline std::string nspace(const std::string &ns) {
    return "ev/n/" + ns + "/";
}
inline std::string node(const std::string &host) {
    return "ev/node/" + host + "/";
}
inline std::string proc(const Proc &p) {
    return "ev/p/" + p.nspace + "/" + std::to_string(p.rank) + "/";
}
inline std::string rm() {
    return "ev/rm/";
}
inline std::string sync(const std::string &id) {
    return "ev/sync/" + id + "/";
}
// A stream: a range prefix and the event class.
inline std::string stream(const std::string &prefix, bool enviro) {
    return prefix + (enviro ? "e/" : "j/");
}
inline std::string of_event(const std::string &stream, std::int32_t code) {
    return stream + std::to_string(code) + "/";
}

}  // namespace topic
}  // namespace zpmix::msg
