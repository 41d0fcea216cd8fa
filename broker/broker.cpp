#include "broker/broker.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include <pmix_common.h>

#include "actors/events/event_broker.hpp"
#include "actors/fence/fence_reducer.hpp"
#include "actors/group/group_tracker.hpp"
#include "actors/iof/iof_actor.hpp"
#include "actors/jobctl/job_control.hpp"
#include "actors/jobctl/log_sink.hpp"
#include "actors/launcher/job_coordinator.hpp"
#include "actors/launcher/launcher.hpp"
#include "actors/modex/modex_store.hpp"
#include "actors/monitor/process_monitor.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/pset/pset_registry.hpp"
#include "actors/query/query_actor.hpp"
#include "actors/registry/registry.hpp"
#include "actors/runtime/zmq_frames.hpp"
#include "actors/tree/link.hpp"
#include "broker/dispatcher.hpp"
#include "broker/stale_dirs.hpp"

namespace zpmix {

namespace fs = std::filesystem;

namespace {

std::string hostname() {
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

// Makes `dir` (mode 0700), or takes it if it is a real directory of ours under trusted ancestors
// (rendezvous.hpp). One of ours that others could write is made private, unless it holds what
// another user put there (UntrustedPath, as for any other failed check).
void make_private_dir(const std::string &dir, spdlog::logger &log) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw std::system_error(errno, std::generic_category(), "mkdir " + dir);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0)
        throw std::system_error(errno, std::generic_category(), "stat " + dir);
    if (S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && (st.st_mode & 077) != 0) {
        if (st.st_mode & 022) {
            std::error_code ec;
            for (const auto &entry : fs::directory_iterator(dir, ec)) {
                struct stat e {};
                if (::lstat(entry.path().c_str(), &e) == 0 && e.st_uid != ::getuid())
                    throw UntrustedPath(fmt::format(
                        "refusing {}: others could write it (mode {:04o}) and {} belongs to uid "
                        "{}; remove it, or set XDG_RUNTIME_DIR to a private directory",
                        dir, st.st_mode & 07777, entry.path().string(), e.st_uid));
            }
            log.warn("{} was mode {:04o}, which others could write: made private (0700)", dir,
                     st.st_mode & 07777);
        }
        if (::chmod(dir.c_str(), 0700) != 0)
            throw std::system_error(errno, std::generic_category(), "chmod " + dir);
    }
    check_trusted_dir(dir);
}

// The soft descriptor limit up to the hard one, as servers do: every connection, rank and pipe
// is a descriptor, and tcp peers that never authenticate hold some (TcpGate keeps a reserve).
// Ranks get their caller's limits back (msg::Caller), not these.
void raise_descriptor_limit(spdlog::logger &log) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    const rlim_t was = rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = was;
    }
    auto text = [](rlim_t v) {
        return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v);
    };
    log.info("descriptors: soft limit {} (was {}), hard {}{}", text(rl.rlim_cur), text(was),
             text(rl.rlim_max),
             rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 4096
                 ? " (few for a broker that serves many: raise the hard limit, LimitNOFILE)"
                 : "");
}

// "ipc:<uid>:<pid>" or "tcp", as the ZAP handler vouched for the connection; a tcp peer's
// address as libzmq saw it.
PeerCredentials credentials_of(const char *user_id, const char *address) {
    PeerCredentials p;
    const std::string_view u = user_id ? user_id : "";
    if (u == "tcp") {
        p.tcp = true;
        if (address) p.address = address;
    } else if (u.starts_with("ipc:")) {
        p.ipc = true;
        const char *s = u.data() + 4;
        char *end = nullptr;
        p.uid = std::strtoll(s, &end, 10);
        if (end && *end == ':') p.pid = std::strtoll(end + 1, nullptr, 10);
    }
    return p;
}

}  // namespace

