// Writes the fuzz targets' seed corpus: small valid inputs made by the product's own writers
// (envelopes, message bodies, fence segments and boards, ZMTP streams, encoded PMIx values), so
// that fuzzing starts from what the parsers really meet. Usage: fuzz_corpus_gen DIR (the source
// tree's tests/fuzz/corpus); each target's files go to DIR/<target>/, replacing the generated
// ones (named gen-*; hand-made edge cases have other names and are kept).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <pmix.h>
#include <msgpack.hpp>

#include "actors/protocol/shm/fence_segment.hpp"
#include "actors/runtime/envelope.hpp"
#include "actors/runtime/zmtp_wire.hpp"
#include "client/values/value_codec.hpp"
#include "tests/fuzz/messages.hpp"

namespace {

namespace fs = std::filesystem;
namespace m = zpmix::msg;
namespace zmtp = zpmix::zmtp;
using namespace std::string_literals;

fs::path root;

void put(const std::string &target, const std::string &name, std::string_view bytes) {
    const fs::path dir = root / target;
    fs::create_directories(dir);
    std::ofstream(dir / ("gen-" + name), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
std::string packed(const T &v) {
    msgpack::sbuffer b;
    msgpack::pack(b, v);
    return {b.data(), b.size()};
}

template <class T>
std::string envelope(const T &body, std::string_view from = {}) {
    const zmq::message_t msg = zpmix::encode(T::type, 7, body, from);
    return msg.to_string();
}

std::string frame(unsigned char flags, std::string_view body) {
    unsigned char h[zmtp::kMaxHeader];
    const std::size_t n = zmtp::put_header(h, flags, body.size());
    return std::string(reinterpret_cast<char *>(h), n) + std::string(body);
}

std::string greeting() {
    char g[zmtp::kGreetingSize];
    zmtp::greeting(g);
    return {g, sizeof g};
}

// Message structs with their fields filled, for the messages, envelope and reader corpora.
m::Proc proc(std::string ns, std::uint32_t rank) {
    m::Proc p;
    p.nspace = std::move(ns);
    p.rank = rank;
    return p;
}
m::Blob blob(std::string_view s) {
    return m::Blob(s.begin(), s.end());
}

m::Hello hello() {
    m::Hello h;
    h.nspace = "job1";
    h.rank = 3;
    h.pid = 4242;
    h.secret = "s3cret";
    return h;
}

m::Welcome welcome() {
    m::Welcome w;
    w.broker = "node1:77";
    w.events_uri = "ipc:///tmp/ev";
    w.job.nspace = "job1";
    w.job.size = 2;
    w.job.nodes = {"node1"};
    for (std::uint32_t r = 0; r < 2; ++r) {
        m::ProcInfo p;
        p.rank = r;
        p.local_rank = static_cast<std::uint16_t>(r);
        p.hostname = "node1";
        p.cpuset = "0-1";
        p.pid = 100 + r;
        w.job.procs.push_back(p);
    }
    w.job.psets = {{"all", {0, 1}}};
    w.job.fence_board = "/tmp/board";
    return w;
}

m::Event event() {
    m::Event e;
    e.stream = "ev/n/job1/j/";
    e.seq = 5;
    e.status = -201;
    e.source = proc("job1", 1);
    e.range = 6;
    e.custom_range = {proc("job1", 0), proc("job2", m::kWildcardRank)};
    e.affected = {proc("job1", 1)};
    e.text = "gone";
    e.timestamp = 1700000000;
    e.info = blob("\x91\x93\xa3key\x00\x92\x03\xa5value"s);
    e.retained = true;
    return e;
}

m::FenceContribute contribute() {
    m::FenceContribute f;
    f.participants = {proc("job1", m::kWildcardRank)};
    f.fence_id = 2;
    f.collect = true;
    f.timeout_ms = 1000;
    f.proc = proc("job1", 0);
    f.sizes = {{"job1", 2}};
    f.done_through = 1;
    return f;
}

m::FenceDone done() {
    m::FenceDone d;
    d.key = "job1:*#2";
    d.arena = "/tmp/arena";
    d.arena_offset = 128;
    d.arena_length = 256;
    d.segment_bytes = blob("ZPMXFSEG");
    return d;
}

m::ModexData modex_data() {
    m::ModexData d;
    d.data.proc = proc("job1", 1);
    d.data.blobs = {blob("\x81\xa1k\x92\x03\xa1v"), blob("\x80")};
    d.data.scopes = {1, 3};
    return d;
}

m::LookupReply found() {
    m::LookupReply r;
    m::Published p;
    p.publisher = proc("job1", 0);
    p.key = "port";
    p.value = blob("\x92\x03\xa4\x31\x32\x33\x34");
    r.found = {p, p};
    return r;
}

template <std::size_t... I>
void every_message(std::index_sequence<I...>) {
    (
        [] {
            using T = std::tuple_element_t<I, zpmix::fuzz::Messages>;
            put("messages", T::type, std::string(T::type) + '\0' + packed(T{}));
        }(),
        ...);
}

template <class T>
void message(const std::string &name, const T &v) {
    put("messages", name, std::string(T::type) + '\0' + packed(v));
    put("envelope", name, envelope(v, name == "hello" ? ""s : "\x01\x00\x00\x00\x07"s));
}

void client_store() {
    // Flags 1: a ModexData body; 2: a Welcome body (flags 0, a segment, is written by fence()).
    put("client_store", "modex-data", "\x01" + packed(modex_data()));
    put("client_store", "welcome", "\x02" + packed(welcome()));
}

void messages() {
    every_message(std::make_index_sequence<std::tuple_size_v<zpmix::fuzz::Messages>>{});
    message("hello", hello());
    message("welcome", welcome());
    message("event", event());
    message("fence.contribute", contribute());
    message("fence.done", done());
    message("modex.data", modex_data());
    message("modex.found", found());
    m::ErrorReply e;
    e.status = -46;
    e.message = "not found";
    message("error", e);
    put("envelope", "nil-body", zpmix::encode("ok", 1, msgpack::type::nil_t{}).to_string());
}

void reader() {
    msgpack::sbuffer b;
    msgpack::packer<msgpack::sbuffer> pk(b);
    // One of each kind: ints of every width and sign, floats, str, bin, ext, nil, booleans,
    // arrays and maps of 16 and 32 bit counts, nested.
    pk.pack_array(20);
    for (std::int64_t v : {0LL, 127LL, 128LL, 65535LL, 65536LL, 1LL << 40, -1LL, -33LL, -200LL,
                           -40000LL, -(1LL << 40)})
        pk.pack(v);
    pk.pack(1.5f);
    pk.pack(-2.25);
    pk.pack(std::string(40, 's'));
    pk.pack_bin(3);
    pk.pack_bin_body("bin", 3);
    pk.pack_ext(2, 9);
    pk.pack_ext_body("xy", 2);
    pk.pack_nil();
    pk.pack(true);
    pk.pack(false);
    pk.pack_map(1);
    pk.pack("k");
    pk.pack_array(1);
    pk.pack_array(0);
    put("reader", "kinds", {b.data(), b.size()});
    put("reader", "strings", packed(std::vector<std::string>(17, "abc")));
    put("reader", "map",
        packed(std::map<std::string, std::vector<std::uint64_t>>{{"a", {1, 2, 3}},
                                                                 {"b", {1ULL << 63}}}));
    put("reader", "pair", packed(std::pair<std::string, std::uint32_t>("job", 3)));
    put("reader", "long-string", packed(std::string(300, 'x')));
    put("reader", "message", packed(welcome()));
}

std::vector<m::ProcData> proc_data() {
    std::vector<m::ProcData> data(3);
    data[0].proc = proc("job1", 0);
    data[0].blobs = {blob("\x81\xa1k\x92\x03\xa1v")};
    data[0].scopes = {1};
    data[1].proc = proc("job1", 1);
    data[1].blobs = {blob("\x81\xa1k\x92\x03\xa1w"), blob("\x80")};
    data[1].scopes = {1, 3};
    data[2].proc = proc("job2", 7);
    data[2].blobs = {blob("\x81\xa1z\x92\x07\xcd\x01\x00"s)};
    return data;
}

std::string le32(std::uint32_t v) {
    return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
            static_cast<char>(v >> 24)};
}

void fence() {
    const auto data = proc_data();
    const zpmix::FenceSegmentWriter w(data);
    const m::Blob seg = w.bytes();
    const std::string bytes(seg.begin(), seg.end());
    const auto size = static_cast<std::uint32_t>(bytes.size());
    put("fence_segment", "segment", le32(0) + le32(size) + bytes);
    put("client_store", "segment", "\x00"s + bytes);
    // In an arena, after another segment's region, with room after it.
    put("fence_segment", "arena",
        le32(64) + le32(size) + std::string(64, '\0') + bytes + std::string(64, '\0'));
    const std::vector<m::ProcData> none;
    const zpmix::FenceSegmentWriter empty(none);
    const m::Blob e = empty.bytes();
    put("fence_segment", "empty",
        le32(0) + le32(static_cast<std::uint32_t>(e.size())) + std::string(e.begin(), e.end()));

    // Boards of 0, 1 and 3 ranks as created; one with a rank's card posted and arrivals (the
    // slot of rank 0 starts at byte 640: 128 of header, 512 of ring cells).
    put("fence_board", "ranks0", "\x01");
    put("fence_board", "ranks1", "\x03");
    put("fence_board", "ranks3", "\x07");
    const std::string header(128 - 24, '\0');  // from byte 24 to the end of the header
    std::string cells;
    for (std::uint32_t i = 0; i < 64; ++i)
        cells += le32(i == 0 ? 1 : 0) + le32(i);  // {count, fence}
    std::string head(64, '\0');
    head[0] = 1;   // arrived
    head[8] = 1;   // gen 1: the card is in buffer 1
    head[20] = 5;  // length[1]
    head[28] = 2;  // commits[1]
    put("fence_board", "card", "\x1b" + header + cells + head);
    put("fence_board", "not-a-board", "\x00ZPMXBORD\x01\x00\x00\x00"s);
}

void zmtp_streams() {
    const std::string dealer = frame(zmtp::kCommand, zmtp::ready("DEALER"));
    const std::string sub = frame(zmtp::kCommand, zmtp::ready("SUB"));
    const std::string body = envelope(hello());
    // The listener: flags bit 0 an XPUB, bit 1 the handshake given.
    put("zmtp_listener", "router-message", "\x02" + frame(0, body));
    put("zmtp_listener", "router-frames",
        "\x02" + frame(zmtp::kMore, "a") + frame(zmtp::kMore, "") +
            frame(0, std::string(300, 'b')));
    put("zmtp_listener", "router-ping",
        "\x02" + frame(zmtp::kCommand, zmtp::command("PING", std::string("\x00\x0a"s) + "ctx")) +
            frame(0, body));
    put("zmtp_listener", "handshake", "\x00"s + greeting() + dealer + frame(0, body));
    put("zmtp_listener", "xpub-subscribe",
        "\x03" +
            frame(0,
                  "\x01"
                  "ev/") +
            frame(0,
                  "\x00"
                  "ev/"s) +
            frame(zmtp::kCommand, zmtp::command("SUBSCRIBE", "ev/n/")) +
            frame(zmtp::kCommand, zmtp::command("CANCEL", "ev/n/")));
    put("zmtp_listener", "xpub-handshake", "\x01" + greeting() + sub + frame(0, "\x01"));
    // The client: flags bit 0 a SUB, bit 1 the broker's handshake given.
    put("zmtp_connection", "dealer-message", "\x02" + frame(0, envelope(welcome())));
    put("zmtp_connection", "dealer-frames",
        "\x02" + frame(zmtp::kCommand, zmtp::command("PING", "\x00\x01"s)) +
            frame(zmtp::kMore, "x") + frame(0, std::string(256, 'y')));
    put("zmtp_connection", "refused",
        "\x00"s + greeting() + frame(zmtp::kCommand, zmtp::error("wrong uid")));
    put("zmtp_connection", "handshake",
        "\x00"s + greeting() + frame(zmtp::kCommand, zmtp::ready("ROUTER")) + frame(0, body));
    put("zmtp_connection", "sub-event",
        "\x03" + frame(zmtp::kMore, "ev/n/job1/j/-201/") + frame(0, envelope(event())));
    // The wire pieces: a greeting, a READY's body, a long frame's header.
    put("zmtp_wire", "greeting", greeting());
    put("zmtp_wire", "ready", zmtp::ready("DEALER"));
    put("zmtp_wire", "long-frame", frame(zmtp::kCommand | zmtp::kLong, std::string(300, 'z')));
    put("zmtp_wire", "error", zmtp::error("incompatible socket type"));
}

template <class Encode>
void codec(const std::string &name, Encode encode) {
    msgpack::sbuffer b;
    zpmix::c::Packer pk(b);
    if (encode(pk) != PMIX_SUCCESS) {
        std::fprintf(stderr, "cannot encode the %s seed\n", name.c_str());
        std::exit(1);
    }
    put("value_codec", name, {b.data(), b.size()});
}

void value_codec() {
    pmix_info_t infos[6];
    const int32_t i32 = -7;
    const uint64_t u64 = 1ULL << 40;
    const double d = 0.5;
    const bool yes = true;
    PMIx_Info_load(&infos[0], "zpmix.i32", &i32, PMIX_INT32);
    PMIx_Info_load(&infos[1], "zpmix.u64", &u64, PMIX_UINT64);
    PMIx_Info_load(&infos[2], "zpmix.str", "a string", PMIX_STRING);
    PMIx_Info_load(&infos[3], "zpmix.double", &d, PMIX_DOUBLE);
    pmix_proc_t p;
    std::memset(&p, 0, sizeof p);
    std::strcpy(p.nspace, "job1");
    p.rank = 3;
    PMIx_Info_load(&infos[4], "zpmix.proc", &p, PMIX_PROC);
    PMIx_Info_load(&infos[5], "zpmix.bool", &yes, PMIX_BOOL);
    codec("infos", [&](zpmix::c::Packer &pk) { return zpmix::c::encode_infos(pk, infos, 6); });
    codec("info", [&](zpmix::c::Packer &pk) { return zpmix::c::encode_info(pk, infos[2]); });
    codec("proc", [&](zpmix::c::Packer &pk) { return zpmix::c::encode_value(pk, infos[4].value); });
    // A byte object and a data array of infos, nested in values.
    char bytes[] = "bytes\0with a zero";
    pmix_byte_object_t bo{bytes, sizeof bytes - 1};
    pmix_value_t v;
    PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
    codec("bytes", [&](zpmix::c::Packer &pk) { return zpmix::c::encode_value(pk, v); });
    PMIx_Value_destruct(&v);
    pmix_data_array_t arr{PMIX_INFO, 3, infos};
    PMIx_Value_load(&v, &arr, PMIX_DATA_ARRAY);
    codec("array", [&](zpmix::c::Packer &pk) { return zpmix::c::encode_value(pk, v); });
    PMIx_Value_destruct(&v);
    for (auto &i : infos) PMIX_INFO_DESTRUCT(&i);
}

// PMIx_Data_pack'ed buffers, each after the byte that makes fuzz_data_buffer read it as its
// type, and a compressed block.
void data_buffer() {
    auto packed = [](const std::string &name, void *src, int32_t n, pmix_data_type_t t) {
        pmix_data_buffer_t b;
        PMIX_DATA_BUFFER_CONSTRUCT(&b);
        if (PMIx_Data_pack(nullptr, &b, src, n, t) != PMIX_SUCCESS) {
            std::fprintf(stderr, "cannot pack the %s seed\n", name.c_str());
            std::exit(1);
        }
        put("data_buffer", name,
            std::string(1, static_cast<char>(t)) + std::string(b.base_ptr, b.bytes_used));
        PMIX_DATA_BUFFER_DESTRUCT(&b);
    };
    int32_t ints[3] = {-1, 0, 1 << 20};
    packed("int32", ints, 3, PMIX_INT32);
    char *strings[2] = {const_cast<char *>("node1"), const_cast<char *>("")};
    packed("strings", strings, 2, PMIX_STRING);
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], "job1", 0);
    PMIX_LOAD_PROCID(&procs[1], "job1", PMIX_RANK_WILDCARD);
    packed("procs", procs, 2, PMIX_PROC);
    pmix_info_t infos[2];
    const uint16_t port = 7000;
    PMIx_Info_load(&infos[0], "zpmix.port", &port, PMIX_UINT16);
    PMIx_Info_load(&infos[1], "zpmix.host", "n1", PMIX_STRING);
    packed("infos", infos, 2, PMIX_INFO);
    for (auto &i : infos) PMIX_INFO_DESTRUCT(&i);
    const std::string text(4096, 'z');
    uint8_t *z = nullptr;
    size_t nz = 0;
    if (!PMIx_Data_compress(reinterpret_cast<const uint8_t *>(text.data()), text.size(), &z, &nz)) {
        std::fprintf(stderr, "cannot compress the data_buffer seed\n");
        std::exit(1);
    }
    put("data_buffer", "compressed", std::string(reinterpret_cast<char *>(z), nz));
    free(z);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    root = argv[1];
    if (fs::exists(root))
        for (const auto &dir : fs::directory_iterator(root))
            for (const auto &f : fs::directory_iterator(dir.path()))
                if (f.path().filename().string().starts_with("gen-")) fs::remove(f.path());
    messages();
    client_store();
    reader();
    fence();
    zmtp_streams();
    value_codec();
    data_buffer();
    return 0;
}
