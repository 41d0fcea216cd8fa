#include "broker/cmd/run/options.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/launcher/placement.hpp"
#include "broker/cmd/run/output.hpp"

namespace zpmix::cli {

namespace run {

namespace {

extern "C" char **environ;

// The variables of -x (VAR: its value here; VAR=val) into env.
void export_variables(const std::vector<std::string> &exports, std::vector<std::string> &env) {
    for (const auto &x : exports) {
        if (x.find('=') != std::string::npos) {
            env.push_back(x);
        } else if (const char *v = std::getenv(x.c_str())) {
            env.push_back(x + "=" + v);
        } else {
            spdlog::warn("-x {}: not set here, not exported", x);
        }
    }
}

// A directory as the ranks get it: relative to ours.
std::string absolute_dir(const std::string &dir, const std::string &cwd) {
    return dir.empty() || dir.front() == '/' || cwd.empty() ? dir : cwd + "/" + dir;
}

// --bind-to X[:overload-allowed][:if-supported] as mpirun reads it: o.bind_to becomes X; or why
// not.
std::string read_binding(RunOptions &o) {
    const std::string given = o.bind_to;
    std::vector<std::string> parts(1);
    for (char c : given) {
        if (c == ':')
            parts.emplace_back();
        else
            parts.back() += c;
    }
    o.bind_to = parts.front();
    if (!Placement::binds_to(o.bind_to))
        return "--bind-to " + given + ": none, core, package, socket, numa or hwthread";
    for (std::size_t k = 1; k < parts.size(); ++k) {
        if (parts[k] == "overload-allowed")
            o.overload_allowed = true;
        else if (parts[k] != "if-supported")  // zpmix binds wherever hwloc sees cores
            return "--bind-to " + given + ": its qualifiers are overload-allowed and if-supported";
    }
    return {};
}

// MPIEXEC_TIMEOUT (mpirun's): --timeout when it is not given.
std::string timeout_from_environment(RunOptions &o) {
    const char *v = std::getenv("MPIEXEC_TIMEOUT");
    if (!v) return {};
    char *end = nullptr;
    const double s = std::strtod(v, &end);
    if (!*v || *end || !(s >= 0)) return fmt::format("MPIEXEC_TIMEOUT={}: a number of seconds", v);
    o.timeout = s;
    return {};
}

}  // namespace

msg::Caller this_caller() {
    msg::Caller c;
    c.given = true;
    for (char **e = environ; *e; ++e) c.environ.emplace_back(*e);
    c.umask = ::umask(0);  // single-threaded still: nobody creates a file meanwhile
    ::umask(static_cast<mode_t>(c.umask));
    for (int r : {RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS,
                  RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_AS}) {
        rlimit l{};
        if (::getrlimit(r, &l) == 0) c.limits.push_back({r, l.rlim_cur});
    }
    return c;
}

alloc::Result<msg::Launch> launch_request(const RunOptions &o, std::uint32_t np,
                                          msg::Caller caller) {
    msg::Launch launch;
    launch.argv = o.apps.front().argv;
    launch.np = np;
    launch.bind_to = o.bind_to;
    // How the ranks go onto their node's cores is the launcher's placement, on every node.
    launch.map_by = o.map_by == "core" ? "core" : "slot";
    launch.psets = o.psets;
    launch.timeout_s = o.timeout;
    launch.follows_children = true;
    launch.report_child_sep = o.report_child_sep;
    launch.caller = std::move(caller);
    if (o.stdin_target == "all") {
        launch.stdin_target = msg::kStdinAll;
    } else if (o.stdin_target == "none") {
        launch.stdin_target = msg::kStdinNone;
    } else {
        std::size_t end = 0;
        unsigned long r = 0;
        try {
            r = std::stoul(o.stdin_target, &end);
        } catch (const std::exception &) {
            end = 0;
        }
        if (end == 0 || end != o.stdin_target.size() || r >= launch.np)
            return {
                {},
                fmt::format("--stdin {}: all, none or a rank below {}", o.stdin_target, launch.np)};
        launch.stdin_target = static_cast<std::int64_t>(r);
    }
    launch.recoverable = o.enable_recovery;
    launch.stop_in_init = o.stop_in_init;
    launch.stop_on_exec = o.stop_on_exec;
    std::string cwd;
    if (char *here = ::getcwd(nullptr, 0)) {
        cwd = here;
        std::free(here);
    }
    launch.cwd = o.wdir.empty() ? cwd : absolute_dir(o.wdir, cwd);
    launch.merge_stderr = o.merge_stderr;
    // Every program, as mpirun gives every rank its OMPI_ variables: an interpreter (mpi4py,
    // python3-pmix) loads libmpi or libpmix at run time, where no look at the program sees it.
    launch.personality_ompi = o.personality == "ompi";
    export_variables(o.exports, launch.env);
    for (std::size_t i = 0; i + 1 < o.mca.size(); i += 2)
        launch.env.push_back("OMPI_MCA_" + o.mca[i] + "=" + o.mca[i + 1]);
    // Apps of their own (MPMD, or an appfile's app with -x or --wdir): each with its ranks,
    // variables and directory; numbered in order, as mpirun numbers its app contexts.
    const AppSpec &first = o.apps.front();
    if (o.apps.size() > 1 || !first.exports.empty() || !first.wdir.empty()) {
        for (const auto &spec : o.apps) {
            msg::App app;
            app.cmd = spec.argv.front();
            app.argv = spec.argv;
            export_variables(spec.exports, app.env);
            app.cwd = absolute_dir(spec.wdir, cwd);
            app.np = spec.np.value_or(np);
            launch.apps.push_back(std::move(app));
        }
    }
    return {std::move(launch), {}};
}

}  // namespace run

using run::RunOptions;

std::string mpirun_style_args(CLI::App &app, std::vector<std::string> &args) {
    if (args.empty() || args[0] != "run") return {};
    const CLI::App *cmd = nullptr;
    try {
        cmd = app.get_subcommand("run");
    } catch (const CLI::OptionNotFound &) {
        return {};
    }
    for (std::size_t i = 1; i < args.size(); ++i) {
        std::string &a = args[i];
        // `--` ends the options (CLI11 would take what follows for positionals of zpmix run).
        if (a == "--") {
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
            return {};
        }
        if (a.size() < 2 || a[0] != '-') return {};  // the program starts here
        if (auto why = run::mpirun_spelling(*cmd, a); !why.empty()) return why;
        if (a.find('=') != std::string::npos) continue;
        const CLI::Option *opt = cmd->get_option_no_throw(a);
        if (opt && opt->get_expected_max() > 0)  // not a flag: skip its values
            i += static_cast<std::size_t>(opt->get_type_size_max());
    }
    return {};
}

void add_run_command(CLI::App &app, int &status) {
    auto o = std::make_shared<RunOptions>();
    auto *cmd = app.add_subcommand("run", "Launch a parallel job (like mpirun)");
    auto *np = cmd->add_option("-n,-c,--np", o->np,
                               "Number of ranks (default: every slot of the hosts given, else 1); "
                               "of the first app of an MPMD job")
                   ->type_name("N")
                   ->check(CLI::Range(1, 65535));
    cmd->add_option("-x", o->exports, "Export VAR (its value here) or set VAR=value in the ranks")
        ->type_name("VAR[=val]")
        ->allow_extra_args(false);
    cmd->add_option("--wdir,--wd", o->wdir,
                    "The ranks' working directory (default: zpmix run's; an app's own after ':')")
        ->type_name("DIR");
    cmd->add_option("--app", o->app_file,
                    "The job's apps from FILE, one a line: [-n N] [-x VAR[=val]] [--wdir DIR] "
                    "prog [args] (no program on the command line then)")
        ->type_name("FILE");
    cmd->add_flag("--tag-output", o->tag_output,
                  "Prefix each line with [nspace,rank]<stream>: ([nspace,rank,node] across nodes)");
    cmd->add_flag("--timestamp-output", o->timestamp_output,
                  "Prefix each line with the time zpmix run prints it (before the tag)");
    cmd->add_flag("--merge-stderr-to-stdout", o->merge_stderr,
                  "The ranks' stderr goes to their stdout (one stream, in the order written)");
    cmd->add_flag("--report-child-jobs-separately", o->report_child_sep,
                  "Exit with the job's own status, not with that of the first failed job of "
                  "those it and the jobs it spawned (PMIx_Spawn)");
    cmd->add_flag(
        "--stop-in-init", o->stop_in_init,
        "Every rank waits in PMIx_Init for a debugger's release (PMIX_DEBUG_STOP_IN_INIT; "
        "`zpmix release NSPACE`)");
    cmd->add_flag("--stop-on-exec", o->stop_on_exec,
                  "Every rank is stopped at its first instruction until a debugger's release "
                  "(PMIX_DEBUG_STOP_ON_EXEC; `zpmix release NSPACE`)")
        ->excludes("--stop-in-init");
    cmd->add_flag("--enable-recovery", o->enable_recovery,
                  "A rank that fails does not end the job (PMIX_JOB_RECOVERABLE)");
    auto *timeout = cmd->add_option("--timeout", o->timeout,
                                    "Terminate the job after S seconds (exit status 124; default: "
                                    "MPIEXEC_TIMEOUT, else none)")
                        ->type_name("S")
                        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--bind-to", o->bind_to,
                    "none (default) | core | package (socket) | numa | hwthread, each rank to "
                    "its core's; :overload-allowed: no warning when ranks share cores")
        ->type_name("POLICY");
    cmd->add_flag("--report-bindings", o->report_bindings, "Print each rank's binding on stderr");
    cmd->add_option("-H,--host", o->hosts,
                    "Hosts and their slots: n1:4,n2 (a host without :N has 1 slot; repeatable)")
        ->type_name("HOST[:N],...")
        ->allow_extra_args(false);
    cmd->add_option("--hostfile,--machinefile", o->hostfile,
                    "Hosts from a file: one `host [slots=N] [max_slots=M]` a line, # comments")
        ->type_name("FILE");
    auto *npernode =
        cmd->add_option("-N,--npernode", o->npernode, "Ranks per host (as --map-by ppr:N:node)")
            ->type_name("N")
            ->check(CLI::Range(1, 65535));
    cmd->add_flag("--pernode", o->pernode, "One rank per host (-N 1)")->excludes(npernode);
    cmd->add_option("--map-by", o->map_by,
                    "slot (default: fill each host's slots in turn) | core | node (one rank per "
                    "host in turn) | ppr:N:node")
        ->type_name("POLICY");
    auto *over = cmd->add_flag("--oversubscribe", o->oversubscribe,
                               "Allow more ranks on a host than its slots");
    cmd->add_flag("--nooversubscribe", o->nooversubscribe,
                  "Never more ranks on a host than its slots (the default when slots are given)")
        ->excludes(over);
    cmd->add_option("--pset", o->psets, "Name the job as a process set (repeatable)")
        ->type_name("NAME")
        ->allow_extra_args(false);
    cmd->add_option("--personality", o->personality,
                    "ompi (default): the ranks load zpmix's libpmix.so.2 (first on "
                    "LD_LIBRARY_PATH) and get what Open MPI 4.1 needs from a launcher "
                    "(OMPI_MCA_schizo, OMPI_MCA_ess, OMPI_MCA_mpi_oversubscribe); none: no change")
        ->type_name("ompi|none")
        ->check(CLI::IsMember({"ompi", "none"}));
    cmd->add_option("--broker", o->broker, "The broker's URI (default: find or embed one)")
        ->type_name("URI");
    cmd->add_option("--rsh-agent,--launch-agent", o->rsh_agent,
                    "How brokers are started on other hosts: `AGENT HOST COMMAND...` (default: "
                    "[tree] rsh_agent, ssh; Open MPI's plm_rsh_agent)")
        ->type_name("AGENT");
    cmd->add_option("--launcher", o->launcher,
                    "How brokers are started on other hosts: srun (one step, inside a Slurm "
                    "allocation), rsh (--rsh-agent) or auto (default: [tree] launcher; srun inside "
                    "a Slurm allocation, rsh otherwise)")
        ->type_name("auto|rsh|srun")
        ->check(CLI::IsMember({"auto", "rsh", "srun"}));
    cmd->add_option("--tcp-if", o->tcp_if,
                    "Brokers listen for each other on this interface only (a name or a CIDR; "
                    "default: every interface, [tree] tcp_if)")
        ->type_name("IF");
    cmd->add_option("--output-filename", o->output_filename,
                    "Also write each rank's output to DIR/1/rank.N/stdout and stderr (Open MPI's "
                    "layout; the jobs it spawns are 2, 3, ...)")
        ->type_name("DIR");
    cmd->add_option("--mca", o->mca,
                    "Set Open MPI's MCA parameter KEY to VALUE in the ranks "
                    "(OMPI_MCA_KEY=VALUE; repeatable; -mca too)")
        ->type_name("KEY VALUE")
        ->type_size(2)
        ->allow_extra_args(false);
    cmd->add_option("--stdin", o->stdin_target,
                    "Which ranks read zpmix run's stdin: a rank (default 0), all or none")
        ->type_name("RANK|all|none");
    cmd->add_flag("-v,--verbose", o->verbose, "More log output (repeatable)");
    cmd->add_flag("-q,--quiet", o->quiet, "Less log output (repeatable)");
    add_log_options(*cmd, o->log);
    cmd->prefix_command();  // options end at the program: `zpmix run -n 2 ls -l`
    cmd->footer(
        "MPMD: zpmix run [options] -n N prog [args] : -n N prog2 [args] : ...; an app after ':' "
        "takes -n, -x and --wdir (its ranks follow the app before's). mpirun's spellings work "
        "too: -np, -host, -npernode, -wdir... (one dash), --n.\n"
        "Hosts: -H, else --hostfile (with -H: the hostfile's hosts -H names), else the Slurm "
        "allocation zpmix run is in "
        "(SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE), else this host. Ranks on other hosts run "
        "under a broker on each, started as one srun step inside a Slurm allocation, else through "
        "the rsh agent, and stopped with the job.\n"
        "Exit status: the job's (0, the first failing rank's exit code, or 128+signal; of the "
        "first job that failed when its ranks spawn jobs); 124 on --timeout; 127 if the program "
        "is not found, 126 if it is not executable; 1 if zpmix run failed.");
    cmd->callback([o, cmd, np, timeout, &status] {
        o->np_given = np->count() > 0;
        const auto rest = cmd->remaining();
        if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
            status = run::fail(run::unknown_option(rest[0], run::option_names(*cmd)));
            return;
        }
        if (!o->app_file.empty() && (!rest.empty() || o->np_given)) {
            status = run::fail("--app " + o->app_file +
                               ": the job's apps are the file's, each with its -n (no program "
                               "or -n on the command line)");
            return;
        }
        auto apps = o->app_file.empty()
                        ? run::command_line_apps(*cmd, rest,
                                                 o->np_given ? std::optional(o->np) : std::nullopt)
                        : run::appfile_apps(*cmd, o->app_file);
        if (!apps) {
            status = run::fail(apps.error);
            return;
        }
        o->apps = std::move(apps.value);
        // The apps' ranks, which the hosts must have room for.
        if (o->apps.size() > 1 || (!o->apps.empty() && o->apps.front().np)) {
            std::uint64_t total = 0;
            for (const auto &app : o->apps) total += *app.np;
            if (total > msg::kMaxRanks) {
                status = run::fail(
                    fmt::format("the apps have {} ranks: at most {}", total, msg::kMaxRanks));
                return;
            }
            o->np = static_cast<std::uint32_t>(total);
            o->np_given = true;
        }
        if (o->pernode) o->npernode = 1;
        std::string why = run::read_binding(*o);
        if (why.empty() && timeout->count() == 0) why = run::timeout_from_environment(*o);
        if (!why.empty()) {
            status = run::fail(why);
            return;
        }
        status = run::run_job(*o);
    });
}

}  // namespace zpmix::cli
