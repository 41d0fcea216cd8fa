// Golden transcripts: the bytes of every message type as a release sends them
// (tests/compat/golden/<release>/<type>.msgpack, each one envelope), decoded by today's code, so
// that a change that breaks the wire fails here. Within a protocol version the wire only grows
// (docs/compatibility.md): a release's message must decode, and what today's code makes of it
// must say again everything the release said (each of its keys, with its value; today's may add
// keys). A renamed field loses its key, a retyped one fails to decode or changes its value, a
// removed message type is no longer in messages.hpp: each fails a test case.
//
// `test_compat_golden --write DIR` writes this release's transcripts into DIR (the samples: every
// field set to a value that is not its default, containers with one element).
#define BOOST_TEST_MODULE compat_golden
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/runtime/envelope.hpp"
#include "compat/messages.hpp"

namespace fs = std::filesystem;
using namespace zpmix;

namespace {

// ---- samples: every field set, so that each key and its type is in the transcript

template <class T>
concept Visitable = requires(T &t) {
    t.zpmix_visit_fields([](std::string_view, auto &) {});
};
template <class T>
concept Sequence = requires(T &t) {
    t.emplace_back();
    t.clear();
};
template <class T>
concept MapLike = requires(T &t) {
    typename T::key_type;
    typename T::mapped_type;
};
template <class T>
concept SetLike = requires(T &t) {
    typename T::key_type;
    t.insert(std::declval<typename T::key_type>());
}
&&!MapLike<T>;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};

template <class T>
void fill(T &v) {
    if constexpr (std::is_same_v<T, bool>) {
        v = true;
    } else if constexpr (std::is_enum_v<T>) {
        v = static_cast<T>(1);
    } else if constexpr (std::is_integral_v<T>) {
        v = 7;
    } else if constexpr (std::is_floating_point_v<T>) {
        v = 1.5;
    } else if constexpr (std::is_same_v<T, std::string>) {
        v = "golden";
    } else if constexpr (std::is_same_v<T, std::vector<char>>) {
        v = {'g', 'o'};
    } else if constexpr (is_optional<T>::value) {
        v.emplace();
        fill(*v);
    } else if constexpr (is_pair<T>::value) {
        fill(v.first);
        fill(v.second);
    } else if constexpr (Visitable<T>) {
        v.zpmix_visit_fields([](std::string_view, auto &field) { fill(field); });
    } else if constexpr (MapLike<T>) {
        typename T::key_type k{};
        typename T::mapped_type m{};
        fill(k);
        fill(m);
        v.emplace(std::move(k), std::move(m));
    } else if constexpr (SetLike<T>) {
        typename T::key_type k{};
        fill(k);
        v.insert(std::move(k));
    } else if constexpr (Sequence<T>) {
        v.clear();
        fill(v.emplace_back());
    }
    // Anything else (a type with a codec of its own) keeps its default.
}

template <class Msg>
Msg sample() {
    Msg m{};
    fill(m);
    return m;
}

constexpr std::uint64_t kId = 7;
constexpr std::string_view kFrom = "golden";

std::string bytes_of(const zmq::message_t &m) {
    return {static_cast<const char *>(m.data()), m.size()};
}

// ---- the check: today's reading of a release's message says all it said

// Whether `now` has every key of `then`, with a value that says the same, recursively; `where`
// names the first difference.
bool says_again(const msgpack::object &then, const msgpack::object &now, std::string &where) {
    if (then.type == msgpack::type::MAP) {
        if (now.type != msgpack::type::MAP) return where = "a map became another type", false;
        for (std::uint32_t i = 0; i < then.via.map.size; ++i) {
            const auto &kv = then.via.map.ptr[i];
            const msgpack::object *found = nullptr;
            for (std::uint32_t j = 0; j < now.via.map.size && !found; ++j)
                if (now.via.map.ptr[j].key == kv.key) found = &now.via.map.ptr[j].val;
            std::string key;
            if (kv.key.type == msgpack::type::STR) key = kv.key.as<std::string>();
            if (!found) return where = "key '" + key + "' is gone (renamed or removed?)", false;
            if (!says_again(kv.val, *found, where)) return where = key + "." + where, false;
        }
        return true;
    }
    if (then.type == msgpack::type::ARRAY) {
        if (now.type != msgpack::type::ARRAY || now.via.array.size != then.via.array.size)
            return where = "an array changed", false;
        for (std::uint32_t i = 0; i < then.via.array.size; ++i)
            if (!says_again(then.via.array.ptr[i], now.via.array.ptr[i], where))
                return where = "[" + std::to_string(i) + "]." + where, false;
        return true;
    }
    if (!(then == now)) return where = "a value changed (retyped?)", false;
    return true;
}

struct Codec {
    std::string (*write)();
    // Empty when today's code reads `bytes` as the release meant them; else what differs.
    std::string (*check)(const std::string &bytes);
};

template <class Msg>
std::string write_sample() {
    return bytes_of(encode(Msg::type, kId, sample<Msg>(), kFrom));
}

