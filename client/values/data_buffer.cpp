// zpmix: data_pack/unpack/copy/print and data_compress/decompress: the buffers a
// program packs for its own messages to peers (any PMIx type, in zpmix's wire form).
//
// Buffer format: one msgpack array [type, [payload...]] per data_pack call, the payloads in
// the value codec's form (client/values/value_codec.hpp), so a buffer is readable by any zpmix
// process whatever the peer (`target`/`source` change nothing). data_unpack reads one such
// call at a time, as the reference implementation does: the type must be the packed one
// (PMIX_ERR_TYPE_MISMATCH) and `*max_num_values` must hold it (PMIX_ERR_UNPACK_INADEQUATE_SPACE;
// nothing is consumed on either refusal). Unpacking reads untrusted bytes: every size is bounded
// by the buffer (fuzz_data_buffer.cpp).
//
// Compressed form: "ZPZ1", the original size (uint64, little-endian), then a zlib stream.
// Decompressing refuses anything else, a declared size above kMaxInflated or beyond what zlib can
// inflate that many bytes to, or a stream that does not inflate to exactly the declared size.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <msgpack.hpp>

#include "client/values/data_buffer.hpp"
#include "client/values/pmix_types.hpp"
#include "pmix.h"

namespace {

using namespace zpmix::c;

constexpr char kMagic[4] = {'Z', 'P', 'Z', '1'};
constexpr size_t kHeader = sizeof kMagic + sizeof(std::uint64_t);
constexpr std::uint64_t kMaxInflated = std::uint64_t{1} << 32;  // 4 GiB
constexpr size_t kMinCompress = 64;  // below this, compressing cannot pay for the header

// Appends `bytes` at the buffer's end, growing it geometrically.
pmix_status_t append(pmix_data_buffer_t *b, const char *bytes, size_t n) {
    if (b->bytes_used + n > b->bytes_allocated) {
        size_t cap = b->bytes_allocated < 256 ? 256 : b->bytes_allocated;
        while (cap < b->bytes_used + n) cap *= 2;
        const size_t unpacked = b->base_ptr ? static_cast<size_t>(b->unpack_ptr - b->base_ptr) : 0;
        auto *grown = static_cast<char *>(realloc(b->base_ptr, cap));
        if (grown == nullptr) return PMIX_ERR_NOMEM;
        b->base_ptr = grown;
        b->unpack_ptr = grown + unpacked;
        b->bytes_allocated = cap;
    }
    memcpy(b->base_ptr + b->bytes_used, bytes, n);
    b->bytes_used += n;
    b->pack_ptr = b->base_ptr + b->bytes_used;
    return PMIX_SUCCESS;
}

void put_u64(unsigned char *p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_u64(const unsigned char *p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    return v;
}

}  // namespace

namespace zpmix::c {

pmix_status_t data_pack(pmix_data_buffer_t *buffer, void *src, int32_t num_vals,
                        pmix_data_type_t type) {
    if (buffer == nullptr || num_vals < 0 || (src == nullptr && num_vals > 0))
        return PMIX_ERR_BAD_PARAM;
    if (type_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    const auto n = static_cast<size_t>(num_vals);
    if (!array_encodable(type, src, n, 0)) return PMIX_ERR_NOT_SUPPORTED;  // pointers ...
    msgpack::sbuffer out;
    Packer pk(out);
    pk.pack_array(2);
    pk.pack(static_cast<std::uint16_t>(type));
    pack_array_of(pk, type, src, n);
    return append(buffer, out.data(), out.size());
}

pmix_status_t data_unpack(pmix_data_buffer_t *buffer, void *dest, int32_t *max_num_values,
                          pmix_data_type_t type) {
    if (buffer == nullptr || max_num_values == nullptr || *max_num_values < 0)
        return PMIX_ERR_BAD_PARAM;
    if (type_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (buffer->base_ptr == nullptr || buffer->unpack_ptr < buffer->base_ptr) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    const size_t offset = static_cast<size_t>(buffer->unpack_ptr - buffer->base_ptr);
    if (offset >= buffer->bytes_used) return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    msgpack::object_handle oh;
    size_t read = offset;
    try {
        // Every element takes at least one byte: bounding counts by the bytes present keeps a
        // forged length from allocating more than the buffer could ever describe.
        const size_t left = buffer->bytes_used - offset;
        const msgpack::unpack_limit limit(left, left, left, left, left, 64);
        oh = msgpack::unpack(buffer->base_ptr, buffer->bytes_used, read, nullptr, nullptr, limit);
    } catch (const msgpack::insufficient_bytes &) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    } catch (const std::exception &) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    const msgpack::object &o = oh.get();
    if (o.type != msgpack::type::ARRAY || o.via.array.size != 2 ||
        o.via.array.ptr[0].type != msgpack::type::POSITIVE_INTEGER ||
        o.via.array.ptr[1].type != msgpack::type::ARRAY)
        return PMIX_ERR_UNPACK_FAILURE;
    if (o.via.array.ptr[0].via.u64 != type) return PMIX_ERR_TYPE_MISMATCH;
    const msgpack::object &values = o.via.array.ptr[1];
    if (values.via.array.size > static_cast<std::uint32_t>(*max_num_values))
        return PMIX_ERR_UNPACK_INADEQUATE_SPACE;
    if (values.via.array.size > 0 && dest == nullptr) return PMIX_ERR_BAD_PARAM;
    const size_t size = type_size(type);
    for (std::uint32_t i = 0; i < values.via.array.size; ++i) {
        void *at = static_cast<char *>(dest) + i * size;
        memset(at, 0, size);
        if (pmix_status_t rc = unpack_object(values.via.array.ptr[i], type, at, 0);
            rc != PMIX_SUCCESS) {
            for (std::uint32_t k = 0; k < i; ++k)
                object_destruct(type, static_cast<char *>(dest) + k * size);
            return rc == PMIX_ERR_BAD_PARAM ? PMIX_ERR_UNPACK_FAILURE : rc;
        }
    }
    *max_num_values = static_cast<int32_t>(values.via.array.size);
    buffer->unpack_ptr = buffer->base_ptr + read;
    return PMIX_SUCCESS;
}

// A string is passed as the string itself (char *), every other type as a pointer to one object.
pmix_status_t data_copy(void **dest, void *src, pmix_data_type_t type) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    *dest = nullptr;
    if (type_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (type == PMIX_STRING) {
        *dest = strdup(static_cast<const char *>(src));
        return *dest ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    void *copy = calloc(1, type_size(type));
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    if (pmix_status_t rc = object_xfer(type, copy, src); rc != PMIX_SUCCESS) {
        free(copy);
        return rc;
    }
    *dest = copy;
    return PMIX_SUCCESS;
}

// As data_copy, a string is the string itself. "<prefix>Data type: NAME\tValue: TEXT".
pmix_status_t data_print(char **output, char *prefix, void *src, pmix_data_type_t type) {
    if (output == nullptr) return PMIX_ERR_BAD_PARAM;
    *output = nullptr;
    const DataType &d = data_type(type);
    if (d.size == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    std::string text = prefix ? prefix : "";
    text += "Data type: ";
    text += d.name;
    text += "\tValue: ";
    char *str = static_cast<char *>(src);
    const void *obj = type == PMIX_STRING ? static_cast<const void *>(&str) : src;
    if (src == nullptr)
        text += "NULL";
    else if (d.ops == nullptr || d.ops->print == nullptr)
        text += std::string("<") + d.name + ">";
    else
        d.ops->print(text, obj);
    *output = strdup(text.c_str());
    return *output ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

bool data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes) {
    if (outbytes == nullptr || nbytes == nullptr) return false;
    *outbytes = nullptr;
    *nbytes = 0;
    if (inbytes == nullptr || size < kMinCompress || size > kMaxInflated) return false;
    const uLong bound = compressBound(static_cast<uLong>(size));
    auto *out = static_cast<uint8_t *>(malloc(kHeader + bound));
    if (out == nullptr) return false;
    uLongf len = bound;
    if (compress2(out + kHeader, &len, inbytes, static_cast<uLong>(size), Z_DEFAULT_COMPRESSION) !=
            Z_OK ||
        kHeader + len >= size) {  // no smaller: the caller keeps its bytes
        free(out);
        return false;
    }
    memcpy(out, kMagic, sizeof kMagic);
    put_u64(out + sizeof kMagic, size);
    *outbytes = out;
    *nbytes = kHeader + len;
    return true;
}

bool data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes) {
    if (outbytes == nullptr || nbytes == nullptr) return false;
    *outbytes = nullptr;
    *nbytes = 0;
    if (inbytes == nullptr || size <= kHeader || memcmp(inbytes, kMagic, sizeof kMagic) != 0)
        return false;
    const std::uint64_t original = get_u64(inbytes + sizeof kMagic);
    // zlib cannot inflate more than about 1032 times: a larger claim is a lie, not an allocation.
    if (original == 0 || original > kMaxInflated || original / 1100 > size - kHeader) return false;
    auto *out = static_cast<uint8_t *>(malloc(original));
    if (out == nullptr) return false;
    uLongf len = static_cast<uLongf>(original);
    if (uncompress(out, &len, inbytes + kHeader, static_cast<uLong>(size - kHeader)) != Z_OK ||
        len != original) {
        free(out);
        return false;
    }
    *outbytes = out;
    *nbytes = len;
    return true;
}

}  // namespace zpmix::c
