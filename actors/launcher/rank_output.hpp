#pragma once
// RankOutput: what a job's ranks write to their stdout and stderr, forwarded as msg::Output to the
// job's consumers: the requester of the job's tree (`zpmix run`; the launcher, which keeps the
// tree, says who) and the root's `iof` actor, which sees every job's output
// (actors/iof/iof_actor.hpp). It holds the read ends of the ranks' pipes from the spawn to the
// job's end and is the one place that reads them.
//
// Nothing is dropped: output is paced by its consumers (docs/iof.md, "Flow control"). Each
// consumer acknowledges what it has finished with (msg::OutputAck, cumulative bytes per job);
// while any consumer of a job has `window` bytes or more unacknowledged, the job's pipes are not
// read, so its ranks block in write(2) once their pipes are full, as under mpirun and srun. A
// consumer that is gone (the launcher no longer names a requester) no longer holds the job.
//
// What one read brings goes out as one Output: its whole lines (a rank's lines are never split
// between two messages, nor interleaved with another rank's), a line longer than 64 KiB in
// pieces, the unfinished last line at EOF. A rank's pipes are read from watch() (once the launch
// is answered, so that the LaunchReply comes before any Output) until EOF or the job's end; one
// turn reads a pipe at most 16 times (64 KiB each), so a busy rank does not hold the reactor. A
// rank that exited, and every rank at the job's end, is drained whatever the window, so its
// Output precedes its ProcExit; a drain reads what the pipe holds, at most kMaxDrain bytes (a
// descendant that keeps writing does not hold the launcher).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class RankOutput {
  public:
    struct Wiring {
        // Where the job's output goes besides the root's iof: the requester of its tree, as an
        // address the launcher can send to; empty when nobody follows it.
        std::function<std::string(const std::string &nspace)> requester_of;
        // Sends a message as the launcher.
        std::function<void(const std::string &to, const msg::Output &)> send;
    };
    static constexpr std::size_t kMaxDrain = std::size_t{1} << 20;

    RankOutput(Reactor &reactor, const Bus &bus, const BrokerMap &brokers, std::size_t window,
               Wiring wiring);
    ~RankOutput();  // closes the pipes left
    RankOutput(const RankOutput &) = delete;
    RankOutput &operator=(const RankOutput &) = delete;

    // Takes the read ends of a spawned rank's stdout and stderr pipes; its lines name `node`
    // (output_node).
    void add(const std::string &nspace, std::uint32_t rank, int out, int err, std::string node);
    // Reads the rank's pipes whenever they hold something and the window allows.
    void watch(const std::string &nspace, std::uint32_t rank);
    // The rank exited: forwards what its pipes hold (at EOF its unfinished line; the pipe closes).
    void drain(const std::string &nspace, std::uint32_t rank);
    // The same for every rank of the job, ascending.
    void drain(const std::string &nspace);
    // The job's end: every rank's unfinished lines are forwarded and its pipes closed.
    void close(const std::string &nspace);
    // A launch given up: every pipe of the job is closed, nothing more forwarded.
    void discard(const std::string &nspace);

    // `consumer` (an address as this launcher sends to it) has finished with `bytes` bytes of
    // the job's output: the job's pipes are read again once no consumer holds it.
    void acknowledged(const std::string &consumer, const std::string &nspace, std::uint64_t bytes);
    // A consumer went away (a requester that died): the jobs it held are read again.
    void consumers_changed();
    // Broker `broker` may have started again (a standing tree's root this broker rejoined): its
    // consumers count what they get from zero, so what was sent them is forgotten (what the
    // lost one never acknowledged no longer holds the jobs).
    void consumers_restarted(std::uint32_t broker);

  private:
    struct Pipe {
        int fd = -1;
        bool watched = false;  // read whenever it holds something, unless the job is paused
        std::string partial;   // a line not yet complete
    };
    struct Rank {
        Pipe out, err;  // its stdout (Output.fd 1) and stderr (2)
        std::string node;
    };
    struct Job {
        std::map<std::uint32_t, Rank> ranks;
        bool paused = false;  // a consumer holds it: its pipes are not watched
    };
    // What a consumer has of a job's output: bytes sent, bytes it acknowledged.
    struct Flow {
        std::uint64_t sent = 0, acked = 0;
    };
    using FlowKey = std::pair<std::string, std::string>;  // the consumer, the namespace

    Reactor &reactor_;
    const Bus &bus_;
    const BrokerMap &brokers_;
    std::size_t window_;
    Wiring wiring_;
    std::map<std::string, Job> jobs_;  // by namespace
    std::map<FlowKey, Flow> flows_;

    Rank *find(const std::string &nspace, std::uint32_t rank);
    // Reads what the pipe holds (up to kMaxDrain when draining, else a bounded amount while the
    // window allows), forwarding whole lines; at EOF the partial last line too, and the pipe is
    // closed.
    void read(const std::string &nspace, std::uint32_t rank, int which, bool drain);
    void forward(const std::string &nspace, std::uint32_t rank, const Rank &r, int which,
                 std::string data);
    // The addresses a job's output goes to: the requester of its tree (if any), the root's iof.
    std::vector<std::string> consumers(const std::string &nspace) const;
    // A consumer's address as its acknowledgements name it: this broker's own prefix dropped.
    std::string flow_name(const std::string &address) const;
    // Whether every consumer of the job has less than the window unacknowledged.
    bool open(const std::string &nspace) const;
    void pause(Job &job);
    void resume(const std::string &nspace, Job &job);
    void watch_pipe(const std::string &nspace, std::uint32_t rank, int which, Pipe &p);
    void stop_reading(Pipe &p, bool paused);
};

// The node a rank's lines name: its node when its job spans nodes (a part of a job across
// brokers), else none.
std::string output_node(const msg::JobInfo &info, bool part, std::uint32_t rank);

}  // namespace zpmix
