#pragma once
// StdinForwarding: `zpmix run`'s stdin (and a tool's PMIx_IOF_push, through the iof actor), to
// the ranks of a job that read it (Launch.stdin_target: one rank, every rank, or none). An Input
// names the broker whose ranks it is for: the root's launcher passes another broker's on to it,
// and its answer back. A piece goes to the ranks it names (every stdin rank when it names none),
// written without blocking: a full pipe is tried again every 10 ms (the reactor watches readers
// only), and the Input is answered (InputTaken) once every pipe took it, so its sender sends no
// more than the ranks read. Inputs of other senders wait meanwhile, in order, 64 at most.
// Input.eof closes the stdin of the ranks it went to once written. What a rank does not read when
// it closes its stdin or ends is dropped, as a closed pipe drops it; a job over (or never here)
// takes nothing (PMIX_ERR_NOT_FOUND), and a rank named that was given no pipe is refused
// (PMIX_ERR_NOT_SUPPORTED).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/job.hpp"
#include "actors/runtime/actor.hpp"
#include "actors/tree/broker_map.hpp"

namespace zpmix {

class StdinForwarding {
  public:
    struct Wiring {
        std::function<void(const Envelope &, const msg::InputTaken &)> answer;
        std::function<void(const Envelope &, std::int32_t status, std::string why)> refuse;
        // To the launcher of broker `broker`, as the launcher, with the relay's id.
        std::function<void(std::uint32_t broker, const msg::Input &, std::uint64_t id)> pass_on;
        std::function<std::uint64_t()> relay_id;  // unique among the launcher's relays
    };
    StdinForwarding(Reactor &reactor, const BrokerMap &brokers, Wiring wiring);
    ~StdinForwarding();  // closes the pipes left
    StdinForwarding(const StdinForwarding &) = delete;
    StdinForwarding &operator=(const StdinForwarding &) = delete;

    // A job of `size` ranks begins here; those of `target` (msg::kStdinAll, a rank, or
    // msg::kStdinNone) read its stdin. It takes Inputs until forget().
    void open(const std::string &nspace, std::uint32_t size, std::int64_t target);
    // Whether the rank reads the job's stdin: it is spawned with a pipe for it.
    bool is_stdin_rank(const std::string &nspace, std::uint32_t rank) const;
    // Takes the write end of a spawned rank's stdin pipe.
    void add(const std::string &nspace, std::uint32_t rank, int in);

    // msg::Input: written to this node's ranks, or passed on to the broker it names.
    void input(const Envelope &env, msg::Input &m);
    // That broker's answer to an Input passed on.
    void relayed(const Envelope &env, msg::InputTaken &m);

    // The rank ended: its stdin closes, and an Input waiting for it is answered once the other
    // ranks took theirs.
    void rank_ended(const std::string &nspace, std::uint32_t rank);
    // Every rank ended: every stdin closes, an Input waiting is answered.
    void close(const std::string &nspace);
    // The job is gone (or its launch given up): its pipes close; an Input waiting is not answered.
    void forget(const std::string &nspace);

  private:
    struct Rank {
        int in = -1;               // write end of its stdin pipe, when it reads our Input
        bool reads_input = false;  // it was given such a pipe
        std::string unwritten;     // Input not yet written
        bool close_after = false;  // its stdin is closed once `unwritten` is (Input.eof)
    };
    struct Job {
        std::int64_t target = msg::kStdinNone;
        std::vector<Rank> ranks;          // every rank of the job; this node's have pipes
        std::optional<Envelope> waiting;  // an Input answered once written to every stdin
        std::deque<Envelope> queue;       // Inputs of other senders, written after it
        Reactor::TimerId retry = 0;
    };

    Reactor &reactor_;
    const BrokerMap &brokers_;
    Wiring wiring_;
    std::map<std::string, Job> jobs_;           // by namespace
    std::map<std::uint64_t, Envelope> relays_;  // Inputs passed on to another broker, by id

    void take(const Envelope &env, msg::Input &m);
    void next(Job &job);  // the next queued Input, if any
    // Writes what the job's stdin ranks have not taken yet; answers the Input once all is written.
    void flush(const std::string &nspace);
    static void close_rank(Rank &r);
};

}  // namespace zpmix
