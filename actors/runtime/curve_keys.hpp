#pragma once
// The CURVE keypair of a broker's tcp listener, in Z85 (40 characters each) as libzmq takes it:
// written as "PUBLIC SECRET" (the broker's tcp.key, $ZPMIX_TCP_KEYS). One keypair: the broker
// serves with it and accepts only clients that prove they hold it (broker.cpp's ZAP handler), as
// the broker tree does with its allocation's keypair.
#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <zmq.hpp>

namespace zpmix {

struct CurveKeypair {
    std::string public_key, secret_key;  // Z85

    static CurveKeypair generate() {
        char pub[41] = {}, sec[41] = {};
        if (zmq_curve_keypair(pub, sec) != 0)
            throw std::runtime_error("this libzmq has no CURVE security");
        return {pub, sec};
    }
    // "PUBLIC SECRET" (whitespace around and between); nullopt unless both are 40-char Z85.
    static std::optional<CurveKeypair> parse(std::string_view text) {
        auto word = [&text]() {
            const auto b = text.find_first_not_of(" \t\r\n");
            if (b == std::string_view::npos) return std::string_view();
            text.remove_prefix(b);
            const auto e = std::min(text.find_first_of(" \t\r\n"), text.size());
            const std::string_view w = text.substr(0, e);
            text.remove_prefix(e);
            return w;
        };
        CurveKeypair k{std::string(word()), std::string(word())};
        if (!word().empty() || !decode(k.public_key) || !decode(k.secret_key)) return std::nullopt;
        return k;
    }
    std::string text() const { return public_key + " " + secret_key; }

    // A Z85 key's 32 bytes, or nullopt.
    static std::optional<std::array<unsigned char, 32>> decode(const std::string &z85) {
        std::array<unsigned char, 32> out{};
        if (z85.size() != 40 || zmq_z85_decode(out.data(), z85.c_str()) == nullptr)
            return std::nullopt;
        return out;
    }

    // A libzmq socket connecting as a client holding this keypair.
    void apply_to_client(zmq::socket_t &s) const {
        s.set(zmq::sockopt::curve_serverkey, public_key);
        s.set(zmq::sockopt::curve_publickey, public_key);
        s.set(zmq::sockopt::curve_secretkey, secret_key);
    }
};

}  // namespace zpmix
