#pragma once
// The broker's `iof` actor: I/O forwarding for tools and clients (PMIx_IOF_pull, _push,
// _deregister). It keeps each job's output in a bounded cache (`iof_cache_bytes`, the oldest
// goes, the bytes dropped counted), so a tool that pulls later gets what the job wrote before,
// then the job's output as it comes. Each pull has its own queue (PMIX_IOF_CACHE_SIZE), delivered
// in batches (PMIX_IOF_BUFFERING_SIZE/_TIME) with at most kWindow deliveries unacknowledged. What
// a full queue does is the puller's choice: by default nothing is lost (this actor is a paced
// consumer of the launchers' output, msg::OutputAck: it stops acknowledging a job's output while
// a lossless pull of it holds its queue's size, so the job's ranks wait for the puller as they
// wait for `zpmix run`); with PMIX_IOF_DROP_OLDEST or _NEWEST the queue drops, and the drops are
// reported with the next delivery. A slow puller costs the broker its queue and a window. Input
// (PMIx_IOF_push) goes to the launcher as `zpmix run --stdin` does (job.input), to the ranks
// named, on whichever broker runs them; end-of-input closes their stdin.
//
// Across nodes: in a tree every launcher sends each line of output to the root's `iof` (the
// launcher's to_iof), beside the requester's copy, so the root holds every job's whole output and
// its pulls are local. Why not subscriptions routed through the tree: each broker would then keep
// a cache of its own ranks, and every pull, acknowledgement and deregistration would go to every
// broker and be answered from each, with their own losses and orderings; the root already
// receives all output for `zpmix run`. The cost is each remote line crossing the tree twice. A
// pull made on another broker is relayed to the root's `iof`, which delivers to this one, which
// delivers to the puller; acknowledgements and deregistrations go back the same way, so the
// window and the queue are the root's as for a local pull. The relay holds nothing but the ids.
//
// A job a tool spawned with PMIX_FWD_STDOUT/_STDERR (msg::IofKeep) keeps its cache past its end
// while the tool's session lasts, so that the tool may pull the output once PMIx_Spawn returned
// whatever the job did meanwhile; at most kMaxKept such ended jobs, the oldest going first.
//
// Under a resource manager that hosts the broker, a hosted job's output comes from the host
// (PMIx_server_IOF_deliver, as msg::Output), a pull of it is told to the host (iof_pull) and input
// for it goes to the host (push_stdin).
//
// Access: clients (their own job only) and tools of the broker's uid (any job).
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/protocol/iof.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/session.hpp"
#include "actors/protocol/tree.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class IofActor : public Actor {
  public:
    struct Settings {
        std::size_t cache_bytes = std::size_t{1} << 20;  // per job; a pull's default too
        std::size_t max_pulls = 4096;
        std::chrono::milliseconds push_timeout{30000};   // the ranks take the input by then
        std::chrono::milliseconds relay_timeout{10000};  // the root answers a relayed request
    };
    static constexpr unsigned kWindow = 8;                  // deliveries unacknowledged
    static constexpr std::size_t kMaxDelivery = 64 * 1024;  // bytes per delivery
    static constexpr std::size_t kMaxKept = 64;             // ended jobs kept for their tools

    IofActor(Reactor &reactor, Bus &bus, const NamespaceTable &namespaces, const BrokerMap &brokers,
             Settings settings);

  private:
    // Bytes of output, oldest first, bounded.
    struct Queue {
        std::deque<msg::IofChunk> chunks;
        std::size_t bytes = 0;
        std::uint64_t dropped = 0;  // since last told
    };
    struct Pull {
        std::vector<msg::Proc> procs;
        std::uint16_t channels = 0;
        std::size_t cache_bytes = 0;
        std::uint8_t policy = msg::kIofLossless;
        bool holding = false;  // lossless and full: the jobs it pulls wait for it
        std::size_t buffering_bytes = 0;
        std::chrono::milliseconds buffering{0};
        Queue queue;
        unsigned in_flight = 0;
        Reactor::TimerId timer = 0;  // the buffering time of the oldest queued byte
        bool due = false;            // that time passed
    };
    using PullKey = std::pair<std::string, std::uint64_t>;  // the puller's peer, its pull's id
    // A pull relayed to the root's iof, by its id there (an id of this actor's).
    struct Relay {
        PullKey puller;
        Envelope request;            // the IofPull, answered when the root answers
        Reactor::TimerId timer = 0;  // the root's answer by then
    };
    struct Push {
        Envelope request;
        std::size_t waiting = 0;
        std::int32_t status = 0;
        Reactor::TimerId timer = 0;
    };

    const NamespaceTable &namespaces_;
    const BrokerMap &brokers_;
    Settings settings_;
    std::unordered_map<std::string, Queue> jobs_;  // each job's cache
    // IofKeep's: a job's namespace -> the tool's peer it is kept for; its end moves it to kept_.
    std::unordered_map<std::string, std::string> keep_for_;
    std::deque<std::pair<std::string, std::string>> kept_;  // ended jobs kept, oldest first
    std::map<PullKey, Pull> pulls_;
    // The output received of each job from each broker, and how much of it was acknowledged.
    struct Flow {
        std::uint64_t received = 0, acked = 0;
    };
    std::map<std::pair<std::string, std::uint32_t>, Flow> flows_;  // (namespace, broker)
    std::map<std::uint64_t, Push> pushes_;                         // by push id
    std::map<std::uint64_t, std::uint64_t> inputs_;                // an Input's id -> its push
    std::map<std::uint64_t, Relay> relays_;                        // by the id at the root
    std::map<PullKey, std::uint64_t> relayed_;         // a puller's pull -> its id at the root
    std::map<std::uint64_t, Envelope> deregistering_;  // relayed IofDeregisters, by request id
    std::uint64_t next_id_ = 1;

    void output(const Envelope &env, msg::Output &m);
    void pull(const Envelope &env, msg::IofPull &m);
    void ack(const Envelope &env, msg::IofAck &m);
    void deregister(const Envelope &env, msg::IofDeregister &m);
    void push(const Envelope &env, msg::IofPush &m);
    void input_taken(const Envelope &env, msg::InputTaken &m);
    // An Input, a relayed pull or a relayed deregistration refused.
    void refused(const Envelope &env, msg::ErrorReply &m);
    void keep(const Envelope &env, msg::IofKeep &m);
    void ended(const Envelope &env, msg::NamespaceEnded &m);
    void session_closed(const Envelope &env, msg::SessionClosed &m);
    void tree_lost(const Envelope &env, msg::TreeLost &m);
    // The root's side of a relayed pull: its answer, its deliveries, a deregistration's answer.
    void relay_pulled(const Envelope &env, msg::IofPulled &m);
    void relay_deliver(const Envelope &env, msg::IofDeliver &m);
    void relay_deregistered(const Envelope &env, msg::Ok &m);

    // Whether the sender may read or feed this job (a client: its own only).
    static bool may_use(const Envelope &env, const std::vector<msg::Proc> &procs);
    static bool matches(const Pull &p, const msg::IofChunk &c);
    // Appends to a queue bounded by `limit`: what does not fit is dropped (and counted) as the
    // policy says; a lossless queue takes everything (its senders wait once it is full).
    static void enqueue(Queue &q, const msg::IofChunk &c, std::size_t limit, std::uint8_t policy);
    // Acknowledges a job's output to the launchers that sent it, unless a pull holds the job;
    // `all`: whatever is unacknowledged, else only once kOutputAckBytes are.
    void acknowledge(const std::string &nspace, bool all);
    bool held(const std::string &nspace) const;
    static bool pulls_job(const Pull &p, const std::string &nspace);
    void offer(const PullKey &key, Pull &p, const msg::IofChunk &c);
    // Sends what the pull may send now; `all`: whatever waits, buffering aside.
    void flush(const PullKey &key, Pull &p, bool all);
    // Under a resource manager that hosts the broker: the hosted processes of a pull go to its
    // iof_pull upcall (`hostsvc`), which has it deliver their output.
    void tell_host(const std::vector<msg::Proc> &procs, std::uint16_t channels);
    void drop_pull(std::map<PullKey, Pull>::iterator it);
    void relay_pull(const Envelope &env, const msg::IofPull &m);
    void drop_relay(std::uint64_t id);
    void push_step(std::uint64_t push_id, std::int32_t status);
};

}  // namespace zpmix
