// The broker's query answers (actors/query/query_value.hpp) are libpmix's wire form of a value:
// each shape decodes with the client's codec into the pmix_value_t the standard gives the key.
#define BOOST_TEST_MODULE query_value
#include <boost/test/unit_test.hpp>

#include <cstring>

#include <pmix.h>

#include "actors/query/query_value.hpp"
#include "client/values/value_codec.hpp"

using namespace zpmix;

namespace {

struct Decoded {
    pmix_value_t v{};
    explicit Decoded(const msg::Blob &b) {
        BOOST_REQUIRE(c::decode_value(b.data(), b.size(), &v) == PMIX_SUCCESS);
    }
    ~Decoded() { PMIx_Value_destruct(&v); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(scalars) {
    Decoded s(query::string_value("a,b"));
    BOOST_TEST(s.v.type == PMIX_STRING);
    BOOST_TEST(std::string(s.v.data.string) == "a,b");
    Decoded st(query::status_value(PMIX_ERR_NOT_FOUND));
    BOOST_TEST(st.v.type == PMIX_STATUS);
    BOOST_TEST(st.v.data.status == PMIX_ERR_NOT_FOUND);
    Decoded u(query::uint32_value(7));
    BOOST_TEST(u.v.data.uint32 == 7u);
    Decoded f(query::float_value(1.5f));
    BOOST_TEST(f.v.type == PMIX_FLOAT);
    BOOST_TEST(f.v.data.fval == 1.5f);
    Decoded b(query::bool_value(true));
    BOOST_TEST(b.v.data.flag);
}

BOOST_AUTO_TEST_CASE(proc_table) {
    Decoded t(
        query::proc_info_array({{"job", 3, "node1", "/bin/app", 1234, 0, PMIX_PROC_STATE_RUNNING},
                                {"job", 4, "node2", "", 99, 137, PMIX_PROC_STATE_ABORTED_BY_SIG}}));
    BOOST_REQUIRE(t.v.type == PMIX_DATA_ARRAY);
    BOOST_REQUIRE(t.v.data.darray->type == PMIX_PROC_INFO);
    BOOST_REQUIRE(t.v.data.darray->size == 2u);
    auto *rows = static_cast<pmix_proc_info_t *>(t.v.data.darray->array);
    BOOST_TEST(std::string(rows[0].proc.nspace) == "job");
    BOOST_TEST(rows[0].proc.rank == 3u);
    BOOST_TEST(std::string(rows[0].hostname) == "node1");
    BOOST_TEST(std::string(rows[0].executable_name) == "/bin/app");
    BOOST_TEST(rows[0].pid == 1234);
    BOOST_TEST(rows[1].exit_code == 137);
    BOOST_TEST(rows[1].state == PMIX_PROC_STATE_ABORTED_BY_SIG);
}

BOOST_AUTO_TEST_CASE(nested_infos) {
    Decoded a(query::info_array(
        {{PMIX_DAEMON_MEMORY, query::float_value(2.f)},
         {"inner", query::info_array({{PMIX_NSPACE, query::string_value("job")}})}}));
    BOOST_REQUIRE(a.v.type == PMIX_DATA_ARRAY);
    BOOST_REQUIRE(a.v.data.darray->type == PMIX_INFO);
    BOOST_REQUIRE(a.v.data.darray->size == 2u);
    auto *infos = static_cast<pmix_info_t *>(a.v.data.darray->array);
    BOOST_TEST(PMIX_CHECK_KEY(&infos[0], PMIX_DAEMON_MEMORY));
    BOOST_TEST(infos[0].value.data.fval == 2.f);
    BOOST_REQUIRE(infos[1].value.type == PMIX_DATA_ARRAY);
    auto *inner = static_cast<pmix_info_t *>(infos[1].value.data.darray->array);
    BOOST_TEST(std::string(inner[0].value.data.string) == "job");
}