Broker::Broker(Config config)
    : config_(std::move(config)),
      node_(config_.node.empty() ? hostname() : config_.node),
      uid_(::getuid()),
      brokers_(node_) {
    static std::atomic<unsigned> embedded_count{0};
    log_ = spdlog::default_logger()->clone("broker");
    if (!config_.hosted) raise_descriptor_limit(*log_);  // a host's process is its own
    bus_.peer_log().configure(
        {.lines = config_.log_peer_lines,
         .overall = 20 * config_.log_peer_lines,
         .interval = std::chrono::milliseconds(config_.log_peer_interval_ms)});
    if (config_.run_dir.empty()) {
        // A host's directory is the host's to trust; ours must be private.
        const std::string base =
            config_.run_dir_base.empty() ? default_base_dir() : config_.run_dir_base;
        if (config_.run_dir_base.empty()) make_private_dir(base, *log_);
        run_dir_ =
            base + "/broker-" + std::to_string(::getpid()) + "-" + std::to_string(embedded_count++);
        fs::remove_all(run_dir_);  // a leftover of an earlier process that had our pid
        private_run_dir_ = true;
    } else {
        run_dir_ = fs::absolute(config_.run_dir).lexically_normal().string();
        if (run_dir_.size() > 1 && run_dir_.back() == '/') run_dir_.pop_back();
    }
    make_private_dir(run_dir_, *log_);
    // A host's clients of another user reach the broker through its directory and sockets.
    if (config_.client_uid >= 0 && config_.client_uid != static_cast<std::int64_t>(uid_) &&
        ::chown(run_dir_.c_str(), static_cast<uid_t>(config_.client_uid), -1) != 0)
        throw std::system_error(
            errno, std::generic_category(),
            "cannot give " + run_dir_ + " to uid " + std::to_string(config_.client_uid));
    if (private_run_dir_) lock_fd_ = lock_run_dir(run_dir_);  // ours from here on
    for (const std::string &base : stale_dir_bases()) remove_stale_run_dirs(base, *log_);
    if (private_run_dir_)
        watchdog_ = std::make_unique<Watchdog>(std::vector<std::string>{run_dir_}, std::string());
    else  // a configured directory: only what this broker made in it
        watchdog_ = std::make_unique<Watchdog>(
            [this] {
                std::vector<std::string> mine{run_dir_ + "/session", run_dir_ + "/broker.sock",
                                              run_dir_ + "/events.sock", rendezvous_path(run_dir_),
                                              run_dir_ + "/broker.lock"};
                if (!config_.tcp.empty() && config_.tcp_key_file.empty())
                    mine.push_back(run_dir_ + "/tcp.key");
                return mine;
            }(),
            run_dir_);
    name_ = hostname() + ":" + std::to_string(::getpid());
    uri_ = "ipc://" + run_dir_ + "/broker.sock";
    events_uri_ = "ipc://" + run_dir_ + "/events.sock";
    // ipc paths are bounded by sun_path: fail here with a clear message rather than in bind.
    if (run_dir_.size() + 13 > 107)
        throw std::runtime_error("run directory path too long for an ipc socket: " + run_dir_);
    std::size_t max_peers = config_.max_connections;
    if (max_peers == 0) {  // the launcher raises the soft limit to the hard one
        rlimit rl{};
        const rlim_t fds = ::getrlimit(RLIMIT_NOFILE, &rl) != 0 ? 1024
                           : rl.rlim_max == RLIM_INFINITY       ? rlim_t{1} << 20
                                                                : rl.rlim_max;
        max_peers = std::max<std::size_t>(64, fds / 4);
    }
    router_ = std::make_unique<ZmtpListener>(
        reactor_, ZmtpListener::Settings{.path = uri_.substr(6),
                                         .kind = ZmtpListener::Kind::router,
                                         .uid = uid_,
                                         .also_uid = config_.client_uid,
                                         .max_message = config_.max_message_bytes,
                                         .max_output = config_.max_peer_output_bytes,
                                         .max_peers = max_peers,
                                         .peer_log = &bus_.peer_log()});
    // Per subscriber; beyond it events drop (and are resent).
    xpub_ = std::make_unique<ZmtpListener>(
        reactor_, ZmtpListener::Settings{.path = events_uri_.substr(6),
                                         .kind = ZmtpListener::Kind::publisher,
                                         .uid = uid_,
                                         .also_uid = config_.client_uid,
                                         .max_message = config_.max_message_bytes,
                                         .sndhwm = static_cast<std::size_t>(config_.event_sndhwm),
                                         .max_output = config_.max_peer_output_bytes,
                                         .max_peers = max_peers,
                                         .peer_log = &bus_.peer_log()});
    if (!config_.tcp.empty()) {
        tcp_xpub_ = std::make_unique<TcpPublisher>(
            reactor_, ctx_,
            TcpPublisher::Settings{.sndhwm = config_.event_sndhwm,
                                   .heartbeat_ivl_ms = config_.tcp_heartbeat_ivl_ms,
                                   .heartbeat_timeout_ms = config_.tcp_heartbeat_timeout_ms,
                                   .handshake_timeout_ms = config_.tcp_handshake_timeout_ms});
        tcp_gate_ = std::make_unique<TcpGate>(
            reactor_, ctx_, *log_,
            TcpGate::Settings{
                .name = "tcp",
                .max_unauthenticated = config_.tcp_max_unauthenticated,
                .max_per_address = config_.tcp_max_unauthenticated_per_address,
                .handshake_timeout = std::chrono::milliseconds(config_.tcp_handshake_timeout_ms),
                .failures_burst = config_.tcp_failed_handshakes_burst,
                .failures_per_minute = config_.tcp_failed_handshakes_per_minute});
        // Out of descriptors on ipc: the local clients come first.
        for (ZmtpListener *l : {router_.get(), xpub_.get()})
            l->on_out_of_descriptors(
                [this] { return tcp_gate_->shed_all("the ipc listeners are out of descriptors"); });
    }
    add_standard_actors();
}

