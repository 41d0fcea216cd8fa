#define BOOST_TEST_MODULE monitor
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <pmix_common.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

// Monitoring that loses nothing: `zpmix events` against real `zpmix broker` processes.
namespace {

using namespace zpmix::test;
using nlohmann::json;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";

struct BrokerProcess {
    TempDir dir{"zpmix-monitor"};
    std::unique_ptr<Child> child;
    explicit BrokerProcess(const std::string &config_toml = "") { start(config_toml); }
    void start(const std::string &config_toml = "") {
        std::vector<std::string> args = {kZpmix, "broker", "--run-dir", dir.path + "/run", "-q"};
        if (!config_toml.empty()) {
            const std::string path = dir.path + "/zpmix.toml";
            std::ofstream(path) << config_toml;
            args.insert(args.end(), {"--config", path});
        }
        child = std::make_unique<Child>(args);
    }
    void stop() {
        ::kill(child->pid(), SIGTERM);
        BOOST_REQUIRE(child->wait(10s));
        child.reset();
    }
    std::string uri() const { return "ipc://" + dir.path + "/run/broker.sock"; }
    void notify(int code, const std::string &range = "global") {
        Child n({kZpmix, "notify", "--code", std::to_string(code), "--range", range, "--broker",
                 uri()});
        BOOST_REQUIRE(n.exit_code() == 0);  // published once it exits
    }
};

bool subscribed(Child &c) {
    return c.until([&] { return c.err().find("subscribed") != std::string::npos; });
}

std::vector<json> json_lines(Child &c) {
    std::vector<json> out;
    for (const auto &l : c.lines()) out.push_back(json::parse(l));
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_late_subscriber_gets_what_came_after_its_last_number) {
    BrokerProcess b;
    for (int code : {-5001, -5002, -5003}) b.notify(code);

    Child all({kZpmix, "events", "--json", "--since", "0", "--count", "3", "--broker", b.uri()});
    BOOST_TEST(all.exit_code() == 0);
    const auto ev = json_lines(all);
    BOOST_REQUIRE(ev.size() == 3u);
    for (int i = 0; i < 3; ++i) {
        BOOST_TEST(ev[i]["bseq"] == i + 1);
        BOOST_TEST(ev[i]["code"] == -5001 - i);
        BOOST_TEST(ev[i]["epoch"] == ev[0]["epoch"]);
    }
    BOOST_TEST(ev[0]["epoch"].get<std::string>().size() == 16u);

    // Resuming after #2 of that epoch gives #3 only, then live events, each once.
    Child rest({kZpmix, "events", "--json", "--since", "2", "--epoch",
                ev[0]["epoch"].get<std::string>(), "--count", "2", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(rest));
    BOOST_REQUIRE(rest.until([&] { return rest.lines().size() >= 1; }));
    b.notify(-5004);
    BOOST_TEST(rest.exit_code() == 0);
    const auto got = json_lines(rest);
    BOOST_REQUIRE(got.size() == 2u);
    BOOST_TEST(got[0]["bseq"] == 3);
    BOOST_TEST(got[1]["bseq"] == 4);
    BOOST_TEST(got[1]["code"] == -5004);
}

BOOST_AUTO_TEST_CASE(events_gone_from_the_ring_are_a_gap_marker) {
    BrokerProcess b("[events]\nreplay_size = 2\n");
    for (int code : {-5101, -5102, -5103, -5104, -5105}) b.notify(code);
    Child c({kZpmix, "events", "--json", "--since", "1", "--count", "2", "--broker", b.uri()});
    BOOST_TEST(c.exit_code() == 0);
    const auto got = json_lines(c);
    BOOST_REQUIRE(got.size() == 3u);
    BOOST_TEST_INFO(c.out());
    BOOST_TEST(got[0]["gap"]["after"] == 1);
    BOOST_TEST(got[0]["gap"]["lost"] == 2);  // #2 and #3
    BOOST_TEST(got[0]["gap"]["restarted"] == false);
    BOOST_TEST(got[1]["bseq"] == 4);
    BOOST_TEST(got[2]["bseq"] == 5);
}

BOOST_AUTO_TEST_CASE(a_broker_restart_is_a_new_epoch_not_a_reset) {
    BrokerProcess b;
    b.notify(-5201);
    b.notify(-5202);
    Child first({kZpmix, "events", "--json", "--since", "0", "--count", "2", "--broker", b.uri()});
    BOOST_TEST(first.exit_code() == 0);
    const auto before = json_lines(first);
    BOOST_REQUIRE(before.size() == 2u);
    const std::string old_epoch = before[1]["epoch"];

    b.stop();
    b.start();
    b.notify(-5203);
    Child again({kZpmix, "events", "--json", "--since", "2", "--epoch", old_epoch, "--count", "1",
                 "--broker", b.uri()});
    BOOST_TEST(again.exit_code() == 0);
    const auto after = json_lines(again);
    BOOST_TEST_INFO(again.out());
    BOOST_REQUIRE(after.size() == 2u);
    BOOST_TEST(after[0]["gap"]["restarted"] == true);
    BOOST_TEST(after[0]["gap"]["epoch"] == old_epoch);
    BOOST_TEST(after[1]["code"] == -5203);
    BOOST_TEST(after[1]["bseq"] == 1);
    BOOST_TEST(after[1]["epoch"] != old_epoch);
    BOOST_TEST(after[0]["gap"]["new_epoch"] == after[1]["epoch"]);
}

BOOST_AUTO_TEST_CASE(a_running_monitor_resumes_after_a_broker_restart) {
    BrokerProcess b;
    Child c({kZpmix, "events", "--json", "--count", "3", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(c));
    b.notify(-5251);
    BOOST_REQUIRE(c.until([&] { return c.lines().size() >= 1; }));
    b.stop();
    b.start();
    // The new broker's events reach the monitor once its SUB socket is back: notify until they
    // do (a few hundred ms at most); the ring gives the new epoch's earlier ones back, each once.
    int code = -5252;
    for (int i = 0; i < 40 && c.lines().size() < 4; ++i) {
        b.notify(code--);
        c.until([&] { return c.lines().size() >= 4; }, 250ms);
    }
    BOOST_TEST(c.exit_code() == 0);
    BOOST_TEST_INFO(c.out() + c.err());
    const auto got = json_lines(c);
    BOOST_REQUIRE(got.size() == 4u);
    BOOST_TEST(got[0]["code"] == -5251);
    BOOST_TEST(got[1]["gap"]["restarted"] == true);
    BOOST_TEST(got[1]["gap"]["epoch"] == got[0]["epoch"]);
    for (int i = 2; i < 4; ++i) {
        BOOST_TEST(got[i]["code"] == -5250 - i);
        BOOST_TEST(got[i]["bseq"] == i - 1);
        BOOST_TEST(got[i]["epoch"] == got[1]["gap"]["new_epoch"]);
    }
    BOOST_TEST(c.err().find("needs a session") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(events_the_publisher_dropped_are_recovered_in_order) {
    // The broker numbers every 2nd event of a stream but does not send it.
    BrokerProcess b("[events]\ntest_drop_every = 2\n");
    Child c({kZpmix, "events", "--json", "--count", "3", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(c));
    for (int code : {-5301, -5302, -5303}) b.notify(code);
    BOOST_TEST(c.exit_code() == 0);
    const auto got = json_lines(c);
    BOOST_REQUIRE(got.size() == 3u);
    for (int i = 0; i < 3; ++i) {
        BOOST_TEST(got[i]["code"] == -5301 - i);
        BOOST_TEST(got[i]["seq"] == i + 1);
    }
}

BOOST_AUTO_TEST_CASE(json_names_codes_and_ranges_with_microsecond_times) {
    BrokerProcess b;
    b.notify(PMIX_ERR_PROC_ABORTED, "session");
    Child c({kZpmix, "events", "--json", "--since", "0", "--count", "1", "--broker", b.uri()});
    BOOST_TEST(c.exit_code() == 0);
    const auto got = json_lines(c);
    BOOST_REQUIRE(got.size() == 1u);
    BOOST_TEST(got[0]["code"] == PMIX_ERR_PROC_ABORTED);
    BOOST_TEST(got[0]["code_name"] == "PMIX_ERR_PROC_ABORTED");
    BOOST_TEST(got[0]["range_name"] == "session");
    const auto us = got[0]["time_us"].get<std::int64_t>();
    // The same time as the seconds' timestamp, read a moment before.
    BOOST_TEST(std::abs(us / 1000000 - got[0]["timestamp"].get<std::int64_t>()) <= 1);
    const std::string iso = got[0]["time"];
    BOOST_TEST_INFO(iso);
    BOOST_TEST(iso.size() == std::string("2026-11-25T01:42:18.123456Z").size());
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06lldZ", static_cast<long long>(us % 1000000));
    BOOST_TEST(iso.ends_with(frac));
}

namespace {

// The value of info key `key` of an event line, or null.
json info_of(const json &ev, const std::string &key) {
    return ev.contains("info") && ev["info"].contains(key) ? ev["info"][key] : json();
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_step_of_a_jobs_life_is_published) {
    BrokerProcess b;
    Child mon({kZpmix, "events", "--json", "--topic", "ev/rm/", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(mon));
    Child run({kZpmix, "run", "--broker", b.uri(), "-n", "2", "sleep", "60"});
    BOOST_REQUIRE(mon.until([&] { return mon.lines().size() >= 2; }));
    auto ev = json_lines(mon);
    BOOST_TEST_INFO(mon.out());
    BOOST_TEST(ev[0]["code"] == PMIX_EVENT_JOB_START);
    BOOST_TEST(ev[0]["code_name"] == "PMIX_EVENT_JOB_START");
    const std::string ns = info_of(ev[0], PMIX_NSPACE);
    BOOST_REQUIRE(!ns.empty());
    BOOST_TEST(info_of(ev[0], PMIX_JOB_SIZE) == 2);
    BOOST_TEST(ev[1]["code"] == PMIX_LAUNCH_COMPLETE);
    BOOST_TEST(ev[1]["topic"] == "ev/rm/j/" + std::to_string(PMIX_LAUNCH_COMPLETE) + "/");

    for (std::vector<std::string> act :
         {std::vector<std::string>{"pause"}, {"resume"}, {"signal", "SIGUSR2"}}) {
        std::vector<std::string> args = {kZpmix, "ctl"};
        args.insert(args.end(), act.begin(), act.end());
        args.insert(args.end(), {"--job", ns, "--broker", b.uri()});
        Child ctl(args);
        BOOST_TEST_INFO(act[0] << ": " << ctl.err());
        BOOST_TEST(ctl.exit_code() == 0);
    }
    // sleep dies of SIGUSR2: the job ends with 128 + SIGUSR2.
    BOOST_TEST(run.exit_code() == 128 + SIGUSR2);
    BOOST_REQUIRE(mon.until([&] { return mon.lines().size() >= 6; }));
    ev = json_lines(mon);
    BOOST_TEST_INFO(mon.out());
    BOOST_TEST(ev[2]["code"] == -3101);
    BOOST_TEST(ev[2]["code_name"] == "ZPMIX_EVENT_JOB_PAUSED");
    BOOST_TEST(ev[2]["affected"].size() == 2u);
    BOOST_TEST(ev[3]["code"] == -3102);
    BOOST_TEST(ev[3]["code_name"] == "ZPMIX_EVENT_JOB_RESUMED");
    // The signal's report and the end it caused come from two actors: in either order.
    const bool end_last = ev[5]["code"] == PMIX_EVENT_JOB_END;
    const json &signalled = ev[end_last ? 4 : 5], &ended = ev[end_last ? 5 : 4];
    BOOST_TEST(signalled["code"] == -3103);
    BOOST_TEST(signalled["code_name"] == "ZPMIX_EVENT_JOB_SIGNALLED");
    BOOST_TEST(info_of(signalled, PMIX_JOB_CTRL_SIGNAL) == SIGUSR2);
    BOOST_TEST(ended["code"] == PMIX_EVENT_JOB_END);
    BOOST_TEST(info_of(ended, PMIX_JOB_TERM_STATUS) == 128 + SIGUSR2);
    for (const auto &e : ev) BOOST_TEST(info_of(e, PMIX_NSPACE) == ns);
}

BOOST_AUTO_TEST_CASE(events_finds_the_broker_of_a_zpmix_run) {
    // No standalone broker: the one embedded in `zpmix run` is the only one of this user here.
    TempDir xdg("zpmix-monitor-xdg");
    const std::vector<std::string> env = {"XDG_RUNTIME_DIR=" + xdg.path};
    Child run({kZpmix, "run", "-n", "1", "sh", "-c", "echo up; exec sleep 60"}, env);
    BOOST_REQUIRE(run.read_until_has("up\n"));  // its broker is up, its job launched
    Child mon({kZpmix, "events", "--json", "--since", "0", "--topic", "ev/rm/", "--count", "2"},
              env);
    BOOST_TEST_INFO(mon.err());
    BOOST_TEST(mon.exit_code() == 0);
    const auto ev = json_lines(mon);
    BOOST_REQUIRE(ev.size() == 2u);
    BOOST_TEST(ev[0]["code"] == PMIX_EVENT_JOB_START);
    BOOST_TEST(ev[1]["code"] == PMIX_LAUNCH_COMPLETE);
}

// --- zpmix ps ------------------------------------------------------------------------------

namespace {

json ps_json(const std::vector<std::string> &extra, const std::vector<std::string> &env = {}) {
    std::vector<std::string> args = {kZpmix, "ps", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    Child p(args, env);
    BOOST_TEST_INFO(p.err());
    BOOST_REQUIRE(p.exit_code() == 0);
    return json::parse(p.out());
}

// The row of the job running `program` (given by name or path).
const json *row_of(const json &rows, const std::string &program) {
    for (const auto &r : rows)
        if (std::filesystem::path(r["program"].get<std::string>()).filename() == program) return &r;
    return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ps_shows_a_row_per_job_and_finished_jobs_with_their_status) {
    BrokerProcess b("[broker]\nkeep_finished_s = 600\n");
    BOOST_TEST(ps_json({"--broker", b.uri()}) == json::array());  // no job: an empty list
    Child mon({kZpmix, "events", "--json", "--topic", "ev/rm/j/-174/", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(mon));
    Child running({kZpmix, "run", "--broker", b.uri(), "-n", "2", "--pset", "grp", "sleep", "60"});
    Child ok({kZpmix, "run", "--broker", b.uri(), "-n", "1", "true"});
    Child failed({kZpmix, "run", "--broker", b.uri(), "-n", "1", "sh", "-c", "exit 3"});
    BOOST_TEST(ok.exit_code() == 0);
    BOOST_TEST(failed.exit_code() == 3);
    // The sleeping job is running once its PMIX_LAUNCH_COMPLETE is out (the others' came first
    // or are among the three).
    BOOST_REQUIRE(mon.until([&] { return mon.lines().size() >= 3; }));

    // The ended jobs are listed once their broker has forgotten their namespaces, which comes
    // after `zpmix run` heard of their end.
    json rows;
    BOOST_REQUIRE(eventually([&] {
        rows = ps_json({"--broker", b.uri()});
        return rows.size() == 3u && row_of(rows, "true") && row_of(rows, "sh") &&
               (*row_of(rows, "true"))["state"] == "finished" &&
               (*row_of(rows, "sh"))["state"] == "finished";
    }));
    BOOST_TEST_INFO(rows.dump());
    const json *sleep = row_of(rows, "sleep");
    const json *yes = row_of(rows, "true");
    const json *sh = row_of(rows, "sh");
    BOOST_REQUIRE((sleep && yes && sh));
    BOOST_TEST((*sleep)["state"] == "running");
    BOOST_TEST((*sleep)["ranks"] == (json{{"running", 2}}));
    BOOST_TEST((*sleep)["psets"] == json::array({"grp"}));
    BOOST_TEST((*sleep)["nodes"].size() == 1u);
    BOOST_TEST((*sleep)["exit_status"].is_null());
    BOOST_TEST(!(*sleep)["user"].get<std::string>().empty());
    BOOST_TEST((*sleep)["elapsed_s"].get<double>() >= 0.0);
    BOOST_TEST((*yes)["state"] == "finished");
    BOOST_TEST((*yes)["exit_status"] == 0);
    BOOST_TEST((*yes)["ranks"] == (json{{"exited", 1}}));
    BOOST_TEST((*sh)["exit_status"] == 3);

    // The per-rank view is still there.
    const json ranks = ps_json({"--ranks", "--job", (*sleep)["nspace"], "--broker", b.uri()});
    BOOST_REQUIRE(ranks.size() == 2u);
    BOOST_TEST(ranks[1]["rank"] == 1);
    BOOST_TEST(ranks[1]["state"] == "running");

    // A refusal says its status by name.
    Child ctl({kZpmix, "ctl", "kill", "--job", "no.such.job", "--broker", b.uri()});
    BOOST_TEST(ctl.exit_code() == 1);
    BOOST_TEST(ctl.err().find("PMIX_ERR_NOT_FOUND") != std::string::npos, ctl.err());
}

BOOST_AUTO_TEST_CASE(ps_finds_brokers_of_another_runtime_dir) {
    TempDir mine("zpmix-monitor-xdg");
    const std::vector<std::string> env = {"XDG_RUNTIME_DIR=" + mine.path};
    // A `zpmix run` started without XDG_RUNTIME_DIR keeps its broker under /dev/shm or /tmp.
    Child run({kZpmix, "run", "-n", "1", "sh", "-c", "echo up; exec sleep 60"},
              {"XDG_RUNTIME_DIR="});
    BOOST_REQUIRE(run.read_until_has("up\n"));
    const json rows = ps_json({}, env);
    const std::string tag = "/broker-" + std::to_string(run.pid()) + "-";
    const json *ours = nullptr;
    for (const auto &r : rows)
        if (r["broker"].get<std::string>().find(tag) != std::string::npos) ours = &r;
    BOOST_TEST_INFO(rows.dump());
    BOOST_REQUIRE(ours);
    BOOST_TEST(std::filesystem::path((*ours)["program"].get<std::string>()).filename() == "sh");
    BOOST_TEST((*ours)["ranks"] == (json{{"running", 1}}));
}

// --- the broker's own log ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(the_broker_logs_json_lines_to_a_file) {
    TempDir dir("zpmix-monitor-log");
    const std::string file = dir.path + "/broker.log";
    Child broker({kZpmix, "broker", "--run-dir", dir.path + "/run", "--log-format", "json",
                  "--log-file", file});
    const std::string uri = "ipc://" + dir.path + "/run/broker.sock";
    // An event for the resource manager is logged (info) by the broker.
    Child n({kZpmix, "notify", "--code", "-5501", "--range", "rm", "--text", "say \"hi\"",
             "--broker", uri});
    BOOST_REQUIRE(n.exit_code() == 0);
    std::vector<json> lines;
    BOOST_REQUIRE(eventually([&] {
        lines.clear();
        std::ifstream in(file);
        for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
        return std::any_of(lines.begin(), lines.end(), [](const json &j) {
            return j["msg"].get<std::string>().find("resource manager") != std::string::npos;
        });
    }));
    for (const auto &j : lines) {
        BOOST_TEST_INFO(j.dump());
        BOOST_TEST(j["process"] == "zpmix broker");
        BOOST_TEST(j["pid"] == broker.pid());
        BOOST_TEST(j["time"].get<std::string>().size() ==
                   std::string("2026-11-25T01:42:18.123456Z").size());
        BOOST_TEST(!j["level"].get<std::string>().empty());
    }
    ::kill(broker.pid(), SIGTERM);
    BOOST_REQUIRE(broker.wait(10s));
    BOOST_TEST(broker.err().find("resource manager") == std::string::npos);  // in the file
}

BOOST_AUTO_TEST_CASE(the_broker_logs_to_syslog) {
    TempDir dir("zpmix-monitor-syslog");
    const std::string sock = dir.path + "/log.sock";
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, sock.c_str());
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    // A syslog daemon's part: take every datagram as it comes (the broker never waits for us).
    std::mutex mu;
    std::vector<std::string> got;
    std::atomic<bool> stop{false};
    std::thread syslogd([&] {
        while (!stop) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) != 1) continue;
            char buf[9000];
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) continue;
            std::lock_guard lock(mu);
            got.emplace_back(buf, static_cast<std::size_t>(n));
        }
    });
    const std::string config = dir.path + "/zpmix.toml";
    std::ofstream(config) << "[log]\nsyslog = true\nsyslog_socket = \"" << sock << "\"\n";
    Child broker({kZpmix, "broker", "--run-dir", dir.path + "/run", "--config", config});
    Child n({kZpmix, "notify", "--code", "-5502", "--range", "rm", "--broker",
             "ipc://" + dir.path + "/run/broker.sock"});
    BOOST_TEST(n.exit_code() == 0);
    std::string found;
    BOOST_TEST(eventually([&] {
        std::lock_guard lock(mu);
        for (const auto &d : got)
            if (d.find("-5502") != std::string::npos) found = d;
        return !found.empty();
    }));
    stop = true;
    syslogd.join();
    ::close(fd);
    BOOST_TEST_INFO(found);
    BOOST_TEST(found.starts_with("<30>"));  // facility daemon, severity info
    BOOST_TEST(found.find(" zpmix[" + std::to_string(broker.pid()) + "]: ") != std::string::npos);
    BOOST_TEST(found.find("resource manager") != std::string::npos);
}
