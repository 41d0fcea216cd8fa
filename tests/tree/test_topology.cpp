#define BOOST_TEST_MODULE tree_topology
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "actors/tree/topology.hpp"

// The k-ary tree of brokers: parents, children, depths and subtrees, for every shape.
using namespace zpmix::tree;
using Ranks = std::vector<Rank>;

BOOST_AUTO_TEST_CASE(binary_tree_of_seven) {
    const Topology t(7, 2);
    BOOST_TEST(!t.parent(0));
    BOOST_TEST(*t.parent(1) == 0u);
    BOOST_TEST(*t.parent(2) == 0u);
    BOOST_TEST(*t.parent(5) == 2u);
    BOOST_TEST(t.children(0) == (Ranks{1, 2}), boost::test_tools::per_element());
    BOOST_TEST(t.children(2) == (Ranks{5, 6}), boost::test_tools::per_element());
    BOOST_TEST(t.children(3).empty());
    BOOST_TEST(t.depth(0) == 0u);
    BOOST_TEST(t.depth(2) == 1u);
    BOOST_TEST(t.depth(6) == 2u);
    BOOST_TEST(t.height() == 2u);
    BOOST_TEST(t.subtree(1) == (Ranks{1, 3, 4}), boost::test_tools::per_element());
    BOOST_TEST(t.subtree(6) == (Ranks{6}), boost::test_tools::per_element());
    BOOST_TEST(*t.child_toward(0, 6) == 2u);
    BOOST_TEST(*t.child_toward(2, 5) == 5u);
    BOOST_TEST(!t.child_toward(1, 5));
    BOOST_TEST(!t.child_toward(1, 1));
    BOOST_TEST(!t.child_toward(3, 0));
}

BOOST_AUTO_TEST_CASE(a_last_level_cut_short) {
    const Topology t(13, 3);  // 0; 1-3; 4-12 (full); then none
    BOOST_TEST(t.children(3) == (Ranks{10, 11, 12}), boost::test_tools::per_element());
    BOOST_TEST(t.children(4).empty());
    const Topology u(6, 3);  // 0; 1-3; 4-5 under 1
    BOOST_TEST(u.children(1) == (Ranks{4, 5}), boost::test_tools::per_element());
    BOOST_TEST(u.children(2).empty());
    BOOST_TEST(u.subtree(1) == (Ranks{1, 4, 5}), boost::test_tools::per_element());
    BOOST_TEST(u.subtree(0).size() == 6u);
}

BOOST_AUTO_TEST_CASE(radix_one_is_a_chain) {
    const Topology t(5, 1);
    for (Rank r = 1; r < 5; ++r) {
        BOOST_TEST(*t.parent(r) == r - 1);
        BOOST_TEST(t.depth(r) == r);
    }
    BOOST_TEST(t.children(2) == (Ranks{3}), boost::test_tools::per_element());
    BOOST_TEST(t.children(4).empty());
    BOOST_TEST(t.subtree(2) == (Ranks{2, 3, 4}), boost::test_tools::per_element());
    BOOST_TEST(*t.child_toward(1, 4) == 2u);
    BOOST_TEST(t.height() == 4u);
}

BOOST_AUTO_TEST_CASE(one_broker_is_a_root_alone) {
    const Topology t(1, 4);
    BOOST_TEST(!t.parent(0));
    BOOST_TEST(t.children(0).empty());
    BOOST_TEST(t.height() == 0u);
    BOOST_TEST(t.subtree(0) == (Ranks{0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_radix_above_the_size_is_a_star) {
    const Topology t(4, 16);
    BOOST_TEST(t.children(0) == (Ranks{1, 2, 3}), boost::test_tools::per_element());
    BOOST_TEST(t.height() == 1u);
}

BOOST_AUTO_TEST_CASE(huge_ranks_and_radices_do_not_overflow) {
    const Rank max = UINT32_MAX;
    const Topology t(max, max);
    BOOST_TEST(t.children(1).empty());  // 1 * max + 1 is beyond the tree
    BOOST_TEST(t.subtree(1) == (Ranks{1}), boost::test_tools::per_element());
    BOOST_TEST(*t.parent(max - 1) == 0u);
    const Topology chain(max, 1);
    BOOST_TEST(chain.children(max - 2) == (Ranks{max - 1}), boost::test_tools::per_element());
    BOOST_TEST(chain.children(max - 1).empty());
    BOOST_TEST(chain.subtree(max - 2) == (Ranks{max - 2, max - 1}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_ranks_throw) {
    BOOST_CHECK_THROW(Topology(0, 2), std::invalid_argument);
    BOOST_CHECK_THROW(Topology(3, 0), std::invalid_argument);
    const Topology t(3, 2);
    BOOST_CHECK_THROW(t.parent(3), std::out_of_range);
    BOOST_CHECK_THROW(t.children(3), std::out_of_range);
    BOOST_CHECK_THROW(t.subtree(7), std::out_of_range);
    BOOST_CHECK_THROW(t.child_toward(0, 3), std::out_of_range);
}

// Every shape up to 40 brokers and radix 6 is a tree: each rank is its parent's child, one level
// deeper, and a subtree is the rank with its children's subtrees.
BOOST_AUTO_TEST_CASE(every_small_shape_is_a_consistent_tree) {
    for (Rank size = 1; size <= 40; ++size)
        for (Rank radix = 1; radix <= 6; ++radix) {
            const Topology t(size, radix);
            BOOST_TEST(t.subtree(0).size() == size);
            for (Rank r = 0; r < size; ++r) {
                Ranks expect{r};
                for (Rank c : t.children(r)) {
                    BOOST_TEST(*t.parent(c) == r);
                    BOOST_TEST(t.depth(c) == t.depth(r) + 1);
                    for (Rank d : t.subtree(c)) {
                        expect.push_back(d);
                        BOOST_TEST(*t.child_toward(r, d) == c);
                    }
                }
                std::sort(expect.begin(), expect.end());
                BOOST_TEST(t.subtree(r) == expect, boost::test_tools::per_element());
                BOOST_TEST(t.children(r).size() <= radix);
                BOOST_TEST(t.depth(r) <= t.height());
            }
        }
}