// ---- The broker's actors. Other issues append their add_actor<...>() lines here. ----------
void Broker::add_standard_actors() {
    dispatcher_ = &add_actor<Dispatcher>(DecodeLimits{.max_message = config_.max_message_bytes});
    registry_ = &add_actor<Registry>(namespaces_, name_, events_uri_, config_.max_message_bytes);
    if (config_.hosted) registry_->send_tools_to_host();
    launcher_ = &add_actor_on<Launcher>(
        launcher_reactor_,
        Launcher::Settings{
            run_dir_, uri_, node_, config_.kill_grace_ms, config_.client_write_timeout_ms,
            config_.group_timeout_ms, watchdog_.get(), config_.output_window_bytes, config_.hosted,
            config_.hosted && config_.host_spawns, config_.hosted ? &namespaces_ : nullptr},
        brokers_);
    add_actor<JobCoordinator>(brokers_);
    add_actor<ModexStore>(namespaces_, brokers_, std::chrono::milliseconds(config_.get_timeout_ms));
    add_actor<FenceReducer>(namespaces_, brokers_);
    std::vector<TopicPublisher *> publishers{xpub_.get()};
    if (tcp_xpub_) publishers.push_back(tcp_xpub_.get());
    add_actor<EventBroker>(namespaces_, std::move(publishers),
                           EventOptions{.ring_size = config_.event_cache_size,
                                        .host = node_,
                                        .self = {name_, 0},
                                        .brokers = &brokers_,
                                        .test_drop_every = config_.event_test_drop_every,
                                        .max_custom_range = config_.event_max_custom_range,
                                        .replay_size = config_.event_replay_size,
                                        .to_host = config_.hosted});
    add_actor<JobControl>(
        namespaces_, brokers_,
        JobControl::Settings{.broker = name_,
                             .kill_grace = std::chrono::milliseconds(config_.kill_grace_ms),
                             .keep_finished = std::chrono::seconds(config_.keep_finished_s)});
    add_actor<ProcessMonitor>(ProcessMonitor::Settings{
        config_.monitor_terminate, std::chrono::milliseconds(config_.monitor_time_unit_ms),
        config_.monitor_by_host, config_.monitor_alerts_to_host});
    add_actor<LogSink>(LogSink::Settings{config_.log_syslog_socket, config_.hosted});
    add_actor<PsetRegistry>(namespaces_, brokers_, name_);
    add_actor<QueryActor>(namespaces_, brokers_, std::chrono::seconds(12), config_.hosted);
    add_actor<IofActor>(namespaces_, brokers_,
                        IofActor::Settings{.cache_bytes = config_.iof_cache_bytes});
    add_actor<GroupTracker>(
        namespaces_, brokers_,
        GroupTracker::Settings{std::chrono::milliseconds(config_.group_timeout_ms)});
    if (config_.tree_size > 1) {
        tree::LinkSettings t;
        t.rank = config_.tree_rank;
        t.size = config_.tree_size;
        t.radix = config_.tree_radix;
        t.parent = config_.tree_parent;
        t.node = node_;
        t.tcp_if = config_.tree_tcp_if;
        t.public_key = config_.tree_public_key;
        t.secret_key = config_.tree_secret_key;
        t.heartbeat = std::chrono::milliseconds(config_.tree_heartbeat_ms);
        t.lost_after = std::chrono::milliseconds(config_.tree_lost_after_ms);
        t.boot_timeout = std::chrono::milliseconds(config_.tree_boot_timeout_ms);
        t.boot = {config_.tree_nodes,       config_.tree_rsh_agent, config_.tree_zpmix,
                  config_.tree_broker_args, config_.tree_launcher,  config_.tree_munge_socket};
        t.max_message = config_.max_message_bytes;
        t.standing = config_.tree_standing;
        t.port = config_.tree_port;
        t.failures_burst = config_.tcp_failed_handshakes_burst;
        t.failures_per_minute = config_.tcp_failed_handshakes_per_minute;
        link_ = &add_actor<tree::TreeLink>(std::move(t), brokers_, [this](bool lost) {
            (lost ? lost_parent_ : parent_stopped_) = true;
            begin_shutdown();
        });
    }
}
// -------------------------------------------------------------------------------------------

