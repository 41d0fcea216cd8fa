// Job control, process monitoring and logging end to end: a standalone `zpmix broker`, jobs
// started by `zpmix run`, controlled by `zpmix ctl|ps|preempt` and by the processes themselves
// through the standard API (jobctl_prog). Every wait has a deadline; nothing waits by sleeping.
#define BOOST_TEST_MODULE jobctl
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "support/process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/jobctl_prog";

// A standalone broker in a private base directory (monitor times in units of 20 ms, 300 ms from
// SIGTERM to SIGKILL, syslog to a socket of ours), and helpers to run jobs and commands against it.
// Without `standalone`, only the base directory and the configuration: each `zpmix run` then
// embeds its own broker.
struct Broker {
    std::string tmp;
    int syslog_fd = -1;
    std::optional<Child> broker;

    // monitor_keys: more of the [monitor] section.
    explicit Broker(bool standalone = true, const std::string &monitor_keys = {}) {
        char tmpl[] = "/tmp/zpmix-jctest-XXXXXX";
        tmp = ::mkdtemp(tmpl);
        syslog_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strcpy(addr.sun_path, (tmp + "/syslog.sock").c_str());
        BOOST_REQUIRE(::bind(syslog_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
        std::ofstream(tmp + "/zpmix.toml")
            << "[broker]\nkill_grace_ms = 300\n[monitor]\ntime_unit_ms = 20\n"
            << monitor_keys << "[log]\nsyslog_socket = \"" << tmp << "/syslog.sock\"\n";
        if (!standalone) return;
        broker.emplace(std::vector<std::string>{kZpmix, "broker"}, env(), log_path());
        BOOST_REQUIRE_MESSAGE(eventually([&] { return fs::exists(tmp + "/zpmix/broker.json"); }),
                              "the broker did not start: " + log());
    }
    ~Broker() {
        broker.reset();  // SIGTERM: it ends its jobs and cleans up
        ::close(syslog_fd);
        fs::remove_all(tmp);
    }
    std::vector<std::string> env() const {
        return {"XDG_RUNTIME_DIR=" + tmp, "ZPMIX_CONFIG=" + tmp + "/zpmix.toml"};
    }
    std::string log_path() const { return tmp + "/broker.log"; }
    std::string log() const { return slurp(log_path()); }

    // `zpmix run -n np jobctl_prog mode dir` (dir: tmp by default), once every rank said it is
    // ready; its namespace.
    std::unique_ptr<Child> run(int np, const std::string &mode, std::string &nspace,
                               std::string dir = {}) {
        auto p = std::make_unique<Child>(
            std::vector<std::string>{kZpmix, "run", "-n", std::to_string(np), kProg, mode,
                                     dir.empty() ? tmp : dir},
            env());
        BOOST_REQUIRE_MESSAGE(p->read_until([&](const std::string &o) {
            return count(o, " ready") == std::size_t(np);
        }),
                              "the job did not start: " + p->out() + p->err());
        std::smatch m;
        BOOST_REQUIRE(std::regex_search(p->out(), m, std::regex("nspace (\\S+) ready")));
        nspace = m[1];
        return p;
    }
    // A `zpmix` command; its exit code, output in out.
    int cmd(std::vector<std::string> args, std::string &out) {
        args.insert(args.begin(), kZpmix);
        Child p(args, env());
        const int code = p.exit_code();
        out = p.out() + p.err();
        return code;
    }
    int ctl(const std::vector<std::string> &args, std::string &out) {
        std::vector<std::string> a{"ctl"};
        a.insert(a.end(), args.begin(), args.end());
        return cmd(a, out);
    }
    nlohmann::json ps(const std::string &nspace) {
        std::string out;
        BOOST_REQUIRE(cmd({"ps", "--ranks", "--job", nspace, "--json"}, out) == 0);
        return nlohmann::json::parse(out);
    }
    std::string state(const std::string &nspace, int rank) { return ps(nspace)[rank]["state"]; }
    long counter(int rank) const {
        const std::string s = slurp(tmp + "/counter." + std::to_string(rank));
        return s.empty() ? 0 : std::stol(s);
    }
    // The next syslog datagram, within the deadline.
    std::string syslog_message(std::chrono::milliseconds timeout = 10s) {
        pollfd p{syslog_fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return {};
        char buf[9000];
        const ssize_t n = ::recv(syslog_fd, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    }
};

char proc_state(pid_t pid) {
    const std::string s = slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto close = s.rfind(')');
    return close == std::string::npos || close + 2 >= s.size() ? '?' : s[close + 2];
}

}  // namespace

BOOST_AUTO_TEST_CASE(pause_freezes_and_resume_restarts) {
    Broker b;
    std::string ns, out;
    auto job = b.run(2, "counter", ns);
    BOOST_REQUIRE(eventually([&] { return b.counter(0) > 10 && b.counter(1) > 10; }));
    BOOST_REQUIRE_MESSAGE(b.ctl({"pause", "--job", ns, "--ranks", "0"}, out) == 0, out);
    const pid_t pid0 = b.ps(ns)[0]["pid"];
    BOOST_REQUIRE(eventually([&] { return proc_state(pid0) == 'T'; }));
    BOOST_TEST(b.state(ns, 0) == "paused");
    BOOST_TEST(b.state(ns, 1) == "running");
    // Rank 1 keeps counting: our clock. Rank 0 must not move meanwhile.
    const long frozen = b.counter(0), c1 = b.counter(1);
    BOOST_REQUIRE(eventually([&] { return b.counter(1) > c1 + 200; }));
    BOOST_TEST(b.counter(0) == frozen);
    BOOST_REQUIRE_MESSAGE(b.ctl({"resume", "--job", ns}, out) == 0, out);
    BOOST_TEST(eventually([&] { return b.counter(0) > frozen + 10; }));
    BOOST_TEST(b.state(ns, 0) == "running");
    BOOST_TEST(b.log().find("asks pause of " + ns + ":0") != std::string::npos);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns}, out) == 0);
    BOOST_TEST(job->wait(20s).has_value());
}

