// The node's namespace table: snapshots that never change under their reader, one record copied
// per change, and changes of unknown namespaces or ranks refused.
#define BOOST_TEST_MODULE namespace_table
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "actors/registry/namespace_table.hpp"

using namespace zpmix;

namespace {

msg::JobInfo job(const std::string &ns, std::uint32_t size) {
    msg::JobInfo j;
    j.nspace = ns;
    j.size = size;
    j.procs.resize(size);
    for (std::uint32_t r = 0; r < size; ++r) {
        j.procs[r].rank = r;
        j.procs[r].hostname = "node" + std::to_string(r % 2);
    }
    return j;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_snapshot_does_not_change_under_its_reader) {
    NamespaceTable table;
    BOOST_TEST(table.snapshot()->empty());
    table.add(job("a", 3), "secret", {{"parent", 1}});
    const auto before = table.snapshot();
    BOOST_TEST(table.spawned("a", 1, 4242));
    BOOST_TEST(table.ended("a", 2, 0, 9));
    table.add(job("b", 1), "", {});
    // The old snapshot is as it was.
    BOOST_TEST(before->size() == 1u);
    const NamespaceRecord &old = *before->at("a");
    BOOST_TEST(old.pids[1] == 0);
    BOOST_TEST(!old.ended(2));
    // The new one has every change.
    const auto now = table.find("a");
    BOOST_REQUIRE(now);
    BOOST_TEST(now->pids[1] == 4242);
    BOOST_TEST(now->ended(2));
    BOOST_TEST(now->ends[2].signal == 9);
    BOOST_TEST(now->secret == "secret");
    BOOST_TEST(now->notify_completion.size() == 1u);
    // A change copies the record, never the job information.
    BOOST_TEST(now->job.get() == old.job.get());
    BOOST_TEST(table.snapshot()->size() == 2u);
    // The Welcome's job carries the pids known so far.
    const msg::JobInfo welcome = now->job_with_pids();
    BOOST_TEST(welcome.procs[1].pid == 4242);
    BOOST_TEST(welcome.procs[0].pid == 0);
}

BOOST_AUTO_TEST_CASE(changes_of_what_the_table_lacks_change_nothing) {
    NamespaceTable table;
    table.add(job("a", 2), "", {});
    const auto before = table.snapshot();
    BOOST_TEST(!table.spawned("zz", 0, 1));
    BOOST_TEST(!table.spawned("a", 2, 1));  // no rank 2
    BOOST_TEST(!table.ended("a", 7, 0, 0));
    BOOST_TEST(!table.remove("zz"));
    BOOST_TEST(table.snapshot() == before);  // not even replaced
    BOOST_TEST(table.remove("a"));
    BOOST_TEST(!table.find("a"));
    BOOST_TEST(before->contains("a"));
}

// Readers on other threads see whole snapshots while the writer changes the table (TSan runs it).
BOOST_AUTO_TEST_CASE(readers_on_other_threads_see_whole_snapshots) {
    NamespaceTable table;
    table.add(job("a", 64), "", {});
    // Readers and the writer overlap: each side goes on until the other has done enough (the
    // deadline bounds a thread that never gets a core).
    constexpr long kReads = 2000;  // each reader's, at least
    constexpr long kRounds = 20;   // the writer's, at least
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto in_time = [&] { return std::chrono::steady_clock::now() < deadline; };
    std::atomic<int> finished{0};
    std::atomic<long> rounds{0};
    std::atomic<bool> torn{false};  // Boost.Test's assertions are for the test's own thread
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&] {
            for (long i = 0; (i < kReads || rounds < kRounds) && in_time(); ++i) {
                const auto rec = table.find("a");
                if (!rec) continue;
                // The ranks spawn in order: a snapshot never shows a later one without an earlier.
                bool gap = false;
                for (std::uint32_t r = 1; r < rec->size(); ++r)
                    if (rec->pids[r] != 0 && rec->pids[r - 1] == 0) gap = true;
                if (gap) torn = true;
            }
            ++finished;
        });
    while ((finished < 2 || rounds < kRounds) && in_time()) {
        for (std::uint32_t r = 0; r < 64; ++r) table.spawned("a", r, 1000 + r);
        table.remove("a");
        table.add(job("a", 64), "", {});
        ++rounds;
    }
    for (auto &t : readers) t.join();
    BOOST_TEST(in_time());
    BOOST_TEST(!torn);
}