template <class Msg>
std::string check_transcript(const std::string &bytes) {
    Envelope env;
    Msg m;
    try {
        env = decode(bytes.data(), bytes.size());
        m = env.as<Msg>();
    } catch (const std::exception &e) {
        return std::string("does not decode: ") + e.what();
    }
    if (env.version != kProtocolVersion)
        return "of protocol version " + std::to_string(env.version);
    if (env.type != Msg::type || env.id != kId || env.from != kFrom)
        return "the envelope's header reads otherwise";
    const std::string again = bytes_of(encode(Msg::type, kId, m, kFrom));
    const Envelope then_env = decode(bytes.data(), bytes.size());
    const Envelope now_env = decode(again.data(), again.size());
    const auto then = msgpack::unpack(then_env.body.data(), then_env.body.size());
    const auto now = msgpack::unpack(now_env.body.data(), now_env.body.size());
    std::string where;
    if (!says_again(then.get(), now.get(), where)) return where;
    return {};
}

const std::map<std::string, Codec> &codecs() {
    static const std::map<std::string, Codec> all = [] {
        std::map<std::string, Codec> m;
#define ZPMIX_GOLDEN_CODEC(S) \
    m.emplace(msg::S::type, Codec{&write_sample<msg::S>, &check_transcript<msg::S>});
        ZPMIX_GOLDEN_MESSAGES(ZPMIX_GOLDEN_CODEC)
#undef ZPMIX_GOLDEN_CODEC
        return m;
    }();
    return all;
}

const fs::path kGolden = fs::path(ZPMIX_SOURCE_DIR) / "tests/compat/golden";
constexpr std::string_view kSuffix = ".msgpack";

std::string read_all(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

int write_transcripts(const fs::path &dir) {
    fs::create_directories(dir);
    for (const auto &[type, codec] : codecs()) {
        std::ofstream out(dir / (type + std::string(kSuffix)), std::ios::binary | std::ios::trunc);
        const std::string b = codec.write();
        out.write(b.data(), static_cast<std::streamsize>(b.size()));
        if (!out) {
            std::fprintf(stderr, "cannot write %s\n", (dir / type).c_str());
            return 1;
        }
    }
    std::printf("wrote %zu transcripts into %s\n", codecs().size(), dir.c_str());
    return 0;
}

}  // namespace

// Every release's transcripts: each message type it sent is still one, and reads as it meant.
BOOST_AUTO_TEST_CASE(every_release_transcript_decodes_today) {
    std::size_t releases = 0, checked = 0;
    for (const auto &release : fs::directory_iterator(kGolden)) {
        if (!release.is_directory()) continue;
        ++releases;
        for (const auto &f : fs::directory_iterator(release.path())) {
            const std::string name = f.path().filename();
            if (!name.ends_with(kSuffix)) continue;
            const std::string type = name.substr(0, name.size() - kSuffix.size());
            BOOST_TEST_CONTEXT(release.path().filename().string() << " " << type) {
                const auto codec = codecs().find(type);
                BOOST_TEST((codec != codecs().end()), "the message type is gone");
                if (codec == codecs().end()) continue;
                BOOST_TEST(codec->second.check(read_all(f.path())) == "");
                ++checked;
            }
        }
    }
    BOOST_TEST(releases >= 1u);
    BOOST_TEST(checked >= codecs().size());
}

// Today's messages read as they are meant: the check itself holds for the samples.
BOOST_AUTO_TEST_CASE(todays_messages_decode_today) {
    for (const auto &[type, codec] : codecs()) BOOST_TEST_CONTEXT(type) {
            BOOST_TEST(codec.check(codec.write()) == "");
        }
}

namespace {
// A Hello as a release might have sent it, and two breaking changes of it.
struct Then {
    static constexpr const char *type = "session.hello";
    std::string role = "client";
    std::string nspace = "job";
    std::uint32_t rank = 3;
    ZPMIX_MSG_MAP(role, nspace, rank);
};
struct Renamed {
    static constexpr const char *type = "session.hello";
    std::string role = "client";
    std::string job = "job";
    std::uint32_t rank = 3;
    ZPMIX_MSG_MAP(role, job, rank);
};
struct Retyped {
    static constexpr const char *type = "session.hello";
    std::string role = "client";
    std::string nspace = "job";
    std::string rank = "3";
    ZPMIX_MSG_MAP(role, nspace, rank);
};
}  // namespace

// The check catches what breaks the wire: a field renamed, or of another type.
BOOST_AUTO_TEST_CASE(a_renamed_or_retyped_field_is_caught) {
    const std::string then = bytes_of(encode(Then::type, kId, Then{}, kFrom));
    BOOST_TEST(check_transcript<Then>(then) == "");
    BOOST_TEST(check_transcript<Renamed>(then).find("key 'nspace' is gone") != std::string::npos);
    BOOST_TEST(check_transcript<Retyped>(then).starts_with("does not decode"));
}

int main(int argc, char **argv) {
    if (argc == 3 && std::string_view(argv[1]) == "--write") return write_transcripts(argv[2]);
    return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
