#include "client/zmtp_curve.hpp"

#include <sodium.h>

#include <cstring>
#include <stdexcept>

namespace zpmix::client {

namespace {

constexpr std::size_t kMac = crypto_box_MACBYTES;
using Nonce = std::array<unsigned char, crypto_box_NONCEBYTES>;

void put_u64(unsigned char *p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}

std::uint64_t get_u64(const char *p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(p[i]);
    return v;
}

// A 16-byte prefix and an 8-byte counter, as every short nonce of the protocol.
Nonce short_nonce(const char (&prefix)[17], std::uint64_t n) {
    Nonce out{};
    std::memcpy(out.data(), prefix, 16);
    put_u64(out.data() + 16, n);
    return out;
}

const unsigned char *bytes(std::string_view s) {
    return reinterpret_cast<const unsigned char *>(s.data());
}
unsigned char *bytes(std::string &s) {
    return reinterpret_cast<unsigned char *>(s.data());
}

}  // namespace

CurveClient::CurveClient(const Key &server, const Key &public_key, const Key &secret_key)
    : server_(server), public_(public_key), secret_(secret_key) {
    if (sodium_init() < 0) throw std::runtime_error("libsodium cannot be initialised");
    crypto_box_keypair(cn_public_.data(), cn_secret_.data());
}

CurveClient::~CurveClient() {
    sodium_memzero(secret_.data(), secret_.size());
    sodium_memzero(cn_secret_.data(), cn_secret_.size());
    sodium_memzero(precomputed_.data(), precomputed_.size());
}

std::string CurveClient::hello() {
    // "\x05HELLO", version 1.0, 72 bytes of anti-amplification padding, C', short nonce,
    // Box[64 zero bytes](C'->S).
    const std::uint64_t n = nonce_++;
    const Nonce nonce = short_nonce("CurveZMQHELLO---", n);
    std::string out("\x05HELLO\x01\x00", 8);
    out.append(72, '\0');
    out.append(reinterpret_cast<const char *>(cn_public_.data()), 32);
    out.append(8, '\0');
    put_u64(bytes(out) + 112, n);
    const unsigned char zeros[64] = {};
    out.append(64 + kMac, '\0');
    if (crypto_box_easy(bytes(out) + 120, zeros, sizeof zeros, nonce.data(), server_.data(),
                        cn_secret_.data()) != 0)
        throw std::runtime_error("CURVE: the broker's key is not a usable public key");
    return out;
}

bool CurveClient::welcome(std::string_view cmd) {
    // "\x07WELCOME", a 16-byte long nonce, Box[S' + cookie](S->C').
    if (cmd.size() != 8 + 16 + 128 + kMac || cmd.substr(0, 8) != std::string_view("\x07WELCOME", 8))
        return false;
    Nonce nonce{};
    std::memcpy(nonce.data(), "WELCOME-", 8);
    std::memcpy(nonce.data() + 8, cmd.data() + 8, 16);
    unsigned char plain[128];
    if (crypto_box_open_easy(plain, bytes(cmd) + 24, 128 + kMac, nonce.data(), server_.data(),
                             cn_secret_.data()) != 0)
        return false;
    std::memcpy(cn_server_.data(), plain, 32);
    std::memcpy(cookie_.data(), plain + 32, 96);
    sodium_memzero(plain, sizeof plain);
    return crypto_box_beforenm(precomputed_.data(), cn_server_.data(), cn_secret_.data()) == 0;
}

std::string CurveClient::initiate(std::string_view metadata) {
    // The vouch: Box[C' + S](C->S'), with a long nonce, proves we hold our long-term secret.
    Nonce vouch_nonce{};
    std::memcpy(vouch_nonce.data(), "VOUCH---", 8);
    randombytes_buf(vouch_nonce.data() + 8, 16);
    unsigned char vouch_plain[64];
    std::memcpy(vouch_plain, cn_public_.data(), 32);
    std::memcpy(vouch_plain + 32, server_.data(), 32);
    unsigned char vouch[64 + kMac];
    if (crypto_box_easy(vouch, vouch_plain, sizeof vouch_plain, vouch_nonce.data(),
                        cn_server_.data(), secret_.data()) != 0)
        return {};  // a session key no box can be made for: not the broker's
    // "\x08INITIATE", the cookie, short nonce, Box[C + vouch nonce + vouch + metadata](C'->S').
    std::string plain(reinterpret_cast<const char *>(public_.data()), 32);
    plain.append(reinterpret_cast<const char *>(vouch_nonce.data() + 8), 16);
    plain.append(reinterpret_cast<const char *>(vouch), sizeof vouch);
    plain += metadata;
    const std::uint64_t n = nonce_++;
    const Nonce nonce = short_nonce("CurveZMQINITIATE", n);
    std::string out("\x08INITIATE", 9);
    out.append(reinterpret_cast<const char *>(cookie_.data()), cookie_.size());
    out.append(8, '\0');
    put_u64(bytes(out) + 105, n);
    const std::size_t at = out.size();
    out.append(plain.size() + kMac, '\0');
    crypto_box_easy_afternm(bytes(out) + at, bytes(plain), plain.size(), nonce.data(),
                            precomputed_.data());
    return out;
}

bool CurveClient::ready(std::string_view cmd) {
    // "\x05READY", short nonce, Box[metadata](S'->C').
    if (cmd.size() < 6 + 8 + kMac || cmd.substr(0, 6) != std::string_view("\x05READY", 6))
        return false;
    const std::uint64_t n = get_u64(cmd.data() + 6);
    const Nonce nonce = short_nonce("CurveZMQREADY---", n);
    std::string metadata(cmd.size() - 14 - kMac, '\0');
    if (crypto_box_open_easy_afternm(bytes(metadata), bytes(cmd) + 14, cmd.size() - 14,
                                     nonce.data(), precomputed_.data()) != 0)
        return false;
    peer_nonce_ = n;
    return true;
}

std::string CurveClient::seal(unsigned char flags, std::string_view payload) {
    // "\x07MESSAGE", short nonce, Box[flags + payload](C'->S').
    const std::uint64_t n = nonce_++;
    const Nonce nonce = short_nonce("CurveZMQMESSAGEC", n);
    std::string plain(1, static_cast<char>(flags));
    plain += payload;
    std::string out("\x07MESSAGE", 8);
    out.append(8, '\0');
    put_u64(bytes(out) + 8, n);
    out.append(plain.size() + kMac, '\0');
    crypto_box_easy_afternm(bytes(out) + 16, bytes(plain), plain.size(), nonce.data(),
                            precomputed_.data());
    return out;
}

bool CurveClient::open(std::string_view cmd, unsigned char &flags, std::string &payload) {
    if (cmd.size() < 8 + 8 + kMac + 1 || cmd.substr(0, 8) != std::string_view("\x07MESSAGE", 8))
        return false;
    const std::uint64_t n = get_u64(cmd.data() + 8);
    if (n <= peer_nonce_) return false;  // replayed or reordered
    const Nonce nonce = short_nonce("CurveZMQMESSAGES", n);
    std::string plain(cmd.size() - 16 - kMac, '\0');
    if (crypto_box_open_easy_afternm(bytes(plain), bytes(cmd) + 16, cmd.size() - 16, nonce.data(),
                                     precomputed_.data()) != 0)
        return false;
    peer_nonce_ = n;
    flags = static_cast<unsigned char>(plain[0]);
    payload.assign(plain, 1);
    return true;
}

}  // namespace zpmix::client
