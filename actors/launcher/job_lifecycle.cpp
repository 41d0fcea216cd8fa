// A launcher's job from its start to its end: laid out and placed, its ranks spawned one per
// reactor turn, the launch answered, its ranks reaped, the job failed and terminated, and over
// once its ranks and the jobs it spawned are (launcher.hpp says how).
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <pmix_common.h>

#include "actors/launcher/launcher.hpp"
#include "actors/launcher/rank_process.hpp"
#include "actors/protocol/iof.hpp"
#include "actors/protocol/pset.hpp"
#include "actors/protocol/shm/fence_board.hpp"

extern char **environ;

namespace zpmix {

namespace fs = std::filesystem;

namespace {

constexpr double kForever = 1e9;  // s: a longer time limit is none (and fits a timer)

int pidfd_open(pid_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::string describe_exit(std::uint32_t rank, pid_t pid, int code, int sig) {
    if (sig)
        return fmt::format("rank {} (pid {}) was killed by signal {} ({})", rank, pid, sig,
                           strsignal(sig));
    return fmt::format("rank {} (pid {}) exited with status {}", rank, pid, code);
}

}  // namespace

// Checks the plan and lays the job out on this node; begin() does the rest. Or answers the
// request with an error and nothing of the job exists.
void Launcher::start(const Envelope &env, Job job, Plan plan) {
    if (shutting_down_) return reply_error(env, PMIX_ERR_NOT_AVAILABLE, "the broker is stopping");
    if (plan.apps.empty()) return reply_error(env, PMIX_ERR_BAD_PARAM, "no app to launch");
    std::uint64_t np = 0;
    for (const auto &app : plan.apps) np += app.np;
    if (np > msg::kMaxRanks)
        return reply_error(env, PMIX_ERR_BAD_PARAM,
                           fmt::format("-n must be 1..{}", msg::kMaxRanks));
    msg::JobInfo &info = job.info;
    info.nspace = new_namespace_name();
    {
        const auto &first = plan.apps.front();
        info.program = first.cmd.empty() && !first.argv.empty() ? first.argv[0] : first.cmd;
    }
    info.size = info.univ_size = info.max_procs = static_cast<std::uint32_t>(np);
    info.num_apps = static_cast<std::uint32_t>(plan.apps.size());
    info.nodes = {settings_.node};
    info.procs.resize(np);
    for (std::uint32_t i = 0; i < np; ++i) {
        msg::ProcInfo &p = info.procs[i];
        p.rank = i;
        p.local_rank = static_cast<std::uint16_t>(i);
        p.hostname = settings_.node;
    }
    node_ranks_.number(info);
    for (std::uint32_t app = 0, rank = 0; app < plan.apps.size(); ++app)
        for (std::uint32_t i = 0; i < plan.apps[app].np && rank < np; ++i)
            info.procs[rank++].app_num = app;
    for (const auto &pset : plan.psets) {
        auto &ranks = info.psets[pset];
        for (std::uint32_t i = 0; i < np; ++i) ranks.push_back(i);
    }
    begin(env, std::move(job), std::move(plan), random_secret());
}

void Launcher::begin(const Envelope &env, Job job, Plan plan, std::string secret) {
    // A part's failure goes to its coordinator, a launch's to its requester.
    auto refuse = [&](std::int32_t status, const std::string &why) {
        if (!job.is_part()) return reply_error(env, status, why);
        report_not_started(job, status, why);
    };
    if (plan.apps.empty()) return refuse(PMIX_ERR_BAD_PARAM, "no app to launch");
    std::uint64_t np = 0;
    for (const auto &app : plan.apps) {
        if ((app.cmd.empty() && (app.argv.empty() || app.argv[0].empty())))
            return refuse(PMIX_ERR_BAD_PARAM, "an app without a program");
        if (app.np == 0) return refuse(PMIX_ERR_BAD_PARAM, "an app of 0 ranks");
        std::error_code ec;
        if (!app.cwd.empty() && !fs::is_directory(app.cwd, ec))
            return refuse(PMIX_ERR_JOB_WDIR_NOT_FOUND, "no working directory " + app.cwd);
        np += app.np;
    }
    msg::JobInfo &info = job.info;
    if (np != info.procs.size()) return refuse(PMIX_ERR_BAD_PARAM, "the apps' ranks do not add up");
    if (!(plan.timeout_s >= 0) || !(plan.spawn_timeout_s >= 0))
        return refuse(PMIX_ERR_BAD_PARAM, "negative timeout");
    if (plan.timeout_s > kForever) plan.timeout_s = 0;
    if (plan.spawn_timeout_s > kForever) plan.spawn_timeout_s = 0;

    for (std::uint32_t i = 0; i < np; ++i)
        if (info.procs[i].hostname == settings_.node) job.local.push_back(i);
    Spawning &sp = job.spawning.emplace();
    std::vector<Placement::Rank> places;
    if (auto err = placement_.place(plan.map_by, plan.bind_to,
                                    static_cast<std::uint32_t>(job.local.size()), places);
        !err.empty())
        return refuse(PMIX_ERR_BAD_PARAM, err);
    sp.sets.resize(np);
    for (std::size_t k = 0; k < job.local.size(); ++k) {
        msg::ProcInfo &p = info.procs[job.local[k]];
        p.cpuset = std::move(places[k].cpuset);
        p.locality = std::move(places[k].locality);
        sp.sets[job.local[k]] = std::move(places[k].set);
    }

    info.session_tmpdir = settings_.run_dir + "/session";
    info.nsdir = info.session_tmpdir + "/" + info.nspace;
    std::error_code ec;
    fs::create_directories(info.nsdir, ec);
    for (std::size_t k = 0; k < job.local.size() && !ec; ++k)
        fs::create_directory(info.nsdir + "/" + std::to_string(job.local[k]), ec);
    if (ec) {
        fs::remove_all(info.nsdir, ec);
        return refuse(PMIX_ERR_OUT_OF_RESOURCE, "cannot create " + info.nsdir);
    }
    // Every rank is on this node: its whole-namespace fences meet on a board, not in the broker.
    if (np > 1 && job.local.size() == np) {
        const std::string board = info.nsdir + "/fence-board";
        if (auto err = FenceBoard::create(board, info.size); err.empty())
            info.fence_board = board;
        else
            log().warn("{} fences through the broker: {}", info.nspace, err);
    }

    // One environment per app; only PMIX_RANK differs between its ranks.
    const std::vector<std::string> client_vars =
        client_variables(settings_.uri, secret, settings_.client_write_timeout_ms,
                         settings_.group_timeout_ms, info.nspace);
    // The caller's environment when it gave it (a broker of its own has it anyway).
    std::vector<const char *> caller_env;
    for (const auto &kv : plan.caller.environ) caller_env.push_back(kv.c_str());
    caller_env.push_back(nullptr);
    const char *const *inherited = plan.caller.given ? caller_env.data() : environ;
    for (auto &app : plan.apps)
        sp.apps.push_back(plan_app(app, inherited, plan.env, client_vars, info.nsdir,
                                   plan.personality_ompi, job.local.size()));
    // Open MPI's ranks load the node's topology from PMIx: written once, while they start.
    if (std::any_of(sp.apps.begin(), sp.apps.end(), [](const AppPlan &a) { return a.links_mpi; }))
        topology_.start(info.session_tmpdir);
    sp.request = env;
    job.env = std::move(plan.env);
    job.personality_ompi = plan.personality_ompi.value_or(false);
    job.caller = std::move(plan.caller);
    job.recoverable = plan.recoverable;
    job.merge_stderr = plan.merge_stderr;
    job.ranks.resize(np);

    const std::string nspace = info.nspace;
    // Server and events know the namespace before its first rank exists (both posted in order).
    // A part replaces the coordinator's registration with this node's placement and directories.
    send("registry",
         msg::RegisterNamespace{info, std::move(secret), std::move(plan.notify_completion)});
    // Its launch-time sets are announced once, by the broker that launched it (a part's
    // coordinator did).
    if (!job.is_part() && !info.psets.empty() && bus().find("pset"))
        send("pset", msg::PsetLaunched{nspace, info.psets});
    if (!plan.keep_output_for.empty() && bus().find("iof"))
        send("iof", msg::IofKeep{nspace, std::move(plan.keep_output_for)});
    auto [it, inserted] = jobs_.emplace(nspace, std::move(job));
    Job &j = it->second;
    stdin_.open(nspace, static_cast<std::uint32_t>(np), plan.stdin_target);
    if (!j.parent.empty()) jobs_.at(j.parent).children.insert(nspace);
    if (plan.timeout_s > 0) {
        const double limit = plan.timeout_s;
        j.time_limit =
            reactor().after(std::chrono::duration_cast<Reactor::Clock::duration>(
                                std::chrono::duration<double>(limit)),
                            [this, nspace, limit] {
                                auto it = jobs_.find(nspace);
                                if (it == jobs_.end()) return;
                                it->second.time_limit = 0;
                                fail(it->second, kTimeoutStatus,
                                     fmt::format("job exceeded its time limit of {} s", limit));
                            });
    }
    if (plan.spawn_timeout_s > 0) {
        const double limit = plan.spawn_timeout_s;
        j.spawning->deadline = reactor().after(
            std::chrono::duration_cast<Reactor::Clock::duration>(
                std::chrono::duration<double>(limit)),
            [this, nspace, limit] {
                auto it = jobs_.find(nspace);
                if (it == jobs_.end() || !it->second.spawning) return;
                it->second.spawning->deadline = 0;
                abandon_launch(nspace, PMIX_ERR_TIMEOUT,
                               fmt::format("its ranks were not all started within {} s", limit));
            });
    }
    tell_monitors(j, PMIX_EVENT_JOB_START,
                  fmt::format("{} launched: {} rank(s) of {}", nspace, np, j.info.program));
    reactor().post([this, nspace] { spawn_next(nspace); });
    watch_requester(j.requester_pid);
}

// One rank per reactor turn: between two spawns the reactor answers the Hellos (and everything
// else) that came in, instead of leaving the first ranks waiting for the last to start.
void Launcher::spawn_next(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end() || !it->second.spawning) return;
    Job &job = it->second;
    // A job that failed meanwhile (abort, time limit, requester gone, shutdown) starts no more.
    if (!job.status && job.spawned < job.local.size()) {
        int status = PMIX_ERROR;
        if (auto error = spawn_rank(job, job.local[job.spawned], status); !error.empty())
            return abandon_launch(nspace, status, error);
        ++job.spawned;
        if (job.spawned < job.local.size() && !job.status) {
            reactor().post([this, nspace] { spawn_next(nspace); });
            return;
        }
    }
    launched(nspace);
}

// Spawns rank i bound to its cpuset (rank_process.hpp); its output and exit are watched once the
// job is launched.
std::string Launcher::spawn_rank(Job &job, std::size_t i, int &status) {
    Spawning &sp = *job.spawning;
    Rank &r = job.ranks[i];
    const auto rank = static_cast<std::uint32_t>(i);
    RankStart how;
    how.rank = i;
    how.set = sp.sets[i].get();
    how.topology = how.set ? placement_.topology() : nullptr;
    how.cpuset = job.info.procs[i].cpuset;
    how.pgroup = job.pgid;
    how.caller = &job.caller;
    how.stop_at_exec = job.debug.stops_at_exec(job.info);
    how.with_stdin = stdin_.is_stdin_rank(job.info.nspace, rank);
    how.merge_stderr = job.merge_stderr;
    RankProcess p;
    const std::string error =
        start_rank_process(sp.apps[job.info.procs[i].app_num], how, p, status);
    if (how.stop_at_exec && p.pid > 0) job.debug.at_exec.insert(rank);
    if (p.out >= 0)
        output_.add(job.info.nspace, rank, p.out, p.err,
                    output_node(job.info, job.is_part(), rank));
    if (p.in >= 0) stdin_.add(job.info.nspace, rank, p.in);
    if (!error.empty()) return error;
    const pid_t pid = p.pid;
    if (job.pgid == 0) {
        job.pgid = pid;
        job.guarded = settings_.watchdog && settings_.watchdog->guard(pid);
        if (settings_.watchdog && !job.guarded)
            log().warn("{}: the watchdog cannot guard its ranks", job.info.nspace);
    }
    r.pid = pid;
    r.pidfd = pidfd_open(pid);
    job.info.procs[i].pid = pid;
    ++job.live;
    // Before this rank's Hello can be read: the mailboxes are drained before the sockets.
    send("registry", msg::RankSpawned{job.info.nspace, rank, pid});
    if (r.pidfd < 0) return fmt::format("pidfd_open: {}", strerror(errno));
    return {};
}

// Every rank is spawned (or the job failed first): the requester gets the LaunchReply, then the
// ranks' output and exits.
void Launcher::launched(const std::string &nspace) {
    Job &j = jobs_.at(nspace);
    const Envelope request = std::move(j.spawning->request);
    if (j.spawning->deadline) reactor().cancel(j.spawning->deadline);
    j.spawning.reset();
    if (j.is_part()) {
        report_started(j);
    } else {
        msg::LaunchReply reply_msg{nspace, {}};
        for (const auto &p : j.info.procs) reply_msg.pids.push_back(p.pid);
        if (!j.requester.empty()) reply(request, reply_msg);
    }
    log().info("launched {}: {} of {} rank(s)", nspace, j.spawned, j.local.size());
    if (!j.status)
        tell_monitors(j, PMIX_LAUNCH_COMPLETE, nspace + " is running: every rank started");
    for (std::size_t k = 0; k < j.spawned; ++k) {
        const std::size_t i = j.local[k];
        output_.watch(nspace, static_cast<std::uint32_t>(i));
        reactor().watch_fd(j.ranks[i].pidfd, [this, nspace, i] { on_rank_exit(nspace, i); });
    }
    // After the reply: a tool hears PMIX_READY_FOR_DEBUG for a job it knows.
    for (auto rank : j.debug.at_exec) rank_waits_for_debugger(j, rank);
    if (j.live == 0) finish(nspace);
}

// A rank could not be spawned in time, or at all: nothing of the job survives, and the request
// gets the error.
void Launcher::abandon_launch(const std::string &nspace, int status, const std::string &error,
                              bool keep_namespace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    std::map<std::string, std::uint32_t> killed;  // the ranks it had started
    for (auto &r : job.ranks) {
        if (r.pid > 0 && !r.reaped) ++killed["killed"];
        if (r.pid > 0 && !r.reaped) {
            ::kill(r.pid, SIGKILL);
            ::waitpid(r.pid, nullptr, 0);
        }
        if (r.pidfd >= 0) {
            reactor().unwatch_fd(r.pidfd);
            ::close(r.pidfd);
        }
    }
    output_.discard(nspace);
    stdin_.forget(nspace);
    if (std::exchange(job.guarded, false)) settings_.watchdog->release(job.pgid);
    if (job.kill_timer) reactor().cancel(job.kill_timer);
    if (job.time_limit) reactor().cancel(job.time_limit);
    if (job.spawning->deadline) reactor().cancel(job.spawning->deadline);
    std::error_code ec;
    fs::remove_all(job.info.nsdir, ec);
    if (keep_namespace)
        gave_up_.insert(nspace);
    else
        send("registry", msg::DeregisterNamespace{nspace});
    log().info("launch of {} failed: {}", nspace, error);
    if (job.is_part())
        report_not_started(job, status ? status : PMIX_ERROR, error, std::move(killed));
    else if (!job.requester.empty())
        reply_error(job.spawning->request, status, error);
    const std::int64_t requester_pid = job.requester_pid;
    const std::string parent = job.parent;
    jobs_.erase(it);
    release_requester(requester_pid);
    leave_parent(parent, nspace);
    if (jobs_.empty() && on_idle_) std::exchange(on_idle_, nullptr)();
}

void Launcher::on_rank_exit(const std::string &nspace, std::size_t rank) {
    auto it = jobs_.find(nspace);
    if (it == jobs_.end()) return;
    Job &job = it->second;
    Rank &r = job.ranks[rank];
    int st = 0;
    const pid_t got = ::waitpid(r.pid, &st, WNOHANG);
    if (got == 0) return;  // not yet
    reactor().unwatch_fd(r.pidfd);
    ::close(r.pidfd);
    r.pidfd = -1;
    r.reaped = true;
    --job.live;
    run_cleanup(r.cleanup, fmt::format("{}:{}", nspace, rank));
    int code = 0, sig = 0;
    if (got < 0) {
        log().error("waitpid({}) of {} rank {}: {}", r.pid, nspace, rank, strerror(errno));
        code = 1;
    } else if (WIFSIGNALED(st)) {
        sig = WTERMSIG(st);
    } else {
        code = WEXITSTATUS(st);
    }
    // Everything the rank wrote before it exited is in its pipes now: forward it first.
    output_.drain(nspace, static_cast<std::uint32_t>(rank));
    msg::ProcExit exit{nspace, static_cast<std::uint32_t>(rank), r.pid, code, sig};
    if (job.is_part()) ++job.part.ended[sig ? "killed" : "exited"];
    send("registry", exit);
    to_stream(job, exit);
    if ((sig || code) && !r.ending_on_request) {
        if (!job.recoverable)
            fail(job, sig ? 128 + sig : code, describe_exit(rank, r.pid, code, sig));
        else if (!job.status)  // the survivors go on; the job reports its first failure
            set_status(job, sig ? 128 + sig : code, describe_exit(rank, r.pid, code, sig), true);
    } else if (sig || code) {
        if (!job.requested_end)
            job.requested_end.emplace(
                sig ? 128 + sig : code,
                describe_exit(rank, r.pid, code, sig) +
                    (r.ended_by.empty() ? "" : ", as asked by " + r.ended_by));
    } else if (!r.initialized) {
        r.exited_unconnected = true;
    } else if (!r.finalized && job.live > 0 && !job.recoverable) {
        // As mpirun: a PMIx process that leaves without finalizing while the rest of its job
        // goes on is a failure (the others may wait for it forever).
        fail(job, 1,
             fmt::format("rank {} (pid {}) exited with status 0 without calling PMIx_Finalize "
                         "while the rest of the job runs",
                         rank, r.pid));
    }
    stdin_.rank_ended(nspace, static_cast<std::uint32_t>(rank));
    if (job.live == 0) finish(nspace);
}

// A rank that never reached the broker while others of its job did ran as a singleton (a
// libpmix other than zpmix's, or an environment it lost): said on the job's stderr, where
// `zpmix run` prints it, since its results were not the job's.
void Launcher::report_unconnected(Job &job) {
    if (std::none_of(job.ranks.begin(), job.ranks.end(),
                     [](const Rank &r) { return r.initialized; }))
        return;
    for (std::size_t i = 0; i < job.ranks.size(); ++i) {
        if (!job.ranks[i].exited_unconnected) continue;
        const std::string text = fmt::format(
            "zpmix: warning: rank {} of {} (pid {}) ended without connecting to its broker while "
            "other ranks of the job did: it ran as a singleton (did it load a libpmix other "
            "than zpmix's, or lose ZPMIX_URI from its environment?)\n",
            i, job.info.nspace, job.ranks[i].pid);
        log().info("{}", text.substr(0, text.size() - 1));
        const auto rank = static_cast<std::uint32_t>(i);
        to_stream(job, msg::Output{job.info.nspace, rank, 2, text,
                                   output_node(job.info, job.is_part(), rank)});
    }
}

void Launcher::run_cleanup(CleanupList &list, const std::string &whose) {
    if (list.empty()) return;
    std::vector<std::string> errors;
    list.run(errors);
    for (const auto &e : errors) log().warn("cleanup registered by {}: {}", whose, e);
}

void Launcher::fail(Job &job, int status, std::string message) {
    if (!job.status)
        set_status(job, status, std::move(message));
    else
        report_abort(job);
    if (job.terminating || job.live == 0) return;
    job.terminating = true;
    signal_ranks(job, SIGTERM);
    const std::string nspace = job.info.nspace;
    job.kill_timer =
        reactor().after(std::chrono::milliseconds(settings_.kill_grace_ms), [this, nspace] {
            auto it = jobs_.find(nspace);
            if (it == jobs_.end()) return;
            it->second.kill_timer = 0;
            signal_ranks(it->second, SIGKILL);
        });
}

// The job's first failure (or abort): its status and why. It is also the tree's, what the root's
// requester gets, if no job of the tree failed before.
void Launcher::set_status(Job &job, int status, std::string message, bool goes_on) {
    job.status = status;
    job.message = std::move(message);
    job.status_goes_on = goes_on;
    log().info("{}: {}", job.info.nspace, job.message);
    report_status(job);
    if (status != 0 && !job.ended_by_parent) {
        Job &root = root_of(job);
        if (!root.tree_status) root.tree_status = status;
    }
}

void Launcher::signal_ranks(Job &job, int sig) {
    if (job.pgid > 0) ::kill(-job.pgid, sig);
    // A rank may have left the job's process group; the others got it once, as under mpirun.
    for (const auto &r : job.ranks)
        if (!r.reaped && r.pid > 0 && (job.pgid <= 0 || ::getpgid(r.pid) != job.pgid))
            ::kill(r.pid, sig);
}

void Launcher::signal_tree(Job &job, int sig) {
    signal_ranks(job, sig);
    for (const auto &child : job.children) signal_tree(jobs_.at(child), sig);
}

void Launcher::finish(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    output_.drain(nspace);
    // What the ranks left running in the job's process group does not outlive the job.
    if (job.pgid > 0) ::kill(-job.pgid, SIGKILL);
    if (std::exchange(job.guarded, false)) settings_.watchdog->release(job.pgid);
    output_.close(nspace);
    if (job.kill_timer) reactor().cancel(job.kill_timer);
    if (job.time_limit) reactor().cancel(job.time_limit);
    job.kill_timer = job.time_limit = 0;
    stdin_.close(nspace);
    // A job ended by job control fails with who ended it. Not a part of a job across nodes: its
    // status tells the coordinator that the job failed, and would end the ranks of every node.
    if (!job.status && job.requested_end && !job.is_part())
        set_status(job, job.requested_end->first, std::move(job.requested_end->second));
    report_unconnected(job);
    for (std::size_t i = 0; i < job.ranks.size(); ++i)  // a rank not reaped (never spawned)
        run_cleanup(job.ranks[i].cleanup, fmt::format("{}:{}", nspace, i));
    run_cleanup(job.cleanup, nspace);
    std::error_code ec;
    fs::remove_all(job.info.nsdir, ec);
    const int status = job.status.value_or(0);
    log().info("{} ended with status {}", nspace, status);
    // After the job's last ProcExit, through the same registry: the actors see its ranks end,
    // then the job (events sends PMIX_EVENT_JOB_END to whoever asked).
    // A part's namespace stays until the job is over on every broker (its ranks' data may still be
    // read by the others).
    if (!job.is_part())
        send("registry", msg::DeregisterNamespace{nspace, true, status, job.message});
    job.ranks_over = true;
    // The jobs it spawned run on after its normal end, as under ORTE and PRRTE, and are ended by
    // its failure, as PMIX_SPAWN_CHILD_SEP says otherwise: the job is over (and `zpmix run`
    // returns) once they are.
    for (const auto &child : job.children) {
        Job &c = jobs_.at(child);
        if (c.ranks_over || c.child_sep || !(status != 0 || c.ends_with_parent)) continue;
        c.ended_by_parent = true;
        fail(c, 128 + SIGTERM, fmt::format("its parent job {} ended", nspace));
    }
    conclude(nspace);
}

void Launcher::tell_monitors(const Job &job, std::int32_t code, std::string text,
                             std::int32_t status, std::int32_t signal) {
    if (job.is_part()) return;
    send("events", msg::JobLifecycle{job.info.nspace,
                                     code,
                                     {},
                                     status,
                                     signal,
                                     static_cast<std::uint32_t>(job.info.procs.size()),
                                     std::move(text)});
}

// A job is over once its ranks and the jobs it spawned are: the last message about it, and then
// its parent may be over too.
void Launcher::conclude(const std::string &nspace) {
    auto it = jobs_.find(nspace);
    Job &job = it->second;
    if (!job.ranks_over || !job.children.empty()) return;
    const int own = job.status.value_or(0);
    if (job.is_part()) {
        report_over(job);
        if (!job.part.forget_when_over) return;
        // Every broker's record of the job ends as the job did, not as its part here did.
        send("registry", msg::DeregisterNamespace{nspace, true, job.part.job_status,
                                                  job.part.job_message, job.part.job_states});
    } else if (job.parent.empty()) {
        const int status = job.report_child_sep ? own : job.tree_status.value_or(own);
        to_requester(job, msg::JobEnded{nspace, status, job.message});
        tell_monitors(job, PMIX_EVENT_JOB_END, msg::job_ended_text(nspace, status, job.message),
                      status);
    } else {
        to_stream(job, msg::JobEnded{nspace, own, job.message});
        tell_monitors(job, PMIX_EVENT_JOB_END, msg::job_ended_text(nspace, own, job.message), own);
    }
    const std::int64_t requester_pid = job.requester_pid;
    const std::string parent = job.parent;
    stdin_.forget(nspace);
    jobs_.erase(it);
    release_requester(requester_pid);
    leave_parent(parent, nspace);
    if (jobs_.empty() && on_idle_) std::exchange(on_idle_, nullptr)();
}

void Launcher::leave_parent(const std::string &parent, const std::string &nspace) {
    if (parent.empty()) return;
    auto it = jobs_.find(parent);
    if (it == jobs_.end()) return;
    it->second.children.erase(nspace);
    conclude(parent);
}

Launcher::Job &Launcher::root_of(const Job &job) {
    const Job *j = &job;
    while (!j->parent.empty()) j = &jobs_.at(j->parent);  // a parent outlives its children
    return jobs_.at(j->info.nspace);
}

// Stops watching a requester that has no job left.
void Launcher::release_requester(std::int64_t pid) {
    for (const auto &[ns, j] : jobs_)
        if (j.requester_pid == pid) return;
    if (auto w = requesters_.find(pid); w != requesters_.end()) {
        reactor().unwatch_fd(w->second);
        ::close(w->second);
        requesters_.erase(w);
    }
}

void Launcher::watch_requester(std::int64_t pid) {
    // Our own process (an embedded broker) ends the jobs itself when it stops.
    if (pid <= 0 || pid == ::getpid() || requesters_.contains(pid)) return;
    const int fd = pidfd_open(static_cast<pid_t>(pid));
    if (fd < 0) {
        if (errno == ESRCH) return requester_died(pid);
        log().warn("cannot watch requester pid {}: {}", pid, strerror(errno));
        return;
    }
    requesters_[pid] = fd;
    reactor().watch_fd(fd, [this, pid] { requester_died(pid); });
}

void Launcher::requester_died(std::int64_t pid) {
    if (auto w = requesters_.find(pid); w != requesters_.end()) {
        reactor().unwatch_fd(w->second);
        ::close(w->second);
        requesters_.erase(w);
    }
    for (auto &[nspace, job] : jobs_) {
        if (job.requester_pid != pid) continue;
        job.requester.clear();
        fail(job, 128 + SIGTERM, fmt::format("its requester (pid {}) died", pid));
    }
    output_.consumers_changed();  // nothing waits for the dead to read
}

}  // namespace zpmix
