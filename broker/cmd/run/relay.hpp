#pragma once
// The relay between `zpmix run` and the broker that runs its job, over one DEALER: Hello, the
// launch request, then until the job is over, the broker's messages about it (its output and
// end to JobOutput, and the acknowledgements of what was written back), this process's signals
// to the job, and its stdin to the ranks that read it.
//
// Signals, as mpirun relays them: SIGTSTP suspends the job (as SIGSTOP: a rank cannot refuse it)
// and SIGCONT resumes it, `zpmix run` itself staying there; SIGHUP, SIGUSR1 and SIGUSR2 reach the
// ranks as they are. SIGINT and SIGTERM end the job: SIGKILL follows kTermGrace later for what is
// left, or at once on a second SIGINT within kKillWithin of the first (a second Ctrl-C, as srun
// and flux take it), and the third gives up waiting for it (exit status 128+signal). Signals that
// come before the job is launched are forwarded once it is, as they came.
//
// Invariants and limits:
// - Every wait is bounded except the job's own: Hello and the launch are answered within
//   kHelloTimeout; the broker's loss (or its refusal of the connection) ends `zpmix run`.
// - Stdin goes a piece at a time (kInputChunk), the next once every broker that takes it wrote
//   the last (InputTaken); it is not read when no rank takes it, nor from a terminal we are in
//   the background of (reading it would stop us). Across nodes it goes to the brokers of the
//   ranks that read it.
// - What the jobs the ranks spawn send may come before the launch's reply (a rank spawns while
//   the last ranks start): it is kept, and handled once the job is launched.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "actors/protocol/job.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/zmq_frames.hpp"
#include "broker/cmd/run/layout.hpp"
#include "broker/cmd/run/output.hpp"

namespace zpmix::cli::run {

// Blocks the signals `zpmix run` forwards to the job (before any thread exists, so that they
// reach only the returned signalfd) and ignores SIGPIPE.
int take_signals();

// The conversation with the broker: one DEALER, a monitor telling when the broker goes away,
// and a signalfd for the signals we forward to the job.
class Session {
  public:
    Session(const std::string &uri, int signal_fd);
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
    // Polls fd (the output writer's) too: Event::written when it is readable.
    void watch_written(int fd) { written_fd_ = fd; }

    enum class Event { message, signal, lost, timeout, input, written };
    // Waits for the next message (into env), a signal (into sig), or the broker's loss (or its
    // refusal of the connection: refused()).
    Event next(Envelope &env, int &sig, std::chrono::milliseconds timeout);

    bool refused() const { return refused_; }
    // Why the process at the other end of the ipc connection is not to be trusted with our
    // environment (another user's); empty when it is ours, or the connection failed (lost).
    const std::string &untrusted_peer() const { return untrusted_peer_; }

  private:
    // Waits for the ipc connection (bounded) and reads the credentials of its very socket, before
    // anything is sent on it; a failure to connect is left for next() to report.
    void check_peer();
    std::string untrusted_peer_;
    bool tcp_ = false;
    std::uint16_t early_loss_ = 0;  // a monitor event check_peer() read that next() reports

    zmq::context_t ctx_;
    zmq::socket_t dealer_{ctx_, zmq::socket_type::dealer};
    bool refused_ = false;
    zmq::socket_t monitor_{ctx_, zmq::socket_type::pair};
    int signal_fd_;
    int input_fd_ = -1;
    int written_fd_ = -1;
    std::uint64_t next_id_ = 0;
};

class Relay {
  public:
    // Connects to the broker at `uri`.
    Relay(const std::string &uri, int signal_fd, JobOutput &output)
        : uri_(uri), session_(uri, signal_fd), output_(output) {
        session_.watch_written(output.written_fd());
    }

    // Hello, then `launch` (across the nodes of `layout` when it spreads, with --oversubscribe):
    // none once the job is launched (launched()), else the exit status, said.
    std::optional<int> launch(const msg::Launch &launch, const Layout &layout, bool oversubscribe);
    const msg::LaunchReply &launched() const { return launched_; }
    // Forwards the signals that came during the launch, and from now on our stdin to the ranks
    // `stdin_target` names (msg::Launch's).
    void start(std::int64_t stdin_target, const Layout &layout);
    // Relays until the job is over: the exit status.
    int run();

  private:
    // How long Hello and the launch may take to be answered.
    static constexpr auto kHelloTimeout = std::chrono::seconds(10);
    // After SIGINT or SIGTERM, the ranks that are still there get SIGKILL (mpirun waits about as
    // long).
    static constexpr auto kTermGrace = std::chrono::seconds(3);
    // A second SIGINT this soon after the first kills the job at once.
    static constexpr auto kKillWithin = std::chrono::seconds(2);
    static constexpr std::size_t kInputChunk = 64 * 1024;  // stdin goes in pieces of this

    const std::string uri_;
    Session session_;
    JobOutput &output_;
    msg::LaunchReply launched_;
    Envelope env_;
    int sig_ = 0;
    // The signals that came before the job was launched, and when.
    std::vector<std::pair<int, std::chrono::steady_clock::time_point>> pending_signals_;
    std::vector<Envelope> early_;  // messages that came before the launch's reply
    std::optional<std::chrono::steady_clock::time_point> kill_at_;
    std::optional<std::chrono::steady_clock::time_point> last_interrupt_;  // the last SIGINT
    int signals_seen_ = 0;                      // SIGINT and SIGTERM forwarded
    std::vector<std::uint32_t> input_brokers_;  // that take our stdin, until its end
    std::size_t input_in_flight_ = 0;           // brokers yet to take the last piece

    // Waits for the answer of type `type` to `what` (into env_): none, else the exit status.
    std::optional<int> wait_reply(const char *what, std::string_view type);
    // A message about the job or a job it spawned; the exit status once the job is over.
    std::optional<int> handle(const Envelope &m);
    // Forwards `sig`, which came at `when`.
    void forward(int sig, std::chrono::steady_clock::time_point when);
    void read_input();
};

}  // namespace zpmix::cli::run
