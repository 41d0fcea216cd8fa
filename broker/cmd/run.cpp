// `zpmix run`: launches a job through this node's broker (--broker URI, else the standalone
// broker of <base>/broker.json, else one embedded in this process) and relays its output, its
// signals and its exit status like mpirun. Hosts (-H, --hostfile, a Slurm allocation) and the
// mapping of ranks onto them are read as mpirun reads them. A job with ranks on other hosts runs
// on a tree of brokers: this process embeds the root, which starts one broker on each of those
// hosts (as one srun step inside a Slurm allocation, else through the rsh agent: --launcher) and
// stops them when the job is over. The
// jobs its ranks spawn (PMIx_Spawn) are relayed too: their output (tagged with their own
// namespace), and a line on stderr when one fails; the job ends, and `zpmix run` exits, once they
// are all over.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>

#include <pmix_common.h>

#include "actors/launcher/allocation.hpp"
#include "actors/launcher/placement.hpp"
#include "actors/protocol/common.hpp"
#include "actors/protocol/rendezvous.hpp"
#include "actors/protocol/session.hpp"
#include "actors/runtime/zmq_frames.hpp"
#include "actors/tree/boot.hpp"
#include "broker/broker.hpp"
#include "broker/cmd/commands.hpp"

namespace zpmix::cli {

namespace {

using namespace std::chrono_literals;
constexpr auto kHelloTimeout = 10s;
// After SIGINT or SIGTERM, the ranks that are still there get SIGKILL (mpirun waits about as long).
constexpr auto kTermGrace = 3s;
constexpr std::size_t kInputChunk = 64 * 1024;  // stdin goes to the ranks in pieces of this
// Exit statuses of `zpmix run` itself failing (not the job's).
constexpr int kFailed = 1, kNotExecutable = 126, kNotFound = 127;

struct RunOptions {
    std::uint32_t np = 1;
    bool np_given = false;
    std::vector<std::string> exports, psets, hosts;
    std::string hostfile;
    std::uint32_t npernode = 0;
    bool oversubscribe = false, nooversubscribe = false, report_bindings = false;
    bool tag_output = false;
    bool report_child_sep = false;
    bool enable_recovery = false;
    bool stop_in_init = false;
    bool stop_on_exec = false;
    double timeout = 0;
    std::string bind_to = "none", map_by, broker;
    std::string personality = "ompi";
    std::string rsh_agent, tcp_if, launcher;
    int verbose = 0, quiet = 0;
    LogOptions log;  // its own and its embedded broker's log
    std::string output_filename;
    std::vector<std::string> mca;  // KEY VALUE pairs
    std::string stdin_target = "0";
};

extern "C" char **environ;

// What the ranks get from `zpmix run`'s process, whichever broker starts them (srun's
// PropagateResourceLimits: the soft limits).
msg::Caller this_caller() {
    msg::Caller c;
    c.given = true;
    for (char **e = environ; *e; ++e) c.environ.emplace_back(*e);
    c.umask = ::umask(0);  // single-threaded still: nobody creates a file meanwhile
    ::umask(static_cast<mode_t>(c.umask));
    for (int r : {RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS,
                  RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_AS}) {
        rlimit l{};
        if (::getrlimit(r, &l) == 0) c.limits.push_back({r, l.rlim_cur});
    }
    return c;
}

// --output-filename DIR: each rank's output also goes to DIR/<job>/rank.<N>/stdout|stderr, as
// Open MPI lays it out (the launched job is 1, the jobs it spawns 2, 3, ... as they speak).
class OutputFiles {
  public:
    explicit OutputFiles(std::string dir) : dir_(std::move(dir)) {}
    OutputFiles(const OutputFiles &) = delete;
    OutputFiles &operator=(const OutputFiles &) = delete;
    ~OutputFiles() {
        for (auto &[key, fd] : files_)
            if (fd >= 0) ::close(fd);
    }
    bool enabled() const { return !dir_.empty(); }
    // Opens (creates, empties) the file; false and a message when it cannot.
    bool open(const std::string &nspace, std::uint32_t rank, int stream) {
        int &fd = files_.try_emplace({nspace, rank, stream}, -1).first->second;
        if (fd >= 0) return true;
        if (fd == kFailed) return false;  // said once
        if (!jobs_.contains(nspace)) jobs_[nspace] = jobs_.size() + 1;
        const std::string d = fmt::format("{}/{}/rank.{}", dir_, jobs_[nspace], rank);
        std::error_code ec;
        std::filesystem::create_directories(d, ec);
        const std::string path = d + (stream == 1 ? "/stdout" : "/stderr");
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) {
            fd = kFailed;
            std::cerr << "zpmix run: --output-filename: cannot open " << path << ": "
                      << strerror(errno) << "\n";
            return false;
        }
        return true;
    }
    void write(const std::string &nspace, std::uint32_t rank, int stream, std::string_view data);

