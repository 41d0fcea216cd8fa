#include "actors/runtime/zmtp_curve.hpp"

#include <sodium.h>

#include <cstring>
#include <stdexcept>

namespace zpmix {

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

// An 8-byte prefix and 16 bytes of the command, as every long nonce.
Nonce long_nonce(const char (&prefix)[9], const unsigned char *tail) {
    Nonce out{};
    std::memcpy(out.data(), prefix, 8);
    std::memcpy(out.data() + 8, tail, 16);
    return out;
}

const unsigned char *bytes(std::string_view s) {
    return reinterpret_cast<const unsigned char *>(s.data());
}
unsigned char *bytes(std::string &s) {
    return reinterpret_cast<unsigned char *>(s.data());
}

void init_sodium() {
    if (sodium_init() < 0) throw std::runtime_error("libsodium cannot be initialised");
}

// "\x07MESSAGE", short nonce n, Box[flags + payload] with the session's precomputed key.
std::string seal_message(const char (&prefix)[17], std::uint64_t n, const unsigned char *precom,
                         unsigned char flags, std::string_view payload) {
    const Nonce nonce = short_nonce(prefix, n);
    std::string out;
    out.resize(16 + kMac + 1 + payload.size());
    std::memcpy(out.data(), "\x07MESSAGE", 8);
    put_u64(bytes(out) + 8, n);
    // The plain text is written where its box goes, then sealed in place (libsodium allows it).
    unsigned char *plain = bytes(out) + 16 + kMac;
    plain[0] = flags;
    if (!payload.empty()) std::memcpy(plain + 1, payload.data(), payload.size());
    crypto_box_easy_afternm(bytes(out) + 16, plain, 1 + payload.size(), nonce.data(), precom);
    return out;
}

// Opens a MESSAGE whose nonce must be above `last` (updated); appends its payload.
bool open_message(const char (&prefix)[17], std::uint64_t &last, const unsigned char *precom,
                  std::string_view cmd, unsigned char &flags, std::string &payload, bool append) {
    if (cmd.size() < 8 + 8 + kMac + 1 || std::memcmp(cmd.data(), "\x07MESSAGE", 8) != 0)
        return false;
    const std::uint64_t n = get_u64(cmd.data() + 8);
    if (n <= last) return false;  // replayed or reordered
    const Nonce nonce = short_nonce(prefix, n);
    const std::size_t plain_size = cmd.size() - 16 - kMac;
    if (!append) payload.clear();
    const std::size_t at = payload.size();
    payload.resize(at + plain_size);
    if (crypto_box_open_easy_afternm(bytes(payload) + at, bytes(cmd) + 16, cmd.size() - 16,
                                     nonce.data(), precom) != 0) {
        payload.resize(at);
        return false;
    }
    last = n;
    flags = static_cast<unsigned char>(payload[at]);
    payload.erase(at, 1);
    return true;
}

}  // namespace

// --- the client's half ------------------------------------------------------------------------

