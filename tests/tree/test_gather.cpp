#define BOOST_TEST_MODULE tree_gather
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <msgpack.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <pmix_common.h>

#include "actors/tree/gather.hpp"
#include "actors/tree/topology.hpp"

// A tree of Gather engines in one process, wired by an in-memory queue that a deterministic loop
// delivers in FIFO order or shuffled with a fixed seed.
using namespace zpmix::tree;

namespace {

struct Message {
    bool up;  // to the parent, else to a child
    Rank from, to;
    std::string key;
    Status status;
    Bytes payload;
};

struct Completion {
    Status status;
    Bytes result;
};

using PlanOf = std::function<std::optional<Parts>(Rank, const std::string &)>;

struct Sim {
    Topology topo;
    std::vector<std::unique_ptr<Gather>> engines;
    std::deque<Message> queue;
    std::mt19937 rng;
    bool shuffled;
    std::set<Rank> dead;  // their messages, in and out, are dropped
    std::vector<std::map<std::string, std::vector<Completion>>> done;  // by broker, by key
    std::vector<std::string> logs;
    std::function<void(Rank, const std::string &)> on_complete;  // after recording it

    Sim(Rank size, Rank radix, bool shuffle, unsigned seed = 7, PlanOf plan = {},
        Gather::Reduce reduce = Gather::concatenate, std::size_t recent = 1024)
        : topo(size, radix), rng(seed), shuffled(shuffle), done(size) {
        for (Rank r = 0; r < size; ++r) {
            Gather::Callbacks cb{
                [this, r](Rank parent, const std::string &key, Status s, const Bytes &b) {
                    queue.push_back({true, r, parent, key, s, b});
                },
                [this, r](Rank child, const std::string &key, Status s, const Bytes &b) {
                    queue.push_back({false, r, child, key, s, b});
                },
                [this, r](const std::string &key, Status s, const Bytes &b) {
                    done[r][key].push_back({s, b});
                    if (on_complete) on_complete(r, key);
                },
                [this](std::string_view line) { logs.emplace_back(line); }};
            Gather::Plan p;
            if (plan) p = [plan, r](const std::string &key) { return plan(r, key); };
            engines.push_back(std::make_unique<Gather>(topo, r, cb, reduce, p, recent));
        }
    }
    Gather &operator[](Rank r) { return *engines[r]; }

    // Delivers one queued message; false when none is left.
    bool step() {
        if (queue.empty()) return false;
        const std::size_t i = shuffled ? rng() % queue.size() : 0;
        Message m = std::move(queue[i]);
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
        if (dead.contains(m.from) || dead.contains(m.to)) return true;
        if (m.up)
            engines[m.to]->from_child(m.from, m.key, m.status, std::move(m.payload));
        else
            engines[m.to]->from_parent(m.key, m.status, m.payload);
        return true;
    }
    void run() {
        while (step()) {
        }
    }
    std::size_t completions(Rank r, const std::string &key) {
        auto it = done[r].find(key);
        return it == done[r].end() ? 0 : it->second.size();
    }
    // Of the brokers alive.
    std::size_t pending() const {
        std::size_t n = 0;
        for (Rank r = 0; r < engines.size(); ++r)
            if (!dead.contains(r)) n += engines[r]->pending();
        return n;
    }
};

std::string part_of(Rank r, const std::string &key) {
    return "b" + std::to_string(r) + ":" + key;
}

// The bins of a msgpack array of bins.
std::vector<std::string> bins(const Bytes &b) {
    auto oh = msgpack::unpack(b.data(), b.size());
    std::vector<std::string> out;
    for (const auto &e : oh.get().via.array) out.emplace_back(e.via.bin.ptr, e.via.bin.size);
    return out;
}

// Every broker in `brokers` completed `key` exactly once, successfully, with the root's result,
// which holds the local part of each of `contributors` exactly once.
void check_success(Sim &sim, const std::string &key, const std::vector<Rank> &brokers,
                   const std::vector<Rank> &contributors) {
    BOOST_TEST_REQUIRE(sim.completions(0, key) == 1u);
    const Bytes &root = sim.done[0][key][0].result;
    std::multiset<std::string> got;
    for (auto &s : bins(root)) got.insert(s);
    std::multiset<std::string> want;
    for (Rank r : contributors) want.insert(part_of(r, key));
    BOOST_TEST(got == want, boost::test_tools::per_element());
    for (Rank r : brokers) {
        BOOST_TEST_REQUIRE(sim.completions(r, key) == 1u, "broker " << r << " key " << key);
        BOOST_TEST(sim.done[r][key][0].status == PMIX_SUCCESS);
        BOOST_TEST((sim.done[r][key][0].result == root));
    }
}

void check_failed(Sim &sim, const std::string &key, const std::vector<Rank> &brokers,
                  Status status) {
    for (Rank r : brokers) {
        BOOST_TEST_REQUIRE(sim.completions(r, key) == 1u, "broker " << r << " key " << key);
        BOOST_TEST(sim.done[r][key][0].status == status, "broker " << r);
    }
}

std::vector<Rank> all(Rank size) {
    std::vector<Rank> v(size);
    for (Rank r = 0; r < size; ++r) v[r] = r;
    return v;
}

const std::vector<std::pair<Rank, Rank>> kShapes{{1, 2}, {2, 2}, {7, 2}, {13, 2},
                                                 {1, 3}, {2, 3}, {7, 3}, {13, 3}};

}  // namespace

