#define BOOST_TEST_MODULE reader
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/protocol/events.hpp"
#include "actors/protocol/map.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/protocol/reader.hpp"

using namespace zpmix;
using msg::Reader;
using msg::ReadError;

namespace {

// A field of every kind a message may hold.
struct Every {
    bool flag = false;
    std::uint8_t u8 = 0;
    std::int8_t i8 = 0;
    std::uint16_t u16 = 0;
    std::int16_t i16 = 0;
    std::uint32_t u32 = 0;
    std::int32_t i32 = 0;
    std::uint64_t u64 = 0;
    std::int64_t i64 = 0;
    double d = 0;
    float f = 0;
    std::string s;
    msg::Blob blob;
    std::vector<std::uint8_t> bytes;
    std::vector<std::string> strings;
    std::vector<msg::Proc> procs;
    std::map<std::string, std::uint64_t> heads;
    std::map<std::uint64_t, std::string> names;
    std::set<std::uint32_t> ranks;
    std::vector<std::pair<std::string, std::uint32_t>> pairs;
    std::optional<int> maybe;
    std::optional<bool> unset;
    msg::Proc proc;
    bool operator==(const Every &) const = default;
    ZPMIX_MSG_MAP(flag, u8, i8, u16, i16, u32, i32, u64, i64, d, f, s, blob, bytes, strings, procs,
                  heads, names, ranks, pairs, maybe, unset, proc);
};

Every sample() {
    Every e;
    e.flag = true;
    e.u8 = 255;
    e.i8 = -128;
    e.u16 = 65535;
    e.i16 = -32768;
    e.u32 = 4294967295u;
    e.i32 = std::numeric_limits<std::int32_t>::min();
    e.u64 = std::numeric_limits<std::uint64_t>::max();
    e.i64 = std::numeric_limits<std::int64_t>::min();
    e.d = -1.5e300;
    e.f = 0.25f;
    e.s = std::string(300, 's');  // str16
    e.blob = msg::Blob{'\0', '\xff', 'x'};
    e.bytes = {0, 1, 254};
    e.strings = {"", "a", std::string(40, 'b')};
    e.procs = {{"ns", 0}, {"other", msg::kWildcardRank}};
    e.heads = {{"ev/g/j/", 7}, {"ev/n/x/j/", 1u << 20}};
    e.names = {{0, "zero"}, {1ull << 40, "big"}};
    e.ranks = {0, 3, 70000};
    e.pairs = {{"p", 1}, {"q", 2}};
    e.maybe = -3;
    e.proc = {"job", 12};
    return e;
}

template <class T>
std::string pack(const T &v) {
    msgpack::sbuffer buf;
    msgpack::pack(buf, v);
    return {buf.data(), buf.size()};
}

template <class T>
T read_all(const std::string &bytes, std::size_t max_elements = 1u << 20) {
    Reader r(bytes.data(), bytes.size(), max_elements);
    T v{};
    msg::read(r, v);
    if (!r.at_end()) throw ReadError("trailing bytes");
    return v;
}

}  // namespace

// The Reader and msgpack-c's object conversion agree on every field type, at the edges.
BOOST_AUTO_TEST_CASE(reads_what_msgpack_c_converts) {
    const Every e = sample();
    const std::string bytes = pack(e);
    const Every got = read_all<Every>(bytes);
    BOOST_TEST((got == e));
    const Every via_tree = msgpack::unpack(bytes.data(), bytes.size()).get().as<Every>();
    BOOST_TEST((via_tree == got));
}

BOOST_AUTO_TEST_CASE(an_event_round_trips) {
    msg::Event ev;
    ev.stream = "ev/n/job/j/";
    ev.seq = 42;
    ev.status = -7003;
    ev.source = {"job", 0};
    ev.range = 3;
    ev.custom_range = {{"job", 1}, {"job", 2}};
    ev.text = "hello";
    ev.timestamp = 1763800000;
    ev.info = msg::Blob{'\x90'};
    ev.retained = true;
    const auto got = read_all<msg::Event>(pack(ev));
    BOOST_TEST(got.stream == ev.stream);
    BOOST_TEST(got.seq == 42u);
    BOOST_TEST(got.status == -7003);
    BOOST_TEST((got.source == ev.source));
    BOOST_TEST((got.custom_range == ev.custom_range));
    BOOST_TEST(got.text == "hello");
    BOOST_TEST(got.timestamp == 1763800000);
    BOOST_TEST((got.info == ev.info));
    BOOST_TEST(got.retained);
}

