#pragma once
// A node's broker: its actors (add_standard_actors()) on one reactor thread, the launcher on a
// reactor thread of its own; a ROUTER for clients, tools and launchers and an XPUB for events,
// both on ipc and spoken by the broker itself (ZmtpListener), admitting only the broker's uid;
// optionally libzmq's ROUTER on tcp, whose ZAP handler marks its peers as remote. On tcp a frame
// is at most zmtp::kTcpFrameLimit (larger messages come in pieces, rejoined here) and a TcpGate
// bounds the connections that have not authenticated. At start the soft descriptor limit is
// raised to the hard one, as servers do (the ranks get their caller's limits).
//
//   Broker b(config);                    // nothing is bound yet
//   b.add_actor<MyActor>(args...);       // optional, before start()
//   b.start();                           // binds, writes <run_dir>/broker.json, runs
//   ... b.uri() ...
//   b.stop();                            // ends jobs, joins, removes every file it made
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "actors/launcher/watchdog.hpp"
#include "actors/registry/namespace_table.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/runtime/curve_keys.hpp"
#include "actors/runtime/log_throttle.hpp"
#include "actors/runtime/tcp_gate.hpp"
#include "actors/tree/broker_map.hpp"
#include "broker/config.hpp"
#include "broker/tcp_publisher.hpp"
#include "broker/zmtp_listener.hpp"

namespace zpmix {

class Registry;

class Dispatcher;
class Launcher;
namespace tree {
class TreeLink;
}

// Another live broker already owns the run directory.
struct BrokerRunning : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Broker {
  public:
    explicit Broker(Config config);
    ~Broker();  // stops if still running
    Broker(const Broker &) = delete;
    Broker &operator=(const Broker &) = delete;

    // Binds the sockets, writes the rendezvous file and starts the reactor thread. Throws
    // BrokerRunning, or std::runtime_error when a socket or the run directory cannot be made.
    void start();
    // Terminates the jobs it launched (SIGTERM, SIGKILL after kill_grace_ms), stops the reactor,
    // joins it and removes the sockets, rendezvous file and run directory. Idempotent.
    void stop();
    // Thread-safe and non-blocking (also from a reactor callback): begins what stop() does.
    void request_stop();
    // Blocks until the broker has stopped (by stop(), request_stop() or a signal), then cleans up.
    void wait();
    // With a tree (config.tree_size > 1), after start(): blocks until every broker of it is up
    // (empty) or it failed to come up (why, naming the nodes). Empty at once without a tree.
    std::string wait_tree(std::chrono::milliseconds limit);
    // Whether it stopped because the tree lost its parent broker, or because that stopped.
    bool lost_parent() const { return lost_parent_; }
    bool parent_stopped() const { return parent_stopped_; }
    // The addresses child brokers reach this one's tree socket at (empty without a tree).
    std::vector<std::string> tree_addresses() const;

    const std::string &uri() const { return uri_; }
    const std::string &events_uri() const { return events_uri_; }
    const std::string &tcp_uri() const { return tcp_uri_; }  // empty unless tcp is on
    // tcp's CURVE keypair ("PUBLIC SECRET", what a client's $ZPMIX_TCP_KEYS holds); after start.
    std::string tcp_keys() const { return tcp_keys_.text(); }
    const std::string &run_dir() const { return run_dir_; }
    const std::string &name() const { return name_; }
    const std::string &node() const { return node_; }
    const NamespaceTable &namespaces() const { return namespaces_; }
    const Config &config() const { return config_; }
    Reactor &reactor() { return reactor_; }
    Bus &bus() { return bus_; }

    // Constructs A(reactor(), bus(), args...) and registers it on the bus. Before start() only.
    template <class A, class... Args>
    A &add_actor(Args &&...args) {
        return add_actor_on<A>(reactor_, std::forward<Args>(args)...);
    }
    // The same, on another of the broker's reactors (an actor whose handlers block).
    template <class A, class... Args>
    A &add_actor_on(Reactor &reactor, Args &&...args) {
        auto actor = std::make_unique<A>(reactor, bus_, std::forward<Args>(args)...);
        A &ref = *actor;
        bus_.add(ref);
        actors_.push_back(std::move(actor));
        return ref;
    }

  private:
    void add_standard_actors();
    void prepare_run_dir();
    void on_tcp_router();
    void on_zap();
    void load_tcp_keys();
    void send_to_peer(const std::string &peer, zmq::message_t msg);
    void begin_shutdown();  // reactor thread
    void cleanup();

    Config config_;
    std::string name_;
    std::string node_;  // as the allocation names it (config.node), else the hostname
    std::string run_dir_;
    bool private_run_dir_ = false;  // made by us for an embedded broker: removed at stop
    int lock_fd_ = -1;              // holds <run_dir>/broker.lock while we live (stale_dirs.hpp)
    std::string uri_, events_uri_, tcp_uri_;
    CurveKeypair tcp_keys_;
    bool wrote_tcp_key_ = false;  // <run_dir>/tcp.key is ours to remove
    LogThrottle tcp_refusals_;    // of tcp peers' credentials (ZAP)
    std::shared_ptr<spdlog::logger> log_;
    std::uint32_t uid_;

    Reactor reactor_;
    // The launcher's own loop: a spawn blocks its thread until the child has exec'd (milliseconds
    // when cores are short), and the Hellos of the ranks already started must not wait for it.
    Reactor launcher_reactor_;
    Bus bus_;
    NamespaceTable namespaces_;  // written by the registry, read by every actor
    BrokerMap brokers_;          // written by the tree link, read by every actor
    std::vector<std::unique_ptr<Actor>> actors_;
    Dispatcher *dispatcher_ = nullptr;  // every peer's message enters through it
    Launcher *launcher_ = nullptr;
    tree::TreeLink *link_ = nullptr;  // with a tree only
    // Ends the jobs' processes and removes the run directory's files if this process dies.
    std::unique_ptr<Watchdog> watchdog_;

    std::unique_ptr<ZmtpListener> router_, xpub_;  // ipc: <run_dir>/broker.sock, events.sock
    zmq::context_t ctx_;
    zmq::socket_t zap_, tcp_router_;          // only with config.tcp
    std::unique_ptr<TcpPublisher> tcp_xpub_;  // only with config.tcp: events for tcp peers
    // With config.tcp: what tcp peers that have not authenticated may hold (after ctx_: its
    // monitors close first).
    std::unique_ptr<TcpGate> tcp_gate_;
    Registry *registry_ = nullptr;
    int signal_fd_ = -1;

    std::thread thread_, launcher_thread_;
    std::atomic<bool> started_{false}, shutting_down_{false};
    std::atomic<bool> lost_parent_{false};     // it stopped because its parent broker was lost
    std::atomic<bool> parent_stopped_{false};  // ... because its parent broker stopped
    std::mutex cleanup_mu_;
    bool cleaned_ = false;
};

}  // namespace zpmix
