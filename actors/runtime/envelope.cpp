#include "actors/runtime/envelope.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace zpmix {

namespace {

// Keys of the envelope map, in the order they are packed.
constexpr std::string_view kVersion = "v", kType = "t", kId = "id", kFrom = "from", kBody = "body";

bool borrow_all(msgpack::type::object_type, std::size_t, void *) {
    return true;
}

}  // namespace

msgpack::object_handle unpack_bounded(const char *data, std::size_t size,
                                      const DecodeLimits &limits, bool borrow) {
    if (size > limits.max_message)
        throw DecodeError("message of " + std::to_string(size) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_message));
    // A container needs at least one byte per element (two per map entry), so the message size
    // bounds every honest count; anything larger is a lie we refuse before allocating for it.
    const std::size_t elems = std::min(limits.max_elements, size);
    const msgpack::unpack_limit bounds(elems, elems / 2, size, size, size, limits.max_depth);
    // The zone holds the object tree (and, unless borrowing, copies of the strings): sized to
    // the message, a small message costs one small allocation rather than the default 8 KiB.
    auto zone = std::make_unique<msgpack::zone>(std::min<std::size_t>(8192, 4 * size + 256));
    const msgpack::unpack_reference_func reference = borrow ? borrow_all : nullptr;
    try {
        std::size_t offset = 0;
        bool referenced = false;
        msgpack::object obj =
            msgpack::unpack(*zone, data, size, offset, referenced, reference, nullptr, bounds);
        if (offset != size) throw DecodeError("trailing bytes after the message");
        return msgpack::object_handle(obj, std::move(zone));
    } catch (const DecodeError &) {
        throw;
    } catch (const std::exception &e) {
        throw DecodeError(std::string("malformed message: ") + e.what());
    }
}

namespace {

// Reads the header fields and finds the body, which as<T>() reads (and checks) into its struct:
// walking it here too cost as much as reading it.
Envelope decode_envelope(const void *data, std::size_t size, const DecodeLimits &limits) {
    if (size > limits.max_message)
        throw DecodeError("message of " + std::to_string(size) + " bytes exceeds the limit of " +
                          std::to_string(limits.max_message));
    const std::size_t depth = limits.max_depth > 0 ? limits.max_depth - 1 : 0;
    Envelope env;
    env.max_elements = limits.max_elements;
    bool have_type = false;
    bool body_is_rest = false;
    try {
        msg::Reader r(static_cast<const char *>(data), size, limits.max_elements);
        const std::uint32_t n = r.map_header();
        for (std::uint32_t k = 0; k < n; ++k) {
            if (!r.next_is_str()) {  // ignore what we do not know
                r.skip(depth);
                r.skip(depth);
                continue;
            }
            const std::string_view key = r.str_or_bin();
            if (key == kVersion) {
                msg::read(r, env.version);
            } else if (key == kType) {
                env.type = r.str_or_bin();
                have_type = true;
            } else if (key == kId) {
                msg::read(r, env.id);
            } else if (key == kFrom) {
                env.from = r.str_or_bin();
            } else if (key == kBody && k + 1 == n) {
                // Last, as we pack it: the rest of the message, checked when read (as<T>()).
                const char *begin = r.position();
                env.body = {begin, size - static_cast<std::size_t>(
                                              begin - static_cast<const char *>(data))};
                if (env.body.empty()) throw DecodeError("truncated message");
                body_is_rest = true;
                break;
            } else if (key == kBody) {
                env.body = r.raw(depth);
            } else {
                r.skip(depth);
            }
        }
        if (!body_is_rest && !r.at_end()) throw DecodeError("trailing bytes after the message");
    } catch (const msg::ReadError &e) {
        throw DecodeError(std::string("malformed message: ") + e.what());
    }
    if (!have_type || env.type.empty()) throw DecodeError("envelope has no message type");
    if (env.version == 0) throw DecodeError("envelope has no protocol version");
    return env;
}

}  // namespace

void Envelope::own() {
    if (owner || body.empty()) return;
    auto copy = std::make_shared_for_overwrite<char[]>(body.size());
    std::memcpy(copy.get(), body.data(), body.size());
    body = {copy.get(), body.size()};
    owner = std::move(copy);
}

Envelope decode(const void *data, std::size_t size, const DecodeLimits &limits) {
    Envelope env = decode_envelope(data, size, limits);
    env.own();
    return env;
}

Envelope decode_borrowed(const void *data, std::size_t size, const DecodeLimits &limits) {
    return decode_envelope(data, size, limits);
}

Envelope decode_in_place(std::shared_ptr<const zmq::message_t> msg, const DecodeLimits &limits) {
    Envelope env = decode_envelope(msg->data(), msg->size(), limits);
    if (!env.body.empty()) env.owner = std::move(msg);
    return env;
}

PackBuffer::PackBuffer(std::size_t capacity)
    : data_(static_cast<char *>(std::malloc(capacity))), capacity_(capacity) {
    if (!data_) throw std::bad_alloc();
}

void PackBuffer::grow(std::size_t n) {
    const std::size_t capacity = std::max(2 * capacity_, size_ + n);
    char *data = static_cast<char *>(std::realloc(data_, capacity));
    if (!data) throw std::bad_alloc();
    data_ = data;
    capacity_ = capacity;
}

zmq::message_t PackBuffer::to_message() && {
    char *data = std::exchange(data_, nullptr);
    return zmq::message_t(
        data, size_, [](void *p, void *) { std::free(p); }, nullptr);
}

namespace detail {

void pack_header(msgpack::packer<PackBuffer> &pk, std::uint32_t version, std::string_view type,
                 std::uint64_t id, std::string_view from) {
    pk.pack_map(from.empty() ? 4 : 5);
    pk.pack(kVersion);
    pk.pack(version);
    pk.pack(kType);
    pk.pack(type);
    pk.pack(kId);
    pk.pack(id);
    if (!from.empty()) {
        pk.pack(kFrom);
        pk.pack_bin(static_cast<std::uint32_t>(from.size()));
        pk.pack_bin_body(from.data(), static_cast<std::uint32_t>(from.size()));
    }
    pk.pack(kBody);
}

}  // namespace detail
}  // namespace zpmix
