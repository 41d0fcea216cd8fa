#define BOOST_TEST_MODULE client_fences
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <pmix_common.h>
#include <msgpack.hpp>

#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/protocol/shm/segment_arena.hpp"
#include "client/fences.hpp"
#include "client/store.hpp"
#include "support/process.hpp"

// ClientFences by itself: which request a FenceDone completes, and the done_through each
// contribution reports (the fences still open, the arena segments the store may still read).
using namespace zpmix;
using namespace zpmix::client;
namespace fs = std::filesystem;

namespace {

using test::TempDir;  // support/process.hpp

const std::vector<msg::Proc> kSet{{"a", 0}, {"a", 1}};

msg::FenceContribute contribution(std::uint64_t fence_id,
                                  const std::vector<msg::Proc> &participants = kSet) {
    msg::FenceContribute m;
    m.participants = participants;
    m.fence_id = fence_id;
    m.collect = true;
    m.proc = {"a", 0};
    m.done_through = 99;  // filled in by open()
    return m;
}

// Both participants' data: an empty blob each.
std::vector<msg::ProcData> data() {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer>(buf).pack_map(0);
    const msg::Blob empty(buf.data(), buf.data() + buf.size());
    return {{{"a", 0}, {empty}, {PMIX_GLOBAL}}, {{"a", 1}, {empty}, {PMIX_GLOBAL}}};
}

// FenceDone for `key`, its segment at a region of `arena`.
msg::FenceDone in_arena(const std::string &key, SegmentArena &arena, std::uint64_t fence_id) {
    const auto d = data();
    const FenceSegmentWriter segment(d);
    auto at = arena.place(fence_id, segment);
    BOOST_REQUIRE(at);
    msg::FenceDone done;
    done.key = key;
    done.arena = arena.path();
    done.arena_offset = *at;
    done.arena_length = segment.size();
    return done;
}

std::unique_ptr<SegmentArena> make_arena(const TempDir &tmp) {
    std::string error;
    auto arena = SegmentArena::create(tmp.path + "/arena.1", 1 << 20, error);
    BOOST_REQUIRE_MESSAGE(arena, error);
    return arena;
}

}  // namespace

BOOST_AUTO_TEST_CASE(done_through_is_the_lowest_fence_still_open_over_the_set) {
    ClientStore store;
    ClientFences fences(store);
    auto f0 = contribution(0), f1 = contribution(1);
    const std::string k0 = fences.open(f0, 1), k1 = fences.open(f1, 2);
    BOOST_TEST(k0 == msg::fence_key(kSet, 0));
    BOOST_TEST(f0.done_through == 0u);
    BOOST_TEST(f1.done_through == 0u);  // fence 0 is still open
    auto other = contribution(5, {{"a", msg::kWildcardRank}});
    fences.open(other, 3);
    BOOST_TEST(other.done_through == 5u);  // another set's fences do not count
    fences.close(k0);
    auto f2 = contribution(2);
    const std::string k2 = fences.open(f2, 4);
    BOOST_TEST(f2.done_through == 1u);
    fences.close(k1);
    fences.close(k2);
    auto f3 = contribution(3);
    fences.open(f3, 5);
    BOOST_TEST(f3.done_through == 3u);
}

BOOST_AUTO_TEST_CASE(a_fence_done_finds_its_request_while_the_fence_is_open) {
    ClientStore store;
    ClientFences fences(store);
    auto m = contribution(0);
    const std::string key = fences.open(m, 7);
    BOOST_TEST(fences.request(key) == 7u);
    BOOST_TEST(fences.request(msg::fence_key(kSet, 1)) == 0u);
    fences.close(key);
    BOOST_TEST(fences.request(key) == 0u);
    fences.close(key);  // closing twice changes nothing
    auto again = contribution(1);
    fences.open(again, 8);
    BOOST_TEST(again.done_through == 1u);
}

BOOST_AUTO_TEST_CASE(an_arena_segment_holds_its_fence_down_while_the_store_may_read_it) {
    TempDir tmp;
    auto arena = make_arena(tmp);
    ClientStore store;
    ClientFences fences(store);
    auto f0 = contribution(0);
    const std::string k0 = fences.open(f0, 1);
    auto done0 = in_arena(k0, *arena, 0);
    BOOST_TEST(fences.take(done0) == PMIX_SUCCESS);
    fences.close(k0);
    auto f1 = contribution(1);
    const std::string k1 = fences.open(f1, 2);
    BOOST_TEST(f1.done_through == 0u);  // the store has not read fence 0's data
    // Fence 1's data, inline, replaces fence 0's in the store: nothing reads fence 0's region.
    msg::FenceDone done1;
    done1.key = k1;
    const auto d = data();
    done1.segment_bytes = FenceSegmentWriter(d).bytes();
    BOOST_TEST(fences.take(done1) == PMIX_SUCCESS);
    fences.close(k1);
    auto f2 = contribution(2);
    fences.open(f2, 3);
    BOOST_TEST(f2.done_through == 2u);
}

BOOST_AUTO_TEST_CASE(a_fence_given_up_takes_no_arena_data) {
    TempDir tmp;
    auto arena = make_arena(tmp);
    ClientStore store;
    ClientFences fences(store);
    auto f0 = contribution(0);
    const std::string k0 = fences.open(f0, 1);
    auto done0 = in_arena(k0, *arena, 0);
    fences.close(k0);  // timed out before its FenceDone was read
    BOOST_TEST(fences.take(done0) == PMIX_ERR_TIMEOUT);
    auto f1 = contribution(1);
    fences.open(f1, 2);
    BOOST_TEST(f1.done_through == 1u);  // nothing holds fence 0's region
}

BOOST_AUTO_TEST_CASE(a_failed_fence_or_a_missing_segment_gives_its_status) {
    TempDir tmp;
    ClientStore store;
    ClientFences fences(store);
    auto f0 = contribution(0);
    const std::string k0 = fences.open(f0, 1);
    msg::FenceDone failed;
    failed.key = k0;
    failed.status = PMIX_ERR_PROC_TERM_WO_SYNC;
    BOOST_TEST(fences.take(failed) == PMIX_ERR_PROC_TERM_WO_SYNC);
    msg::FenceDone missing;
    missing.key = k0;
    missing.arena = tmp.path + "/arena.gone";
    missing.arena_length = 64;
    BOOST_TEST(fences.take(missing) == PMIX_ERR_NOT_FOUND);
    missing.arena.clear();
    missing.segment = tmp.path + "/fence.gone";
    BOOST_TEST(fences.take(missing) == PMIX_ERR_NOT_FOUND);
}