BOOST_AUTO_TEST_CASE(signal_kill_and_terminate_reach_exactly_their_targets) {
    Broker b;
    std::string ns, out;
    auto job = b.run(3, "counter", ns);
    BOOST_REQUIRE_MESSAGE(b.ctl({"signal", "USR1", "--job", ns, "--ranks", "0,2"}, out) == 0, out);
    BOOST_TEST(job->read_until([](const std::string &o) {
        return o.find("rank 0 got signal 10") != std::string::npos &&
               o.find("rank 2 got signal 10") != std::string::npos;
    }));
    BOOST_REQUIRE(b.ctl({"signal", "12", "--job", ns, "--ranks", "1"}, out) == 0);
    BOOST_TEST(job->read_until_has("rank 1 got signal 12"));
    BOOST_TEST(count(job->out(), "got signal 10") == 2u);
    BOOST_TEST(count(job->out(), "rank 1 got signal 10") == 0u);

    BOOST_REQUIRE(b.ctl({"kill", "--job", ns, "--ranks", "1"}, out) == 0);
    BOOST_TEST(eventually([&] { return b.state(ns, 1) == "killed"; }));
    BOOST_TEST(b.ps(ns)[1]["signal"] == SIGKILL);
    BOOST_REQUIRE(b.ctl({"terminate", "--job", ns, "--ranks", "2"}, out) == 0);
    BOOST_TEST(eventually([&] { return b.state(ns, 2) == "killed"; }));
    BOOST_TEST(b.ps(ns)[2]["signal"] == SIGTERM);
    // Ended on request: the rest of the job runs on.
    BOOST_TEST(b.state(ns, 0) == "running");
    const long c0 = b.counter(0);
    BOOST_TEST(eventually([&] { return b.counter(0) > c0 + 10; }));
    // A rank that is gone is no target any more.
    BOOST_TEST(b.ctl({"kill", "--job", ns, "--ranks", "1"}, out) == 1);
    std::string text;
    BOOST_REQUIRE(b.cmd({"ps", "--ranks", "--job", ns}, text) == 0);
    BOOST_TEST(text.find("paused") == std::string::npos);
    BOOST_TEST(count(text, "killed") == 2u);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns}, out) == 0);
    BOOST_TEST(job->wait(20s).has_value());
    BOOST_TEST(b.ctl({"kill", "--job", "no.such.job"}, out) == 1);
}

