#define BOOST_TEST_MODULE event_commands
#include <boost/test/unit_test.hpp>

#include <pmix_common.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

// `zpmix events` and `zpmix notify` as an operator runs them, against a `zpmix broker` process.
namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";

struct BrokerProcess {
    TempDir dir{"zpmix-evcmd"};
    Child child{{kZpmix, "broker", "--run-dir", dir.path + "/run", "-q"}};
    // Commands connect here; ZeroMQ retries until the broker listens, their Hello has a deadline.
    std::string uri() const { return "ipc://" + dir.path + "/run/broker.sock"; }
};

bool subscribed(Child &c) {
    return c.until([&] { return c.err().find("subscribed") != std::string::npos; });
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
    BOOST_TEST(n1.exit_code() == 0);
    Child n2({kZpmix, "notify", "--code", "-4322", "--range", "namespace", "--nspace", "jobx",
              "--job-level", "--affected", "jobx:3", "--broker", b.uri()});
    BOOST_TEST(n2.exit_code() == 0);

    BOOST_REQUIRE(all.until([&] { return all.lines().size() >= 2; }));
    BOOST_REQUIRE(job.until([&] { return job.lines().size() >= 1; }));
    BOOST_TEST(all.exit_code() == 0);  // --count reached
    BOOST_TEST(job.exit_code() == 0);

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
    BOOST_TEST(n.exit_code() == 0);
    BOOST_TEST(ev.exit_code() == 0);
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
        BOOST_TEST(n.exit_code() == 2);
        BOOST_TEST(n.err().find("zpmix notify:") != std::string::npos);
    }
}
