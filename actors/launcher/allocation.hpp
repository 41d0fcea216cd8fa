#pragma once
// Which hosts a job's ranks run on, as mpirun users ask for it: the hosts and their slots
// (`-H n1:4,n2`, `--hostfile`, else a Slurm allocation's environment, else this host alone), then
// which host each rank goes on (`--map-by`, `-N`, `--oversubscribe`). Pure functions, so that
// every rule is tested without launching anything. Where a rank runs within its host (cores,
// binding) is placement.hpp's job.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpmix::alloc {

struct Host {
    std::string name;
    std::uint32_t slots = 1;
    std::optional<std::uint32_t> max_slots;  // never more ranks than this, oversubscribed or not
};

// What the user asked for (zpmix run's options).
struct Request {
    std::vector<std::string> host_lists;    // each -H/--host value: "n1:4,n2"
    std::string hostfile;                   // --hostfile
    std::optional<std::uint32_t> np;        // -n; default: every slot (1 without hosts)
    std::optional<std::uint32_t> npernode;  // -N: ranks per host (ppr:N:node)
    std::string map_by;                     // slot | core | node | ppr:N:node; empty: slot
    std::optional<bool> oversubscribe;      // --oversubscribe / --nooversubscribe
};

// A rank's host (an index into Allocation::hosts) and its rank among the job's ranks there.
struct RankPlace {
    std::uint32_t host = 0;
    std::uint32_t local_rank = 0;  // PMIX_LOCAL_RANK
};

struct Allocation {
    std::vector<Host> hosts;                          // in the order they were given
    std::vector<RankPlace> ranks;                     // by rank
    std::vector<std::vector<std::uint32_t>> on_host;  // by host: its ranks, ascending
};

// The result, or why there is none (a message for the user, like mpirun's).
template <class T>
struct Result {
    T value{};
    std::string error;
    explicit operator bool() const { return error.empty(); }
};

// Reads an environment variable (std::getenv in the product, a map in tests).
using Env = std::function<std::optional<std::string>(const std::string &)>;

// "n1:4,n2" (a host without :N has one slot); a host named again adds its slots.
std::string parse_host_list(std::string_view list, std::vector<Host> &hosts);
// Open MPI's hostfile: `host [slots=N] [max_slots=M]` per line, `#` comments, blank lines; a host
// without slots= has one; a host named again adds its slots.
std::string parse_hostfile(std::string_view text, std::vector<Host> &hosts);
// Slurm's compressed hostlist: "n[1-3,07-08],gpu05" -> n1 n2 n3 n07 n08 gpu05.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);
// SLURM_TASKS_PER_NODE: "2(x3),1" -> 2 2 2 1.
Result<std::vector<std::uint32_t>> expand_tasks_per_node(std::string_view counts);
// The hosts of the request: -H, --hostfile (read here; with -H, the hostfile's hosts -H names, as
// mpirun picks them), else the Slurm allocation in env (SLURM_JOB_NODELIST and
// SLURM_TASKS_PER_NODE), else none (an empty list).
Result<std::vector<Host>> requested_hosts(const Request &request, const Env &env);
// Maps the ranks onto hosts. Without hosts, every rank goes on this host ("localhost", slots
// unlimited, so as many ranks as asked). Slots given (by -H, a hostfile or Slurm) are not
// oversubscribed unless asked.
Result<Allocation> allocate(const Request &request, const Env &env);
// Maps request.np ranks (default: every slot) onto `hosts` with request's map_by and
// oversubscribe (default: no), as allocate() does once it has the hosts; a host's slots may be 0
// (what is left of it when jobs run there).
Result<Allocation> map_onto(std::vector<Host> hosts, const Request &request);

// Whether name is this host: "localhost", 127.0.0.1, or this host's name (short or full).
bool is_this_host(std::string_view name, std::string_view hostname);

}  // namespace zpmix::alloc