BOOST_AUTO_TEST_CASE(checkpoint_by_signal_by_event_and_refused_without_method) {
    Broker b;
    std::string ns, out;
    {
        auto job = b.run(2, "ckpt-signal", ns);
        BOOST_TEST_MESSAGE("ckpt-signal " << ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck1", "--job", ns}, out) == 0, out);
        BOOST_TEST(out.find("checkpoint complete") != std::string::npos);
        BOOST_TEST(
            job->read_until([](const std::string &o) { return count(o, "checkpointed") == 2; }));
        BOOST_TEST(job->out().find("got signal 12") != std::string::npos);
        // Its method was given with no value type (as OpenPMIx's jctrl example does): read as
        // the type its key names, and said so.
        BOOST_TEST((job->out() + job->err()).find("no value type") != std::string::npos,
                   job->err());
        b.ctl({"kill", "--job", ns}, out);
    }
    {
        auto job = b.run(1, "ckpt-event", ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck2", "--job", ns}, out) == 0, out);
        BOOST_TEST(job->read_until_has("rank 0 checkpointed"));
        BOOST_TEST(job->out().find("got signal") == std::string::npos);
        b.ctl({"kill", "--job", ns}, out);
    }
    {
        auto job = b.run(1, "counter", ns);
        BOOST_TEST(b.ctl({"checkpoint", "ck3", "--job", ns}, out) == 1);
        BOOST_TEST(out.find("registered no checkpoint method") != std::string::npos, out);
        b.ctl({"kill", "--job", ns}, out);
    }
}

BOOST_AUTO_TEST_CASE(cancel_by_id_and_all_and_own_job_only) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "ckpt-cancel", ns);
    BOOST_TEST(job->exit_code() == 0);
    BOOST_TEST(job->out().find("cancel c1: 0, checkpoint c1: -180") != std::string::npos,
               job->out());
    BOOST_TEST(job->out().find("cancel all: 0, checkpoint c2: -180, c3: -180") !=
               std::string::npos);
    BOOST_TEST(job->out().find("cancel again: -46") != std::string::npos);
    auto other = b.run(1, "control-other", ns);
    BOOST_TEST(other->exit_code() == 0);
    BOOST_TEST(other->out().find("other job: -23") != std::string::npos, other->out());
    // What cannot be cancelled says so: a request that completed at once (NOT_SUPPORTED), an id
    // nobody used (NOT_FOUND).
    BOOST_TEST(job->out().find("signal s1: 0") != std::string::npos);
    BOOST_TEST(job->out().find("cancel s1: -47") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("cancel unknown: -46") != std::string::npos);
    std::string out;
    auto counter = b.run(1, "counter", ns);
    BOOST_TEST(b.ctl({"cancel", "--job", ns}, out) == 1);
    BOOST_TEST(out.find("nothing pending to cancel") != std::string::npos, out);
    BOOST_TEST(b.ctl({"cancel", "nope", "--job", ns}, out) == 1);
    BOOST_TEST(out.find("no pending request 'nope'") != std::string::npos, out);
    b.ctl({"kill", "--job", ns}, out);
}

