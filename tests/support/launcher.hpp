#pragma once
// Which launcher starts an integration case's job: `zpmix run`, or the test host
// (tests/server/host.c), a resource manager written on pmix_server.h alone that embeds zpmix's
// server library, as mpirun and Slurm do. A suite runs the cases that make sense under a host
// under both, with the same program and the same expectations; cases that need what only
// `zpmix run` has (its options, signal forwarding, spawn placement, more than one job) stay
// zpmix-run only and say why.
//
// Under the host, ranks write to the host's stdout and stderr (as mpirun's do), mixed with the
// host's "nodeK: upcall ..." lines; its exit code is the ranks' first non-zero one, 99 when the
// host itself failed. Under --nodes 2 the host is two "nodes" (node0, node1), the first half of
// the ranks on node0, joined by a socket that carries fences, direct modex and events.
#include <string>
#include <vector>

#include "support/process.hpp"

namespace zpmix::test {

enum class JobLauncher { zpmix_run, server_host };

inline std::ostream &operator<<(std::ostream &os, JobLauncher l) {
    return os << (l == JobLauncher::zpmix_run ? "zpmix_run" : "server_host");
}

// A job: np ranks of argv, on `nodes` nodes (2: the host's two nodes; `zpmix run` has one).
// `tools`: tools find its server by the launcher's pid; `forward_io`: the ranks' output reaches
// the tools that pull it, and their pushes rank 0's stdin (`zpmix run` always does both).
struct JobSpec {
    std::vector<std::string> argv = {};
    int np = 1;
    int nodes = 1;
    bool tools = false;
    bool forward_io = false;
    std::vector<std::string> options = {};  // the launcher's own, before -n
};

inline std::vector<std::string> launch_command(JobLauncher l, const JobSpec &job) {
    std::vector<std::string> cmd;
    if (l == JobLauncher::zpmix_run) {
        BOOST_REQUIRE_MESSAGE(job.nodes == 1, "zpmix run runs on this node only");
        cmd = {std::string(ZPMIX_BIN_DIR) + "/zpmix", "run"};
    } else {
        cmd = {std::string(ZPMIX_BIN_DIR) + "/../tests/server_host"};
        if (job.nodes > 1) cmd.insert(cmd.end(), {"--nodes", std::to_string(job.nodes)});
        if (job.tools) cmd.push_back("--tools");
        if (job.forward_io) cmd.push_back("--forward-io");
    }
    cmd.insert(cmd.end(), job.options.begin(), job.options.end());
    cmd.insert(cmd.end(), {"-n", std::to_string(job.np)});
    cmd.insert(cmd.end(), job.argv.begin(), job.argv.end());
    return cmd;
}

// A job started under a launcher in a private base directory (XDG_RUNTIME_DIR, where tools look
// for servers and where the host's servers leave nothing behind).
struct LaunchedJob {
    TempDir tmp;
    Child child;
    LaunchedJob(JobLauncher l, const JobSpec &job, std::vector<std::string> env = {})
        : tmp("zpmix-launched"), child(launch_command(l, job), with_runtime_dir(std::move(env))) {}
    std::vector<std::string> with_runtime_dir(std::vector<std::string> env) const {
        env.push_back("XDG_RUNTIME_DIR=" + tmp.path);
        return env;
    }
    std::vector<std::string> env() const { return {"XDG_RUNTIME_DIR=" + tmp.path}; }
    // Its exit code, once it ended (the test fails at the deadline).
    int exit_code(std::chrono::milliseconds timeout = 60s) { return child.exit_code(timeout); }
    const std::string &out() const { return child.out(); }
    const std::string &err() const { return child.err(); }
};

}  // namespace zpmix::test
