#define BOOST_TEST_MODULE fence_count
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

#include "actors/fence/fence_count.hpp"
#include "actors/protocol/fence.hpp"

// FenceCount by itself: who of a fence's participants has contributed, out of whom.
using namespace zpmix;

namespace {

const std::uint32_t kAll = msg::kWildcardRank;
using Sizes = std::vector<std::pair<std::string, std::uint32_t>>;

FenceCount count_of(std::vector<msg::Proc> participants) {
    return FenceCount(msg::canonical_participants(std::move(participants)));
}

}  // namespace

BOOST_AUTO_TEST_CASE(named_participants_complete_once_each_arrived) {
    auto c = count_of({{"b", 2}, {"a", 1}, {"a", 0}});
    BOOST_TEST(c.expected() == 3);
    BOOST_TEST(!c.complete());
    BOOST_TEST(c.arrive({"a", 1}, {}));
    BOOST_TEST(c.arrive({"b", 2}, {}));
    BOOST_TEST(!c.complete());
    BOOST_TEST(c.arrived(msg::Proc{"a", 1}));
    BOOST_TEST(!c.arrived(msg::Proc{"a", 0}));
    BOOST_TEST(c.arrive({"a", 0}, {}));
    BOOST_TEST(c.complete());
}

BOOST_AUTO_TEST_CASE(a_second_contribution_is_refused_and_counts_nothing) {
    auto c = count_of({{"a", 0}, {"a", 1}});
    BOOST_TEST(c.arrive({"a", 0}, {}));
    BOOST_TEST(!c.arrive({"a", 0}, {}));
    BOOST_TEST(!c.complete());  // two contributions, one participant
    BOOST_TEST(c.arrive({"a", 1}, {}));
    BOOST_TEST(c.complete());
    BOOST_TEST(!c.arrive({"a", 1}, {}));
    BOOST_TEST(c.complete());
}

BOOST_AUTO_TEST_CASE(a_wildcard_counts_its_namespace_once_a_contribution_names_its_size) {
    auto c = count_of({{"a", kAll}});
    BOOST_TEST(c.expected() == -1);
    BOOST_TEST(c.arrive({"a", 2}, {{"a", 3}}));
    BOOST_TEST(c.expected() == 3);
    BOOST_TEST(c.arrive({"a", 0}, {}));
    BOOST_TEST(!c.complete());
    BOOST_TEST(c.arrive({"a", 1}, {{"a", 3}}));
    BOOST_TEST(c.complete());
}

BOOST_AUTO_TEST_CASE(only_sizes_of_wildcard_namespaces_count_and_the_first_stays) {
    auto c = count_of({{"a", kAll}, {"b", 0}});
    BOOST_TEST(c.arrive({"b", 0}, {{"b", 5}}));
    BOOST_TEST(c.expected() == -1);  // b is named by rank: its size says nothing
    BOOST_TEST(!c.complete());
    BOOST_TEST(c.arrive({"a", 0}, {{"a", 2}}));
    BOOST_TEST(c.expected() == 3);
    BOOST_TEST(c.arrive({"a", 1}, {{"a", 7}}));
    BOOST_TEST(c.expected() == 3);
    BOOST_TEST(c.complete());
}

BOOST_AUTO_TEST_CASE(a_wildcard_covers_the_ranks_named_beside_it) {
    auto c = count_of({{"a", 1}, {"a", kAll}, {"a", 0}});
    BOOST_REQUIRE_EQUAL(c.participants().size(), 1u);
    BOOST_TEST(c.arrive({"a", 1}, {{"a", 2}}));
    BOOST_TEST(c.arrive({"a", 0}, {}));
    BOOST_TEST(c.complete());
}

BOOST_AUTO_TEST_CASE(participants_are_named_by_rank_or_by_their_namespace) {
    const auto participants = msg::canonical_participants({{"a", 3}, {"b", kAll}});
    BOOST_TEST(FenceCount::includes(participants, {"a", 3}));
    BOOST_TEST(FenceCount::includes(participants, {"b", 0}));
    BOOST_TEST(FenceCount::includes(participants, {"b", 41}));
    BOOST_TEST(!FenceCount::includes(participants, {"a", 0}));
    BOOST_TEST(!FenceCount::includes(participants, {"c", 3}));
}

BOOST_AUTO_TEST_CASE(the_fence_waits_for_a_participant_until_it_contributes) {
    auto c = count_of({{"a", 0}, {"a", 1}, {"b", kAll}});
    // A participant that ends now fails the fence; an outsider's end does not matter.
    BOOST_TEST(c.waits_for({"a", 0}));
    BOOST_TEST(c.waits_for({"b", 7}));
    BOOST_TEST(!c.waits_for({"a", 2}));
    BOOST_TEST(!c.waits_for({"c", 0}));
    BOOST_TEST(c.arrive({"a", 0}, {}));
    BOOST_TEST(c.arrive({"b", 7}, {{"b", 2}}));
    // Having contributed, it may end: the others complete without it.
    BOOST_TEST(!c.waits_for({"a", 0}));
    BOOST_TEST(!c.waits_for({"b", 7}));
    BOOST_TEST(c.waits_for({"a", 1}));
    BOOST_TEST(c.waits_for({"b", 0}));
}
