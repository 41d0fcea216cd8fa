#define BOOST_TEST_MODULE event_commands
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <pmix_common.h>
#include <nlohmann/json.hpp>

// `zpmix events` and `zpmix notify` as an operator runs them, against a `zpmix broker` process.
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";

// A child process with its stdout and stderr on pipes.
struct Child {
    pid_t pid = -1;
    int out = -1, err = -1;
    std::string out_buf, err_buf;
    int status = -1;

    explicit Child(std::vector<std::string> args) {
        int o[2], e[2];
        BOOST_REQUIRE(::pipe2(o, O_CLOEXEC) == 0 && ::pipe2(e, O_CLOEXEC) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, o[1], 1);
        posix_spawn_file_actions_adddup2(&fa, e[1], 2);
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        BOOST_REQUIRE(::posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ) ==
                      0);
        posix_spawn_file_actions_destroy(&fa);
        ::close(o[1]);
        ::close(e[1]);
        out = o[0];
        err = e[0];
    }
    ~Child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        if (out >= 0) ::close(out);
        if (err >= 0) ::close(err);
    }
    // Reads both pipes until pred holds, both are at their end, or the deadline passes.
    template <class Pred>
    bool until(Pred pred, std::chrono::seconds limit = 15s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!pred()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0 || (out < 0 && err < 0)) return false;
            pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
            if (::poll(p, 2, static_cast<int>(left.count())) <= 0) continue;
            for (int i = 0; i < 2; ++i) {
                if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
                char buf[4096];
                const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
                if (n > 0) (i == 0 ? out_buf : err_buf).append(buf, static_cast<std::size_t>(n));
                if (n == 0) {
                    ::close(p[i].fd);
                    (i == 0 ? out : err) = -1;
                }
            }
        }
        return true;
    }
    std::vector<std::string> lines() const {
        std::vector<std::string> out_lines;
        std::size_t at = 0;
        for (std::size_t nl; (nl = out_buf.find('\n', at)) != std::string::npos; at = nl + 1)
            out_lines.push_back(out_buf.substr(at, nl - at));
        return out_lines;
    }
    // Waits for the exit (the command has its own deadlines), returns the exit status.
    int wait() {
        int st = 0;
        ::waitpid(pid, &st, 0);
        pid = -1;
        until([] { return false; });  // the rest of its output, up to the pipes' end
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
};

struct BrokerProcess {
    std::string dir;
    std::unique_ptr<Child> child;
    BrokerProcess() {
        char tmpl[] = "/tmp/zpmix-evcmd-XXXXXX";
        dir = ::mkdtemp(tmpl);
        child = std::make_unique<Child>(
            std::vector<std::string>{kZpmix, "broker", "--run-dir", dir + "/run", "-q"});
    }
    ~BrokerProcess() {
        child.reset();
        fs::remove_all(dir);
    }
    // Commands connect here; ZeroMQ retries until the broker listens, their Hello has a deadline.
    std::string uri() const { return "ipc://" + dir + "/run/broker.sock"; }
};

bool subscribed(Child &c) {
    return c.until([&] { return c.err_buf.find("subscribed") != std::string::npos; });
}

}  // namespace

BOOST_AUTO_TEST_CASE(events_prints_what_notify_injects_as_json) {
    BrokerProcess b;
    Child all({kZpmix, "events", "--json", "--count", "2", "--broker", b.uri()});
    Child job(
        {kZpmix, "events", "--json", "--count", "1", "--topic", "ev/n/jobx/", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(all));
    BOOST_REQUIRE(subscribed(job));

    Child n1({kZpmix, "notify", "--code", "-4321", "--range", "global", "--info",
              "site.reason=maintenance", "--info", "site.nodes=4", "--info", "site.drain=true",
              "--text", "down at noon", "--broker", b.uri()});
    BOOST_TEST(n1.wait() == 0);
    Child n2({kZpmix, "notify", "--code", "-4322", "--range", "namespace", "--nspace", "jobx",
              "--job-level", "--affected", "jobx:3", "--broker", b.uri()});
    BOOST_TEST(n2.wait() == 0);

    BOOST_REQUIRE(all.until([&] { return all.lines().size() >= 2; }));
    BOOST_REQUIRE(job.until([&] { return job.lines().size() >= 1; }));
    BOOST_TEST(all.wait() == 0);  // --count reached
    BOOST_TEST(job.wait() == 0);

    const auto first = nlohmann::json::parse(all.lines()[0]);
    BOOST_TEST_INFO(all.lines()[0]);
    BOOST_TEST(first["topic"] == "ev/g/e/-4321/");
    BOOST_TEST(first["stream"] == "ev/g/e/");
    BOOST_TEST(first["seq"] == 1);
    BOOST_TEST(first["status"] == -4321);
    BOOST_TEST(first["range"] == PMIX_RANGE_GLOBAL);
    BOOST_TEST(first["enviro"] == true);
    BOOST_TEST(first["text"] == "down at noon");
    BOOST_TEST(
        first["info"] ==
        (nlohmann::json{{"site.reason", "maintenance"}, {"site.nodes", 4}, {"site.drain", true}}));
    BOOST_TEST(!first["source"]["nspace"].get<std::string>().empty());  // the broker
    BOOST_TEST(first["timestamp"].get<std::int64_t>() > 0);

    const auto second = nlohmann::json::parse(all.lines()[1]);
    BOOST_TEST_INFO(all.lines()[1]);
    BOOST_TEST(second["topic"] == "ev/n/jobx/j/-4322/");
    BOOST_TEST(second["enviro"] == false);
    BOOST_TEST(second["affected"] == (nlohmann::json::array({{{"nspace", "jobx"}, {"rank", 3}}})));
    // The namespace subscriber saw only the namespace's event.
    BOOST_TEST(nlohmann::json::parse(job.lines()[0])["status"] == -4322);
}

BOOST_AUTO_TEST_CASE(events_prints_readable_lines_without_json) {
    BrokerProcess b;
    Child ev({kZpmix, "events", "--count", "1", "--broker", b.uri()});
    BOOST_REQUIRE(subscribed(ev));
    Child n({kZpmix, "notify", "--code", "-77", "--range", "session", "--text", "hi", "--broker",
             b.uri()});
    BOOST_TEST(n.wait() == 0);
    BOOST_TEST(ev.wait() == 0);
    BOOST_REQUIRE(ev.lines().size() == 1);
    BOOST_TEST(ev.lines()[0].starts_with("ev/s/"));
    BOOST_TEST(ev.lines()[0].find("status -77") != std::string::npos);
    BOOST_TEST(ev.lines()[0].find(": hi") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(notify_refuses_bad_arguments) {
    BrokerProcess b;
    for (std::vector<std::string> bad : {
             std::vector<std::string>{"--range", "galaxy"},
             std::vector<std::string>{"--range", "custom"},
             std::vector<std::string>{"--range", "namespace"},
             std::vector<std::string>{"--range", "custom", "--proc", "nocolon"},
             std::vector<std::string>{"--range", "global", "--info", "novalue"},
         }) {
        std::vector<std::string> args = {kZpmix, "notify", "--code", "-1", "--broker", b.uri()};
        args.insert(args.end(), bad.begin(), bad.end());
        Child n(args);
        BOOST_TEST_INFO(bad[1]);
        BOOST_TEST(n.wait() == 2);
        BOOST_TEST(n.err_buf.find("zpmix notify:") != std::string::npos);
    }
}
