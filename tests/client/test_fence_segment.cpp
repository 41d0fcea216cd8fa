#define BOOST_TEST_MODULE fence_segment
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <pmix.h>

#include "actors/protocol/shm/fence_board.hpp"
#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/runtime/envelope.hpp"
#include "client/node_fence.hpp"
#include "client/session.hpp"
#include "client/store.hpp"
#include "client/values/value_codec.hpp"
#include "support/process.hpp"

// Fence segments: the broker's writer, the client's reader and the client store's lazy decoding,
// in one process. Bad segments must give a status, never a crash.
using namespace zpmix;
using namespace zpmix::client;
namespace fs = std::filesystem;

namespace {

using test::TempDir;  // support/process.hpp

// A card of `size` bytes, different for every (rank, size).
std::string card(std::uint32_t rank, std::size_t size) {
    std::string s(size, '\0');
    for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + (rank * 7 + i) % 26);
    return s;
}

// A blob as the C binding commits it: key -> byte object.
msg::Blob blob(const std::map<std::string, std::string> &values) {
    msgpack::sbuffer buf;
    c::Packer pk(buf);
    pk.pack_map(static_cast<std::uint32_t>(values.size()));
    for (const auto &[k, v] : values) {
        pk.pack(k);
        pmix_value_t val;
        PMIX_VALUE_CONSTRUCT(&val);
        val.type = PMIX_BYTE_OBJECT;
        val.data.bo.bytes = const_cast<char *>(v.data());
        val.data.bo.size = v.size();
        BOOST_REQUIRE(c::encode_value(pk, val) == PMIX_SUCCESS);
    }
    return msg::Blob(buf.data(), buf.data() + buf.size());
}

// Processes of two namespaces: each rank r of "a" with a local blob and a global one holding a
// card of sizes[r] bytes; "b.other" with one blob of unknown scope (as from an older peer).
std::vector<msg::ProcData> sample(const std::vector<std::size_t> &sizes) {
    std::vector<msg::ProcData> data;
    for (std::uint32_t r = 0; r < sizes.size(); ++r)
        data.push_back({{"a", r},
                        {blob({{"local", "L" + std::to_string(r)}}),
                         blob({{"card", card(r, sizes[r])}, {"g", "G"}})},
                        {PMIX_LOCAL, PMIX_GLOBAL}});
    data.push_back({{"b.other", 5}, {blob({{"card", "b5"}})}, {}});
    return data;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The status a malformed segment gives, or PMIX_SUCCESS when it parses.
std::int32_t parse_status(std::string bytes) {
    try {
        FenceSegment::parse(std::move(bytes));
        return PMIX_SUCCESS;
    } catch (const SegmentError &e) {
        return e.status;
    }
}

// A byte object value from the store, as a string ("" when absent).
std::string get_bytes(ClientStore &store, const std::string &ns, std::uint32_t rank,
                      const std::string &key, pmix_status_t *status = nullptr) {
    pmix_value_t *v = nullptr;
    const pmix_status_t rc = store.get(ns, rank, key, &v);
    if (status) *status = rc;
    if (rc != PMIX_SUCCESS) return {};
    std::string out = v->type == PMIX_BYTE_OBJECT ? std::string(v->data.bo.bytes, v->data.bo.size)
                                                  : std::string("<type>");
    PMIX_VALUE_RELEASE(v);
    return out;
}

msg::JobInfo job(const std::string &ns, std::uint32_t size) {
    msg::JobInfo j;
    j.nspace = ns;
    j.size = size;
    j.procs.resize(size);
    for (std::uint32_t r = 0; r < size; ++r) j.procs[r].rank = r;
    return j;
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_process_is_found_without_decoding_the_others) {
    TempDir tmp;
    const std::string path = tmp.path + "/fence.1";
    const std::vector<std::size_t> sizes = {64, 4096, 5u << 20};
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(sample(sizes)).write(path), "");
    BOOST_TEST(((fs::status(path).permissions() & fs::perms::owner_write) == fs::perms::none));
    auto seg = FenceSegment::open(path);
    BOOST_REQUIRE_EQUAL(seg->entries().size(), 4u);
    for (const auto &e : seg->entries()) {
        // Each proc's data is an array of [scope, blob]: its blobs as committed.
        auto h = unpack_bounded(e.data.data(), e.data.size());
        BOOST_REQUIRE(h.get().type == msgpack::type::ARRAY);
        std::vector<int> scopes;
        std::map<std::string, std::string> got;
        for (const auto &b : h.get().via.array) {
            BOOST_REQUIRE(b.type == msgpack::type::ARRAY);
            BOOST_REQUIRE(b.via.array.size == 2u);
            scopes.push_back(b.via.array.ptr[0].as<int>());
            for (const auto &kv : b.via.array.ptr[1].via.map) {
                pmix_value_t v;
                BOOST_REQUIRE(c::decode_value(kv.val, &v) == PMIX_SUCCESS);
                got[kv.key.as<std::string>()] = std::string(v.data.bo.bytes, v.data.bo.size);
                PMIx_Value_destruct(&v);
            }
        }
        if (e.nspace == "b.other") {
            BOOST_TEST(e.rank == 5u);
            BOOST_TEST((scopes == std::vector<int>{0}));
            BOOST_TEST((got == std::map<std::string, std::string>{{"card", "b5"}}));
            continue;
        }
        BOOST_REQUIRE(e.nspace == "a");
        BOOST_REQUIRE(e.rank < sizes.size());
        BOOST_TEST((scopes == std::vector<int>{PMIX_LOCAL, PMIX_GLOBAL}));
        BOOST_TEST(got.size() == 3u);
        BOOST_TEST(got["local"] == "L" + std::to_string(e.rank));
        BOOST_TEST(got["g"] == "G");
        BOOST_TEST((got["card"] == card(e.rank, sizes[e.rank])));
    }
    // The mapping outlives the file: a participant mapped it, the broker may remove it.
    fs::remove(path);
    BOOST_TEST(seg->entries()[2].data.size() > (5u << 20));
}

