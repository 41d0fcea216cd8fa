#pragma once
// Boot: starts the other brokers of an allocation from the root, each through the rsh agent as
// `AGENT HOST ZPMIX broker --parent ADDRS --rank R ...` (Open MPI's plm_rsh_agent convention: ssh,
// or any command taking a host and a command), and watches each agent: an agent that exits is a
// broker that ended (or never started). The allocation's CURVE keypair goes to the broker on the
// agent's stdin, never on a command line. Agents run in their own process group, so a terminal's
// ^C reaches `zpmix run` alone, which stops the tree in order.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "actors/runtime/reactor.hpp"

namespace zpmix::tree {

struct BootSettings {
    std::vector<std::string> nodes;  // by broker rank; [0] is the root's own
    std::string agent = "ssh";       // split on blanks: "ssh -o BatchMode=yes" works
    std::string zpmix;               // the zpmix program on the nodes
    std::vector<std::string> extra;  // appended to every broker's command line
};

class Boot {
  public:
    // on_exit(rank, why): broker `rank`'s agent exited (why: its status, in words).
    Boot(Reactor &reactor, BootSettings settings, std::string public_key, std::string secret_key,
         std::function<void(std::uint32_t, const std::string &)> on_exit);
    ~Boot();  // kills and reaps what is left
    Boot(const Boot &) = delete;
    Boot &operator=(const Boot &) = delete;

    // Starts broker `rank` (of `size`, radix) under the parent at `parent` addresses; an error
    // text when the agent cannot be started.
    std::string start(std::uint32_t rank, std::uint32_t size, std::uint32_t radix,
                      const std::vector<std::string> &parent);
    const std::string &node(std::uint32_t rank) const { return s_.nodes.at(rank); }
    // Waits up to `limit` for every agent to exit (their brokers were told to stop), then kills
    // the rest (SIGTERM, SIGKILL a second later) and reaps them.
    void reap(std::chrono::milliseconds limit);

  private:
    struct Agent {
        int pid = -1;
        int pidfd = -1;
    };
    Reactor &reactor_;
    BootSettings s_;
    std::string public_key_, secret_key_;
    std::function<void(std::uint32_t, const std::string &)> on_exit_;
    std::map<std::uint32_t, Agent> agents_;  // running, by broker rank

    void exited(std::uint32_t rank);
};

}  // namespace zpmix::tree