Broker::~Broker() {
    try {
        stop();
    } catch (const std::exception &e) {
        log_->error("while stopping: {}", e.what());
    }
}

void Broker::start() {
    if (started_.exchange(true)) throw std::logic_error("Broker::start called twice");
    const std::string rdv = rendezvous_path(run_dir_);
    if (!private_run_dir_) {
        // The lock says whether the directory's broker lives (its pid may be another's by now).
        try {
            lock_fd_ = lock_run_dir(run_dir_);
        } catch (const std::system_error &e) {
            started_ = false;  // nothing of ours to clean up: the files are the live broker's
            const auto old = read_rendezvous(rdv);
            throw BrokerRunning("a broker" +
                                (old ? " (pid " + std::to_string(old->pid) + ")" : std::string()) +
                                " is already running in " + run_dir_ + " (" + e.what() + ")");
        }
        if (auto old = read_rendezvous(rdv)) {
            // A broker that holds no lock (of an earlier build) is alive while its pid is.
            if (old->pid != ::getpid() && process_alive(old->pid)) {
                ::close(std::exchange(lock_fd_, -1));
                started_ = false;
                throw BrokerRunning("a broker (pid " + std::to_string(old->pid) +
                                    ") is already running in " + run_dir_);
            }
            log_->info("reclaiming {}: its broker (pid {}) is gone", run_dir_, old->pid);
            ::unlink(rdv.c_str());
        }
        // Its jobs' session directories too: nothing of a dead broker is anyone's now.
        std::error_code ec;
        if (fs::exists(run_dir_ + "/session", ec)) {
            log_->info("removing {}/session left by a broker that is gone", run_dir_);
            fs::remove_all(run_dir_ + "/session", ec);
        }
    }
    if (auto err = watchdog_->start(); !err.empty())
        log_->warn("no watchdog: if this broker dies, its ranks and {} stay: {}", run_dir_, err);

    if (config_.handle_signals) {
        // Blocked before the first socket exists, so ZeroMQ's I/O threads inherit the mask and
        // the signals reach only our signalfd.
        sigset_t set;
        sigemptyset(&set);
        for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (signal_fd_ < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
    }

    router_->listen();
    xpub_->listen();
    if (config_.client_uid >= 0 && config_.client_uid != static_cast<std::int64_t>(uid_))
        for (const std::string &uri : {uri_, events_uri_})
            if (::chown(uri.substr(6).c_str(), static_cast<uid_t>(config_.client_uid), -1) != 0)
                throw std::system_error(errno, std::generic_category(),
                                        "cannot give " + uri.substr(6) + " to uid " +
                                            std::to_string(config_.client_uid));
    if (!config_.tcp.empty()) {
        load_tcp_keys();
        zap_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
        zap_.set(zmq::sockopt::linger, 0);
        zap_.bind("inproc://zeromq.zap.01");
        tcp_router_ = zmq::socket_t(ctx_, zmq::socket_type::router);
        // CURVE: nothing crosses the network in clear, and a peer without the keypair does not
        // get past the handshake (on_zap); a NULL peer is dropped by libzmq (on_tcp_monitor).
        tcp_router_.set(zmq::sockopt::curve_server, 1);
        tcp_router_.set(zmq::sockopt::curve_secretkey, tcp_keys_.secret_key);
        tcp_router_.set(zmq::sockopt::zap_domain, "zpmix");
        // No frame over kTcpFrameLimit, the handshake's included: a peer that has not
        // authenticated makes the broker hold little (TcpGate bounds how many); larger messages
        // come in pieces (on_tcp_router).
        tcp_router_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(zmtp::kTcpFrameLimit));
        tcp_router_.set(zmq::sockopt::router_mandatory, 1);
        tcp_router_.set(zmq::sockopt::sndhwm, 100000);
        tcp_router_.set(zmq::sockopt::rcvhwm, 100000);
        // A peer whose node died says nothing: PINGs find it out. The handshake's limit drops
        // one that connects and says nothing from the start.
        tcp_router_.set(zmq::sockopt::heartbeat_ivl, config_.tcp_heartbeat_ivl_ms);
        tcp_router_.set(zmq::sockopt::heartbeat_timeout, config_.tcp_heartbeat_timeout_ms);
        tcp_router_.set(zmq::sockopt::heartbeat_ttl, config_.tcp_heartbeat_timeout_ms);
        tcp_router_.set(zmq::sockopt::handshake_ivl, config_.tcp_handshake_timeout_ms);
        tcp_gate_->watch(tcp_router_);
        tcp_gate_->watch(tcp_xpub_->socket());
        tcp_router_.bind(config_.tcp);
        tcp_uri_ = tcp_router_.get(zmq::sockopt::last_endpoint);
        registry_->set_tcp_events_uri(tcp_xpub_->bind(config_.tcp, tcp_keys_.secret_key));
    }

    if (link_) link_->open();
    write_rendezvous(
        rdv, {uri_, events_uri_, tcp_uri_, ::getpid(), uid_, build::protocol_version, hostname(),
              config_.tree_standing ? config_.tree_nodes : std::vector<std::string>{}});

    bus_.set_peer_sink(reactor_, [this](const std::string &peer, zmq::message_t msg) {
        send_to_peer(peer, std::move(msg));
    });
    router_->on_message(
        [this](const std::string &peer, const std::vector<std::string_view> &frames,
               const PeerCredentials &cred) { dispatcher_->route(peer, frames, cred); });
    router_->on_disconnect([this](const std::string &peer) { dispatcher_->peer_gone(peer); });
    if (tcp_router_) {
        reactor_.watch(zap_, [this] { on_zap(); });
        reactor_.watch(tcp_router_, [this] { on_tcp_router(); });
    }
    if (signal_fd_ >= 0) {
        reactor_.watch_fd(signal_fd_, [this] {
            signalfd_siginfo si{};
            while (::read(signal_fd_, &si, sizeof si) == sizeof si) {
                log_->info("received signal {} ({}): shutting down", si.ssi_signo,
                           strsignal(static_cast<int>(si.ssi_signo)));
                begin_shutdown();
            }
        });
    }
    // How many lines each peer's misbehaviour left out of the log, once it fell silent.
    reactor_.every(bus_.peer_log().interval(), [this] { bus_.peer_log().sweep(*log_); });
    log_->info("broker {} listening on {}{}", name_, uri_,
               tcp_uri_.empty() ? "" : " and " + tcp_uri_);
    auto run = [this](Reactor &reactor) {
        try {
            reactor.run();
        } catch (const std::exception &e) {
            log_->critical("reactor failed: {}", e.what());
        }
    };
    launcher_thread_ = std::thread(run, std::ref(launcher_reactor_));
    thread_ = std::thread(run, std::ref(reactor_));
}

