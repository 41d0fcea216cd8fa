#include "actors/runtime/envelope.hpp"

#include <algorithm>
#include <cstdlib>
#include <span>

namespace zpmix {

namespace {

// Keys of the envelope map, in the order they are packed.
constexpr std::string_view kVersion = "v", kType = "t", kId = "id", kFrom = "from", kBody = "body";

std::string_view str_of(const msgpack::object &o) {
    if (o.type == msgpack::type::STR) return {o.via.str.ptr, o.via.str.size};
    if (o.type == msgpack::type::BIN) return {o.via.bin.ptr, o.via.bin.size};
    throw DecodeError("envelope field is not a string");
}

std::uint64_t uint_of(const msgpack::object &o) {
    if (o.type != msgpack::type::POSITIVE_INTEGER)
        throw DecodeError("envelope field is not a uint");
    return o.via.u64;
}

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

Envelope decode_envelope(const void *data, std::size_t size, const DecodeLimits &limits,
                         bool borrow) {
    auto handle = unpack_bounded(static_cast<const char *>(data), size, limits, borrow);
    const msgpack::object &root = handle.get();
    if (root.type != msgpack::type::MAP) throw DecodeError("envelope is not a map");

    Envelope env;
    bool have_type = false;
    for (const auto &kv : std::span(root.via.map.ptr, root.via.map.size)) {
        if (kv.key.type != msgpack::type::STR) continue;  // ignore what we do not know
        const std::string_view key = str_of(kv.key);
        if (key == kVersion) {
            env.version = static_cast<std::uint32_t>(uint_of(kv.val));
        } else if (key == kType) {
            env.type = str_of(kv.val);
            have_type = true;
        } else if (key == kId) {
            env.id = uint_of(kv.val);
        } else if (key == kFrom) {
            env.from = str_of(kv.val);
        } else if (key == kBody) {
            env.body = kv.val;
        }
    }
    if (!have_type || env.type.empty()) throw DecodeError("envelope has no message type");
    if (env.version == 0) throw DecodeError("envelope has no protocol version");
    env.zone = std::shared_ptr<msgpack::zone>(handle.zone().release());
    return env;
}

}  // namespace

Envelope decode(const void *data, std::size_t size, const DecodeLimits &limits) {
    return decode_envelope(data, size, limits, false);
}

Envelope decode_borrowed(const void *data, std::size_t size, const DecodeLimits &limits) {
    return decode_envelope(data, size, limits, true);
}

Envelope decode_in_place(std::shared_ptr<const zmq::message_t> msg, const DecodeLimits &limits) {
    Envelope env = decode_borrowed(msg->data(), msg->size(), limits);
    env.borrowed = std::move(msg);
    return env;
}

namespace detail {

void pack_header(msgpack::packer<msgpack::sbuffer> &pk, std::string_view type, std::uint64_t id,
                 std::string_view from) {
    pk.pack_map(from.empty() ? 4 : 5);
    pk.pack(kVersion);
    pk.pack(kProtocolVersion);
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

zmq::message_t to_message(msgpack::sbuffer &&buf) {
    const std::size_t size = buf.size();
    char *data = buf.release();
    return zmq::message_t(
        data, size, [](void *p, void *) { std::free(p); }, nullptr);
}

}  // namespace detail
}  // namespace zpmix
