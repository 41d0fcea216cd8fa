#pragma once
// A client process's event notification: its handler registry, its SUB socket on the broker's
// XPUB, and the requests that register, recover and acknowledge events. Everything runs on the
// Session's progress thread; the public calls may come from any thread.
//
// Registration: the process subscribes (once per stream) to the streams it may receive (its
// proc, namespace, node, session and the global one; environment streams only for handlers that
// asked), then to a unique sync topic, and sends "ev.register"; the broker answers once the sync
// subscription reached it, with the streams' heads and their cached events, which go to the new
// handler only. Live events then pass the StreamTracker (in order, once, gaps recovered) and run
// the handler chain.
//
// Its end (close(), PMIx_Finalize): the progress thread drops the socket and the timer, and every
// task, request answer or handler completion still queued for it finds it closed and does
// nothing (or fails its caller's callback with PMIX_ERR_INIT). Closing waits for the progress
// thread, so it is done by the owner, off that thread, before the session stops; afterwards the
// object holds nothing of the progress thread's and may be freed on any thread (by another
// thread's call that still held it).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "client/events/event_chain.hpp"
#include "client/events/stream_tracker.hpp"
#include "client/session.hpp"

namespace zpmix::client {

class ClientEvents {
  public:
    struct Identity {
        msg::Proc me;
        msg::JobInfo job;        // for the LOCAL source range
        std::string events_uri;  // empty: no broker (a singleton)
        std::string broker;      // the broker's name: the source of runtime events
        bool tool = false;       // a tool acts for the runtime: no client rule binds its events
    };
    ClientEvents(Session &session, Identity id);
    // Once closed: frees, never waits. Not closed yet: closes (so not on the progress thread).
    ~ClientEvents();
    // Waits for the progress thread to run the teardown, so that it is past whatever handler
    // is running now (on the progress thread itself: at once). Idempotent; not concurrent.
    void close();

    using Registered = std::function<void(pmix_status_t, std::size_t id)>;
    using OpDone = std::function<void(pmix_status_t)>;
    void register_handler(EventHandler h, Registered done);
    void deregister(std::size_t id, OpDone done);
    // PMIx_Notify_event: PROC_LOCAL runs here, the other ranges go through the broker.
    void notify(msg::Event ev, bool do_not_cache, OpDone done);
    // An event of this process alone (PMIX_ERR_LOST_CONNECTION, PMIX_MODEL_DECLARED...).
    void raise_local(msg::Event ev);
    // The library's own bookkeeping (a group's membership, which PMIx_Fence over the group uses):
    // `fn` sees, on the progress thread, every live event of these codes that reaches this
    // process, before its handlers and whatever they do (no replay of cached events).
    using Observer = std::function<void(const msg::Event &)>;
    void observe(std::vector<pmix_status_t> codes, Observer fn);
    // The library's part in an event's handling (its answer to PMIX_GROUP_LEADER_FAILED): `fn`
    // runs, on the progress thread, once the handlers of a live event of these codes have run (at
    // once when none takes it), with what they returned (EventChain::Done's results).
    using Outcome = std::function<void(const msg::Event &, const pmix_info_t *, size_t)>;
    void after(std::vector<pmix_status_t> codes, Outcome fn);
    // Subscribes this process to its job-level streams if no handler did, so that observers
    // hear their events, then calls `done` (on the progress thread); once subscribed, at once.
    void follow(std::function<void()> done = {});

    bool on_progress_thread() const;

  private:
    Session &session_;
    Identity id_;
    HandlerRegistry registry_;
    StreamTracker tracker_;
    std::unique_ptr<ZmtpConnection> sub_;  // on the broker's XPUB; progress thread only
    bool have_streams_ = false;
    std::string session_id_, host_;  // the PMIx session (its event topic) and node
    std::set<std::string> subscribed_;
    std::atomic<bool> following_{false};  // the job-level streams are subscribed and registered
    std::vector<std::pair<std::vector<pmix_status_t>, Observer>> observers_;
    std::vector<std::pair<std::vector<pmix_status_t>, Outcome>> outcomes_;
    std::uint64_t next_sync_ = 1;
    std::map<std::size_t, std::map<std::string, std::uint64_t>> replayed_upto_;
    std::set<std::string> to_ack_;    // streams with events delivered and not yet acknowledged
    Reactor::TimerId ack_timer_ = 0;  // acknowledgements are sent a little later, together
    bool closed_ = false;             // close() was called (its caller's thread)
    // False once closed (on the progress thread): what was posted or requested and outlives
    // the open object holds this, not the object, and does nothing.
    const std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(true);

    // Runs `fn(open)` on the progress thread; `fn` touches this object only when open.
    void post_open(std::function<void(bool open)> fn);

    void add_registered(EventHandler h, Registered done);
    // `codes`, `enviro`: the handler's (msg::EventRegister), for a host's register_events.
    void subscribe_and_register(std::size_t id, std::vector<std::string> streams, Registered done,
                                std::vector<std::int32_t> codes = {}, bool enviro = false);
    // `then` once the broker told this process's session and node (the streams' names).
    void with_streams(std::function<void(pmix_status_t)> then);
    std::vector<std::string> streams_for(const EventHandler &h) const;
    void on_sub();
    void deliver(std::vector<msg::Event> events);
    void recover(const StreamTracker::Gap &gap);
    void note_for_ack(const msg::Event &ev);  // delivered: acknowledge if the broker keeps it
    void send_acks();                         // soon
    void flush_acks();                        // now
    void run_chain(const msg::Event &wire, std::vector<std::size_t> only = {},
                   EventChain::Done done = {});
    EventChain::Post poster();
};

}  // namespace zpmix::client