// Three operations at once: every broker's part goes in, interleaved with deliveries, in
// broker and key order shuffled too; each completes once everywhere with every part once.
BOOST_AUTO_TEST_CASE(concurrent_operations_complete_once_everywhere) {
    for (auto [size, radix] : kShapes)
        for (bool shuffled : {false, true})
            for (unsigned seed : {1u, 2u, 3u}) {
                Sim sim(size, radix, shuffled, seed);
                const std::vector<std::string> keys{"a#1", "a#2", "b,c#1"};
                std::vector<std::pair<Rank, std::string>> inputs;
                for (Rank r = 0; r < size; ++r)
                    for (const auto &k : keys) inputs.emplace_back(r, k);
                if (shuffled) std::shuffle(inputs.begin(), inputs.end(), sim.rng);
                for (const auto &[r, k] : inputs) {
                    BOOST_TEST((sim[r].contribute_local(k, part_of(r, k)) == Outcome::taken));
                    sim.step();
                }
                sim.run();
                for (const auto &k : keys) {
                    check_success(sim, k, all(size), all(size));
                    // In preorder, whatever the order of delivery.
                    std::vector<std::string> order;
                    std::function<void(Rank)> visit = [&](Rank r) {
                        order.push_back(part_of(r, k));
                        for (Rank c : sim.topo.children(r)) visit(c);
                    };
                    visit(0);
                    BOOST_TEST(bins(sim.done[0][k][0].result) == order,
                               boost::test_tools::per_element());
                }
                BOOST_TEST(sim.pending() == 0u);
                BOOST_TEST(sim.logs.empty());
            }
}

// Only brokers 4, 5 and 12 of 13 have participants: the plan names the parts each broker takes,
// those on the paths to the root take part, the others never hear of the operation.
BOOST_AUTO_TEST_CASE(only_some_subtrees_take_part) {
    const Topology topo(13, 3);
    const std::set<Rank> local{4, 5, 12};
    auto plan = [&](Rank r, const std::string &) -> std::optional<Parts> {
        Parts p{local.contains(r), {}};
        for (Rank c : topo.children(r))
            for (Rank d : topo.subtree(c))
                if (local.contains(d)) {
                    p.children.push_back(c);
                    break;
                }
        if (!p.local && p.children.empty()) return std::nullopt;
        return p;
    };
    for (bool shuffled : {false, true}) {
        Sim sim(13, 3, shuffled, 5, plan);
        for (Rank r : local) sim[r].contribute_local("k#1", part_of(r, "k#1"));
        sim.run();
        check_success(sim, "k#1", {0, 1, 3, 4, 5, 12}, {4, 5, 12});
        for (Rank r : {2, 6, 7, 8, 9, 10, 11}) BOOST_TEST(sim.completions(r, "k#1") == 0u);
        // A broker without participants refuses a local part; a child outside the plan, and a
        // rank that is no child, are refused.
        BOOST_TEST((sim[2].contribute_local("k#2", "x") == Outcome::refused));
        BOOST_TEST((sim[1].contribute_local("k#2", "x") == Outcome::refused));
        BOOST_TEST((sim[0].from_child(2, "k#2", PMIX_SUCCESS, "x") == Outcome::refused));
        BOOST_TEST((sim[0].from_child(4, "k#2", PMIX_SUCCESS, "x") == Outcome::refused));
        BOOST_TEST((sim[0].from_child(99, "k#2", PMIX_SUCCESS, "x") == Outcome::refused));
        BOOST_TEST(sim.logs.size() == 5u);
    }
}