  private:
    static constexpr int kFailed = -2;
    std::string dir_;
    std::map<std::tuple<std::string, std::uint32_t, int>, int> files_;
    std::map<std::string, std::size_t> jobs_;
};

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // stdout closed: the output is dropped, the job goes on
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

void OutputFiles::write(const std::string &nspace, std::uint32_t rank, int stream,
                        std::string_view data) {
    if (!enabled() || !open(nspace, rank, stream)) return;
    write_all(files_[{nspace, rank, stream}], data);
}

// What `zpmix run` exits with when the broker refuses the launch (as a shell does for a program).
int exit_status_of(std::int32_t error) {
    switch (error) {
        case PMIX_ERR_JOB_EXE_NOT_FOUND:
        case PMIX_ERR_NOT_FOUND:  // brokers before PMIX_ERR_JOB_EXE_NOT_FOUND
            return kNotFound;
        case PMIX_ERR_JOB_APP_NOT_EXECUTABLE:
            return kNotExecutable;
        default:
            return kFailed;
    }
}

int fail(const std::string &message, int status = kFailed) {
    std::cerr << "zpmix run: " << message << "\n";
    return status;
}

// The conversation with the broker: one DEALER, a monitor telling when the broker goes away,
// and a signalfd for the signals we forward to the job.
class Session {
  public:
    Session(const std::string &uri, int signal_fd) : signal_fd_(signal_fd) {
        dealer_.set(zmq::sockopt::linger, 0);
        dealer_.set(zmq::sockopt::heartbeat_ivl, 2000);
        dealer_.set(zmq::sockopt::heartbeat_timeout, 6000);
        const bool ipc = uri.starts_with("ipc://");
        tcp_ = uri.starts_with("tcp://");
        zmq_socket_monitor(dealer_.handle(), "inproc://zpmix-run-monitor",
                           ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | (ipc ? ZMQ_EVENT_CONNECTED : 0));
        monitor_.connect("inproc://zpmix-run-monitor");
        dealer_.connect(uri);
        if (ipc) check_peer();
    }
    // The monitor stops before its PAIR closes: libzmq leaks an event (the broker's end, seen
    // while the sockets close) that it fails to send to a closed PAIR.
    ~Session() { zmq_socket_monitor(dealer_.handle(), nullptr, 0); }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    template <class M>
    void send(const M &m) {
        const zmq::message_t bytes = encode(M::type, ++next_id_, m);
        if (tcp_)  // in frames the broker's tcp socket takes (zmtp_wire.hpp)
            send_in_pieces(dealer_, bytes.data(), bytes.size());
        else
            dealer_.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::none);
    }

    // Polls fd (our stdin) for input too while it is >= 0.
    void watch_input(int fd) { input_fd_ = fd; }

    enum class Event { message, signal, lost, timeout, input };
    // Waits for the next message (into env), a signal (into sig), or the broker's loss (or its
    // refusal of the connection: refused()).
    Event next(Envelope &env, int &sig, std::chrono::milliseconds timeout) {
        zmq::pollitem_t items[] = {{dealer_.handle(), 0, ZMQ_POLLIN, 0},
                                   {nullptr, signal_fd_, ZMQ_POLLIN, 0},
                                   {monitor_.handle(), 0, ZMQ_POLLIN, 0},
                                   {nullptr, input_fd_, ZMQ_POLLIN, 0}};
        for (;;) {
            if (early_loss_) {
                refused_ = std::exchange(early_loss_, 0) != ZMQ_EVENT_DISCONNECTED;
                return Event::lost;
            }
            const int rc = zmq::poll(items, input_fd_ >= 0 ? 4 : 3, timeout);
            if (rc == 0) return Event::timeout;
            if (items[0].revents & ZMQ_POLLIN) {
                zmq::message_t m;
                (void)dealer_.recv(m);
                try {
                    env = decode(m);
                    return Event::message;
                } catch (const DecodeError &e) {
                    spdlog::warn("undecodable message from the broker: {}", e.what());
                    continue;
                }
            }
            if (items[1].revents & ZMQ_POLLIN) {
                signalfd_siginfo si{};
                if (::read(signal_fd_, &si, sizeof si) == sizeof si) {
                    sig = static_cast<int>(si.ssi_signo);
                    return Event::signal;
                }
            }
            if (items[2].revents & ZMQ_POLLIN) {
                zmq::message_t ev, addr;
                (void)monitor_.recv(ev);
                if (ev.more()) (void)monitor_.recv(addr);
                std::uint16_t event = 0;
                if (ev.size() >= sizeof event) std::memcpy(&event, ev.data(), sizeof event);
                if (event == ZMQ_EVENT_CONNECTED) continue;  // a reconnection
                refused_ = event != ZMQ_EVENT_DISCONNECTED;
                return Event::lost;
            }
            if (input_fd_ >= 0 && (items[3].revents & (ZMQ_POLLIN | ZMQ_POLLERR)))
                return Event::input;
        }
    }

    bool refused() const { return refused_; }
    // Why the process at the other end of the ipc connection is not to be trusted with our
    // environment (another user's); empty when it is ours, or the connection failed (lost).
    const std::string &untrusted_peer() const { return untrusted_peer_; }