void Broker::request_stop() {
    if (!started_) return;
    reactor_.post([this] { begin_shutdown(); });
}

void Broker::stop() {
    request_stop();
    wait();
}

void Broker::wait() {
    {
        std::lock_guard lock(cleanup_mu_);
        if (thread_.joinable()) thread_.join();
        if (launcher_thread_.joinable()) launcher_thread_.join();
    }
    cleanup();
}

std::string Broker::wait_tree(std::chrono::milliseconds limit) {
    return link_ ? link_->wait_ready(limit) : std::string();
}

std::vector<std::string> Broker::tree_addresses() const {
    return link_ ? link_->addresses() : std::vector<std::string>{};
}

void Broker::begin_shutdown() {
    if (shutting_down_.exchange(true)) return;
    if (link_) link_->shutdown();
    launcher_reactor_.post([this] {
        launcher_->shutdown([this] {
            launcher_reactor_.stop();
            reactor_.stop();
        });
    });
}

void Broker::cleanup() {
    std::lock_guard lock(cleanup_mu_);
    if (cleaned_) return;
    cleaned_ = true;
    if (started_) {
        // Let the last replies (JobEnded...) leave, but never wait on a peer that is gone.
        router_->close(std::chrono::milliseconds(200));
        xpub_->close();
        if (tcp_router_) {
            tcp_router_.set(zmq::sockopt::linger, 200);
            tcp_gate_->close();
            tcp_router_.close();
            tcp_xpub_->close();
            zap_.close();
        }
        const std::string rdv = rendezvous_path(run_dir_);
        if (auto info = read_rendezvous(rdv); info && info->pid == ::getpid())
            ::unlink(rdv.c_str());
    }
    if (signal_fd_ >= 0) ::close(signal_fd_);
    if (link_) link_->close();
    ctx_.close();
    std::error_code ec;
    if (started_) launcher_->remove_session_dir();
    if (wrote_tcp_key_) fs::remove(run_dir_ + "/tcp.key", ec);
    if (lock_fd_ >= 0 && !private_run_dir_) fs::remove(run_dir_ + "/broker.lock", ec);
    if (private_run_dir_)
        fs::remove_all(run_dir_, ec);
    else
        fs::remove(run_dir_, ec);  // only when empty: it may be shared with embedded brokers
    if (lock_fd_ >= 0) ::close(lock_fd_);  // after the removal: until then the directory is ours
    lock_fd_ = -1;
    watchdog_->quit();  // last: a broker that dies while stopping still leaves nothing
    if (started_) log_->info("broker {} stopped", name_);
}

