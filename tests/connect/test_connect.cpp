#define BOOST_TEST_MODULE connect
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

// PMIx_Connect/Disconnect end to end: a job and the job it spawns (connect_prog) connect under
// `zpmix run`, then read each other's job information and committed data.
using namespace std::chrono_literals;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/connect_prog";

struct Run {
    TempDir tmp{"zpmix-connect"};
    Child child;
    explicit Run(std::vector<std::string> args)
        : child(with_run(std::move(args)), {"XDG_RUNTIME_DIR=" + tmp.path}) {}
    static std::vector<std::string> with_run(std::vector<std::string> args) {
        args.insert(args.begin(), {kZpmix, "run"});
        return args;
    }
};

// The "<role> <rank> connect ..." and "... disconnect ..." lines, by "<role> <rank> <what>", as
// their remaining words.
std::map<std::string, std::vector<std::string>> outcomes(const Child &p) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto &line : p.lines()) {
        std::istringstream in(line);
        std::vector<std::string> w;
        for (std::string s; in >> s;) w.push_back(s);
        if (w.size() < 4 || (w[0] != "parent" && w[0] != "child")) continue;
        out[w[0] + " " + w[1] + " " + w[2]] = std::vector<std::string>(w.begin() + 3, w.end());
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_job_and_its_child_connect_and_see_each_other) {
    Run r({"-n", "2", kProg, "ok"});
    BOOST_TEST(r.child.exit_code(60s) == 0, r.child.err());
    const auto o = outcomes(r.child);
    for (const std::string role : {"parent", "child"})
        for (const std::string rank : {"0", "1"}) {
            const std::string who = role + " " + rank;
            const std::string other = role == "parent" ? "child" : "parent";
            BOOST_REQUIRE_MESSAGE(o.contains(who + " connect"), r.child.out());
            // status, "size", the other job's size, "card", the other's rank 0's data
            const std::vector<std::string> want{"PMIX_SUCCESS", "size", "2", "card", other + "-0"};
            BOOST_TEST(o.at(who + " connect") == want, who << ": " << r.child.out());
            BOOST_REQUIRE_MESSAGE(o.contains(who + " disconnect"), r.child.out());
            BOOST_TEST(o.at(who + " disconnect")[0] == "PMIX_SUCCESS");
        }
}

BOOST_AUTO_TEST_CASE(a_participant_that_never_comes_times_the_connect_out) {
    const auto start = std::chrono::steady_clock::now();
    Run r({"-n", "2", kProg, "absent", "2"});
    BOOST_TEST(r.child.exit_code(60s) == 0, r.child.err());
    const auto o = outcomes(r.child);
    for (const std::string rank : {"0", "1"}) {
        BOOST_REQUIRE_MESSAGE(o.contains("parent " + rank + " connect"), r.child.out());
        BOOST_TEST(o.at("parent " + rank + " connect")[0] == "PMIX_ERR_TIMEOUT");
    }
    // The parents' end ended the children (spawned with PMIX_SPAWN_CHILD_SEP false), who never
    // connected.
    BOOST_TEST(!o.contains("child 0 connect"));
    BOOST_TEST((std::chrono::steady_clock::now() - start < 30s));
}

BOOST_AUTO_TEST_CASE(a_participant_that_ends_fails_the_connect) {
    Run r({"-n", "2", kProg, "die", "30"});
    BOOST_TEST(r.child.exit_code(60s) == 0, r.child.err());
    const auto o = outcomes(r.child);
    for (const std::string rank : {"0", "1"}) {
        BOOST_REQUIRE_MESSAGE(o.contains("parent " + rank + " connect"), r.child.out());
        BOOST_TEST(o.at("parent " + rank + " connect")[0] == "PMIX_ERR_PROC_TERM_WO_SYNC");
    }
}