  private:
    // Waits for the ipc connection (bounded) and reads the credentials of its very socket, before
    // anything is sent on it; a failure to connect is left for next() to report.
    void check_peer() {
        zmq::pollitem_t item{monitor_.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, std::chrono::milliseconds(kHelloTimeout)) == 0) return;
        zmq::message_t ev, addr;
        (void)monitor_.recv(ev);
        if (ev.more()) (void)monitor_.recv(addr);
        std::uint16_t event = 0;
        std::uint32_t fd = 0;
        if (ev.size() >= 6) {
            std::memcpy(&event, ev.data(), 2);
            std::memcpy(&fd, static_cast<const char *>(ev.data()) + 2, 4);
        }
        if (event != ZMQ_EVENT_CONNECTED) {
            early_loss_ = event;
            return;
        }
        untrusted_peer_ = ipc_peer_problem(static_cast<int>(fd));
    }
    std::string untrusted_peer_;
    bool tcp_ = false;
    std::uint16_t early_loss_ = 0;  // a monitor event check_peer() read that next() reports

    zmq::context_t ctx_;
    zmq::socket_t dealer_{ctx_, zmq::socket_type::dealer};
    bool refused_ = false;
    zmq::socket_t monitor_{ctx_, zmq::socket_type::pair};
    int signal_fd_;
    int input_fd_ = -1;
    std::uint64_t next_id_ = 0;
};

std::string this_hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

// The job's allocation, as mpirun would make it.
alloc::Result<alloc::Allocation> allocate_job(const RunOptions &o) {
    alloc::Request req;
    req.host_lists = o.hosts;
    req.hostfile = o.hostfile;
    if (o.np_given) req.np = o.np;
    if (o.npernode) req.npernode = o.npernode;
    req.map_by = o.map_by;
    if (o.oversubscribe || o.nooversubscribe) req.oversubscribe = o.oversubscribe;
    return alloc::allocate(req, [](const std::string &name) -> std::optional<std::string> {
        const char *v = std::getenv(name.c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
    });
}

// A job across nodes: its nodes (those of the allocation with ranks) and each rank's, and the
// brokers' nodes (this one's first: the root).
struct Spread {
    std::vector<std::string> nodes;
    std::vector<std::uint32_t> node_of_rank;
    std::vector<std::string> brokers;
    std::vector<std::uint32_t> slots;  // by node: the allocation's (what spawned jobs may use)
};

// Where the ranks go; empty brokers when they are all on this host.
Spread spread_of(const alloc::Allocation &a, const std::string &hostname) {
    Spread s;
    std::string root = hostname;
    bool elsewhere = false;
    std::vector<std::uint32_t> node_of_host(a.hosts.size(), 0);
    for (std::size_t h = 0; h < a.hosts.size(); ++h) {
        if (a.on_host[h].empty()) continue;
        node_of_host[h] = static_cast<std::uint32_t>(s.nodes.size());
        s.nodes.push_back(a.hosts[h].name);
        s.slots.push_back(a.hosts[h].slots);
        if (alloc::is_this_host(a.hosts[h].name, hostname))
            root = a.hosts[h].name;
        else
            elsewhere = true;
    }
    if (!elsewhere) return {};
    for (const auto &r : a.ranks) s.node_of_rank.push_back(node_of_host[r.host]);
    s.brokers.push_back(root);
    for (const auto &n : s.nodes)
        if (n != root) s.brokers.push_back(n);
    return s;
}

// A job whose ranks are all on one host, as a job across nodes names it.
Spread one_node(const alloc::Allocation &a) {
    Spread s;
    for (std::size_t h = 0; h < a.hosts.size(); ++h)
        if (!a.on_host[h].empty()) {
            s.nodes.push_back(a.hosts[h].name);
            s.slots.push_back(a.hosts[h].slots);
        }
    s.node_of_rank.assign(a.ranks.size(), 0);
    return s;
}

// Whether every node of the job is a host of the standing tree `b` is a member of; if so, the
// nodes are renamed as the tree names them, and the brokers are the tree's.
bool in_tree(const RendezvousInfo &b, Spread &s, const std::string &hostname) {
    if (b.tree_hosts.empty() || s.nodes.empty()) return false;
    std::vector<std::string> names;
    for (const auto &node : s.nodes) {
        // "localhost" is this node, not whichever host the tree names first.
        const std::string &name = alloc::is_this_host(node, hostname) ? hostname : node;
        const auto it =
            std::find_if(b.tree_hosts.begin(), b.tree_hosts.end(),
                         [&](const std::string &h) { return alloc::is_this_host(name, h); });
        if (it == b.tree_hosts.end()) return false;
        names.push_back(*it);
    }
    s.nodes = std::move(names);
    s.brokers = b.tree_hosts;
    return true;
}

// Whether `program` is an executable file in a directory of $PATH.
bool on_path(const std::string &program) {
    const char *path = std::getenv("PATH");
    std::string_view dirs = path ? path : "";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const std::string dir(dirs.substr(0, colon));
        dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    }
    return false;
}

// The program the other nodes run as their broker: the configured one, else this one's path.
std::string zpmix_program(const Config &config) {
    if (!config.tree_zpmix.empty()) return config.tree_zpmix;
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "zpmix";
}