void Broker::on_zap() {
    // ZAP request: version, request id, domain, address, routing id, mechanism[, credentials].
    std::vector<zmq::message_t> req = next_message(zap_);
    if (req.size() < 6) return;
    const std::string address = req[3].to_string();
    std::string status = "200", text = "OK", user_id;
    // ipc peers: "<...>:<uid>:<gid>:<pid>" from SO_PEERCRED. tcp binds are IPv4: no colon.
    const auto last = address.rfind(':');
    if (last == std::string::npos) {
        // The only client key we know is the keypair's own: a client proves it holds the
        // secret half in its CURVE vouch.
        const auto ours = CurveKeypair::decode(tcp_keys_.public_key);
        if (req[5].to_string() == "CURVE" && req.size() >= 7 && ours && req[6].size() == 32 &&
            std::memcmp(req[6].data(), ours->data(), 32) == 0) {
            user_id = "tcp";
        } else {
            std::uint64_t left_out = 0;
            if (tcp_refusals_.allow(left_out))
                log_->warn("refused a tcp connection from {}: its CURVE key is not the broker's{}",
                           address, LogThrottle::suffix(left_out));
            status = "400";
            text = "not the broker's key";
            if (tcp_gate_) tcp_gate_->refused_credentials(address);  // its failures are limited
        }
    } else {
        const auto gid_colon = address.rfind(':', last - 1);
        const auto uid_colon = gid_colon == std::string::npos || gid_colon == 0
                                   ? std::string::npos
                                   : address.rfind(':', gid_colon - 1);
        const long long pid = std::strtoll(address.c_str() + last + 1, nullptr, 10);
        const long long uid = uid_colon == std::string::npos
                                  ? -1
                                  : std::strtoll(address.c_str() + uid_colon + 1, nullptr, 10);
        if (uid < 0 || uid != static_cast<long long>(uid_)) {
            log_->warn(
                "refused an ipc connection from uid {} pid {}: the broker serves uid {} only", uid,
                pid, uid_);
            status = "400";
            text = "wrong uid";
        } else {
            user_id = "ipc:" + std::to_string(uid) + ":" + std::to_string(pid);
        }
    }
    zap::reply(zap_, req[1], status, text, user_id);
}

void Broker::load_tcp_keys() {
    if (!config_.tcp_key_file.empty()) {
        // The operator's credential over tcp: root's or ours, mode 0600.
        const auto text =
            read_trusted_file(config_.tcp_key_file, FileTrust{.secret = true, .root_ok = true});
        auto keys = text ? CurveKeypair::parse(*text) : std::nullopt;
        if (!keys)
            throw std::runtime_error("[broker] tcp_key_file " + config_.tcp_key_file +
                                     ": not a file of \"PUBLIC SECRET\" (40-character Z85 keys)");
        tcp_keys_ = *keys;
        return;
    }
    tcp_keys_ = CurveKeypair::generate();
    const std::string path = run_dir_ + "/tcp.key";
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    const std::string line = tcp_keys_.text() + "\n";
    if (fd < 0 || ::fchmod(fd, 0600) != 0 ||
        ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        const int err = errno;
        if (fd >= 0) ::close(fd);
        throw std::system_error(err, std::generic_category(), "writing " + path);
    }
    ::close(fd);
    wrote_tcp_key_ = true;
    log_->info("tcp clients need the keypair in {} (as $ZPMIX_TCP_KEYS)", path);
}

