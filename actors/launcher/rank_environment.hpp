#pragma once
// What a rank is started with: its program, argv, working directory and environment. Pure
// functions of the job's plan (but for looking the program up in the app's prefix, and whether
// it links Open MPI), so that what a rank gets can be tested without launching it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actors/protocol/job.hpp"

namespace zpmix {

// How an app's ranks are started.
struct AppPlan {
    std::string cmd;  // what posix_spawnp looks up
    std::vector<std::string> argv;
    std::string cwd;
    std::vector<std::string> env;  // shared by the app's ranks but for env[rank_var]
    std::size_t rank_var = 0;
    bool links_mpi = false;  // the program links libmpi: its ranks load the node's topology
};

// The rank's environment: the inherited one, minus what belongs to another job (ZPMIX_URI,
// ZPMIX_SECRET, PMIX_NAMESPACE, PMIX_RANK), plus the job's and the app's variables and the client
// variables, each overriding the one before; then the app's prefix (PMIX_PREFIX) first on PATH
// and LD_LIBRARY_PATH, and the Open MPI personality when ompi_lib_dir is set (oversubscribed: the
// node runs more of the job's ranks than it has CPUs). Sorted by name; entries without a name
// are dropped.
std::vector<std::string> rank_environment(
    const char *const *inherited, const std::vector<std::string> &job_env,
    const std::vector<std::string> &app_env, const std::vector<std::string> &client,
    const std::string &prefix, const std::string &ompi_lib_dir, bool oversubscribed = false);

// The apps a launch runs (moved from m): its apps, each without a cwd given m.cwd, or else one app
// of m.argv on m.np ranks. Empty, with why in `error`, when they are not a job: no program, an app
// of 0 ranks, apps whose ranks do not add up to m.np.
std::vector<msg::App> launch_apps(msg::Launch &m, std::string &error);

// The program an app runs: its cmd, or argv[0]; a bare name found in <prefix>/bin first.
std::string program_of(const msg::App &app);

// A job's secret: 16 random bytes in hex. Throws if the kernel gives none.
std::string random_secret();

// A new job's namespace, unique among this process's jobs: "zpmix.<pid>.<n>". Thread-safe (the
// launcher and the job coordinator both name jobs).
std::string new_namespace_name();

// The variables a client needs to reach the broker as a rank of nspace (PMIX_RANK=0, set per
// rank by set_rank), and the broker's bounds it applies itself: a write's, and a group
// construct's met on the fence board without PMIX_TIMEOUT ([broker] group_timeout_ms).
std::vector<std::string> client_variables(const std::string &uri, const std::string &secret,
                                          int write_timeout_ms, int group_timeout_ms,
                                          const std::string &nspace);

// How app's ranks start (app's argv, cwd and env are moved from): job_env is the job's
// variables, nsdir the job's session directory (the cwd of an app with session_cwd and none of
// its own); personality_ompi nullopt: whether the program links libmpi; local_ranks: how many of
// the job's ranks run on this node.
AppPlan plan_app(msg::App &app, const char *const *inherited,
                 const std::vector<std::string> &job_env, const std::vector<std::string> &client,
                 const std::string &nsdir, std::optional<bool> personality_ompi,
                 std::size_t local_ranks);

// Makes app's environment the one of rank `rank`.
void set_rank(AppPlan &app, std::size_t rank);

}  // namespace zpmix