// --report-bindings: each rank's binding, on stderr, as the launcher places it (the same
// Placement on this node's topology).
void report_bindings(const RunOptions &o, const std::string &map_by, std::uint32_t n,
                     const std::string &hostname) {
    std::vector<Placement::Rank> ranks;
    Placement placement;
    try {
        if (auto err = placement.place(map_by, o.bind_to, n, ranks); !err.empty())
            return (void)fail("--report-bindings: " + err);
    } catch (const std::exception &e) {
        return (void)fail(std::string("--report-bindings: ") + e.what());
    }
    for (std::uint32_t r = 0; r < n; ++r)
        std::cerr << fmt::format(
            "[{}] rank {} {}\n", hostname, r,
            ranks[r].cpuset.empty()
                ? std::string("not bound")
                : fmt::format("bound to cpus {} ({})", ranks[r].cpuset, ranks[r].locality));
}

int run_job(const RunOptions &o, const std::vector<std::string> &argv) {
    if (argv.empty()) return fail("no program given (zpmix run [options] prog [args...])");
    try {
        setup_logging("run", "warn", o.verbose, o.quiet, o.log);
    } catch (const std::exception &e) {
        return fail(e.what());
    }
    // Before an embedded broker changes anything (it raises its descriptor limit).
    msg::Caller caller = this_caller();
    const std::string hostname = this_hostname();
    const auto allocation = allocate_job(o);
    if (!allocation) return fail(allocation.error);
    Spread spread = spread_of(allocation.value, hostname);
    bool across = !spread.brokers.empty();
    msg::Launch launch;
    launch.argv = argv;
    launch.np = static_cast<std::uint32_t>(allocation.value.ranks.size());
    launch.bind_to = o.bind_to;
    // Every rank is here: how they go onto this node's cores is the launcher's placement.
    launch.map_by = o.map_by == "core" ? "core" : "slot";
    launch.psets = o.psets;
    launch.timeout_s = o.timeout;
    launch.follows_children = true;
    launch.report_child_sep = o.report_child_sep;
    launch.caller = std::move(caller);
    if (o.stdin_target == "all") {
        launch.stdin_target = msg::kStdinAll;
    } else if (o.stdin_target == "none") {
        launch.stdin_target = msg::kStdinNone;
    } else {
        std::size_t end = 0;
        unsigned long r = 0;
        try {
            r = std::stoul(o.stdin_target, &end);
        } catch (const std::exception &) {
            end = 0;
        }
        if (end == 0 || end != o.stdin_target.size() || r >= launch.np)
            return fail(
                fmt::format("--stdin {}: all, none or a rank below {}", o.stdin_target, launch.np));
        launch.stdin_target = static_cast<std::int64_t>(r);
    }
    launch.recoverable = o.enable_recovery;
    launch.stop_in_init = o.stop_in_init;
    launch.stop_on_exec = o.stop_on_exec;
    if (char *cwd = ::getcwd(nullptr, 0)) {
        launch.cwd = cwd;
        std::free(cwd);
    }
    // Every program, as mpirun gives every rank its OMPI_ variables: an interpreter (mpi4py,
    // python3-pmix) loads libmpi or libpmix at run time, where no look at the program sees it.
    launch.personality_ompi = o.personality == "ompi";
    for (const auto &x : o.exports) {
        if (x.find('=') != std::string::npos) {
            launch.env.push_back(x);
        } else if (const char *v = std::getenv(x.c_str())) {
            launch.env.push_back(x + "=" + v);
        } else {
            spdlog::warn("-x {}: not set here, not exported", x);
        }
    }
    for (std::size_t i = 0; i + 1 < o.mca.size(); i += 2)
        launch.env.push_back("OMPI_MCA_" + o.mca[i] + "=" + o.mca[i + 1]);

    // Blocked before any thread exists, so that they reach only our signalfd.
    sigset_t sigs;
    sigemptyset(&sigs);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT}) sigaddset(&sigs, s);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    const int signal_fd = ::signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<Broker> embedded;
    std::string uri = o.broker;
    // The standalone broker of this user's base directory, if any. A directory or file there that
    // another user could have made is refused, before anything of ours goes anywhere.
    std::optional<RendezvousInfo> standalone;
    try {
        if (uri.empty()) standalone = find_broker(default_base_dir());
        check_ipc_endpoint(uri);
    } catch (const UntrustedPath &e) {
        return fail(e.what());
    }
    // A standing tree's broker on this node runs a job whose nodes are all in the tree, one on
    // this node alone too (the tree's coordinator numbers every job's node ranks there): the
    // job's nodes named as the tree names them, and no broker started.
    if (uri.empty())
        if (const auto &standing = standalone; standing) {
            Spread s = across ? spread : one_node(allocation.value);
            if (in_tree(*standing, s, hostname)) {
                spread = std::move(s);
                across = true;
                uri = standing->uri;
                spdlog::debug("the standing tree's broker (pid {}) runs the job", standing->pid);
            }
        }
    if (across && uri.empty()) {
        // The root of a tree of brokers, one per node of the job, for this job alone.
        try {
            Config config = load_config(std::nullopt);
            config.run_dir.clear();
            config.node = spread.brokers[0];
            config.tree_size = static_cast<std::uint32_t>(spread.brokers.size());
            config.tree_nodes = spread.brokers;
            if (!o.rsh_agent.empty()) config.tree_rsh_agent = o.rsh_agent;
            std::string error;
            config.tree_launcher = tree::resolve_launcher(
                o.launcher.empty() ? config.tree_launcher : o.launcher,
                std::getenv("SLURM_JOB_ID") != nullptr, on_path("srun"), error);
            if (!error.empty()) return fail(error);
            spdlog::debug("brokers started by {}", config.tree_launcher);
            if (!o.tcp_if.empty()) config.tree_tcp_if = o.tcp_if;
            config.tree_zpmix = zpmix_program(config);
            char pub[41] = {}, sec[41] = {};
            if (zmq_curve_keypair(pub, sec) != 0)
                return fail("cannot make the brokers' CURVE keys: " +
                            std::string(zmq_strerror(zmq_errno())));
            config.tree_public_key = pub;
            config.tree_secret_key = sec;
            config.tree_broker_args = {"--heartbeat-ms", std::to_string(config.tree_heartbeat_ms),
                                       "--lost-after-ms",
                                       std::to_string(config.tree_lost_after_ms)};
            if (!config.tree_tcp_if.empty())
                config.tree_broker_args.insert(config.tree_broker_args.end(),
                                               {"--tcp-if", config.tree_tcp_if});
            if (!config.tree_munge_socket.empty())
                config.tree_broker_args.insert(config.tree_broker_args.end(),
                                               {"--munge-socket", config.tree_munge_socket});
            for (int i = 0; i < o.verbose; ++i) config.tree_broker_args.push_back("-v");
            if (o.verbose == 0) config.tree_broker_args.push_back("-q");
            embedded = std::make_unique<Broker>(config);
            embedded->start();
            uri = embedded->uri();
            const auto limit = std::chrono::milliseconds(config.tree_boot_timeout_ms + 5000);
            if (auto error = embedded->wait_tree(limit); !error.empty()) {
                embedded->stop();
                return fail("cannot start the brokers: " + error);
            }
        } catch (const std::exception &e) {
            if (embedded) embedded->stop();
            return fail(std::string("cannot start the brokers: ") + e.what());
        }
    } else if (uri.empty()) {
        if (const auto &found = standalone) {
            uri = found->uri;
            spdlog::debug("using the broker (pid {}) at {}", found->pid, uri);
        } else {
            try {
                Config config = load_config(std::nullopt);
                config.run_dir.clear();  // a private directory: nobody else looks for it
                embedded = std::make_unique<Broker>(config);
                embedded->start();
                uri = embedded->uri();
            } catch (const std::exception &e) {
                return fail(std::string("cannot start a broker: ") + e.what());
            }
        }
    }

    Session session(uri, signal_fd);
    int status = kFailed;
    auto finish = [&](int s) {
        status = s;
        if (embedded) embedded->stop();
        return status;
    };

    if (!session.untrusted_peer().empty())
        return finish(fail("refusing the broker at " + uri + ": " + session.untrusted_peer()));
    msg::Hello hello;
    hello.role = "launcher";
    hello.pid = ::getpid();
    session.send(hello);
    Envelope env;
    int sig = 0;
    std::vector<int> pending_signals;
    auto ending = [](int s) { return s == SIGINT || s == SIGTERM; };
    // What the jobs its ranks spawn send may come before the LaunchReply (a rank spawns while
    // the last ranks are started): it waits for the reply.
    std::vector<Envelope> early;
    auto wait_reply = [&](const char *what, std::string_view type) -> std::optional<int> {
        const auto deadline = std::chrono::steady_clock::now() + kHelloTimeout;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                return fail(fmt::format("no answer from the broker at {} ({})", uri, what));
            switch (session.next(env, sig, left)) {
                case Session::Event::message:
                    if (env.type == msg::ErrorReply::type) {
                        const auto e = env.as<msg::ErrorReply>();
                        return fail(e.message, exit_status_of(e.status));
                    }
                    if (env.type != type) {
                        early.push_back(std::move(env));
                        continue;
                    }
                    return std::nullopt;
                case Session::Event::signal:
                    pending_signals.push_back(sig);
                    if (std::count_if(pending_signals.begin(), pending_signals.end(), ending) >= 3)
                        return 128 + sig;
                    continue;
                case Session::Event::input:  // read once the job is there
                    session.watch_input(-1);
                    continue;
                case Session::Event::lost:
                    // A standalone broker out of room turns the connection away in the
                    // handshake; libzmq does not pass on the reason, the broker's log has it.
                    return fail(session.refused()
                                    ? "the broker at " + uri +
                                          " refused the connection (too many connections or "
                                          "out of file descriptors: its log says which)"
                                    : "lost the connection to the broker at " + uri);
                case Session::Event::timeout:
                    continue;
            }
        }
    };
    if (auto failed = wait_reply("hello", msg::Welcome::type)) return finish(*failed);
    if (across) {
        launch.map_by = o.map_by == "core" ? "core" : "slot";  // onto each node's cores
        session.send(msg::LaunchAcross{launch, spread.nodes, spread.node_of_rank, spread.slots,
                                       o.oversubscribe});
    } else {
        session.send(launch);
    }
    if (auto failed = wait_reply("launch", msg::LaunchReply::type)) return finish(*failed);
    const auto launched = env.as<msg::LaunchReply>();
    spdlog::debug("job {} launched: {} rank(s)", launched.nspace, launched.pids.size());
    if (o.stop_in_init || o.stop_on_exec)
        std::cerr << "zpmix run: the ranks of " << launched.nspace
                  << (o.stop_on_exec ? " are stopped at exec" : " wait in PMIx_Init")
                  << " for a debugger. Their pids and hosts: zpmix ps --ranks --broker " << uri
                  << " --job " << launched.nspace
                  << "; attach (gdb -p PID), then release them: zpmix release " << launched.nspace
                  << " --broker " << uri << "\n";
    if (o.report_bindings) report_bindings(o, launch.map_by, launch.np, hostname);

    // As mpirun: SIGTSTP suspends the job (SIGSTOP: a rank cannot refuse it) and SIGCONT resumes
    // it, `zpmix run` itself staying there; the others reach the ranks as they are. SIGINT and
    // SIGTERM end the job: SIGKILL follows kTermGrace later for what is left.
    std::optional<std::chrono::steady_clock::time_point> kill_at;
    int signals_seen = 0;
    auto forward = [&](int s) {
        const int to_ranks = s == SIGTSTP ? SIGSTOP : s;
        spdlog::debug("forwarding signal {} to {}", to_ranks, launched.nspace);
        session.send(msg::SignalJob{launched.nspace, to_ranks});
        if (!ending(s)) return;
        ++signals_seen;
        if (!kill_at) kill_at = std::chrono::steady_clock::now() + kTermGrace;
    };
    for (int s : pending_signals) forward(s);

    // Our stdin to the stdin ranks, a piece at a time (the next once the last is written there).
    // Across nodes it goes to the brokers of those ranks; not read when nobody takes it, nor from
    // a terminal we are in the background of (reading it would stop us).
    std::vector<std::uint32_t> input_brokers;
    if (launch.stdin_target != msg::kStdinNone &&
        (!::isatty(STDIN_FILENO) || ::tcgetpgrp(STDIN_FILENO) == ::getpgrp())) {
        if (!across) {
            input_brokers.push_back(0);
        } else {
            std::set<std::uint32_t> b;
            for (std::uint32_t r = 0; r < spread.node_of_rank.size(); ++r) {
                if (launch.stdin_target != msg::kStdinAll && launch.stdin_target != r) continue;
                const auto &node = spread.nodes[spread.node_of_rank[r]];
                b.insert(static_cast<std::uint32_t>(
                    std::find(spread.brokers.begin(), spread.brokers.end(), node) -
                    spread.brokers.begin()));
            }
            input_brokers.assign(b.begin(), b.end());
        }
    }
    std::size_t input_in_flight = 0;
    if (!input_brokers.empty()) session.watch_input(STDIN_FILENO);
    auto read_input = [&] {
        std::string data(kInputChunk, '\0');
        ssize_t n;
        while ((n = ::read(STDIN_FILENO, data.data(), data.size())) < 0 && errno == EINTR) {
        }
        data.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        const bool eof = n <= 0;
        for (auto b : input_brokers) session.send(msg::Input{launched.nspace, b, data, eof});
        input_in_flight = input_brokers.size();
        session.watch_input(-1);
        if (eof) input_brokers.clear();
    };

    OutputFiles files(o.output_filename);
    if (files.enabled())
        for (std::uint32_t r = 0; r < launch.np; ++r)
            if (!files.open(launched.nspace, r, 1) || !files.open(launched.nspace, r, 2))
                return finish(fail("--output-filename: giving up on " + launched.nspace));

    // (nspace, rank, fd) -> inside a line
    std::map<std::tuple<std::string, std::uint32_t, int>, bool> mid_line;
    // A message about the job or a job it spawned; the exit status once the job is over.
    auto handle = [&](const Envelope &m) -> std::optional<int> {
        try {
            if (m.type == msg::Output::type) {
                auto out = m.as<msg::Output>();
                const int fd = out.fd == 2 ? 2 : 1;
                const std::size_t raw = out.data.size();  // the files get it untagged
                bool &inside = mid_line[{out.nspace, out.rank, fd}];
                // A job across nodes (the launched one or one it spawned) names the rank's node
                // too: [nspace,rank,node]<stream>:
                if (o.tag_output && !inside)
                    out.data = fmt::format("[{},{}{}]<{}>: ", out.nspace, out.rank,
                                           out.node.empty() ? std::string() : "," + out.node,
                                           fd == 1 ? "stdout" : "stderr") +
                               out.data;
                inside = !out.data.ends_with('\n');
                files.write(out.nspace, out.rank, fd,
                            o.tag_output ? std::string_view(out.data).substr(out.data.size() - raw)
                                         : std::string_view(out.data));
                write_all(fd, out.data);
            } else if (m.type == msg::ProcExit::type) {
                const auto e = m.as<msg::ProcExit>();
                spdlog::debug("{} rank {} (pid {}) ended: code {} signal {}", e.nspace, e.rank,
                              e.pid, e.exit_code, e.signal);
            } else if (m.type == msg::JobEnded::type) {
                const auto e = m.as<msg::JobEnded>();
                if (e.nspace != launched.nspace) {  // a job it spawned, over before it
                    spdlog::debug("spawned job {} ended with status {}", e.nspace, e.status);
                    if (!e.message.empty())
                        std::cerr << "zpmix run: spawned job " << e.nspace << ": " << e.message
                                  << "\n";
                    return std::nullopt;
                }
                if (!e.message.empty()) std::cerr << "zpmix run: " << e.message << "\n";
                return e.status;
            } else if (m.type == msg::InputTaken::type) {
                if (input_in_flight > 0 && --input_in_flight == 0 && !input_brokers.empty())
                    session.watch_input(STDIN_FILENO);
            } else if (m.type == msg::ErrorReply::type) {
                spdlog::warn("broker: {}", m.as<msg::ErrorReply>().message);
            }
        } catch (const DecodeError &e) {
            spdlog::warn("{}", e.what());
        }
        return std::nullopt;
    };
    if (!early.empty())
        spdlog::debug("{} message(s) of spawned jobs came before the launch's reply", early.size());
    for (const auto &m : early)
        if (auto status = handle(m)) return finish(*status);
    for (;;) {
        auto wait = -1ms;
        if (kill_at && std::chrono::steady_clock::now() >= *kill_at) {
            kill_at.reset();
            std::cerr << "zpmix run: job " << launched.nspace << " still runs "
                      << kTermGrace.count() << " s after the signal: killing it\n";
            session.send(msg::SignalJob{launched.nspace, SIGKILL});
        } else if (kill_at) {
            wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                *kill_at - std::chrono::steady_clock::now());
        }
        switch (session.next(env, sig, wait)) {
            case Session::Event::timeout:
                continue;
            case Session::Event::lost:
                return finish(fail("lost the connection to the broker at " + uri + "; job " +
                                   launched.nspace + " is terminated"));
            case Session::Event::signal:
                // mpirun-like: forward; the third SIGINT/SIGTERM, stop waiting for the job.
                forward(sig);
                if (signals_seen >= 3)
                    return finish(fail("giving up on " + launched.nspace, 128 + sig));
                continue;
            case Session::Event::input:
                read_input();
                continue;
            case Session::Event::message:
                break;
        }
        if (auto status = handle(env)) return finish(*status);
    }
}