BOOST_AUTO_TEST_CASE(a_missing_segment_is_not_found) {
    TempDir tmp;
    try {
        FenceSegment::open(tmp.path + "/fence.404");
        BOOST_FAIL("opened a segment that does not exist");
    } catch (const SegmentError &e) {
        BOOST_TEST(e.status == PMIX_ERR_NOT_FOUND);
        BOOST_TEST(std::string(e.what()).find("fence.404") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(truncated_or_malformed_segments_are_refused) {
    TempDir tmp;
    const std::string path = tmp.path + "/fence.1";
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(sample({64, 300})).write(path), "");
    const std::string good = read_file(path);
    BOOST_REQUIRE(parse_status(good) == PMIX_SUCCESS);
    const auto same = FenceSegmentWriter(sample({64, 300})).bytes();
    BOOST_TEST((std::string(same.begin(), same.end()) == good));  // file and bytes alike

    // Every truncation.
    for (std::size_t n = 0; n < good.size(); ++n)
        BOOST_TEST(parse_status(good.substr(0, n)) == PMIX_ERR_UNPACK_FAILURE, "cut at " << n);
    // A truncated file, through open().
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(path, good.size() / 2);
    try {
        FenceSegment::open(path);
        BOOST_FAIL("opened a truncated segment");
    } catch (const SegmentError &e) {
        BOOST_TEST(e.status == PMIX_ERR_UNPACK_FAILURE);
    }
    // An empty file.
    fs::resize_file(path, 0);
    BOOST_CHECK_THROW(FenceSegment::open(path), SegmentError);

    auto patched = [&](std::size_t at, const void *bytes, std::size_t n) {
        std::string s = good;
        std::memcpy(&s[at], bytes, n);
        return s;
    };
    const std::uint32_t two = 2, huge = 0xfffffff0u, none = 7;
    const std::uint64_t far = good.size() + 1;
    BOOST_TEST(parse_status(patched(0, "NOTASEGM", 8)) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(parse_status(patched(8, &two, 4)) == PMIX_ERR_UNPACK_FAILURE);    // version
    BOOST_TEST(parse_status(patched(12, &huge, 4)) == PMIX_ERR_UNPACK_FAILURE);  // namespaces
    BOOST_TEST(parse_status(patched(16, &huge, 4)) == PMIX_ERR_UNPACK_FAILURE);  // procs
    BOOST_TEST(parse_status(patched(24, &far, 8)) == PMIX_ERR_UNPACK_FAILURE);   // size
    BOOST_TEST(parse_status(patched(32, &huge, 4)) == PMIX_ERR_UNPACK_FAILURE);  // a name
    // Two namespaces, so the index starts at 48: a proc's namespace, then its data's offset.
    BOOST_TEST(parse_status(patched(48, &none, 4)) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(parse_status(patched(56, &far, 8)) == PMIX_ERR_UNPACK_FAILURE);
    const std::uint64_t zero = 0, past = good.size();
    BOOST_TEST(parse_status(patched(64, &zero, 8)) == PMIX_ERR_UNPACK_FAILURE);  // no data
    BOOST_TEST(parse_status(patched(64, &past, 8)) == PMIX_ERR_UNPACK_FAILURE);  // past the end
}

BOOST_AUTO_TEST_CASE(random_corruption_gives_a_status_never_a_crash) {
    TempDir tmp;
    const std::string path = tmp.path + "/fence.1";
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(sample({64, 200, 17})).write(path), "");
    const std::string good = read_file(path);
    std::mt19937 rng(12345);
    int parsed = 0, refused = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string s = good;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int i = 0; i < flips; ++i) s[rng() % s.size()] = static_cast<char>(rng());
        std::shared_ptr<const FenceSegment> seg;
        try {
            seg = FenceSegment::parse(std::move(s));
        } catch (const SegmentError &e) {
            BOOST_REQUIRE(e.status == PMIX_ERR_UNPACK_FAILURE);
            ++refused;
            continue;
        }
        ++parsed;
        // What parses is read through the store: every Get answers, some with an error.
        ClientStore store;
        store.set_job(job("a", 3), 0);
        store.add_segment(seg);
        for (const auto &e : seg->entries()) {
            pmix_status_t rc;
            (void)get_bytes(store, std::string(e.nspace), e.rank, "card", &rc);
            BOOST_REQUIRE(rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND ||
                          rc == PMIX_ERR_UNPACK_FAILURE);
        }
    }
    BOOST_TEST(parsed > 0);
    BOOST_TEST(refused > 0);
}

BOOST_AUTO_TEST_CASE(the_store_decodes_a_participant_on_its_first_get) {
    TempDir tmp;
    ClientStore store;
    store.set_job(job("a", 3), 0);
    pmix_value_t mine;
    PMIX_VALUE_CONSTRUCT(&mine);
    mine.type = PMIX_BYTE_OBJECT;
    mine.data.bo.bytes = const_cast<char *>("own");
    mine.data.bo.size = 3;
    BOOST_REQUIRE(store.put(PMIX_GLOBAL, "card", &mine) == PMIX_SUCCESS);

    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(sample({64, 4096, 100})).write(tmp.path + "/fence.1"),
                        "");
    store.add_segment(FenceSegment::open(tmp.path + "/fence.1"));
    fs::remove(tmp.path + "/fence.1");  // mapped: the store needs no file
    BOOST_TEST(get_bytes(store, "a", 1, "card") == card(1, 4096));
    BOOST_TEST(get_bytes(store, "a", 1, "card") == card(1, 4096));  // cached now
    // Each value keeps the scope it was put with, for PMIX_DATA_SCOPE (decoded on first read).
    pmix_value_t *v = nullptr;
    BOOST_TEST(store.get_scoped("a", 2, "local", PMIX_LOCAL, &v) == PMIX_SUCCESS);
    if (v) PMIX_VALUE_RELEASE(v);
    v = nullptr;
    BOOST_TEST(store.get_scoped("a", 2, "card", PMIX_GLOBAL, &v) == PMIX_SUCCESS);
    if (v) PMIX_VALUE_RELEASE(v);
    BOOST_TEST(store.get_scoped("a", 2, "card", PMIX_LOCAL, &v) == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(get_bytes(store, "a", 2, "local") == "L2");
    BOOST_TEST(get_bytes(store, "b.other", 5, "card") == "b5");
    BOOST_TEST(get_bytes(store, "a", 0, "card") == "own");  // own data is never replaced
    pmix_status_t rc;
    get_bytes(store, "a", 1, "no.such.key", &rc);
    BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);

    // A later segment supersedes an unread snapshot; what was read stays until replaced.
    auto again = sample({10, 20, 30});
    again[2].blobs = {blob({{"card", "newer"}})};
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(again).write(tmp.path + "/fence.2"), "");
    store.add_segment(FenceSegment::open(tmp.path + "/fence.2"));
    BOOST_TEST(get_bytes(store, "a", 2, "card") == "newer");
    BOOST_TEST(get_bytes(store, "a", 2, "local") == "L2");  // read from the first segment
    BOOST_TEST(get_bytes(store, "a", 1, "card") == card(1, 20));

    // Anything written later for a process wins over its unread snapshot.
    // (From memory: the same segment, sent inline.)
    const auto bytes = FenceSegmentWriter(sample({1, 2, 3})).bytes();
    store.add_segment(FenceSegment::parse({bytes.data(), bytes.size()}));
    pmix_value_t later;
    PMIX_VALUE_CONSTRUCT(&later);
    later.type = PMIX_BYTE_OBJECT;
    later.data.bo.bytes = const_cast<char *>("internal");
    later.data.bo.size = 8;
    BOOST_REQUIRE(store.store("a", 1, "card", &later) == PMIX_SUCCESS);
    BOOST_TEST(get_bytes(store, "a", 1, "card") == "internal");
    BOOST_REQUIRE(store.add(msg::ProcData{{"a", 2}, {blob({{"card", "modex"}})}, {PMIX_GLOBAL}}) ==
                  PMIX_SUCCESS);
    BOOST_TEST(get_bytes(store, "a", 2, "card") == "modex");
    BOOST_TEST(get_bytes(store, "a", 2, "g") == "G");  // the snapshot was read first
}

