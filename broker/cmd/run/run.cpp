// `zpmix run`: launches a job through this node's broker (--broker URI, else the standalone
// broker of <base>/broker.json, else one embedded in this process) and relays its output, its
// signals and its exit status like mpirun. Hosts (-H, --hostfile, a Slurm allocation) and the
// mapping of ranks onto them are read as mpirun reads them. A job with ranks on other hosts runs
// on a tree of brokers: this process embeds the root, which starts one broker on each of those
// hosts (as one srun step inside a Slurm allocation, else through the rsh agent: --launcher) and
// stops them when the job is over. The jobs its ranks spawn (PMIx_Spawn) are relayed too: their
// output (tagged with their own namespace), and a line on stderr when one fails; the job ends,
// and `zpmix run` exits, once they are all over.
//
// Its steps, each in a file of its own here:
// - options.cpp: the command line, and the launch request it makes, checked;
// - apps.cpp: mpirun's spellings of the options, the apps of an MPMD job (`:`, --app FILE);
// - layout.cpp: the hosts, the ranks mapped onto them, the nodes of a job across nodes;
// - brokers.cpp: which broker runs the job (given, found, or started here);
// - relay.cpp: Hello and the launch, then signals and stdin to the job, its messages from the
//   broker;
// - output.cpp: the job's output on our stdout and stderr (and --output-filename), the exit
//   status.
#include <iostream>

#include "broker/cmd/commands.hpp"
#include "broker/cmd/run/brokers.hpp"
#include "broker/cmd/run/layout.hpp"
#include "broker/cmd/run/options.hpp"
#include "broker/cmd/run/output.hpp"
#include "broker/cmd/run/relay.hpp"

namespace zpmix::cli::run {

namespace {

// --stop-in-init, --stop-on-exec: how to find the stopped ranks and release them.
void say_stopped(const RunOptions &o, const std::string &nspace, const std::string &uri) {
    std::cerr << "zpmix run: the ranks of " << nspace
              << (o.stop_on_exec ? " are stopped at exec" : " wait in PMIx_Init")
              << " for a debugger. Their pids and hosts: zpmix ps --ranks --broker " << uri
              << " --job " << nspace << "; attach (gdb -p PID), then release them: zpmix release "
              << nspace << " --broker " << uri << "\n";
}

// The job launched through `relay`, relayed until it is over: the exit status.
int launch_and_relay(const RunOptions &o, const msg::Launch &launch, const Layout &layout,
                     const std::string &uri, Relay &relay, JobOutput &output) {
    if (auto failed = relay.launch(launch, layout, o.oversubscribe)) return *failed;
    const std::string &nspace = relay.launched().nspace;
    if (o.stop_in_init || o.stop_on_exec) say_stopped(o, nspace, uri);
    if (o.report_bindings) report_bindings(o, launch.map_by, launch.np, layout.hostname);
    relay.start(launch.stdin_target, layout);
    if (!output.open_files(nspace, launch.np))
        return fail("--output-filename: giving up on " + nspace);
    return relay.run();
}

}  // namespace

int run_job(const RunOptions &o) {
    if (o.apps.empty()) return fail("no program given (zpmix run [options] prog [args...])");
    try {
        setup_logging("run", "warn", o.verbose, o.quiet, o.log);
    } catch (const std::exception &e) {
        return fail(e.what());
    }
    msg::Caller caller = this_caller();  // before an embedded broker changes anything
    auto layout = lay_out(o);
    if (!layout) return fail(layout.error);
    warn_overloaded(o, layout.value);
    auto launch = launch_request(o, layout.value.np(), std::move(caller));
    if (!launch) return fail(launch.error);
    const int signal_fd = take_signals();  // before any thread exists
    auto broker = job_broker(o, layout.value);
    if (!broker) return fail(broker.error);
    JobOutput output(o.tag_output, o.timestamp_output, o.output_filename);
    Relay relay(broker.value.uri, signal_fd, output);
    const int status =
        launch_and_relay(o, launch.value, layout.value, broker.value.uri, relay, output);
    broker.value.stop();  // while the relay's connection is still open, as the job ends
    return status;
}

}  // namespace zpmix::cli::run