BOOST_AUTO_TEST_CASE(terminate_escalates_to_sigkill_for_a_process_ignoring_sigterm) {
    Broker b;
    std::string ns, out;
    auto job = b.run(2, "ignore-term", ns);
    // Counting means SIGTERM is ignored already.
    BOOST_REQUIRE(eventually([&] { return b.counter(0) > 10 && b.counter(1) > 10; }));
    BOOST_REQUIRE_MESSAGE(b.ctl({"terminate", "--job", ns, "--ranks", "0"}, out) == 0, out);
    BOOST_TEST(eventually([&] { return b.state(ns, 0) == "killed"; }), b.log());
    BOOST_TEST(b.ps(ns)[0]["signal"] == SIGKILL);
    BOOST_TEST(b.log().find(ns + ":0 still alive 300 ms after SIGTERM: SIGKILL") !=
               std::string::npos);
    // Only the target: rank 1 runs on.
    BOOST_TEST(b.state(ns, 1) == "running");
    const long c1 = b.counter(1);
    BOOST_TEST(eventually([&] { return b.counter(1) > c1 + 10; }));
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns}, out) == 0);
    BOOST_TEST(job->wait(20s).has_value());
}

BOOST_AUTO_TEST_CASE(ctl_and_ps_reach_jobs_of_embedded_brokers) {
    Broker b(false);  // no standalone broker: each `zpmix run` embeds one
    std::string ns1, ns2, out;
    fs::create_directory(b.tmp + "/one");  // job 1 counts there, job 2 in tmp
    auto job1 = b.run(1, "counter", ns1, b.tmp + "/one");
    auto job2 = b.run(2, "counter", ns2);
    BOOST_TEST(ns1 != ns2);
    // Without --job: every broker's jobs.
    BOOST_REQUIRE_MESSAGE(b.cmd({"ps", "--ranks", "--json"}, out) == 0, out);
    const auto all = nlohmann::json::parse(out);
    std::size_t n1 = 0, n2 = 0;
    for (const auto &row : all) {
        n1 += row["nspace"] == ns1;
        n2 += row["nspace"] == ns2;
    }
    BOOST_TEST(n1 == 1u, out);
    BOOST_TEST(n2 == 2u, out);
    // With --job: the broker that runs it, among several.
    BOOST_REQUIRE(eventually([&] { return b.counter(0) > 10 && b.counter(1) > 10; }));
    BOOST_REQUIRE_MESSAGE(b.ctl({"pause", "--job", ns2, "--ranks", "1"}, out) == 0, out);
    const pid_t pid = b.ps(ns2)[1]["pid"];
    BOOST_REQUIRE(eventually([&] { return proc_state(pid) == 'T'; }));
    BOOST_TEST(b.state(ns2, 1) == "paused");
    const long frozen = b.counter(1), c0 = b.counter(0);
    BOOST_REQUIRE(eventually([&] { return b.counter(0) > c0 + 200; }));  // rank 0 of ns2: our clock
    BOOST_TEST(b.counter(1) == frozen);
    BOOST_REQUIRE_MESSAGE(b.ctl({"resume", "--job", ns2}, out) == 0, out);
    BOOST_TEST(eventually([&] { return b.counter(1) > frozen + 10; }));
    BOOST_TEST(b.state(ns2, 1) == "running");
    BOOST_TEST(b.ctl({"kill", "--job", "no.such.job"}, out) == 1);
    BOOST_TEST(out.find("no broker on this node runs job no.such.job") != std::string::npos, out);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns1}, out) == 0);
    BOOST_REQUIRE(b.ctl({"kill", "--job", ns2}, out) == 0);
    BOOST_TEST(job1->wait(20s).has_value());
    BOOST_TEST(job2->wait(20s).has_value());
    BOOST_TEST(b.cmd({"ps", "--json"}, out) == 0);  // no broker left: no job
    BOOST_TEST(out == "[]\n", out);
}