// Cards on a job's fence board: read off the board on the first Get of their owner, its latest
// card then; a card that grew too big for the board leaves the Get to the broker; a malformed
// one fails only its owner's Gets.
BOOST_AUTO_TEST_CASE(the_store_reads_a_card_off_the_fence_board_on_its_first_get) {
    TempDir tmp;
    const std::string path = tmp.path + "/fence-board";
    BOOST_REQUIRE_EQUAL(FenceBoard::create(path, 4), "");
    std::string error;
    std::shared_ptr<FenceBoard> board = FenceBoard::open(path, error);
    BOOST_REQUIRE(board);
    // An entry as NodeFence posts it: [[PMIX_GLOBAL, blob]].
    auto post = [&](std::uint32_t rank, std::uint32_t commits, const msg::Blob &b) {
        const char head[3] = {'\x91', '\x92', static_cast<char>(PMIX_GLOBAL)};
        board->post_card(rank, commits, {{head, 3}, {b.data(), b.size()}});
    };
    post(1, 1, blob({{"card", "one"}}));
    post(2, 1, blob({{"card", "two"}}));
    post(3, 1, blob({{"card", "three"}}));
    ClientStore store;
    store.set_job(job("a", 4), 0);
    store.add_cards(board, {1, 2, 3});
    post(2, 2, blob({{"card", "two, later"}}));  // before the first Get of rank 2
    BOOST_TEST(get_bytes(store, "a", 1, "card") == "one");
    BOOST_TEST(get_bytes(store, "a", 2, "card") == "two, later");
    post(1, 2, blob({{"card", "one, later"}}));  // after: the store keeps what it read
    BOOST_TEST(get_bytes(store, "a", 1, "card") == "one");
    post(3, 2, msg::Blob(FenceBoard::kCardMax + 1, 'x'));
    pmix_status_t rc;
    get_bytes(store, "a", 3, "card", &rc);
    BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);  // the Get then asks the broker
    const char junk[2] = {'\x93', '\x01'};
    board->post_card(1, 3, {{junk, 2}});
    store.add_cards(board, {1});
    get_bytes(store, "a", 1, "other", &rc);
    BOOST_TEST(rc == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(get_bytes(store, "a", 1, "card") == "one");  // what was read before stays
    BOOST_TEST(get_bytes(store, "a", 2, "card") == "two, later");
}

