#pragma once
// Messages every peer understands. Each message type is a plain struct with a msgpack map
// adaptor, declared once here (or in a sibling header) and used by both ends.
#include <cstdint>
#include <string>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

namespace zpmix::msg {

// The answer to any request that failed: unknown type, malformed body, refused, or an error of
// the operation itself. `status` is a PMIx status code (pmix_status_t).
struct ErrorReply {
    static constexpr const char *type = "error";
    std::int32_t status = 0;
    std::string message;
    ZPMIX_MSG_MAP(status, message);
};

// A reply that carries nothing but success.
struct Ok {
    static constexpr const char *type = "ok";
    std::int32_t status = 0;
    ZPMIX_MSG_MAP(status);
};

}  // namespace zpmix::msg