// An integer is read whatever width it was packed in, if the field can hold its value.
BOOST_AUTO_TEST_CASE(integers_fit_or_are_refused) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_int64(5);  // 0xd3: five as a signed 64-bit number
    const std::string five(buf.data(), buf.size());
    BOOST_TEST(read_all<std::uint8_t>(five) == 5u);
    BOOST_TEST(read_all<double>(five) == 5.0);
    BOOST_CHECK_THROW(read_all<std::uint8_t>(pack(300)), ReadError);
    BOOST_CHECK_THROW(read_all<std::int8_t>(pack(-129)), ReadError);
    BOOST_CHECK_THROW(read_all<std::uint32_t>(pack(-1)), ReadError);
    BOOST_CHECK_THROW(read_all<std::int64_t>(pack(std::numeric_limits<std::uint64_t>::max())),
                      ReadError);
    BOOST_TEST(read_all<std::int64_t>(pack(std::numeric_limits<std::int64_t>::max())) ==
               std::numeric_limits<std::int64_t>::max());
}

BOOST_AUTO_TEST_CASE(mistyped_values_are_errors) {
    BOOST_CHECK_THROW(read_all<std::uint32_t>(pack(std::string("7"))), ReadError);
    BOOST_CHECK_THROW(read_all<bool>(pack(1)), ReadError);
    BOOST_CHECK_THROW(read_all<std::string>(pack(1)), ReadError);
    BOOST_CHECK_THROW(read_all<std::vector<int>>(pack(std::map<int, int>{{1, 2}})), ReadError);
    BOOST_CHECK_THROW(read_all<msg::Proc>(pack(std::vector<int>{1})), ReadError);
    BOOST_CHECK_THROW(read_all<Every>(pack(std::map<std::string, std::string>{{"u32", "x"}})),
                      ReadError);
    using Pair = std::pair<int, int>;
    BOOST_CHECK_THROW(read_all<Pair>(pack(std::vector<int>{1, 2, 3})), ReadError);
}

// Cut anywhere, a message is an error, never a read past its end (ASan runs this too).
BOOST_AUTO_TEST_CASE(every_truncation_is_an_error) {
    const std::string bytes = pack(sample());
    for (std::size_t n = 0; n < bytes.size(); ++n)
        BOOST_CHECK_THROW(read_all<Every>(bytes.substr(0, n)), ReadError);
}

// A newer peer's fields, of any shape, are stepped over; the known ones around them are read.
BOOST_AUTO_TEST_CASE(unknown_fields_of_any_shape_are_stepped_over) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_map(9);
    pk.pack("nested"), pk.pack(std::map<std::string, std::vector<double>>{{"x", {1.5, 2.5}}});
    pk.pack("u32"), pk.pack(17);
    pk.pack("ext1"), pk.pack_ext(1, 9), pk.pack_ext_body("x", 1);
    pk.pack("ext3"), pk.pack_ext(3, 9), pk.pack_ext_body("xyz", 3);
    pk.pack("ext16"), pk.pack_ext(16, 9), pk.pack_ext_body("0123456789abcdef", 16);
    pk.pack("bin"), pk.pack_bin(2), pk.pack_bin_body("\x01\x02", 2);
    pk.pack("f32"), pk.pack_float(1.0f);
    pk.pack("nil"), pk.pack_nil();
    pk.pack("s"), pk.pack("kept");
    const Every got = read_all<Every>({buf.data(), buf.size()});
    BOOST_TEST(got.u32 == 17u);
    BOOST_TEST(got.s == "kept");
    BOOST_TEST(got.i64 == 0);  // absent: the default
}

// A container may claim no more elements than the bytes left, nor than the limit: refused before
// anything is reserved for it.
BOOST_AUTO_TEST_CASE(hostile_counts_are_refused) {
    const std::string array32 = {'\xdd', '\xff', '\xff', '\xff', '\xff', '\xc0'};
    BOOST_CHECK_THROW(read_all<std::vector<msg::Proc>>(array32), ReadError);
    const std::string map32 = {'\xdf', '\x7f', '\xff', '\xff', '\xff'};
    BOOST_CHECK_THROW(read_all<msg::Proc>(map32), ReadError);
    const std::string str32 = {'\xdb', '\x7f', '\xff', '\xff', '\xff', 'a'};
    BOOST_CHECK_THROW(read_all<std::string>(str32), ReadError);
    const std::string ten = pack(std::vector<int>(10, 1));
    BOOST_TEST(read_all<std::vector<int>>(ten, 10).size() == 10u);
    BOOST_CHECK_THROW(read_all<std::vector<int>>(ten, 9), ReadError);
}

BOOST_AUTO_TEST_CASE(deep_unknown_values_are_refused) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_map(1);
    pk.pack("deep");
    for (int i = 0; i < 40; ++i) pk.pack_array(1);
    pk.pack_nil();
    BOOST_CHECK_THROW(read_all<Every>({buf.data(), buf.size()}), ReadError);
    BOOST_CHECK_THROW(read_all<Every>(std::string(1, '\xc1')), ReadError);  // reserved byte
}
