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

#include "actors/fence/fence_segment.hpp"
#include "actors/runtime/envelope.hpp"
#include "value_codec.hpp"

// Fence segments: the broker's writer and the client's reader, in one process. Bad segments must
// give a status, never a crash.
using namespace zpmix;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/zpmix-seg-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(path); }
};

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
        // What parses has every proc's data inside the segment's bytes.
        for (const auto &e : seg->entries()) BOOST_REQUIRE(!e.data.empty());
    }
    BOOST_TEST(parsed > 0);
    BOOST_TEST(refused > 0);
}