// Edits between two strings (Levenshtein).
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

// "unknown option --foo", and the nearest option when one is near.
std::string unknown_option(const CLI::App &cmd, const std::string &arg) {
    const std::string name = arg.substr(0, arg.find('='));
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const CLI::Option *opt : cmd.get_options()) {
        std::vector<std::string> names;
        for (const auto &l : opt->get_lnames()) names.push_back("--" + l);
        for (const auto &sn : opt->get_snames()) names.push_back("-" + sn);
        for (const auto &n : names)
            if (const auto d = distance(name, n); d < best_d) best_d = d, best = n;
    }
    std::string message = "unknown option " + name;
    if (!best.empty() && best_d <= std::max<std::size_t>(2, name.size() / 3))
        message += "; did you mean " + best + "?";
    return message + " (zpmix run --help lists them; -- ends the options)";
}

}  // namespace

void mpirun_style_args(CLI::App &app, std::vector<std::string> &args) {
    if (args.empty() || args[0] != "run") return;
    const CLI::App *run = nullptr;
    try {
        run = app.get_subcommand("run");
    } catch (const CLI::OptionNotFound &) {
        return;
    }
    for (std::size_t i = 1; i < args.size(); ++i) {
        std::string &a = args[i];
        // `--` ends the options (CLI11 would take what follows for positionals of zpmix run).
        if (a == "--") {
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
        if (a.empty() || a[0] != '-') return;  // the program starts here
        if (a == "-np" || a == "-mca") a = "-" + a;
        if (a.find('=') != std::string::npos) continue;
        const CLI::Option *opt = run->get_option_no_throw(a);
        if (opt && opt->get_expected_max() > 0)  // not a flag: skip its values
            i += static_cast<std::size_t>(opt->get_type_size_max());
    }
}

void add_run_command(CLI::App &app, int &status) {
    auto o = std::make_shared<RunOptions>();
    auto *cmd = app.add_subcommand("run", "Launch a parallel job (like mpirun)");
    auto *np = cmd->add_option("-n,--np", o->np,
                               "Number of ranks (default: every slot of the hosts given, else 1)")
                   ->check(CLI::Range(1, 65535));
    cmd->add_option("-x", o->exports, "Export VAR (its value here) or set VAR=value in the ranks")
        ->allow_extra_args(false);
    cmd->add_flag("--tag-output", o->tag_output,
                  "Prefix each line with [nspace,rank]<stream>: ([nspace,rank,node] across nodes)");
    cmd->add_flag("--report-child-jobs-separately", o->report_child_sep,
                  "Exit with the job's own status, not with that of the first failed job of "
                  "those it and the jobs it spawned (PMIx_Spawn)");
    cmd->add_flag(
        "--stop-in-init", o->stop_in_init,
        "Every rank waits in PMIx_Init for a debugger's release (PMIX_DEBUG_STOP_IN_INIT; "
        "`zpmix release NSPACE`)");
    cmd->add_flag("--stop-on-exec", o->stop_on_exec,
                  "Every rank is stopped at its first instruction until a debugger's release "
                  "(PMIX_DEBUG_STOP_ON_EXEC; `zpmix release NSPACE`)")
        ->excludes("--stop-in-init");
    cmd->add_flag("--enable-recovery", o->enable_recovery,
                  "A rank that fails does not end the job (PMIX_JOB_RECOVERABLE)");
    cmd->add_option("--timeout", o->timeout, "Terminate the job after S seconds (exit status 124)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--bind-to", o->bind_to, "none | core | package")
        ->check(CLI::IsMember({"none", "core", "package"}));
    cmd->add_flag("--report-bindings", o->report_bindings, "Print each rank's binding on stderr");
    cmd->add_option("-H,--host", o->hosts,
                    "Hosts and their slots: n1:4,n2 (a host without :N has 1 slot; repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--hostfile", o->hostfile,
                    "Hosts from a file: one `host [slots=N] [max_slots=M]` a line, # comments");
    cmd->add_option("-N,--npernode", o->npernode, "Ranks per host (as --map-by ppr:N:node)")
        ->check(CLI::Range(1, 65535));
    cmd->add_option("--map-by", o->map_by,
                    "slot (default: fill each host's slots in turn) | core | node (one rank per "
                    "host in turn) | ppr:N:node");
    auto *over = cmd->add_flag("--oversubscribe", o->oversubscribe,
                               "Allow more ranks on a host than its slots");
    cmd->add_flag("--nooversubscribe", o->nooversubscribe,
                  "Never more ranks on a host than its slots (the default when slots are given)")
        ->excludes(over);
    cmd->add_option("--pset", o->psets, "Name the job as a process set (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--personality", o->personality,
                    "ompi (default): the ranks load zpmix's libpmix.so.2 (first on "
                    "LD_LIBRARY_PATH) and get what Open MPI 4.1 needs from a launcher "
                    "(OMPI_MCA_schizo, OMPI_MCA_ess, OMPI_MCA_mpi_oversubscribe); none: no change")
        ->check(CLI::IsMember({"ompi", "none"}));
    cmd->add_option("--broker", o->broker, "The broker's URI (default: find or embed one)");
    cmd->add_option("--rsh-agent,--launch-agent", o->rsh_agent,
                    "How brokers are started on other hosts: `AGENT HOST COMMAND...` (default: "
                    "[tree] rsh_agent, ssh; Open MPI's plm_rsh_agent)");
    cmd->add_option("--launcher", o->launcher,
                    "How brokers are started on other hosts: srun (one step, inside a Slurm "
                    "allocation), rsh (--rsh-agent) or auto (default: [tree] launcher; srun inside "
                    "a Slurm allocation, rsh otherwise)")
        ->check(CLI::IsMember({"auto", "rsh", "srun"}));
    cmd->add_option("--tcp-if", o->tcp_if,
                    "Brokers listen for each other on this interface only (a name or a CIDR; "
                    "default: every interface, [tree] tcp_if)");
    cmd->add_option("--output-filename", o->output_filename,
                    "Also write each rank's output to DIR/1/rank.N/stdout and stderr (Open MPI's "
                    "layout; the jobs it spawns are 2, 3, ...)");
    cmd->add_option("--mca", o->mca,
                    "Set Open MPI's MCA parameter KEY to VALUE in the ranks "
                    "(OMPI_MCA_KEY=VALUE; repeatable; -mca too)")
        ->type_size(2)
        ->allow_extra_args(false);
    cmd->add_option("--stdin", o->stdin_target,
                    "Which ranks read zpmix run's stdin: a rank (default 0), all or none");
    cmd->add_flag("-v,--verbose", o->verbose, "More log output (repeatable)");
    cmd->add_flag("-q,--quiet", o->quiet, "Less log output (repeatable)");
    add_log_options(*cmd, o->log);
    cmd->prefix_command();  // options end at the program: `zpmix run -n 2 ls -l`
    cmd->footer(
        "Hosts: -H, else --hostfile (with -H: the hostfile's hosts -H names), else the Slurm "
        "allocation zpmix run is in "
        "(SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE), else this host. Ranks on other hosts run "
        "under a broker on each, started as one srun step inside a Slurm allocation, else through "
        "the rsh agent, and stopped with the job.\n"
        "Exit status: the job's (0, the first failing rank's exit code, or 128+signal; of the "
        "first job that failed when its ranks spawn jobs); 124 on --timeout; 127 if the program "
        "is not found, 126 if it is not executable; 1 if zpmix run failed.");
    cmd->callback([o, cmd, np, &status] {
        o->np_given = np->count() > 0;
        auto argv = cmd->remaining();
        if (!argv.empty() && argv[0].size() > 1 && argv[0][0] == '-') {
            status = fail(unknown_option(*cmd, argv[0]));
            return;
        }
        status = run_job(*o, argv);
    });
}

}  // namespace zpmix::cli