CurveClient::CurveClient(const Key &server, const Key &public_key, const Key &secret_key)
    : server_(server), public_(public_key), secret_(secret_key) {
    init_sodium();
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
    const Nonce nonce = long_nonce("WELCOME-", bytes(cmd) + 8);
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

bool CurveClient::ready(std::string_view cmd, std::string *metadata) {
    // "\x05READY", short nonce, Box[metadata](S'->C').
    if (cmd.size() < 6 + 8 + kMac || cmd.substr(0, 6) != std::string_view("\x05READY", 6))
        return false;
    const std::uint64_t n = get_u64(cmd.data() + 6);
    const Nonce nonce = short_nonce("CurveZMQREADY---", n);
    std::string plain(cmd.size() - 14 - kMac, '\0');
    if (crypto_box_open_easy_afternm(bytes(plain), bytes(cmd) + 14, cmd.size() - 14, nonce.data(),
                                     precomputed_.data()) != 0)
        return false;
    peer_nonce_ = n;
    if (metadata) *metadata = std::move(plain);
    return true;
}

std::string CurveClient::seal(unsigned char flags, std::string_view payload) {
    return seal_message("CurveZMQMESSAGEC", nonce_++, precomputed_.data(), flags, payload);
}

bool CurveClient::open(std::string_view cmd, unsigned char &flags, std::string &payload,
                       bool append) {
    return open_message("CurveZMQMESSAGES", peer_nonce_, precomputed_.data(), cmd, flags, payload,
                        append);
}

// --- the server's half ------------------------------------------------------------------------

CurveServer::CurveServer(const Key &public_key, const Key &secret_key)
    : public_(public_key), secret_(secret_key) {
    init_sodium();
    crypto_box_keypair(cn_public_.data(), cn_secret_.data());
    // One cookie key per connection: only this connection's INITIATE can carry its cookie.
    randombytes_buf(cookie_key_.data(), cookie_key_.size());
}

CurveServer::~CurveServer() {
    sodium_memzero(secret_.data(), secret_.size());
    sodium_memzero(cn_secret_.data(), cn_secret_.size());
    sodium_memzero(cookie_key_.data(), cookie_key_.size());
    sodium_memzero(precomputed_.data(), precomputed_.size());
}

bool CurveServer::hello(std::string_view cmd) {
    // "\x05HELLO", version 1.0, 72 bytes of padding, C', short nonce, Box[64 zeros](C'->S).
    if (helloed_ || cmd.size() != 200 || std::memcmp(cmd.data(), "\x05HELLO\x01\x00", 8) != 0)
        return false;
    std::memcpy(cn_client_.data(), cmd.data() + 80, 32);
    const std::uint64_t n = get_u64(cmd.data() + 112);
    const Nonce nonce = short_nonce("CurveZMQHELLO---", n);
    unsigned char zeros[64];
    if (crypto_box_open_easy(zeros, bytes(cmd) + 120, 64 + kMac, nonce.data(), cn_client_.data(),
                             secret_.data()) != 0)
        return false;
    peer_nonce_ = n;
    helloed_ = true;
    return true;
}

std::string CurveServer::welcome() {
    // The cookie, Box[C' + s'](K) with a long nonce, lets the INITIATE prove it follows this
    // WELCOME; "\x07WELCOME", a long nonce, Box[S' + cookie](S->C').
    unsigned char cookie_plain[64];
    std::memcpy(cookie_plain, cn_client_.data(), 32);
    std::memcpy(cookie_plain + 32, cn_secret_.data(), 32);
    unsigned char cookie_tail[16];
    randombytes_buf(cookie_tail, sizeof cookie_tail);
    const Nonce cookie_nonce = long_nonce("COOKIE--", cookie_tail);
    unsigned char plain[128];
    std::memcpy(plain, cn_public_.data(), 32);
    std::memcpy(plain + 32, cookie_tail, 16);
    crypto_secretbox_easy(plain + 48, cookie_plain, sizeof cookie_plain, cookie_nonce.data(),
                          cookie_key_.data());
    sodium_memzero(cookie_plain, sizeof cookie_plain);
    unsigned char welcome_tail[16];
    randombytes_buf(welcome_tail, sizeof welcome_tail);
    const Nonce nonce = long_nonce("WELCOME-", welcome_tail);
    std::string out("\x07WELCOME", 8);
    out.append(reinterpret_cast<const char *>(welcome_tail), 16);
    out.append(128 + kMac, '\0');
    const int rc = crypto_box_easy(bytes(out) + 24, plain, sizeof plain, nonce.data(),
                                   cn_client_.data(), secret_.data());
    sodium_memzero(plain, sizeof plain);
    return rc == 0 ? out : std::string();  // C' is not a usable key
}

bool CurveServer::initiate(std::string_view cmd, Key &client_key, std::string &metadata) {
    // "\x08INITIATE", cookie (16-byte nonce, 80-byte box), short nonce, Box[C + vouch nonce +
    // vouch + metadata](C'->S').
    constexpr std::size_t kBoxAt = 9 + 96 + 8, kInner = 32 + 16 + 64 + kMac;
    if (!helloed_ || initiated_ || cmd.size() < kBoxAt + kInner + kMac ||
        cmd.size() > kMaxInitiate || std::memcmp(cmd.data(), "\x08INITIATE", 9) != 0)
        return false;
    const Nonce cookie_nonce = long_nonce("COOKIE--", bytes(cmd) + 9);
    unsigned char cookie[64];
    if (crypto_secretbox_open_easy(cookie, bytes(cmd) + 25, 64 + kMac, cookie_nonce.data(),
                                   cookie_key_.data()) != 0 ||
        sodium_memcmp(cookie, cn_client_.data(), 32) != 0 ||
        sodium_memcmp(cookie + 32, cn_secret_.data(), 32) != 0)
        return false;
    sodium_memzero(cookie, sizeof cookie);
    const std::uint64_t n = get_u64(cmd.data() + 105);
    if (n <= peer_nonce_) return false;
    if (crypto_box_beforenm(precomputed_.data(), cn_client_.data(), cn_secret_.data()) != 0)
        return false;
    const Nonce nonce = short_nonce("CurveZMQINITIATE", n);
    std::string plain(cmd.size() - kBoxAt - kMac, '\0');
    if (crypto_box_open_easy_afternm(bytes(plain), bytes(cmd) + kBoxAt, cmd.size() - kBoxAt,
                                     nonce.data(), precomputed_.data()) != 0)
        return false;
    // The vouch, Box[C' + S](C->S'): the client holds the secret of the key it names.
    Key client{};
    std::memcpy(client.data(), plain.data(), 32);
    const Nonce vouch_nonce = long_nonce("VOUCH---", bytes(plain) + 32);
    unsigned char vouch[64];
    if (crypto_box_open_easy(vouch, bytes(plain) + 48, 64 + kMac, vouch_nonce.data(), client.data(),
                             cn_secret_.data()) != 0 ||
        sodium_memcmp(vouch, cn_client_.data(), 32) != 0 ||
        sodium_memcmp(vouch + 32, public_.data(), 32) != 0)
        return false;
    peer_nonce_ = n;
    initiated_ = true;
    client_key = client;
    metadata.assign(plain, kInner);
    return true;
}

std::string CurveServer::ready(std::string_view metadata) {
    // "\x05READY", short nonce, Box[metadata](S'->C').
    const std::uint64_t n = nonce_++;
    const Nonce nonce = short_nonce("CurveZMQREADY---", n);
    std::string out("\x05READY", 6);
    out.append(8, '\0');
    put_u64(bytes(out) + 6, n);
    const std::size_t at = out.size();
    out.append(metadata.size() + kMac, '\0');
    crypto_box_easy_afternm(bytes(out) + at, bytes(metadata), metadata.size(), nonce.data(),
                            precomputed_.data());
    return out;
}

std::string CurveServer::seal(unsigned char flags, std::string_view payload) {
    return seal_message("CurveZMQMESSAGES", nonce_++, precomputed_.data(), flags, payload);
}

bool CurveServer::open(std::string_view cmd, unsigned char &flags, std::string &payload,
                       bool append) {
    if (!initiated_) return false;
    return open_message("CurveZMQMESSAGEC", peer_nonce_, precomputed_.data(), cmd, flags, payload,
                        append);
}

}  // namespace zpmix