// `zpmix ctl` is a tool of the standard API: PMIx_tool_init finds the broker that runs the job
// (PMIX_SERVER_NSPACE), here one started with another XDG_RUNTIME_DIR, or takes --broker's
// (PMIX_SERVER_URI); PMIx_Job_control's results carry the broker's message, printed as before,
// a refusal with its status by name.
BOOST_AUTO_TEST_CASE(ctl_through_the_tool_api_reaches_a_broker_of_another_runtime_dir) {
    Broker b(false);
    // The job's `zpmix run` keeps its broker under /dev/shm or /tmp; the commands look with b's.
    auto env = b.env();
    env[0] = "XDG_RUNTIME_DIR=";
    Child job({kZpmix, "run", "-n", "2", kProg, "counter", b.tmp}, env);
    BOOST_REQUIRE_MESSAGE(
        job.read_until([&](const std::string &o) { return count(o, " ready") == 2u; }),
        "the job did not start: " + job.out() + job.err());
    std::smatch m;
    const std::string said = job.out();
    BOOST_REQUIRE(std::regex_search(said, m, std::regex("nspace (\\S+) ready")));
    const std::string ns = m[1];
    BOOST_REQUIRE(eventually([&] { return b.counter(1) > 10; }));

    std::string out;
    BOOST_TEST(b.ctl({"pause", "--job", ns, "--ranks", "1"}, out) == 0, out);
    BOOST_TEST(out == "pause delivered to 1 process(es)\n", out);
    const pid_t pid1 = b.ps(ns)[1]["pid"];
    BOOST_TEST(eventually([&] { return proc_state(pid1) == 'T'; }));
    BOOST_TEST(b.state(ns, 1) == "paused");
    BOOST_TEST(b.ctl({"resume", "--job", ns}, out) == 0, out);
    BOOST_TEST(out == "resume delivered to 2 process(es)\n", out);
    BOOST_TEST(b.state(ns, 1) == "running");

    // Refusals: the status by name, then the broker's reason.
    BOOST_TEST(b.ctl({"checkpoint", "c1", "--job", ns}, out) == 1);
    BOOST_TEST(out.find("zpmix ctl: checkpoint refused: PMIX_ERR_NOT_SUPPORTED (-47): " + ns +
                        " registered no checkpoint method") != std::string::npos,
               out);
    BOOST_TEST(b.ctl({"kill", "--job", ns, "--ranks", "7"}, out) == 1);
    BOOST_TEST(out.find("kill refused: PMIX_ERR_BAD_PARAM (-27): " + ns + " has no rank 7") !=
                   std::string::npos,
               out);

    // By its address (PMIX_SERVER_URI), as `zpmix ps` names the broker.
    BOOST_REQUIRE(b.cmd({"ps", "--json", "--job", ns}, out) == 0);
    const std::string uri = nlohmann::json::parse(out)[0]["broker"];
    BOOST_TEST(b.ctl({"kill", "--job", ns, "--broker", uri}, out) == 0, out);
    BOOST_TEST(out == "kill delivered to 2 process(es)\n", out);
    BOOST_TEST(job.exit_code() == 128 + SIGKILL);
    BOOST_TEST(job.err().find("as asked by tool pid") != std::string::npos, job.err());
}

BOOST_AUTO_TEST_CASE(preempt_alerts_a_preemptible_job_then_ends_it) {
    Broker b;
    std::string ns, out, plain;
    auto job = b.run(1, "preempt", ns);
    auto other = b.run(1, "counter", plain);
    BOOST_TEST(b.cmd({"preempt", "--job", plain}, out) == 1);
    BOOST_TEST(out.find("not preemptible") != std::string::npos, out);
    // One PMIx_Job_control call registered the mark and a checkpoint method: both took.
    BOOST_TEST(b.ctl({"checkpoint", "ck1", "--job", ns}, out) == 0, out);
    BOOST_TEST(job->read_until_has("rank 0 checkpointed"));
    BOOST_TEST(b.cmd({"preempt", "--job", ns, "--grace-ms", "100"}, out) == 0, out);
    BOOST_TEST(job->read_until_has("rank 0 preempt alert"));
    BOOST_TEST(job->wait(20s).has_value());
    BOOST_TEST(b.state(plain, 0) == "running");
    b.ctl({"kill", "--job", plain}, out);
}

