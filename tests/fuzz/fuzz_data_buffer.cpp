// The data buffers a program receives from its peers (client/values/data_buffer.cpp):
// PMIx_Data_unpack of arbitrary bytes as each type, and PMIx_Data_decompress of them. Each must
// unpack or fail with a status, leaving nothing allocated; what unpacks must pack again to the
// bytes it was read from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <pmix.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    // The first byte picks the type to read as (every code zpmix holds, and some it does not).
    if (size == 0) return 0;
    const auto type = static_cast<pmix_data_type_t>(data[0] % 72);
    const size_t object = zpmix_type_size(type);
    pmix_data_buffer_t in;
    PMIX_DATA_BUFFER_CONSTRUCT(&in);
    char *copy = static_cast<char *>(malloc(size - 1 + 1));
    memcpy(copy, data + 1, size - 1);
    PMIX_DATA_BUFFER_LOAD(&in, copy, size - 1);
    int32_t n = 4;
    void *out = object ? zpmix_array_create(type, 4) : nullptr;
    const char *before = in.unpack_ptr;
    if (object && PMIx_Data_unpack(nullptr, &in, out, &n, type) == PMIX_SUCCESS) {
        const std::string read(before, static_cast<size_t>(in.unpack_ptr - before));
        pmix_data_buffer_t again;
        PMIX_DATA_BUFFER_CONSTRUCT(&again);
        if (PMIx_Data_pack(nullptr, &again, out, n, type) != PMIX_SUCCESS) __builtin_trap();
        if (std::string(again.base_ptr, again.bytes_used) != read) {
            // msgpack has several encodings of one value: the packed form must read back the same
            int32_t m = 4;
            void *twice = zpmix_array_create(type, 4);
            if (PMIx_Data_unpack(nullptr, &again, twice, &m, type) != PMIX_SUCCESS || m != n)
                __builtin_trap();
            zpmix_array_free(type, twice, 4);
        }
        PMIX_DATA_BUFFER_DESTRUCT(&again);
    }
    if (out) zpmix_array_free(type, out, 4);
    PMIX_DATA_BUFFER_DESTRUCT(&in);

    std::uint8_t *inflated = nullptr;
    size_t ninflated = 0;
    if (PMIx_Data_decompress(data, size, &inflated, &ninflated)) free(inflated);
    return 0;
}
