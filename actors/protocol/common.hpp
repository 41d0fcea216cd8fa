#pragma once
// Messages every peer understands. Each message type is a plain struct with a msgpack map
// adaptor, declared once here (or in a sibling header) and used by both ends.
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "actors/protocol/map.hpp"

namespace zpmix::msg {

using Blob = std::vector<char>;  // packed as msgpack bin

inline constexpr std::uint32_t kWildcardRank = 0xfffffffeu;  // PMIX_RANK_WILDCARD

// A process name; rank may be PMIX_RANK_WILDCARD (0xfffffffe) for a whole namespace.
struct Proc {
    std::string nspace;
    std::uint32_t rank = 0;
    auto operator<=>(const Proc &) const = default;
    ZPMIX_MSG_MAP(nspace, rank);
};

// The proc a message acts for, when only that proc may send it (a client commits, contributes,
// notifies ... only as itself): the dispatch refuses such a message from a client session of
// another proc before its handler runs. Messages that act for a proc overload this next to their
// declaration (found by argument-dependent lookup); the others act for nobody.
template <class Msg>
constexpr const Proc *acting_proc(const Msg &) {
    return nullptr;
}

// The answer to any request that failed: unknown type, malformed body, refused, or an error of
// the operation itself. `status` is a PMIx status code (pmix_status_t).
struct ErrorReply {
    static constexpr const char *type = "reply.error";
    std::int32_t status = 0;
    std::string message;
    ZPMIX_MSG_MAP(status, message);
};

// A reply that carries nothing but success.
struct Ok {
    static constexpr const char *type = "reply.ok";
    std::int32_t status = 0;
    ZPMIX_MSG_MAP(status);
};

}  // namespace zpmix::msg
