#pragma once
// The broker's `events` actor: numbers, publishes and caches events on the broker's XPUBs (its
// ipc ZmtpListener of the publisher kind, and its tcp one when it serves tcp).
//
// Publishing: every event goes out as [topic][envelope] (actors/protocol/events.hpp has the
// topic scheme), so ZeroMQ's prefix filtering sends it only to processes in its range.
// Registration: a client's "ev.register" is answered only once the XPUB has seen the client's
// sync subscription on either XPUB (its other subscriptions, made before on the same connection,
// are then in effect), with the cached events of its streams for the new handler.
// Across nodes: every event published here for more than this node is relayed to the other
// brokers (ev.relay), which publish it on the same topic to their own subscribers.
// Runtime events: a process's end (the registry's ProcEnded) becomes PMIX_EVENT_PROC_TERMINATED,
// plus an error code when abnormal, for the rest of its job (a rank lost with its node's broker:
// PMIX_EVENT_NODE_DOWN for the node's ranks, then PMIX_ERR_PROC_TERM_WO_SYNC for each); the end of
// a job (the registry's NamespaceEnded), PMIX_EVENT_JOB_END for whoever asked: a NotifyCompletion,
// or the spawner of a job started with PMIX_NOTIFY_COMPLETION. An event of a job's stream stays
// cached until each of the job's local ranks still running (the namespace table's) has it.
// PMIX_DEBUGGER_RELEASE, published here or relayed, is also told to the launcher
// (msg::DebuggerReleased), which continues the ranks it stopped at exec.
// Clients: a client's event is published only if it may notify it (NotifyRights: runtime codes
// are the runtime's, a custom range names related jobs only); else PMIX_ERR_NO_PERMISSIONS and a
// rate-limited log line. Its cached copy on a stream of every job (global, session, node) is
// replayed only to the jobs there when it was published, not to every job started later.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/events/event_cache.hpp"
#include "actors/events/notify_rights.hpp"
#include "actors/protocol/events.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/jobctl.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/topic_publisher.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

struct EventOptions {
    std::size_t ring_size = 512;  // [events] cache_size
    std::string session = "0";    // this broker's session id (ev/s/<session>/)
    std::string host;             // this node (ev/node/<host>/); empty: gethostname()
    msg::Proc self;               // the source of runtime events
    std::chrono::milliseconds sync_timeout{10000};  // a registration's sync subscription must come
    std::string epoch = {};  // this start's stream id (msg::Event::epoch); empty: a random one
    // The allocation's brokers: with a tree, every event not for this node alone is relayed to the
    // others' events actors, which publish it to their nodes' subscribers. Null: alone.
    const BrokerMap *brokers = nullptr;
    // Testing only: publish every event numbered a multiple of this without sending it (0: off),
    // so subscribers must detect the gap and recover it from the cache.
    std::uint64_t test_drop_every = 0;
    // [events] max_custom_range: the most processes a PMIx_Notify_event's custom range may name
    // (each is a stream to publish, cache and relay): a larger one is refused, so that one
    // request cannot hold the broker from every other job.
    std::size_t max_custom_range = 4096;
    // [events] replay_size: the most recent events kept for monitors' EventsSince, whatever their
    // topic or caching (0: none kept, every request answered with a gap).
    std::size_t replay_size = 4096;
    // Under a host (the server library): a client's event whose range reaches beyond this node
    // also goes to the host's notify_event (msg::HostNotify), which carries it to its other nodes.
    bool to_host = false;
};

class EventBroker : public Actor {
  public:
    // `publishers`: the broker's (its ipc XPUB, and its tcp one when it serves tcp), on this
    // actor's reactor; only this actor publishes on them and hears their subscriptions. They
    // outlive the reactor's run.
    EventBroker(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces,
                std::vector<TopicPublisher *> publishers, EventOptions options);

    const EventCache &cache() const { return cache_; }
    const std::string &epoch() const { return opts_.epoch; }

