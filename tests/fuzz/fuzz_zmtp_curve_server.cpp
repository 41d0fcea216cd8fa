// The server's half of CURVE (actors/runtime/zmtp_curve.cpp, CurveServer: the tree link's parent
// end) reading what a client sends. An input is a mode byte and the rest. Mode 0: the bytes go as
// they are to hello() of a fresh server, and as the INITIATE and MESSAGE of a server that took a
// real HELLO (forged commands: every length, prefix, cookie and vouch check). Mode 1: a real
// client (CurveClient, the fixed keypair below) completes the handshake, then seals each chunk of
// the rest (a length byte, a flags byte, the payload) into a MESSAGE; a chunk whose flags byte
// has bit 7 set is sent with a stale nonce (a replay, bit 6) or a flipped bit. The server must
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
#include "actors/runtime/zmtp_wire.hpp"

namespace {

using zpmix::CurveClient;
using zpmix::CurveKey;
using zpmix::CurveServer;

struct Keys {
    CurveKey server_public{}, server_secret{};
    Keys() {
        if (sodium_init() < 0) std::abort();
        std::array<unsigned char, crypto_box_SEEDBYTES> seed{};
        seed.fill(9);  // fixed, so that a crash replays
        crypto_box_seed_keypair(server_public.data(), server_secret.data(), seed.data());
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const Keys keys;
    if (size == 0) return 0;
    const std::string_view in(reinterpret_cast<const char *>(data) + 1, size - 1);
    if (data[0] % 2 == 0) {
        CurveServer a(keys.server_public, keys.server_secret);
        if (a.hello(in)) std::abort();  // a HELLO needs a box for our key
        CurveServer b(keys.server_public, keys.server_secret);
        CurveClient c(keys.server_public, keys.server_public, keys.server_secret);
        if (!b.hello(c.hello())) std::abort();
        if (b.welcome().empty()) std::abort();
        CurveKey key{};
        std::string metadata;
        unsigned char flags = 0;
        std::string payload;
        // Without the cookie (a secret of this connection) no INITIATE is taken, nor a MESSAGE
        // before one.
        if (b.initiate(in, key, metadata) || b.open(in, flags, payload)) std::abort();
        return 0;
    }
    CurveServer s(keys.server_public, keys.server_secret);
    CurveClient c(keys.server_public, keys.server_public, keys.server_secret);
    if (!s.hello(c.hello()) || !c.welcome(s.welcome())) std::abort();
    CurveKey key{};
    std::string metadata;
    const std::string dealer = zpmix::zmtp::socket_type_property("DEALER");
    if (!s.initiate(c.initiate(dealer), key, metadata) || key != keys.server_public ||
        metadata != dealer)
        std::abort();
    const std::string router = zpmix::zmtp::socket_type_property("ROUTER");
    std::string ready_meta;
    if (!c.ready(s.ready(router), &ready_meta) || ready_meta != router) std::abort();
    std::string last_sealed;  // the last box the server took: a replay sends it again
    for (std::string_view rest = in; rest.size() >= 2;) {
        const std::size_t len =
            std::min<std::size_t>(static_cast<unsigned char>(rest[0]), rest.size() - 2);
        const auto flags = static_cast<unsigned char>(rest[1]);
        const std::string_view payload = rest.substr(2, len);
        rest.remove_prefix(2 + len);
        const bool forged = flags & 0x80;
        const bool replay = forged && (flags & 0x40);
        std::string cmd;
        if (replay) {
            if (last_sealed.empty()) continue;
            cmd = last_sealed;
        } else {
            cmd = c.seal(flags & 0x03, payload);
            if (forged) cmd[cmd.size() - 1 - len % (cmd.size() - 16)] ^= 1;
        }
        unsigned char got_flags = 0xff;
        std::string got;
        const bool opened = s.open(cmd, got_flags, got);
        if (forged ? opened : !opened || got != payload || got_flags != (flags & 0x03))
            std::abort();
        if (opened) last_sealed = cmd;
    }
    return 0;
}