// A direct-modex Get that missed after a data-less fence: NodeFence hands the owner's card on the
// board to the store first (its latest card, read again on a later miss); a rank with no card or
// with one too big for the board, the caller itself and a rank outside the job are left to the
// broker.
BOOST_AUTO_TEST_CASE(a_get_that_missed_reads_the_owners_card_off_the_board_first) {
    TempDir tmp;
    const std::string path = tmp.path + "/fence-board";
    BOOST_REQUIRE_EQUAL(FenceBoard::create(path, 4), "");
    std::string error;
    std::unique_ptr<FenceBoard> owned = FenceBoard::open(path, error);
    BOOST_REQUIRE(owned);
    FenceBoard *board = owned.get();
    auto post = [&](std::uint32_t rank, std::uint32_t commits, const msg::Blob &b) {
        const char head[3] = {'\x91', '\x92', static_cast<char>(PMIX_GLOBAL)};
        board->post_card(rank, commits, {{head, 3}, {b.data(), b.size()}});
    };
    ClientStore store;
    store.set_job(job("a", 4), 0);
    Session singleton(store);
    NodeFence fence(std::move(owned), singleton, store, {"a", 0});
    post(1, 1, blob({{"card", "one"}}));
    post(3, 1, msg::Blob(FenceBoard::kCardMax + 1, 'x'));
    pmix_status_t rc;
    get_bytes(store, "a", 1, "card", &rc);
    BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);  // no fence said the card is there
    BOOST_TEST(fence.offer_card(1));
    BOOST_TEST(get_bytes(store, "a", 1, "card") == "one");
    BOOST_TEST(!fence.offer_card(0));
    BOOST_TEST(!fence.offer_card(2));
    BOOST_TEST(!fence.offer_card(3));
    BOOST_TEST(!fence.offer_card(4));
    post(1, 2, blob({{"card", "one"}, {"new", "later"}}));
    get_bytes(store, "a", 1, "new", &rc);
    BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);
    BOOST_TEST(fence.offer_card(1));
    BOOST_TEST(get_bytes(store, "a", 1, "new") == "later");
}

