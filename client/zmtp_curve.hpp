#pragma once
// A client's half of CurveZMQ (rfc.zeromq.org/spec/26), the CURVE mechanism of ZMTP 3, on
// libsodium: HELLO and INITIATE made, the server's WELCOME and READY checked, and every frame
// after the handshake sealed into or opened from a MESSAGE command. ZmtpConnection speaks it on
// tcp, where the broker's listener is libzmq with CURVE (nothing crosses the network in clear).
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace zpmix::client {

class CurveClient {
  public:
    using Key = std::array<unsigned char, 32>;
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
    // The READY command's body: false unless it is sealed by the server's session key.
    bool ready(std::string_view cmd);
    // Thread-safe: a MESSAGE command's body for one frame (each call takes the next nonce; the
    // caller writes them in the order taken, under its write turn).
    std::string seal(unsigned char flags, std::string_view payload);
    // Reader: a MESSAGE command's frame; false for anything else, a forged or replayed one.
    bool open(std::string_view cmd, unsigned char &flags, std::string &payload);

  private:
    Key server_, public_, secret_;
    Key cn_public_{}, cn_secret_{};  // this connection's short-term keypair (C', c')
    Key cn_server_{};                // the server's short-term key (S')
    std::array<unsigned char, 96> cookie_{};
    std::array<unsigned char, 32> precomputed_{};  // of (S', c')
    std::atomic<std::uint64_t> nonce_{1};          // ours: HELLO 1, INITIATE 2, MESSAGEs on
    std::uint64_t peer_nonce_ = 0;                 // the server's last, which only grows
};

}  // namespace zpmix::client
