// Unit tests of the data buffers programs pack for their peers (PMIx_Data_pack/unpack/copy/print)
// and of PMIx_Data_compress/decompress, through the C API: every type zpmix holds round-trips.
#define BOOST_TEST_MODULE pmix_data_buffer
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <pmix.h>

#include "unit_c/type_samples.hpp"

using namespace zpmix_test;

namespace {

std::string name(pmix_data_type_t t) {
    return PMIx_Data_type_string(t);
}

// Compares two objects of type `t` through data arrays of one element each.
pmix_value_cmp_t compare(pmix_data_type_t t, void *a, void *b) {
    pmix_data_array_t da{t, 1, a}, db{t, 1, b};
    pmix_value_t va, vb;
    va.type = vb.type = PMIX_DATA_ARRAY;
    va.data.darray = &da;
    vb.data.darray = &db;
    return PMIx_Value_compare(&va, &vb);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_type_packs_and_unpacks) {
    int walked = 0;
    for (int code = 0; code <= PMIX_DATA_TYPE_MAX; ++code) {
        auto t = static_cast<pmix_data_type_t>(code);
        const size_t size = zpmix_type_size(t);
        if (size == 0) continue;
        BOOST_TEST_CONTEXT("type " << name(t)) {
            // two samples in one call, then a number in another
            auto *objs = static_cast<char *>(zpmix_array_create(t, 2));
            BOOST_REQUIRE(fill_sample(t, objs, 0));
            BOOST_REQUIRE(fill_sample(t, objs + size, 1));
            pmix_data_buffer_t buf;
            PMIX_DATA_BUFFER_CONSTRUCT(&buf);
            const pmix_status_t packed = PMIx_Data_pack(nullptr, &buf, objs, 2, t);
            if (t == PMIX_POINTER) {  // an address means nothing in another process
                BOOST_TEST(packed == PMIX_ERR_NOT_SUPPORTED);
                BOOST_TEST(buf.bytes_used == 0u);
                zpmix_array_free(t, objs, 2);
                PMIX_DATA_BUFFER_DESTRUCT(&buf);
                continue;
            }
            BOOST_REQUIRE_EQUAL(packed, PMIX_SUCCESS);
            int32_t after = 7;
            BOOST_REQUIRE_EQUAL(PMIx_Data_pack(nullptr, &buf, &after, 1, PMIX_INT32), PMIX_SUCCESS);

            // through the bytes, as a peer receives them
            pmix_byte_object_t bytes;
            BOOST_REQUIRE_EQUAL(PMIx_Data_unload(&buf, &bytes), PMIX_SUCCESS);
            pmix_data_buffer_t in;
            PMIX_DATA_BUFFER_CONSTRUCT(&in);
            BOOST_REQUIRE_EQUAL(PMIx_Data_load(&in, &bytes), PMIX_SUCCESS);

            auto *out = static_cast<char *>(zpmix_array_create(t, 2));
            int32_t n = 1;
            BOOST_TEST(PMIx_Data_unpack(nullptr, &in, out, &n, t) ==
                       PMIX_ERR_UNPACK_INADEQUATE_SPACE);
            const pmix_data_type_t other = t == PMIX_INT64 ? PMIX_INT32 : PMIX_INT64;
            int64_t wrong[2];
            n = 2;
            BOOST_TEST(PMIx_Data_unpack(nullptr, &in, wrong, &n, other) == PMIX_ERR_TYPE_MISMATCH);
            n = 2;
            BOOST_REQUIRE_EQUAL(PMIx_Data_unpack(nullptr, &in, out, &n, t), PMIX_SUCCESS);
            BOOST_TEST(n == 2);
            BOOST_TEST(compare(t, out, objs) == PMIX_EQUAL);
            BOOST_TEST(compare(t, out + size, objs + size) == PMIX_EQUAL);
            int32_t back = 0;
            n = 1;
            BOOST_TEST(PMIx_Data_unpack(nullptr, &in, &back, &n, PMIX_INT32) == PMIX_SUCCESS);
            BOOST_TEST(back == 7);
            BOOST_TEST(PMIx_Data_unpack(nullptr, &in, &back, &n, PMIX_INT32) ==
                       PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);

            // a copy equals its source; printing names the type
            void *copy = nullptr;
            void *src = t == PMIX_STRING ? *reinterpret_cast<char **>(objs) : objs;
            BOOST_REQUIRE_EQUAL(PMIx_Data_copy(&copy, src, t), PMIX_SUCCESS);
            if (t == PMIX_STRING) {
                BOOST_TEST(std::string(static_cast<char *>(copy)) == static_cast<char *>(src));
                free(copy);
            } else {
                BOOST_TEST(compare(t, copy, objs) == PMIX_EQUAL);
                zpmix_array_free(t, copy, 1);
            }
            char *text = nullptr;
            BOOST_REQUIRE_EQUAL(PMIx_Data_print(&text, const_cast<char *>("> "), src, t),
                                PMIX_SUCCESS);
            BOOST_TEST(std::string(text).rfind("> Data type: " + name(t), 0) == 0u, text);
            free(text);

            zpmix_array_free(t, out, 2);
            zpmix_array_free(t, objs, 2);
            PMIX_DATA_BUFFER_DESTRUCT(&in);
            ++walked;
        }
    }
    BOOST_TEST(walked == 64);  // every code but UNDEF, KVAL, BUFFER, and POINTER
}

BOOST_AUTO_TEST_CASE(unpacking_bad_bytes_fails_cleanly) {
    const char garbage[] = "\x92\xcd\x00\x03\x91\xc1";  // [3, [<reserved byte>]]
    pmix_data_buffer_t in;
    PMIX_DATA_BUFFER_CONSTRUCT(&in);
    char *bytes = static_cast<char *>(malloc(sizeof garbage - 1));
    memcpy(bytes, garbage, sizeof garbage - 1);  // it holds a zero: not strdup
    PMIX_DATA_BUFFER_LOAD(&in, bytes, sizeof garbage - 1);
    char *s[1] = {nullptr};
    int32_t n = 1;
    BOOST_TEST(PMIx_Data_unpack(nullptr, &in, s, &n, PMIX_STRING) == PMIX_ERR_UNPACK_FAILURE);
    PMIX_DATA_BUFFER_DESTRUCT(&in);
    PMIX_DATA_BUFFER_CONSTRUCT(&in);
    PMIX_DATA_BUFFER_LOAD(&in, strdup("\x92\x03"), 2);  // cut short
    BOOST_TEST(PMIx_Data_unpack(nullptr, &in, s, &n, PMIX_STRING) ==
               PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    PMIX_DATA_BUFFER_DESTRUCT(&in);
}

BOOST_AUTO_TEST_CASE(compress_round_trips_and_refuses_what_it_did_not_make) {
    std::string text;
    for (int i = 0; i < 1000; ++i) text += "rank " + std::to_string(i % 7) + " is on node n1\n";
    const auto *in = reinterpret_cast<const uint8_t *>(text.data());
    uint8_t *packed = nullptr;
    size_t npacked = 0;
    BOOST_REQUIRE(PMIx_Data_compress(in, text.size(), &packed, &npacked));
    BOOST_TEST(npacked < text.size() / 4);
    uint8_t *back = nullptr;
    size_t nback = 0;
    BOOST_REQUIRE(PMIx_Data_decompress(packed, npacked, &back, &nback));
    BOOST_TEST(std::string(reinterpret_cast<char *>(back), nback) == text);
    free(back);

    // a flipped byte in the stream, a cut stream, a lying size: refused, nothing returned
    std::vector<uint8_t> bad(packed, packed + npacked);
    bad[bad.size() / 2] ^= 0x55;
    BOOST_TEST(!PMIx_Data_decompress(bad.data(), bad.size(), &back, &nback));
    BOOST_TEST(back == nullptr);
    BOOST_TEST(!PMIx_Data_decompress(packed, npacked - 5, &back, &nback));
    std::vector<uint8_t> liar(packed, packed + npacked);
    liar[4 + 7] = 0x7f;  // claims ~2^62 bytes
    BOOST_TEST(!PMIx_Data_decompress(liar.data(), liar.size(), &back, &nback));
    BOOST_TEST(!PMIx_Data_decompress(in, text.size(), &back, &nback));  // not compressed
    free(packed);

    // what does not shrink is not compressed
    BOOST_TEST(
        !PMIx_Data_compress(reinterpret_cast<const uint8_t *>("tiny"), 4, &packed, &npacked));
    BOOST_TEST(packed == nullptr);
}
