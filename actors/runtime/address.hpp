#pragma once
// The address grammar of actors on other brokers: "@<rank>/<address>" is `address` (an actor's
// name, or a peer's routing id) on broker `rank`, "@*/<address>" the same on every broker. The Bus
// hands such addresses to the tree link (actors/tree/link.hpp); a message that arrives over the
// tree carries its sender as "@<rank>/<from>", so that a reply finds its way back.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zpmix {

// "@<rank>/<address>": `address` on broker `rank`; "@*/<address>": on every broker.
inline std::string remote_address(std::uint32_t rank, std::string_view address) {
    return "@" + std::to_string(rank) + "/" + std::string(address);
}
inline std::string every_broker(std::string_view address) {
    return "@*/" + std::string(address);
}
inline bool is_remote_address(std::string_view to) {
    return !to.empty() && to.front() == '@';
}
// The broker an address names ("@<rank>/<address>": a message over the tree came from there);
// none for any other.
inline std::optional<std::uint32_t> sender_broker(std::string_view from) {
    const auto slash = from.find('/');
    if (from.empty() || from.front() != '@' || slash == std::string_view::npos || slash == 1)
        return std::nullopt;
    std::uint32_t rank = 0;
    auto [end, ec] = std::from_chars(from.data() + 1, from.data() + slash, rank);
    if (ec != std::errc() || end != from.data() + slash) return std::nullopt;
    return rank;
}

}  // namespace zpmix
