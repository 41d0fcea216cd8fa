#pragma once
// Boot: starts the other brokers of an allocation from the root, one of two ways.
//
// rsh: each broker through the rsh agent as `AGENT HOST ZPMIX broker --parent ADDRS --rank R ...`
// (Open MPI's plm_rsh_agent convention: ssh, or any command taking a host and a command), once its
// parent joined; each agent is watched: an agent that exits is a broker that ended (or never
// started). The allocation's CURVE keypair goes on the agent's stdin.
//
// srun (inside a Slurm allocation): every broker at once, as ONE step `srun --nodes=K
// --ntasks-per-node=1 --nodelist=... --input=all ZPMIX broker --await-parent ...`. A broker cannot
// know its parent's address when it starts, so srun's stdin, which every task reads
// (--input=all), is the boot channel: a line "NODE RANK ADDR,ADDR... KEYS" for each broker once
// its parent joined (start()), KEYS the keypair in a MUNGE credential (munge_keys.hpp: srun's
// input crosses the network in clear); each broker reads until its node's line
// (SLURMD_NODENAME), takes its rank, parent and keys from it and stops reading. The step is watched
// as a whole: when srun exits, the nodes srun names as failing are reported first, then the others.
//
// Keys are never on a command line. Agents and the step run in their own process group, so a
// terminal's ^C reaches `zpmix run` alone, which stops the tree in order.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/runtime/reactor.hpp"

namespace zpmix::tree {

struct BootSettings {
    std::vector<std::string> nodes;  // by broker rank; [0] is the root's own
    std::string agent = "ssh";       // split on blanks: "ssh -o BatchMode=yes" works
    std::string zpmix;               // the zpmix program on the nodes
    std::vector<std::string> extra;  // appended to every broker's command line
    std::string launcher = "rsh";    // "rsh" or "srun" (resolve_launcher)
    std::string munge_socket;        // srun: munged's socket for the keys ("": MUNGE's default)
};

// The launcher to use: `asked` ("auto", "rsh" or "srun"); auto is srun inside a Slurm
// allocation (SLURM_JOB_ID set) with srun on the PATH, rsh otherwise. An error text in `error`.
std::string resolve_launcher(const std::string &asked, bool in_allocation, bool have_srun,
                             std::string &error);

class Boot {
  public:
    // on_exit(rank, why): broker `rank`'s agent (or the step) exited (why: its status, in words).
    Boot(Reactor &reactor, BootSettings settings, std::string public_key, std::string secret_key,
         std::function<void(std::uint32_t, const std::string &)> on_exit);
    ~Boot();  // kills and reaps what is left
    Boot(const Boot &) = delete;
    Boot &operator=(const Boot &) = delete;

    // Starts broker `rank` (of `size`, radix) under the parent at `parent` addresses; an error
    // text when it cannot be started.
    std::string start(std::uint32_t rank, std::uint32_t size, std::uint32_t radix,
                      const std::vector<std::string> &parent);
    const std::string &node(std::uint32_t rank) const { return s_.nodes.at(rank); }
    // What starts a broker, in words: "rsh agent" or "srun step".
    std::string how() const { return srun() ? "srun step" : "rsh agent"; }
    // Waits up to `limit` for every agent to exit (their brokers were told to stop), then kills
    // the rest (SIGTERM, SIGKILL a second later) and reaps them.
    void reap(std::chrono::milliseconds limit);

  private:
    struct Agent {
        int pid = -1;
        int pidfd = -1;
    };
    static constexpr std::uint32_t kStep = 0;  // agents_' key of the srun step (rank 0: the root)
    Reactor &reactor_;
    BootSettings s_;
    std::string public_key_, secret_key_;
    std::function<void(std::uint32_t, const std::string &)> on_exit_;
    std::map<std::uint32_t, Agent> agents_;  // running, by broker rank (the srun step: kStep)
    int step_in_ = -1, step_err_ = -1;       // the step's stdin (boot channel) and stderr
    std::uint32_t step_size_ = 0, placed_ = 0;
    std::string err_line_;
    // Ranks srun named as failing, in its order, with what it said.
    std::vector<std::pair<std::uint32_t, std::string>> failed_;

    bool srun() const { return s_.launcher == "srun"; }
    std::string spawn(std::vector<std::string> args, const std::string &input, bool keep_input,
                      bool capture_err, std::uint32_t key);
    std::string start_step(std::uint32_t size, std::uint32_t radix);
    std::string place(std::uint32_t rank, const std::vector<std::string> &parent);
    void read_step_err();
    void note_failure(const std::string &line);
    void close_step_fds();
    void exited(std::uint32_t rank);
};

}  // namespace zpmix::tree