// A failure at a leaf, an inner broker or the root, before or after the others' parts: every
// broker completes once with that status, and parts that come after are ignored.
BOOST_AUTO_TEST_CASE(a_failure_anywhere_reaches_every_broker_once) {
    for (Rank failing : {12u, 1u, 3u, 0u})
        for (bool shuffled : {false, true})
            for (bool early : {false, true}) {
                Sim sim(13, 3, shuffled, 11);
                const std::string key = "f#1";
                if (early) BOOST_TEST((sim[failing].fail(key, PMIX_ERR_TIMEOUT) == Outcome::taken));
                for (Rank r = 0; r < 13; ++r)
                    if (r != failing) {
                        sim[r].contribute_local(key, part_of(r, key));
                        sim.step();
                    }
                if (!early)
                    BOOST_TEST((sim[failing].fail(key, PMIX_ERR_TIMEOUT) == Outcome::taken));
                sim.run();
                check_failed(sim, key, all(13), PMIX_ERR_TIMEOUT);
                BOOST_TEST(sim.pending() == 0u);
                // The failing broker's participant comes too late.
                BOOST_TEST((sim[failing].contribute_local(key, "late") == Outcome::late));
                sim.run();
                BOOST_TEST(sim.completions(failing, key) == 1u);
            }
}

// A failure on its way up loses against a success the root already sent: everyone succeeds.
BOOST_AUTO_TEST_CASE(a_failure_after_the_root_completed_is_late) {
    Sim sim(7, 2, false);
    for (Rank r = 0; r < 7; ++r) sim[r].contribute_local("s#1", part_of(r, "s#1"));
    // Broker 5 sent its part up and then times out, before the verdict comes down.
    while (sim.completions(0, "s#1") == 0) sim.step();
    BOOST_TEST((sim[5].fail("s#1", PMIX_ERR_TIMEOUT) == Outcome::taken));
    sim.run();
    check_success(sim, "s#1", all(7), all(7));
    BOOST_TEST(sim.logs.size() == 1u);  // the root ignored the late failure
}

// Broker 2 (under the root, over 5 and 6) dies in the middle of a gather: the root fails what
// waited for it, everyone alive completes once with PMIX_ERR_UNREACH (5 and 6 on losing their
// parent), and later operations that need 2 fail at once.
BOOST_AUTO_TEST_CASE(a_child_lost_in_the_middle_of_a_gather) {
    for (bool shuffled : {false, true}) {
        Sim sim(7, 2, shuffled, 3);
        // "done#1" was gathered from 2's subtree before it died.
        for (Rank r : {2u, 5u, 6u}) sim[r].contribute_local("done#1", part_of(r, "done#1"));
        for (Rank r : {0u, 1u, 2u, 3u, 5u}) sim[r].contribute_local("g#1", part_of(r, "g#1"));
        sim.run();
        sim.dead.insert(2);
        sim[0].child_lost(2);
        for (Rank r : {5u, 6u}) sim[r].parent_lost();
        for (Rank r : {0u, 1u, 3u, 4u}) sim[r].contribute_local("done#1", part_of(r, "done#1"));
        sim[4].contribute_local("g#1", part_of(4, "g#1"));
        sim.run();
        check_failed(sim, "g#1", {0, 1, 3, 4, 5}, PMIX_ERR_UNREACH);
        BOOST_TEST(sim.completions(6, "g#1") == 0u);  // never heard of it
        check_success(sim, "done#1", {0, 1, 3, 4}, all(7));
        BOOST_TEST(sim.completions(5, "done#1") == 1u);  // its parent was lost
        BOOST_TEST(sim.done[5]["done#1"][0].status == PMIX_ERR_UNREACH);
        BOOST_TEST(sim.completions(2, "g#1") == 0u);

        sim[0].contribute_local("later#1", "x");  // the root plans 2: fails at once
        sim.run();
        check_failed(sim, "later#1", {0, 1, 3, 4}, PMIX_ERR_UNREACH);
        BOOST_TEST((sim[5].contribute_local("later#1", "x") == Outcome::taken));
        check_failed(sim, "later#1", {5}, PMIX_ERR_UNREACH);
        BOOST_TEST(sim.pending() == 0u);
    }
}

