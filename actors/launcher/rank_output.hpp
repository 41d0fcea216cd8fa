#pragma once
// RankOutput: what a job's ranks write to their stdout and stderr, forwarded as msg::Output. It
// holds the read ends of their pipes from the spawn to the job's end and is the one place that
// reads them: what a pipe holds goes out a line at a time (a line longer than 64 KiB in pieces;
// at EOF the unfinished last line as it is), first to the requester of the job's tree (the
// launcher, which keeps the tree, says who), then to the root's `iof` actor, which sees every
// job's output (actors/iof/iof_actor.hpp).
//
// A rank's pipes are read while the reactor watches them, from watch() (once the launch is
// answered, so that the LaunchReply comes before any Output) until EOF or the job's end; what a
// rank writes while its pipe is not watched waits there (and the rank blocks once it is full).
// One turn reads a pipe at most 16 times (16 KiB each), so a busy rank does not hold the reactor;
// a rank that exited, and every rank at the job's end, is drained: what it wrote is in its pipes.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class RankOutput {
  public:
    struct Wiring {
        // The copy of a line for the requester of the job's tree.
        std::function<void(const msg::Output &)> to_requester;
        // Sends a message as the launcher.
        std::function<void(const std::string &to, const msg::Output &)> send;
    };
    RankOutput(Reactor &reactor, const Bus &bus, const BrokerMap &brokers, Wiring wiring);
    ~RankOutput();  // closes the pipes left
    RankOutput(const RankOutput &) = delete;
    RankOutput &operator=(const RankOutput &) = delete;

    // Takes the read ends of a spawned rank's stdout and stderr pipes; its lines name `node`
    // (output_node).
    void add(const std::string &nspace, std::uint32_t rank, int out, int err, std::string node);
    // Reads the rank's pipes whenever they hold something.
    void watch(const std::string &nspace, std::uint32_t rank);
    // The rank exited: forwards what its pipes hold (at EOF its unfinished line; the pipe closes).
    void drain(const std::string &nspace, std::uint32_t rank);
    // The same for every rank of the job, ascending.
    void drain(const std::string &nspace);
    // The job's end: every rank's unfinished lines are forwarded and its pipes closed.
    void close(const std::string &nspace);
    // A launch given up: every pipe of the job is closed, nothing more forwarded.
    void discard(const std::string &nspace);

  private:
    struct Pipe {
        int fd = -1;
        std::string partial;  // a line not yet complete
    };
    struct Rank {
        Pipe out, err;  // its stdout (Output.fd 1) and stderr (2)
        std::string node;
    };

    Reactor &reactor_;
    const Bus &bus_;
    const BrokerMap &brokers_;
    Wiring wiring_;
    std::map<std::string, std::map<std::uint32_t, Rank>> jobs_;  // by namespace, then rank

    Rank *find(const std::string &nspace, std::uint32_t rank);
    // Reads what the pipe holds (all of it when draining, else a bounded amount), forwarding each
    // complete line; at EOF the partial last line too, and the pipe is closed.
    void read(const std::string &nspace, std::uint32_t rank, int which, bool drain);
    void forward(const std::string &nspace, std::uint32_t rank, const Rank &r, int which,
                 std::string data);
    // Every line also goes to the `iof` actor of the root (one per allocation sees it all).
    void to_iof(const msg::Output &m);
    void stop_reading(Pipe &p);
};

// The node a rank's lines name: its node when its job spans nodes (a part of a job across
// brokers), else none.
std::string output_node(const msg::JobInfo &info, bool part, std::uint32_t rank);

}  // namespace zpmix
