#define BOOST_TEST_MODULE envelope
#include <boost/test/unit_test.hpp>

#include "actors/protocol/map.hpp"
#include "actors/protocol/modex.hpp"
#include "actors/runtime/envelope.hpp"

using namespace zpmix;

namespace {
struct Sample {
    static constexpr const char *type = "sample";
    std::string name;
    std::uint32_t count = 7;
    std::vector<std::string> tags;
    ZPMIX_MSG_MAP(name, count, tags);
};
struct SampleV2 {  // a newer peer's version: one more field
    static constexpr const char *type = "sample";
    std::string name;
    std::uint32_t count = 0;
    std::vector<std::string> tags;
    double extra = 0;
    ZPMIX_MSG_MAP(name, count, tags, extra);
};
struct NameOnly {
    std::string name;
    ZPMIX_MSG_MAP(name);
};

std::string pack(auto &&...items) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    (pk.pack(items), ...);
    return {buf.data(), buf.size()};
}
}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_keeps_every_field) {
    auto msg = encode("sample", 42, Sample{"x", 3, {"a", "b"}}, "sender");
    Envelope env = decode(msg);
    BOOST_TEST(env.version == kProtocolVersion);
    BOOST_TEST(env.type == "sample");
    BOOST_TEST(env.id == 42u);
    BOOST_TEST(env.from == "sender");
    auto s = env.as<Sample>();
    BOOST_TEST(s.name == "x");
    BOOST_TEST(s.count == 3u);
    BOOST_TEST(s.tags.size() == 2u);
}

BOOST_AUTO_TEST_CASE(newer_fields_are_ignored_and_absent_ones_defaulted) {
    auto newer = decode(encode("sample", 1, SampleV2{"n", 9, {}, 2.5}));
    BOOST_TEST(newer.as<Sample>().count == 9u);
    auto older = decode(encode("sample", 1, NameOnly{"old"}));
    auto s = older.as<Sample>();
    BOOST_TEST(s.name == "old");
    BOOST_TEST(s.count == 7u);  // the struct's default
}

BOOST_AUTO_TEST_CASE(unknown_envelope_keys_are_ignored) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_map(4);
    pk.pack("v"), pk.pack(1), pk.pack("t"), pk.pack("ping");
    pk.pack("future"), pk.pack("whatever"), pk.pack("id"), pk.pack(5);
    auto env = decode(buf.data(), buf.size());
    BOOST_TEST(env.type == "ping");
    BOOST_TEST(env.id == 5u);
    BOOST_TEST(env.body.empty());
}

BOOST_AUTO_TEST_CASE(wrong_body_type_is_a_decode_error) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_map(3);
    pk.pack("v"), pk.pack(1), pk.pack("t"), pk.pack("sample"), pk.pack("body");
    pk.pack_map(1), pk.pack("count"), pk.pack("not a number");
    auto env = decode(buf.data(), buf.size());
    BOOST_CHECK_THROW(env.as<Sample>(), DecodeError);
}

BOOST_AUTO_TEST_CASE(malformed_messages_are_rejected) {
    BOOST_CHECK_THROW(decode("", 0), DecodeError);
    BOOST_CHECK_THROW(decode("\xc1", 1), DecodeError);  // reserved byte
    const std::string not_map = pack(42);
    BOOST_CHECK_THROW(decode(not_map.data(), not_map.size()), DecodeError);
    const std::string no_type = pack(std::map<std::string, int>{{"v", 1}});
    BOOST_CHECK_THROW(decode(no_type.data(), no_type.size()), DecodeError);
    const std::string no_version = pack(std::map<std::string, std::string>{{"t", "x"}});
    BOOST_CHECK_THROW(decode(no_version.data(), no_version.size()), DecodeError);
}

// The body is checked as it is read: a cut or padded one is refused by decode() or by as<T>().
BOOST_AUTO_TEST_CASE(malformed_bodies_are_refused_when_read) {
    auto good = encode("sample", 1, Sample{"name", 1, {"a", "b"}});
    const std::string bytes(static_cast<const char *>(good.data()), good.size());
    const auto refused = [](const std::string &b) {
        try {
            decode(b.data(), b.size()).as<Sample>();
        } catch (const DecodeError &) {
            return true;
        }
        return false;
    };
    for (std::size_t n = 0; n < bytes.size(); ++n) BOOST_TEST(refused(bytes.substr(0, n)));
    BOOST_TEST(refused(bytes + '\x01'));
    BOOST_TEST(!refused(bytes));
}

// Another peer may pack the body anywhere in the envelope.
BOOST_AUTO_TEST_CASE(a_body_before_other_fields_is_found) {
    msgpack::sbuffer buf;
    msgpack::packer pk(buf);
    pk.pack_map(4);
    pk.pack("body"), pk.pack(Sample{"first", 2, {}});
    pk.pack("v"), pk.pack(1), pk.pack("t"), pk.pack("sample"), pk.pack("id"), pk.pack(9);
    auto env = decode(buf.data(), buf.size());
    BOOST_TEST(env.id == 9u);
    BOOST_TEST(env.as<Sample>().name == "first");
    std::string padded(buf.data(), buf.size());
    padded += '\x01';
    BOOST_CHECK_THROW(decode(padded.data(), padded.size()), DecodeError);
}