BOOST_AUTO_TEST_CASE(monitor_terminate_response_ends_a_stalled_process_with_sigkill_if_need_be) {
    Broker b(true, "response = \"terminate\"\n");
    std::string ns;
    auto job = b.run(1, "stall-ignore-term", ns);
    BOOST_TEST(job->exit_code(20s) == 128 + SIGKILL, job->err() + b.log());
    BOOST_TEST(b.log().find("terminating " + ns + ":0: monitor") != std::string::npos, b.log());
    BOOST_TEST(b.log().find(ns + ":0 still alive 300 ms after SIGTERM: SIGKILL") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(heartbeat_alerts_once_per_stall) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "heartbeat", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    const std::string &o = job->out();
    BOOST_TEST(o.find("while beating: 0") != std::string::npos, o);
    BOOST_TEST(o.find("first stall alerted: 1") != std::string::npos);
    BOOST_TEST(o.find("more while stalled: 0") != std::string::npos);
    BOOST_TEST(o.find("while beating again: 0") != std::string::npos);
    BOOST_TEST(o.find("second stall alerted: 1") != std::string::npos);
    // The monitored process itself heard it, as the source of its alerts.
    BOOST_TEST(count(o, "alert -109 from " + ns + ":0") == 2u);
    BOOST_TEST(eventually([&] { return count(b.log(), "tripped") == 2; }));
}

BOOST_AUTO_TEST_CASE(heartbeat_alert_reaches_every_handler_in_range) {
    Broker b;
    std::string ns;
    auto job = b.run(3, "hb-range", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    const std::string &o = job->out();
    for (int r = 0; r < 3; ++r) {
        const std::string rank = "rank " + std::to_string(r);
        BOOST_TEST(o.find(rank + " heard the alert: 1") != std::string::npos, o);
        BOOST_TEST(o.find(rank + " alert -109 from " + ns + ":0") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(file_monitor_alerts_on_a_stalled_file_only) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "filemon", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("while growing: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("stalled file alerted: 1") != std::string::npos);
    BOOST_TEST(job->out().find("alert -110 from " + ns + ":0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cancelled_and_dead_monitors_stop) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "mon-cancel", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("cancel hb1: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("cancel all: 0") != std::string::npos);
    BOOST_TEST(job->out().find("cancel again: -46") != std::string::npos);
    BOOST_TEST(job->out().find("alerts after cancel: 0") != std::string::npos);

    auto dead = b.run(1, "mon-exit", ns);
    BOOST_TEST(dead->exit_code() == 0);
    BOOST_TEST(eventually(
        [&] { return b.log().find(ns + ":0 ended: its monitors end") != std::string::npos; }));
    BOOST_TEST(b.log().find("monitor doomed tripped") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(log_reaches_stderr_and_syslog_with_its_source) {
    Broker b;
    std::string ns;
    auto job = b.run(1, "log", ns);
    BOOST_TEST(job->exit_code() == 0, job->err());
    BOOST_TEST(job->out().find("log: 0") != std::string::npos, job->out());
    BOOST_TEST(job->out().find("log once: 0") != std::string::npos);
    BOOST_TEST(job->out().find("log email: -47") != std::string::npos);
    const std::string log = b.log();
    BOOST_TEST(std::regex_search(log, std::regex("\\[\\d{4}-\\d\\d-\\d\\dT[0-9:]+ " +
                                                 std::regex_replace(ns, std::regex("\\."), "\\.") +
                                                 ":0\\] stderr line from the app")),
               log);
    BOOST_TEST(log.find(ns + ":0] only once") != std::string::npos);
    const std::string dgram = b.syslog_message();
    BOOST_TEST(dgram.starts_with("<14>"), dgram);
    BOOST_TEST(dgram.find(ns + ":0] syslog line from the app") != std::string::npos, dgram);
    BOOST_TEST(b.syslog_message(100ms).empty());  // "never sent": ONCE stopped at stderr
}