// A standing tree's broker (1, in a chain under the root) loses its parent and stays up: what it
// and its subtree gather meanwhile fails at once, there and below; once the parent welcomed it
// again (parent_joined), gathers go through the root again.
BOOST_AUTO_TEST_CASE(a_parent_lost_and_back_gathers_through_it_again) {
    Sim sim(3, 1, false);
    sim[1].parent_lost();
    for (Rank r : {1u, 2u}) sim[r].contribute_local("away#1", part_of(r, "away#1"));
    sim.run();
    check_failed(sim, "away#1", {1, 2}, PMIX_ERR_UNREACH);
    BOOST_TEST(sim.completions(0, "away#1") == 0u);
    sim[1].parent_joined();
    for (Rank r : all(3)) sim[r].contribute_local("back#1", part_of(r, "back#1"));
    sim.run();
    check_success(sim, "back#1", all(3), all(3));
    BOOST_TEST(sim.pending() == 0u);
}

// An inner broker loses a leaf with the status its owner gives: the failure goes to the root and
// comes down to everyone else.
BOOST_AUTO_TEST_CASE(a_child_lost_below_an_inner_broker) {
    Sim sim(13, 3, true, 9);
    for (Rank r = 0; r < 13; ++r)
        if (r != 8) sim[r].contribute_local("i#1", part_of(r, "i#1"));
    sim.run();
    sim.dead.insert(8);
    sim[2].child_lost(8, PMIX_ERR_LOST_CONNECTION);
    sim.run();
    std::vector<Rank> alive = all(13);
    alive.erase(alive.begin() + 8);
    check_failed(sim, "i#1", alive, PMIX_ERR_LOST_CONNECTION);
    BOOST_TEST(sim.pending() == 0u);
    BOOST_TEST(sim.completions(8, "i#1") == 0u);
}

// A second local part, and a second part or failure from one child, are refused and never
// counted; messages for a completed key are ignored.
BOOST_AUTO_TEST_CASE(duplicates_are_refused_and_late_messages_ignored) {
    Sim sim(3, 2, false);
    BOOST_TEST((sim[1].contribute_local("d#1", part_of(1, "d#1")) == Outcome::taken));
    BOOST_TEST((sim[1].contribute_local("d#1", "again") == Outcome::duplicate));
    sim.run();  // 1's part reaches the root
    BOOST_TEST((sim[0].from_child(1, "d#1", PMIX_SUCCESS, "forged") == Outcome::duplicate));
    BOOST_TEST((sim[0].from_child(2, "d#1", PMIX_ERR_TIMEOUT, {}) == Outcome::taken));
    BOOST_TEST((sim[0].from_child(2, "d#1", PMIX_ERR_TIMEOUT, {}) == Outcome::late));
    sim.run();
    check_failed(sim, "d#1", {0, 1, 2}, PMIX_ERR_TIMEOUT);

    // A failing child's later part is a duplicate while the operation waits.
    Sim big(7, 2, false);
    big[4].fail("e#1", PMIX_ERR_TIMEOUT);
    big.step();  // 4 -> 1, which forwards it and waits for the root's verdict
    BOOST_TEST((big[1].from_child(4, "e#1", PMIX_SUCCESS, "x") == Outcome::duplicate));
    big.run();
    check_failed(big, "e#1", all(7), PMIX_ERR_TIMEOUT);
    for (Rank r = 0; r < 7; ++r) {
        BOOST_TEST((big[r].contribute_local("e#1", "late") == Outcome::late));
        if (r > 0) BOOST_TEST((big[r].from_parent("e#1", PMIX_SUCCESS, {}) == Outcome::late));
        BOOST_TEST(big.completions(r, "e#1") == 1u);
    }
    BOOST_TEST((big[0].from_parent("e#1", PMIX_SUCCESS, {}) == Outcome::refused));
    BOOST_TEST((big[3].fail("e#2", PMIX_SUCCESS) == Outcome::refused));
    BOOST_TEST(big.pending() == 0u);

    // Complete ones too: nothing completes twice.
    Sim ok(2, 2, false);
    ok[0].contribute_local("o#1", part_of(0, "o#1"));
    ok[1].contribute_local("o#1", part_of(1, "o#1"));
    ok.run();
    BOOST_TEST((ok[0].from_child(1, "o#1", PMIX_SUCCESS, "x") == Outcome::late));
    BOOST_TEST((ok[1].from_parent("o#1", PMIX_SUCCESS, {}) == Outcome::late));
    check_success(ok, "o#1", {0, 1}, {0, 1});
}

