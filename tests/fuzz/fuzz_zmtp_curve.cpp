// The client's CURVE mechanism (client/zmtp_curve.cpp) reading what a server sends. An
// input is a mode byte and the rest. Mode 0: the bytes go as they are to welcome(), ready() and
// open() of fresh clients (forged commands: every length and prefix check). Mode 1: this
// program is a real CURVE server (libsodium, the fixed keypair below) that completes the
// handshake, then seals each chunk of the rest (a length byte, a flags byte, the payload) into a
// MESSAGE with its nonce, so that mutations reach what is inside the box; a chunk whose flags
// byte has bit 7 set is sent with a stale nonce (a replay) or a flipped bit. The client must
// refuse forgeries and replays and open the rest to exactly what was sealed, without crashing.
#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "actors/runtime/zmtp_curve.hpp"

namespace {

using zpmix::CurveClient;
using Key = CurveClient::Key;

struct Keys {
    Key server_public{}, server_secret{};
    Keys() {
        if (sodium_init() < 0) std::abort();
        // Fixed, so that a crash replays.
        std::array<unsigned char, crypto_box_SEEDBYTES> seed{};
        seed.fill(7);
        crypto_box_seed_keypair(server_public.data(), server_secret.data(), seed.data());
    }
};

void put_u64(unsigned char *p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}

std::string sealed(const char (&prefix)[17], std::uint64_t n, const unsigned char *precom,
                   std::string_view head, std::string_view plain) {
    unsigned char nonce[24];
    std::memcpy(nonce, prefix, 16);
    put_u64(nonce + 16, n);
    std::string out(head);
    out.append(8, '\0');
    put_u64(reinterpret_cast<unsigned char *>(out.data()) + head.size(), n);
    const std::size_t at = out.size();
    out.append(plain.size() + crypto_box_MACBYTES, '\0');
    if (crypto_box_easy_afternm(reinterpret_cast<unsigned char *>(out.data()) + at,
                                reinterpret_cast<const unsigned char *>(plain.data()), plain.size(),
                                nonce, precom) != 0)
        std::abort();
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const Keys keys;
    if (size == 0) return 0;
    const std::string_view in(reinterpret_cast<const char *>(data) + 1, size - 1);
    if (data[0] % 2 == 0) {
        CurveClient a(keys.server_public, keys.server_public, keys.server_secret);
        if (a.welcome(in)) std::abort();  // unsealed bytes are never the server's
        CurveClient b(keys.server_public, keys.server_public, keys.server_secret);
        unsigned char flags = 0;
        std::string payload;
        if (b.ready(in) || b.open(in, flags, payload)) std::abort();
        return 0;
    }
    // The handshake, as a server does it.
    CurveClient c(keys.server_public, keys.server_public, keys.server_secret);
    const std::string hello = c.hello();
    if (hello.size() != 200) std::abort();
    Key client_short{}, server_short_pub{}, server_short_sec{};
    std::memcpy(client_short.data(), hello.data() + 80, 32);
    crypto_box_keypair(server_short_pub.data(), server_short_sec.data());
    unsigned char welcome_plain[128] = {};
    std::memcpy(welcome_plain, server_short_pub.data(), 32);
    unsigned char long_nonce[24];
    std::memcpy(long_nonce, "WELCOME-", 8);
    randombytes_buf(long_nonce + 8, 16);
    std::string welcome("\x07WELCOME", 8);
    welcome.append(reinterpret_cast<const char *>(long_nonce + 8), 16);
    welcome.append(128 + crypto_box_MACBYTES, '\0');
    if (crypto_box_easy(reinterpret_cast<unsigned char *>(welcome.data()) + 24, welcome_plain, 128,
                        long_nonce, client_short.data(), keys.server_secret.data()) != 0)
        std::abort();
    if (!c.welcome(welcome)) std::abort();
    const std::string initiate = c.initiate(
        "\x0bSocket-Type\0\0\0\x06"
        "DEALER");
    if (initiate.size() < 113 + 16 + 128) std::abort();
    unsigned char precom[crypto_box_BEFORENMBYTES];
    if (crypto_box_beforenm(precom, client_short.data(), server_short_sec.data()) != 0)
        std::abort();
    std::uint64_t n = 1;
    if (!c.ready(sealed("CurveZMQREADY---", n, precom, std::string_view("\x05READY", 6), "")))
        std::abort();
    std::uint64_t accepted = n;  // the last nonce the client took: the one a replay reuses
    for (std::string_view rest = in; rest.size() >= 2;) {
        const std::size_t len =
            std::min<std::size_t>(static_cast<unsigned char>(rest[0]), rest.size() - 2);
        const auto flags = static_cast<unsigned char>(rest[1]);
        const std::string_view payload = rest.substr(2, len);
        rest.remove_prefix(2 + len);
        const bool forged = flags & 0x80;
        const bool replay = forged && (flags & 0x40);
        const std::uint64_t nonce = replay ? accepted : ++n;
        std::string cmd =
            sealed("CurveZMQMESSAGES", nonce, precom, std::string_view("\x07MESSAGE", 8),
                   std::string(1, static_cast<char>(flags & 0x03)) + std::string(payload));
        if (forged && !replay) cmd[cmd.size() - 1 - len % (cmd.size() - 16)] ^= 1;
        unsigned char got_flags = 0xff;
        std::string got;
        const bool opened = c.open(cmd, got_flags, got);
        if (forged ? opened : !opened || got != payload || got_flags != (flags & 0x03))
            std::abort();
        if (opened) accepted = nonce;
    }
    return 0;
}
