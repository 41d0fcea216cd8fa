#pragma once
// CurveZMQ (rfc.zeromq.org/spec/26), the CURVE mechanism of ZMTP 3, on libsodium: both halves
// of the handshake and the MESSAGE boxes after it. The client's half speaks to libzmq's CURVE
// servers (a client's tcp connection to its broker, client/zmtp_connection.*) and to ours; the
// server's half is the tree link's (actors/tree/link_connection.*), which libzmq's CURVE clients
// connect to as to a libzmq ROUTER. Both are tested against libzmq
// (tests/tree/test_link_connection.cpp) and fuzzed (tests/fuzz: zmtp_curve, zmtp_curve_server).
//
// Client: hello() -> welcome() -> initiate() -> ready(); server: hello() -> welcome() ->
// initiate() -> ready(). Then seal() and open() on either side: each MESSAGE carries a nonce that
// only grows, so a replayed or reordered box is refused. Commands (ERROR, the greeting) are not
// here: zmtp_wire.hpp.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace zpmix {

using CurveKey = std::array<unsigned char, 32>;

class CurveClient {
  public:
    using Key = CurveKey;
    // Flags inside a MESSAGE's box (libzmq's): more frames follow; a command (PING, PONG).
    static constexpr unsigned char kMore = 1, kCommand = 2;

    // The server's long-term public key, and ours.
    CurveClient(const Key &server, const Key &public_key, const Key &secret_key);
    ~CurveClient();
    CurveClient(const CurveClient &) = delete;
    CurveClient &operator=(const CurveClient &) = delete;

    std::string hello();  // the HELLO command's body; throws for an unusable server key
    // The WELCOME command's body: false unless it is the server's (its key opens the box).
    bool welcome(std::string_view cmd);
    // The INITIATE command's body, carrying our metadata (READY's properties) and our vouch;
    // empty when the server's session key is unusable.
    std::string initiate(std::string_view metadata);
    // The READY command's body: false unless it is sealed by the server's session key; its
    // metadata (the server's properties) into `metadata`.
    bool ready(std::string_view cmd, std::string *metadata = nullptr);
    // Thread-safe: a MESSAGE command's body for one frame (each call takes the next nonce; the
    // caller writes them in the order taken, under its write turn).
    std::string seal(unsigned char flags, std::string_view payload);
    // Reader: a MESSAGE command's frame; false for anything else, a forged or replayed one.
    // The payload is appended to `payload` (cleared first unless `append`).
    bool open(std::string_view cmd, unsigned char &flags, std::string &payload,
              bool append = false);

  private:
    Key server_, public_, secret_;
    Key cn_public_{}, cn_secret_{};  // this connection's short-term keypair (C', c')
    Key cn_server_{};                // the server's short-term key (S')
    std::array<unsigned char, 96> cookie_{};
    std::array<unsigned char, 32> precomputed_{};  // of (S', c')
    std::atomic<std::uint64_t> nonce_{1};          // ours: HELLO 1, INITIATE 2, MESSAGEs on
    std::uint64_t peer_nonce_ = 0;                 // the server's last, which only grows
};

class CurveServer {
  public:
    using Key = CurveKey;
    static constexpr unsigned char kMore = CurveClient::kMore, kCommand = CurveClient::kCommand;
    // The largest INITIATE accepted (its metadata is a few properties).
    static constexpr std::size_t kMaxInitiate = 4096;

    // Our long-term keypair.
    CurveServer(const Key &public_key, const Key &secret_key);
    ~CurveServer();
    CurveServer(const CurveServer &) = delete;
    CurveServer &operator=(const CurveServer &) = delete;

    // The HELLO command's body: false unless it is CURVE 1.0 sealed for our key.
    bool hello(std::string_view cmd);
    // The WELCOME command's body, after hello(): our short-term key and a cookie, sealed; empty
    // when the client's short-term key is unusable.
    std::string welcome();
    // The INITIATE command's body: false unless its cookie is ours and the client proved it
    // holds the long-term secret of `client_key` (its vouch); its metadata into `metadata`.
    // Whether that key is admitted is the caller's to judge.
    bool initiate(std::string_view cmd, Key &client_key, std::string &metadata);
    // The READY command's body, carrying our metadata.
    std::string ready(std::string_view metadata);
    // A MESSAGE command's body for one frame (not thread-safe).
    std::string seal(unsigned char flags, std::string_view payload);
    // A MESSAGE from the client, as CurveClient::open.
    bool open(std::string_view cmd, unsigned char &flags, std::string &payload,
              bool append = false);

  private:
    Key public_, secret_;
    Key cn_public_{}, cn_secret_{};  // this connection's short-term keypair (S', s')
    Key cn_client_{};                // the client's short-term key (C')
    std::array<unsigned char, 32> cookie_key_{};
    std::array<unsigned char, 32> precomputed_{};  // of (C', s')
    bool helloed_ = false, initiated_ = false;
    std::uint64_t nonce_ = 1;       // ours: READY 1, MESSAGEs on
    std::uint64_t peer_nonce_ = 0;  // the client's last, which only grows
};

}  // namespace zpmix