BOOST_AUTO_TEST_CASE(a_malformed_participant_fails_only_its_own_gets) {
    TempDir tmp;
    auto data = sample({64, 64, 64});
    // The writer copies blobs without decoding them: a map that says two entries and holds one,
    // and a blob that is not a map at all.
    msg::Blob lying = blob({{"card", "x"}});
    lying[0] = static_cast<char>(0x82);
    data[1].blobs = {lying};
    data[2].blobs = {msg::Blob{'\x93', '\x01'}};
    BOOST_REQUIRE_EQUAL(FenceSegmentWriter(data).write(tmp.path + "/fence.1"), "");
    ClientStore store;
    store.set_job(job("a", 3), 0);
    store.add_segment(FenceSegment::open(tmp.path + "/fence.1"));
    pmix_status_t rc;
    get_bytes(store, "a", 1, "card", &rc);
    BOOST_TEST(rc == PMIX_ERR_UNPACK_FAILURE);
    get_bytes(store, "a", 2, "card", &rc);
    BOOST_TEST(rc == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(get_bytes(store, "b.other", 5, "card") == "b5");
    // Once read, a malformed snapshot is gone: the next Get is an ordinary miss.
    get_bytes(store, "a", 1, "card", &rc);
    BOOST_TEST(rc == PMIX_ERR_NOT_FOUND);
}
