// msg::Reader over arbitrary bytes: stepping over values (skip, raw) and the typed reads every
// message field uses. Any input must end in a value or a ReadError, never anything else.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/protocol/reader.hpp"

namespace {

using zpmix::msg::Reader;
using zpmix::msg::ReadError;

// Reads one T from the start of the input; a ReadError is a fine answer.
template <class T>
void read_as(const char *p, std::size_t n, std::size_t max_elements) {
    try {
        Reader r(p, n, max_elements);
        T value{};
        zpmix::msg::read(r, value);
        (void)r.at_end();
    } catch (const ReadError &) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto *p = reinterpret_cast<const char *>(data);
    // Every value in turn, as decode() steps over unknown fields.
    try {
        Reader r(p, size);
        while (!r.at_end()) {
            const char *before = r.position();
            const std::string_view v = r.raw(8);
            if (v.data() != before || v.empty() || r.position() != before + v.size())
                __builtin_trap();
        }
    } catch (const ReadError &) {
    }
    // The scalar reads at the first byte.
    try {
        Reader r(p, size);
        (void)r.next_is_str();
        (void)r.nil();
        (void)r.integer();
    } catch (const ReadError &) {
    }
    try {
        Reader r(p, size);
        (void)r.floating();
    } catch (const ReadError &) {
    }
    try {
        Reader r(p, size);
        (void)r.boolean();
    } catch (const ReadError &) {
    }
    // The field types messages have, with a small element bound too.
    for (std::size_t max : {std::size_t{1} << 20, std::size_t{3}}) {
        read_as<std::uint8_t>(p, size, max);
        read_as<std::int16_t>(p, size, max);
        read_as<std::uint32_t>(p, size, max);
        read_as<std::int64_t>(p, size, max);
        read_as<float>(p, size, max);
        read_as<std::string>(p, size, max);
        read_as<std::vector<char>>(p, size, max);
        read_as<std::vector<std::string>>(p, size, max);
        read_as<std::vector<std::vector<unsigned char>>>(p, size, max);
        read_as<std::pair<std::string, std::uint32_t>>(p, size, max);
        read_as<std::vector<std::pair<std::string, std::uint32_t>>>(p, size, max);
        read_as<std::set<std::int32_t>>(p, size, max);
        read_as<std::map<std::string, std::vector<std::uint64_t>>>(p, size, max);
        read_as<std::unordered_map<std::uint32_t, std::string>>(p, size, max);
        read_as<std::optional<std::pair<std::int8_t, double>>>(p, size, max);
        read_as<std::map<std::string, std::optional<std::vector<std::int64_t>>>>(p, size, max);
    }
    return 0;
}