// Decoded by copy, the body no longer needs the bytes it came from.
BOOST_AUTO_TEST_CASE(decoding_copies_the_body) {
    auto bytes = std::make_unique<std::string>([] {
        auto m = encode("sample", 1, Sample{std::string(100, 'c'), 5, {}});
        return std::string(static_cast<const char *>(m.data()), m.size());
    }());
    Envelope env = decode(bytes->data(), bytes->size());
    BOOST_TEST(
        (env.body.data() < bytes->data() || env.body.data() >= bytes->data() + bytes->size()));
    bytes.reset();
    BOOST_TEST(env.as<Sample>().name == std::string(100, 'c'));
}

BOOST_AUTO_TEST_CASE(hostile_headers_cannot_force_allocations) {
    // 5 bytes that claim 4 billion elements: refused before anything is allocated for them.
    const char array32[] = {'\xdd', '\xff', '\xff', '\xff', '\xff'};
    BOOST_CHECK_THROW(decode(array32, sizeof array32), DecodeError);
    const char map32[] = {'\xdf', '\xff', '\xff', '\xff', '\xff'};
    BOOST_CHECK_THROW(decode(map32, sizeof map32), DecodeError);
    const char str32[] = {'\xdb', '\xff', '\xff', '\xff', '\xff'};
    BOOST_CHECK_THROW(decode(str32, sizeof str32), DecodeError);
    const char bin32[] = {'\xc6', '\x7f', '\xff', '\xff', '\xff'};
    BOOST_CHECK_THROW(decode(bin32, sizeof bin32), DecodeError);
    // Deep nesting beyond the limit.
    std::string deep(100, '\x91');
    deep += '\xc0';
    BOOST_CHECK_THROW(decode(deep.data(), deep.size()), DecodeError);
}

BOOST_AUTO_TEST_CASE(oversized_messages_are_rejected) {
    DecodeLimits small;
    small.max_message = 64;
    auto big = encode("sample", 1, Sample{std::string(100, 'x'), 1, {}});
    BOOST_CHECK_THROW(decode(big, small), DecodeError);
    BOOST_CHECK_NO_THROW(decode(big));
}

// A mailbox message is decoded in place: the body's strings point into the message, which the
// envelope keeps alive after everyone else has let it go.
BOOST_AUTO_TEST_CASE(decoding_in_place_borrows_and_keeps_the_message) {
    const std::string long_name(1000, 'n');
    auto msg = std::make_shared<zmq::message_t>(encode("sample", 1, Sample{long_name, 3, {"t"}}));
    const char *begin = static_cast<const char *>(msg->data());
    const char *end = begin + msg->size();
    Envelope env = decode_in_place(std::move(msg));
    BOOST_TEST(!msg);
    BOOST_TEST((env.body.data() >= begin && env.body.data() + env.body.size() <= end));
    const auto s = env.as<Sample>();
    BOOST_TEST(s.name == long_name);
    BOOST_TEST(s.tags == std::vector<std::string>{"t"});
}

// Decoded borrowed, the body points into the caller's bytes; what as<T>() returns owns copies.
BOOST_AUTO_TEST_CASE(a_borrowed_decode_points_into_the_bytes_until_converted) {
    const std::string long_name(1000, 'n');
    auto bytes = std::make_unique<zmq::message_t>(encode("sample", 1, Sample{long_name, 3, {"t"}}));
    const char *begin = static_cast<const char *>(bytes->data());
    Envelope env = decode_borrowed(bytes->data(), bytes->size());
    BOOST_TEST((env.body.data() >= begin && env.body.data() < begin + bytes->size()));
    const auto s = env.as<Sample>();
    bytes.reset();
    BOOST_TEST(s.name == long_name);
    BOOST_TEST(s.tags == std::vector<std::string>{"t"});
}

// Decoded the usual way, the body owns copies: the bytes may go at once.
BOOST_AUTO_TEST_CASE(decoding_copies_unless_borrowing) {
    const std::string payload = pack(std::string(100, 'p'));
    auto copied = unpack_bounded(payload.data(), payload.size());
    auto borrowed = unpack_bounded(payload.data(), payload.size(), {}, true);
    const void *at = payload.data() + 2;  // after the str8 header
    BOOST_TEST(static_cast<const void *>(copied.get().via.str.ptr) != at);
    BOOST_TEST(static_cast<const void *>(borrowed.get().via.str.ptr) == at);
    BOOST_TEST(copied.get().as<std::string>() == borrowed.get().as<std::string>());
}

// A message that declares its payload size (payload_bytes) round-trips at any size.
BOOST_AUTO_TEST_CASE(declared_payloads_round_trip) {
    for (std::size_t n : {0u, 255u, 256u, 65536u, 1u << 20}) {
        msg::Commit c{{"ns", 1}, {}, {}, msg::Blob(n, 'x')};
        BOOST_TEST(msg::payload_bytes(c) >= n);
        auto got = decode(encode(msg::Commit::type, 2, c)).as<msg::Commit>();
        BOOST_TEST(got.global == c.global);
        BOOST_TEST(got.local.empty());
    }
}