// The completed keys kept to ignore late messages are bounded: past the bound, a late message
// opens a new operation (which its owner's timeout would end).
BOOST_AUTO_TEST_CASE(the_memory_of_completed_keys_is_bounded) {
    Sim sim(1, 2, false, 7, {}, Gather::concatenate, 2);
    for (const char *k : {"m#1", "m#2", "m#3"}) sim[0].contribute_local(k, "x");
    BOOST_TEST(sim[0].pending() == 0u);
    BOOST_TEST((sim[0].contribute_local("m#3", "x") == Outcome::late));
    BOOST_TEST((sim[0].contribute_local("m#2", "x") == Outcome::late));
    // m#1 is forgotten: on one broker a new part completes a new operation.
    BOOST_TEST((sim[0].contribute_local("m#1", "x") == Outcome::taken));
    BOOST_TEST(sim.completions(0, "m#1") == 2u);
}

// The caller's reduce combines; its failure, or a malformed part for the default one, fails the
// operation everywhere.
BOOST_AUTO_TEST_CASE(reduce_functions_and_their_failures) {
    auto sum = [](const std::string &, const Bytes *local, const std::vector<Bytes> &children,
                  Bytes &out) -> Status {
        long total = local ? std::stol(*local) : 0;
        for (const auto &c : children) total += std::stol(c);
        out = std::to_string(total);
        return total > 1000 ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
    };
    Sim sim(13, 2, true, 4, {}, sum);
    for (Rank r = 0; r < 13; ++r) sim[r].contribute_local("sum#1", std::to_string(r));
    for (Rank r = 0; r < 13; ++r) sim[r].contribute_local("sum#2", r == 9 ? "5000" : "1");
    sim.run();
    for (Rank r = 0; r < 13; ++r) {
        BOOST_TEST_REQUIRE(sim.completions(r, "sum#1") == 1u);
        BOOST_TEST(sim.done[r]["sum#1"][0].result == "78");
    }
    check_failed(sim, "sum#2", all(13), PMIX_ERR_BAD_PARAM);

    Sim bad(3, 2, false);
    bad[0].contribute_local("u#1", "a");
    bad[2].contribute_local("u#1", "c");
    bad[0].from_child(1, "u#1", PMIX_SUCCESS, "\xc1");  // not msgpack
    bad.run();
    check_failed(bad, "u#1", {0, 1, 2}, PMIX_ERR_UNPACK_FAILURE);
}

// An owner that starts its next operation from inside `complete`, as a reducer answering its
// clients would, calls back into the engine while it is completing.
BOOST_AUTO_TEST_CASE(callbacks_may_call_the_engine) {
    for (bool shuffled : {false, true}) {
        Sim sim(7, 3, shuffled, 21);
        sim.on_complete = [&sim](Rank r, const std::string &key) {
            const int n = std::stoi(key.substr(2));
            if (n < 5) {
                const std::string next = "r#" + std::to_string(n + 1);
                BOOST_TEST((sim[r].contribute_local(next, part_of(r, next)) == Outcome::taken));
            }
        };
        for (Rank r = 0; r < 7; ++r) sim[r].contribute_local("r#1", part_of(r, "r#1"));
        sim.run();
        for (int n = 1; n <= 5; ++n) check_success(sim, "r#" + std::to_string(n), all(7), all(7));
        BOOST_TEST(sim.pending() == 0u);
    }
}
