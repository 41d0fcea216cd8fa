// The client's value codec (client/values/value_codec.*) decoding bytes from other processes
// (event infos, committed values, cached data): decode_value, decode_info and decode_infos over
// arbitrary bytes. Each must decode or fail with a status, leaving nothing allocated; what it
// decodes must encode again, and that encoding must decode and encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include <pmix.h>
#include <msgpack.hpp>

#include "client/values/value_codec.hpp"

namespace {

namespace c = zpmix::c;

std::string bytes_of(const msgpack::sbuffer &b) {
    return {b.data(), b.size()};
}

// Encodes what was decoded; if it encodes, the bytes must read back to the same encoding.
template <class Encode, class Decode>
void round_trip(Encode encode, Decode decode_and_encode) {
    msgpack::sbuffer once;
    c::Packer pk(once);
    if (encode(pk) != PMIX_SUCCESS) return;  // e.g. a type that cannot cross processes
    msgpack::sbuffer twice;
    c::Packer pk2(twice);
    if (decode_and_encode(bytes_of(once), pk2) != PMIX_SUCCESS) __builtin_trap();
    if (bytes_of(once) != bytes_of(twice)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto *p = reinterpret_cast<const char *>(data);

    pmix_value_t v;
    if (c::decode_value(p, size, &v) == PMIX_SUCCESS) {
        round_trip([&](c::Packer &pk) { return c::encode_value(pk, v); },
                   [](const std::string &b, c::Packer &pk) {
                       pmix_value_t w;
                       pmix_status_t rc = c::decode_value(b.data(), b.size(), &w);
                       if (rc == PMIX_SUCCESS) rc = c::encode_value(pk, w);
                       PMIx_Value_destruct(&w);
                       return rc;
                   });
        PMIx_Value_destruct(&v);
    }

    pmix_info_t info;
    if (c::decode_info(p, size, &info) == PMIX_SUCCESS) {
        round_trip([&](c::Packer &pk) { return c::encode_info(pk, info); },
                   [](const std::string &b, c::Packer &pk) {
                       pmix_info_t w;
                       pmix_status_t rc = c::decode_info(b.data(), b.size(), &w);
                       if (rc == PMIX_SUCCESS) rc = c::encode_info(pk, w);
                       PMIX_INFO_DESTRUCT(&w);
                       return rc;
                   });
        PMIX_INFO_DESTRUCT(&info);
    }

    pmix_info_t *infos = nullptr;
    std::size_t ninfos = 0;
    if (c::decode_infos(p, size, &infos, &ninfos) == PMIX_SUCCESS) {
        if ((infos == nullptr) != (ninfos == 0)) __builtin_trap();
        round_trip([&](c::Packer &pk) { return c::encode_infos(pk, infos, ninfos); },
                   [](const std::string &b, c::Packer &pk) {
                       pmix_info_t *w = nullptr;
                       std::size_t nw = 0;
                       pmix_status_t rc = c::decode_infos(b.data(), b.size(), &w, &nw);
                       if (rc == PMIX_SUCCESS) rc = c::encode_infos(pk, w, nw);
                       if (w) PMIX_INFO_FREE(w, nw);
                       return rc;
                   });
        if (infos) PMIX_INFO_FREE(infos, ninfos);
    }
    return 0;
}
