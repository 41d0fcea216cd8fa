#define BOOST_TEST_MODULE tree_reduction
#include <boost/test/unit_test.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <msgpack.hpp>

#include "actors/protocol/fence.hpp"
#include "actors/tree/reduction.hpp"

// The parts of the tree's wiring the fence and group actors share that need no tree running: the
// brokers hosting an operation's processes, the parts a broker takes, what a loss reaches, the
// failures remembered, a verdict's parts decoded. (The wiring over a tree of brokers:
// tests/fence/test_fence_tree.cpp, tests/group, tests/multinode.)

using namespace zpmix;

namespace {

// A namespace whose ranks run on `hosts`, in order.
NamespaceTable::Record job(const std::string &nspace, const std::vector<std::string> &hosts) {
    auto info = std::make_shared<msg::JobInfo>();
    info->nspace = nspace;
    for (std::uint32_t r = 0; r < hosts.size(); ++r) {
        msg::ProcInfo p;
        p.rank = r;
        p.hostname = hosts[r];
        info->procs.push_back(p);
    }
    auto record = std::make_shared<NamespaceRecord>();
    record->job = info;
    record->pids.assign(hosts.size(), 0);
    return record;
}

BrokerView view_of(std::uint32_t rank, std::vector<std::string> nodes, std::uint32_t radix = 2) {
    BrokerView v;
    v.rank = rank;
    v.radix = radix;
    v.nodes = std::move(nodes);
    return v;
}

using Hosts = std::optional<std::vector<std::uint32_t>>;
Hosts hosts(std::initializer_list<std::uint32_t> brokers) {
    return std::vector<std::uint32_t>(brokers);
}

}  // namespace

BOOST_AUTO_TEST_CASE(hosting_brokers_of_processes) {
    const auto view = view_of(0, {"n0", "n1", "n2", "n3"});
    NamespaceTable::Snapshot table;
    table["a"] = job("a", {"n2", "n2", "n0", "n2"});
    table["b"] = job("b", {"n3", "nowhere"});
    // A wildcard: every rank's broker, each once, ascending.
    BOOST_TEST((tree::hosting_brokers({{"a", msg::kWildcardRank}}, table, view) == hosts({0, 2})));
    BOOST_TEST((tree::hosting_brokers({{"a", 1}, {"b", 0}}, table, view) == hosts({2, 3})));
    // A rank the job does not have, a namespace not registered, a node no broker serves: none.
    BOOST_TEST(!tree::hosting_brokers({{"a", 4}}, table, view));
    BOOST_TEST(!tree::hosting_brokers({{"a", 0}, {"c", 0}}, table, view));
    BOOST_TEST(!tree::hosting_brokers({{"b", msg::kWildcardRank}}, table, view));
    // ... unless there is a fallback, which stands for them.
    BOOST_TEST((tree::hosting_brokers({{"a", 0}, {"c", 0}}, table, view, 1) == hosts({1, 2})));
    BOOST_TEST((tree::hosting_brokers({{"b", 1}}, table, view, 1) == hosts({1})));
    BOOST_TEST((tree::hosting_brokers({{"a", 4}}, table, view, 1) == std::nullopt));
}

BOOST_AUTO_TEST_CASE(parts_and_losses) {
    // Seven brokers, radix 2: 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6.
    const auto root = view_of(0, {"n0", "n1", "n2", "n3", "n4", "n5", "n6"});
    tree::Parts p = tree::parts_over({3, 4}, root);
    BOOST_TEST(!p.local);
    BOOST_TEST((p.children == std::vector<tree::Rank>{1, 1}));  // the Gather makes them unique
    p = tree::parts_over({0, 6}, root);
    BOOST_TEST(p.local);
    BOOST_TEST((p.children == std::vector<tree::Rank>{2}));
    auto one = root;
    one.rank = 1;
    p = tree::parts_over({0, 4, 6}, one);  // not under broker 1: 0 and 6
    BOOST_TEST(!p.local);
    BOOST_TEST((p.children == std::vector<tree::Rank>{4}));

    BOOST_TEST(tree::loss_reaches(msg::TreeLost{{5, 6}, false}, {0, 6}));
    BOOST_TEST(!tree::loss_reaches(msg::TreeLost{{5, 6}, false}, {0, 4}));
    BOOST_TEST(tree::loss_reaches(msg::TreeLost{{}, true}, {4}));
    BOOST_TEST(!tree::loss_reaches(msg::TreeLost{{}, true}, {}));
}

BOOST_AUTO_TEST_CASE(recent_failures) {
    tree::RecentFailures failed(2);
    BOOST_TEST(!failed.find("k1"));
    failed.add("k1", -1);
    failed.add("k1", -2);  // the first status stays
    BOOST_TEST((failed.find("k1") == std::optional<tree::Status>(-1)));
    failed.add("k2", -3);
    failed.add("k3", -4);  // the oldest goes
    BOOST_TEST(!failed.find("k1"));
    BOOST_TEST((failed.find("k2") == std::optional<tree::Status>(-3)));
    BOOST_TEST((failed.find("k3") == std::optional<tree::Status>(-4)));
}

BOOST_AUTO_TEST_CASE(a_verdicts_parts) {
    Bus bus;
    BrokerMap brokers("n0");
    tree::Reduction reduction(
        tree::Reduction::Messages<msg::FenceUp, msg::FenceDown>{}, bus, *spdlog::default_logger(),
        brokers,
        {.owner = "fence",
         .hosts = [](const std::string &, const BrokerView &) { return hosts({0}); },
         .complete = [](const std::string &, tree::Status, const tree::Bytes &) {}});
    // Two brokers' parts, as Gather::concatenate lays them out.
    auto packed = [](const msg::FencePart &part) {
        msgpack::sbuffer buf;
        msgpack::pack(buf, part);
        return tree::Bytes(buf.data(), buf.size());
    };
    const tree::Bytes first = packed({0, true, {}}), second = packed({1, false, {}});
    tree::Bytes below, both;
    BOOST_TEST(tree::Gather::concatenate("k", &second, {}, below) == 0);
    BOOST_TEST(tree::Gather::concatenate("k", &first, {below}, both) == 0);
    const auto parts = reduction.parts_of<msg::FencePart>("k", both);
    BOOST_TEST_REQUIRE(parts.has_value());
    BOOST_TEST(parts->size() == 2u);
    BOOST_TEST((*parts)[0].broker == 0u);
    BOOST_TEST((*parts)[0].collect);
    BOOST_TEST((*parts)[1].broker == 1u);
    BOOST_TEST(!(*parts)[1].collect);
    // Not an array of parts, a part that is not a bin, a part with bytes after it: none.
    BOOST_TEST(!reduction.parts_of<msg::FencePart>("k", first));
    msgpack::sbuffer not_bin;
    msgpack::packer<msgpack::sbuffer> pk2(not_bin);
    pk2.pack_array(1);
    pk2.pack(7);
    BOOST_TEST(
        !reduction.parts_of<msg::FencePart>("k", tree::Bytes(not_bin.data(), not_bin.size())));
    msgpack::sbuffer trailing;
    msgpack::packer<msgpack::sbuffer> pk3(trailing);
    pk3.pack_array(1);
    const tree::Bytes longer = first + "x";
    pk3.pack_bin(static_cast<std::uint32_t>(longer.size()));
    pk3.pack_bin_body(longer.data(), static_cast<std::uint32_t>(longer.size()));
    BOOST_TEST(
        !reduction.parts_of<msg::FencePart>("k", tree::Bytes(trailing.data(), trailing.size())));
}
