// Unit tests of the PMIx data type table, through the C API: every type the standard defines has
// a row, and every type zpmix holds loads, copies, compares, crosses the wire, prints and frees.
#define BOOST_TEST_MODULE pmix_types
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <pmix.h>

#include "client/values/value_codec.hpp"
#include "unit_c/type_samples.hpp"

using namespace zpmix::c;
using namespace zpmix_test;

namespace {

constexpr const char *kUnknown = "UNKNOWN DATA TYPE";

bool has_row(pmix_data_type_t t) {
    return std::strcmp(PMIx_Data_type_string(t), kUnknown) != 0;
}

// The type's name in test messages.
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

std::string encode(const pmix_value_t &v, pmix_status_t expect) {
    msgpack::sbuffer sb;
    Packer pk(sb);
    BOOST_REQUIRE_EQUAL(encode_value(pk, v), expect);
    return std::string(sb.data(), sb.size());
}

// Through the wire and back: equal, and encoded again to the same bytes.
void check_wire(pmix_value_t *v, pmix_data_type_t t) {
    if (t == PMIX_POINTER) {  // an address means nothing in another process
        encode(*v, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    std::string bytes = encode(*v, PMIX_SUCCESS);
    pmix_value_t out;
    BOOST_REQUIRE_MESSAGE(decode_value(bytes.data(), bytes.size(), &out) == PMIX_SUCCESS,
                          "decode of " << name(t));
    BOOST_TEST(PMIx_Value_compare(v, &out) == PMIX_EQUAL, "wire round trip of " << name(t));
    BOOST_TEST(encode(out, PMIX_SUCCESS) == bytes, "re-encoding of " << name(t));
    PMIx_Value_destruct(&out);
}

// PMIx_Info_string of an info carrying `v`: "Key: k Type: <type> Value: <non-empty>".
std::string info_string(const pmix_value_t &v) {
    pmix_info_t info;
    memset(&info, 0, sizeof info);
    PMIX_LOAD_KEY(info.key, "k");
    info.value = v;  // borrowed: not destructed
    char *s = PMIx_Info_string(&info);
    BOOST_REQUIRE(s != nullptr);
    std::string out(s);
    free(s);
    return out;
}

bool is_bytes(pmix_data_type_t t) {
    return t == PMIX_BYTE_OBJECT || t == PMIX_COMPRESSED_STRING || t == PMIX_REGEX ||
           t == PMIX_COMPRESSED_BYTE_OBJECT;
}

// The value-level API on a type a value carries: load, copy, wire, print, unload.
void check_value(pmix_data_type_t t, void *obj) {
    pmix_value_t v;
    BOOST_REQUIRE_MESSAGE(PMIx_Value_load(&v, load_data(t, obj), t) == PMIX_SUCCESS,
                          "load of " << name(t));
    BOOST_TEST(v.type == t);

    pmix_value_t copy;
    BOOST_REQUIRE_EQUAL(PMIx_Value_xfer(&copy, &v), PMIX_SUCCESS);
    BOOST_TEST(PMIx_Value_compare(&v, &copy) == PMIX_EQUAL, "value copy of " << name(t));
    PMIx_Value_destruct(&copy);
    BOOST_TEST(copy.type == PMIX_UNDEF);

    check_wire(&v, t);

    std::string s = info_string(v);
    BOOST_TEST(s.find("Type: " + name(t) + " Value: ") != std::string::npos, s);
    BOOST_TEST(s.size() > ("Key: k Type: " + name(t) + " Value: ").size(), s);

    // unload hands back what was loaded
    void *data = nullptr;
    size_t sz = 0;
    BOOST_REQUIRE_EQUAL(PMIx_Value_unload(&v, &data, &sz), PMIX_SUCCESS);
    if (t == PMIX_STRING) {
        BOOST_TEST(std::string(static_cast<char *>(data)) == *static_cast<char **>(obj));
        BOOST_TEST(sz == std::strlen(*static_cast<char **>(obj)) + 1);
        free(data);
    } else if (is_bytes(t)) {
        auto *bo = static_cast<pmix_byte_object_t *>(obj);
        BOOST_TEST(sz == bo->size);
        BOOST_TEST((sz == 0 || std::memcmp(data, bo->bytes, sz) == 0));
        free(data);
    } else if (t == PMIX_POINTER) {
        BOOST_TEST(data == *static_cast<void **>(obj));
    } else {
        BOOST_TEST(sz == zpmix_type_size(t));
        BOOST_TEST(compare(t, data, obj) == PMIX_EQUAL, "unload of " << name(t));
        zpmix_array_free(t, data, 1);
    }
    PMIx_Value_destruct(&v);
}

// The types a value cannot carry itself: they travel in data arrays.
const std::set<pmix_data_type_t> kArrayOnly = {PMIX_VALUE, PMIX_APP, PMIX_INFO, PMIX_PDATA,
                                               PMIX_QUERY};

}  // namespace

BOOST_AUTO_TEST_CASE(every_standard_type_has_a_row) {
    std::map<std::string, pmix_data_type_t> rows;
    for (int t = 0; t <= PMIX_DATA_TYPE_MAX; ++t)
        if (has_row(static_cast<pmix_data_type_t>(t)))
            rows.emplace(PMIx_Data_type_string(static_cast<pmix_data_type_t>(t)), t);

    // the standard's data types: its constants from PMIX_UNDEF up to PMIX_DATA_TYPE_MAX
    std::ifstream in(ZPMIX_SOURCE_DIR "/tests/compat/standard/constants.tsv");
    BOOST_REQUIRE(in.good());
    std::set<std::string> standard;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        std::string constant = line.substr(line.find('\t') + 1);
        if (constant == "PMIX_UNDEF") inside = true;
        if (constant == "PMIX_DATA_TYPE_MAX") break;
        if (inside) standard.insert(constant);
    }
    BOOST_REQUIRE(standard.size() > 60);
    for (const std::string &s : standard) BOOST_TEST(rows.count(s) == 1, s << " has no row");
    // and the rows are the standard's types (PMIX_BUFFER: deprecated, still named)
    for (const auto &[n, code] : rows)
        BOOST_TEST((standard.count(n) == 1 || n == "PMIX_BUFFER"), n << " is not a standard type");
    // the codes zpmix holds no object of
    for (const char *n : {"PMIX_UNDEF", "PMIX_KVAL", "PMIX_BUFFER"})
        BOOST_TEST(zpmix_type_size(rows.at(n)) == 0u, n);
}

BOOST_AUTO_TEST_CASE(every_type_round_trips) {
    int walked = 0;
    for (int code = 0; code <= PMIX_DATA_TYPE_MAX; ++code) {
        auto t = static_cast<pmix_data_type_t>(code);
        if (zpmix_type_size(t) == 0) continue;
        BOOST_TEST_CONTEXT("type " << name(t)) {
            BOOST_REQUIRE(has_row(t));
            for (int variant = 0; variant < 2; ++variant) {
                void *obj = zpmix_array_create(t, 1);
                BOOST_REQUIRE_MESSAGE(fill_sample(t, obj, variant), "no sample of " << name(t));

                void *copy = zpmix_array_create(t, 1);
                BOOST_REQUIRE_EQUAL(zpmix_object_xfer(t, copy, obj), PMIX_SUCCESS);
                BOOST_TEST(compare(t, copy, obj) == PMIX_EQUAL, "copy of " << name(t));

                // as the element of a data array: every type travels this way
                pmix_data_array_t da{t, 1, obj};
                pmix_value_t dv;
                dv.type = PMIX_DATA_ARRAY;
                dv.data.darray = &da;
                check_wire(&dv, t);
                BOOST_TEST(info_string(dv).find("Value: <array of 1 " + name(t) + ">") !=
                           std::string::npos);

                if (kArrayOnly.count(t) != 0) {
                    pmix_value_t v;
                    BOOST_TEST(PMIx_Value_load(&v, obj, t) == PMIX_ERR_NOT_SUPPORTED);
                } else {
                    check_value(t, obj);
                }
                zpmix_array_free(t, copy, 1);
                zpmix_array_free(t, obj, 1);
            }
            ++walked;
        }
    }
    BOOST_TEST(walked == 65);  // every code but UNDEF, KVAL and BUFFER
}

BOOST_AUTO_TEST_CASE(unknown_codes_have_no_row) {
    for (pmix_data_type_t t : {26, 29, 44, 70, PMIX_DATA_TYPE_MAX, 0xffff}) {
        BOOST_TEST(std::string(PMIx_Data_type_string(t)) == (t == 26 ? "PMIX_BUFFER" : kUnknown));
        BOOST_TEST(zpmix_type_size(t) == 0u);
        int x = 1;
        pmix_value_t v;
        BOOST_TEST(PMIx_Value_load(&v, &x, t) == PMIX_ERR_NOT_SUPPORTED);
        v.type = t;
        v.data.integer = 1;
        encode(v, PMIX_ERR_NOT_SUPPORTED);
        BOOST_TEST(PMIx_Value_compare(&v, &v) == PMIX_VALUE_COMPARISON_NOT_AVAIL);
        BOOST_TEST(info_string(v).find("Value: <" + name(t) + ">") != std::string::npos);
    }
}