void Broker::on_tcp_router() {
    // A bounded batch per wake-up, so that timers and other sockets get their turn.
    for (int n = 0; n < 256; ++n) {
        std::vector<zmq::message_t> parts = next_message(tcp_router_);
        if (parts.empty()) return;
        if (parts.size() < 2) continue;
        const std::string peer = parts[0].to_string();
        // Its first message: the connection authenticated (CURVE and ZAP let it through).
        if (const int fd = zmq_msg_get(parts[1].handle(), ZMQ_SRCFD); fd >= 0)
            tcp_gate_->authenticated(fd);
        const char *user_id = nullptr, *address = nullptr;
        try {
            user_id = parts[1].gets("User-Id");
            address = parts[1].gets("Peer-Address");
        } catch (const zmq::error_t &) {
        }
        const PeerCredentials cred = credentials_of(user_id, address);
        std::uint64_t suppressed = 0;
        if (bus_.find(peer)) {
            if (bus_.peer_log().allow(peer_key(cred, peer), suppressed))
                log_->warn("dropped a message from a peer ({}) whose routing id names actor '{}'{}",
                           peer_key(cred, peer), peer, PeerLogLimit::suffix(suppressed));
            continue;
        }
        // One message in pieces of the tcp frame limit (zmq_frames.hpp): one frame again.
        auto whole = joined(parts, 1, config_.max_message_bytes);
        if (!whole) {
            if (bus_.peer_log().allow(peer_key(cred, peer), suppressed))
                log_->warn(
                    "dropped a message of peer {} ({}) over the limit of {} bytes "
                    "(max_message_bytes){}",
                    peer_name(peer), peer_key(cred, peer), config_.max_message_bytes,
                    PeerLogLimit::suffix(suppressed));
            dispatcher_->route(peer, {}, cred);  // refused with a reason, as a bad frame count
            continue;
        }
        const std::vector<std::string_view> frames{
            {static_cast<const char *>(whole->data()), whole->size()}};
        dispatcher_->route(peer, frames, cred);
    }
}

void Broker::send_to_peer(const std::string &peer, zmq::message_t msg) {
    // What went wrong is said per connection, within the limit per peer: a peer that sends many
    // requests and leaves (or stops reading) does not make a line of each answer.
    auto say = [&](spdlog::level::level_enum level, std::string_view what) {
        std::uint64_t suppressed = 0;
        if (bus_.peer_log().allow(peer_key({}, peer), suppressed))
            log_->log(level, "peer {}: {}{}", peer_name(peer), what,
                      PeerLogLimit::suffix(suppressed));
    };
    if (auto instead = dispatcher_->outgoing(peer, msg)) {
        if (instead->size() == 0) return;
        msg = std::move(*instead);
    }
    if (ZmtpListener::is_routing_id(peer)) {
        switch (router_->send(peer, {static_cast<const char *>(msg.data()), msg.size()})) {
            case ZmtpListener::Sent::ok:
                break;
            case ZmtpListener::Sent::gone:
                say(spdlog::level::info, "gone, message dropped");
                break;
            case ZmtpListener::Sent::full:
                say(spdlog::level::warn, "not keeping up: message dropped");
                break;
        }
        return;
    }
    if (!tcp_router_) {
        say(spdlog::level::info, "no such peer: message dropped");
        return;
    }
    try {
        if (!tcp_router_.send(zmq::buffer(peer),
                              zmq::send_flags::sndmore | zmq::send_flags::dontwait) ||
            !tcp_router_.send(msg, zmq::send_flags::dontwait))
            say(spdlog::level::warn, "not keeping up: message dropped");
    } catch (const zmq::error_t &e) {
        // EHOSTUNREACH (ROUTER_MANDATORY): the peer has gone.
        say(spdlog::level::info, std::string("gone, message dropped: ") + e.what());
    }
}

}  // namespace zpmix