  private:
    const NamespaceTable &namespaces_;
    EventOptions opts_;
    std::vector<TopicPublisher *> publishers_;
    EventCache cache_;
    std::unordered_map<std::string, std::uint64_t> heads_;  // stream -> last seq
    std::set<msg::Proc> strangers_;  // registered clients of namespaces the table lacks
    std::map<std::string, std::vector<msg::Proc>> completion_watchers_;  // nspace -> requesters
    struct PendingRegister {
        Envelope req;
        msg::EventRegister body;
        Reactor::TimerId timer = 0;
    };
    std::unordered_map<std::string, PendingRegister> awaiting_sync_;  // sync id -> request
    std::unordered_set<std::string> synced_;  // sync subscriptions seen before their request
    std::uint64_t bseq_ = 0;                  // the last number of this epoch
    std::deque<msg::PublishedEvent> replay_;  // the last replay_size published, for monitors
    std::map<std::int32_t, std::uint64_t> published_;  // by code, for `zpmix exporter`
    std::uint64_t dropped_ = 0;  // copies subscribers lost at their high-water mark
    NotifyRights rights_{namespaces_};

    void notify(const Envelope &env, msg::NotifyEvent &m);
    void register_handler(const Envelope &env, msg::EventRegister &m);
    void subscribe_handler(const Envelope &env, msg::EventRegister &m);

    // Under a host (host_registrations.cpp): a hosted client's handler for environment events
    // waits for the host's register_events; its end goes to deregister_events.
    std::map<std::uint64_t, PendingRegister> awaiting_host_;  // by the request's id to host
    std::uint64_t next_host_request_ = 1;
    bool asks_host(const Envelope &env, msg::EventRegister &m);
    void deregister_handler(const Envelope &env, msg::EventDeregister &m);
    void host_agreed(const Envelope &env, msg::Ok &m);
    void host_refused(const Envelope &env, msg::ErrorReply &m);
    void streams(const Envelope &env, msg::EventStreamsQuery &m);
    void resend(const Envelope &env, msg::EventResend &m);
    void since(const Envelope &env, msg::EventsSince &m);
    void stats(const Envelope &env, msg::EventStatsQuery &m);
    void ack(const Envelope &env, msg::EventAck &m);
    void notify_completion(const Envelope &env, msg::NotifyCompletion &m);
    void proc_ended(const Envelope &env, msg::ProcEnded &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    void namespace_ended(const Envelope &env, msg::NamespaceEnded &m);
    void abort_job(const Envelope &env, msg::AbortJob &m);
    void relayed(const Envelope &env, msg::EventRelay &m);
    void job_lifecycle(const Envelope &env, msg::JobLifecycle &m);
    void jobs_related(const Envelope &env, msg::JobsRelated &m);

    void on_subscription(bool subscribe, std::string_view topic);
    void complete_register(const Envelope &req, const msg::EventRegister &m);
    // Publishes ev to each of the range prefixes; returns PMIx status. `from_client`: a client's
    // (a rank's) event, whose cached copy on a stream of every job is replayed only to the jobs
    // there now.
    std::int32_t publish(msg::Event ev, bool cache, bool from_client = false);
    // relay: also to the other brokers (an event relayed here is not sent on again).
    void publish_on(const std::string &prefix, msg::Event ev, bool cache, bool relay = true,
                    bool from_client = false);
    // The namespaces a client's event on `prefix` may be replayed to: empty for any (a stream of
    // one job, or an event of the runtime's).
    std::set<std::string> replay_to(const std::string &prefix, const msg::Event &ev,
                                    bool from_client) const;
    std::vector<std::string> prefixes_of(const msg::Event &ev, std::string &error) const;
    std::set<msg::Proc> recipients(const std::string &prefix) const;
};

// The info blob of an event (the codec's [[key, flags, [type, payload]]...]) from typed values.
class InfoBlob {
  public:
    InfoBlob &add_int(const std::string &key, std::int64_t v);
    InfoBlob &add_status(const std::string &key, std::int32_t v);
    InfoBlob &add_bool(const std::string &key, bool v);
    InfoBlob &add_string(const std::string &key, const std::string &v);
    InfoBlob &add_procs(const std::string &key, const std::vector<msg::Proc> &v);  // data array
    msg::Blob bytes() const;

  private:
    std::vector<std::pair<std::string, std::function<void(msgpack::packer<msgpack::sbuffer> &)>>>
        items_;
};

}  // namespace zpmix
