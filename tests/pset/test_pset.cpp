#define BOOST_TEST_MODULE pset
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

// Process sets end to end: a job started with --pset, a set defined and deleted while it runs
// with `zpmix pset`, the events its ranks get, and what PMIx_Get(PMIX_PSET_NAMES) says.
using namespace std::chrono_literals;

namespace {

using namespace zpmix::test;

const std::string kZpmix = std::string(ZPMIX_BIN_DIR) + "/zpmix";
const std::string kProg = std::string(ZPMIX_BIN_DIR) + "/../tests/pset_prog";

std::vector<std::string> words(const std::string &line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// The lines that start with `first`.
std::vector<std::vector<std::string>> lines_of(const Child &p, const std::string &first) {
    std::vector<std::vector<std::string>> out;
    for (const auto &l : p.lines())
        if (auto w = words(l); !w.empty() && w[0] == first) out.push_back(w);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sets_defined_and_deleted_while_a_job_runs) {
    TempDir tmp{"zpmix-pset"};
    const std::vector<std::string> env{"XDG_RUNTIME_DIR=" + tmp.path};
    Child run({kZpmix, "run", "-n", "2", "--pset", "world", kProg}, env);
    BOOST_REQUIRE_MESSAGE(run.until([&] { return lines_of(run, "ready").size() == 2; }, 30s),
                          run.out() << run.err());
    const auto ready = lines_of(run, "ready");
    const std::string nspace = ready[0].at(1);
    // The launch-time set is announced to the job's ranks as a definition is.
    const auto launch = lines_of(run, "launch");
    BOOST_TEST(launch.size() == 2u, run.out());
    for (const auto &w : launch) {
        BOOST_TEST(w.at(1) == "define");
        BOOST_TEST(w.at(2) == "world");
        BOOST_TEST(w.at(4) == nspace + ":0," + nspace + ":1");
    }
    for (const auto &w : ready) {
        BOOST_TEST(w.at(4) == "world");  // the launch-time set
        BOOST_TEST(w.at(6) == "world");  // PMIX_PSET_NAME, its own
        BOOST_TEST(w.at(7) == "world");  // and rank 0's
    }

    // Bad requests are refused, with the job untouched.
    BOOST_TEST(Child({kZpmix, "pset", "define", "world", "--job", nspace}, env).exit_code() == 1);
    BOOST_TEST(
        Child({kZpmix, "pset", "define", "x", "--job", nspace, "--ranks", "7"}, env).exit_code() ==
        1);
    BOOST_TEST(Child({kZpmix, "pset", "delete", "world", "--job", nspace}, env).exit_code() == 1);

    Child define({kZpmix, "pset", "define", "first", "--job", nspace, "--ranks", "0"}, env);
    BOOST_TEST(define.exit_code() == 0, define.err());
    BOOST_REQUIRE_MESSAGE(run.until([&] { return lines_of(run, "names").size() == 2; }, 30s),
                          run.out() << run.err());
    for (const auto &w : lines_of(run, "define")) {
        BOOST_TEST(w.at(1) == "first");
        BOOST_TEST(w.at(3) == nspace + ":0");
    }
    for (const auto &w : lines_of(run, "names"))
        BOOST_TEST(w.at(2) == (w.at(1) == "0" ? "first,world" : "world"));
    // PMIx_Query_info sees the same sets (query <rank> rc <rc> num <n> names <..> first <..>)
    for (const auto &w : lines_of(run, "query")) {
        BOOST_TEST(w.at(3) == "0");  // PMIX_SUCCESS
        BOOST_TEST(w.at(5) == "2");
        BOOST_TEST(w.at(7) == "first,world");
        BOOST_TEST(w.at(9) == nspace + ":0");
    }

    Child remove({kZpmix, "pset", "delete", "first", "--job", nspace}, env);
    BOOST_TEST(remove.exit_code() == 0, remove.err());
    BOOST_TEST(run.exit_code(30s) == 0, run.err());
    BOOST_TEST(lines_of(run, "delete").size() == 2u, run.out());
    const auto names = lines_of(run, "names");
    BOOST_REQUIRE_EQUAL(names.size(), 4u);
    BOOST_TEST(names[2].at(2) == "world");
    BOOST_TEST(names[3].at(2) == "world");
    // after the delete: one set, and the query partly succeeds (PMIX_QUERY_PARTIAL_SUCCESS, -104):
    // 'first' is not found (PMIX_ERR_NOT_FOUND, -46) for that key alone
    const auto queries = lines_of(run, "query");
    BOOST_REQUIRE_EQUAL(queries.size(), 4u);
    for (std::size_t i = 2; i < 4; ++i) {
        BOOST_TEST(queries[i].at(3) == "-104");
        BOOST_TEST(queries[i].at(5) == "1");
        BOOST_TEST(queries[i].at(7) == "world");
        BOOST_TEST(queries[i].at(9) == "status:-46");
    }
}
