// Unit tests of the PMIx C helper functions and macros in libpmix.
#define BOOST_TEST_MODULE pmix_helpers
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>

#include <pmix.h>

BOOST_AUTO_TEST_CASE(string_functions) {
    BOOST_TEST(std::string(PMIx_Error_string(PMIX_SUCCESS)) == "PMIX_SUCCESS");
    BOOST_TEST(std::string(PMIx_Error_string(PMIX_ERR_NOT_SUPPORTED)) == "PMIX_ERR_NOT_SUPPORTED");
    BOOST_TEST(std::string(PMIx_Error_string(-123456)) == "UNKNOWN STATUS");
    BOOST_TEST(std::string(PMIx_Proc_state_string(PMIX_PROC_STATE_RUNNING)) ==
               "PMIX_PROC_STATE_RUNNING");
    BOOST_TEST(std::string(PMIx_Job_state_string(PMIX_JOB_STATE_TERMINATED)) ==
               "PMIX_JOB_STATE_TERMINATED");
    BOOST_TEST(std::string(PMIx_Scope_string(PMIX_GLOBAL)) == "PMIX_GLOBAL");
    BOOST_TEST(std::string(PMIx_Persistence_string(PMIX_PERSIST_SESSION)) ==
               "PMIX_PERSIST_SESSION");
    BOOST_TEST(std::string(PMIx_Data_range_string(PMIX_RANGE_NAMESPACE)) == "PMIX_RANGE_NAMESPACE");
    BOOST_TEST(std::string(PMIx_Data_type_string(PMIX_UINT32)) == "PMIX_UINT32");
    BOOST_TEST(std::string(PMIx_Data_type_string(PMIX_STOR_ACCESS_TYPE)) ==
               "PMIX_STOR_ACCESS_TYPE");
    BOOST_TEST(std::string(PMIx_Alloc_directive_string(PMIX_ALLOC_NEW)) == "PMIX_ALLOC_NEW");
    BOOST_TEST(std::string(PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL)) == "STDOUT");
    BOOST_TEST(std::string(PMIx_IOF_channel_string(PMIX_FWD_ALL_CHANNELS)) == "ALL");
    BOOST_TEST(std::string(PMIx_Link_state_string(PMIX_LINK_UP)) == "PMIX_LINK_UP");
    BOOST_TEST(std::string(PMIx_Device_type_string(PMIX_DEVTYPE_GPU)) == "PMIX_DEVTYPE_GPU");
    BOOST_TEST(std::string(PMIx_Value_comparison_string(PMIX_EQUAL)) == "EQUAL");
    char *d = PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_QUALIFIER);
    BOOST_TEST(std::string(d) == "INFO_REQD:INFO_QUALIFIER");
    free(d);
    BOOST_TEST(std::string(PMIx_Get_attribute_string("PMIX_EVENT_BASE")) == "pmix.evbase");
    BOOST_TEST(std::string(PMIx_Get_attribute_name(PMIX_JOB_SIZE)) == "PMIX_JOB_SIZE");
    BOOST_TEST(PMIx_Get_attribute_name("no.such.key") == nullptr);
    BOOST_TEST(std::string(PMIx_Get_version()).find("zpmix") != std::string::npos);
    BOOST_TEST(std::string(PMIx_Get_version()).find("4.2") != std::string::npos);
    BOOST_TEST(std::string(PMIx_Get_version()).starts_with("zpmix " ZPMIX_VERSION_STRING " "));
}

// Without PMIx_Init every runtime call fails cleanly (stubbed or not yet initialised).
BOOST_AUTO_TEST_CASE(runtime_calls_without_init) {
    BOOST_TEST(PMIx_Initialized() == 0);
    BOOST_TEST(PMIx_Commit() != PMIX_SUCCESS);
    BOOST_TEST(PMIx_Fence(nullptr, 0, nullptr, 0) != PMIX_SUCCESS);
}

BOOST_AUTO_TEST_CASE(value_load_unload_xfer_compare) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    BOOST_TEST(PMIx_Value_load(&v, "hello", PMIX_STRING) == PMIX_SUCCESS);
    BOOST_TEST(std::string(v.data.string) == "hello");
    void *out = nullptr;
    size_t sz = 0;
    BOOST_TEST(PMIx_Value_unload(&v, &out, &sz) == PMIX_SUCCESS);
    BOOST_TEST(std::string(static_cast<char *>(out)) == "hello");
    BOOST_TEST(sz == 6u);
    free(out);

    pmix_value_t c;
    BOOST_TEST(PMIx_Value_xfer(&c, &v) == PMIX_SUCCESS);
    BOOST_TEST(static_cast<void *>(c.data.string) != static_cast<void *>(v.data.string));
    BOOST_TEST(PMIx_Value_compare(&c, &v) == PMIX_EQUAL);
    PMIX_VALUE_DESTRUCT(&c);
    PMIX_VALUE_DESTRUCT(&v);

    uint32_t u = 7, w = 9;
    pmix_value_t a, b;
    PMIx_Value_load(&a, &u, PMIX_UINT32);
    PMIx_Value_load(&b, &w, PMIX_UINT32);
    BOOST_TEST(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);
    uint32_t got = 0;
    void *gp = &got;
    BOOST_TEST(PMIx_Value_unload(&b, &gp, &sz) == PMIX_SUCCESS);
    BOOST_TEST(got == 9u);
    int n = 0;
    pmix_status_t rc;
    PMIX_VALUE_GET_NUMBER(rc, &b, n, int);
    BOOST_TEST(rc == PMIX_SUCCESS);
    BOOST_TEST(n == 9);
    PMIx_Value_load(&b, "x", PMIX_STRING);
    BOOST_TEST(PMIx_Value_compare(&a, &b) == PMIX_VALUE_TYPE_DIFFERENT);
    PMIX_VALUE_DESTRUCT(&b);

    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "job", 3);
    pmix_value_t *pv = nullptr;
    PMIX_VALUE_CREATE(pv, 1);
    PMIX_VALUE_LOAD(pv, &p, PMIX_PROC);
    BOOST_TEST(static_cast<void *>(pv->data.proc) != static_cast<void *>(&p));
    BOOST_TEST(PMIX_CHECK_PROCID(pv->data.proc, &p));
    PMIX_VALUE_RELEASE(pv);
    BOOST_TEST(pv == nullptr);

    pmix_value_t flag;
    PMIx_Value_load(&flag, nullptr, PMIX_BOOL);
    BOOST_TEST(flag.data.flag);
    BOOST_TEST(PMIX_CHECK_TRUE(&flag));
}

BOOST_AUTO_TEST_CASE(info_macros_and_lists) {
    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, 3);
    BOOST_TEST(PMIX_INFO_IS_END(&info[2]));
    bool t = true;
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_HOSTNAME, "node1", PMIX_STRING);
    uint64_t big = 1ull << 40;
    PMIX_INFO_LOAD(&info[2], "my.key", &big, PMIX_UINT64);
    BOOST_TEST(PMIX_CHECK_KEY(&info[1], PMIX_HOSTNAME));
    BOOST_TEST(PMIX_INFO_TRUE(&info[0]));
    PMIX_INFO_REQUIRED(&info[0]);
    BOOST_TEST(PMIX_INFO_IS_REQUIRED(&info[0]));
    // An info loaded without being constructed: whatever its flags held is cleared, so its
    // destruct frees the value (LeakSanitizer checks that in the sanitised run).
    pmix_info_t raw;
    std::memset(&raw, 0xff, sizeof raw);
    PMIX_INFO_LOAD(&raw, PMIX_HOSTNAME, "node2", PMIX_STRING);
    BOOST_TEST(raw.flags == 0u);
    PMIX_INFO_DESTRUCT(&raw);

    void *list = PMIx_Info_list_start();
    BOOST_TEST(PMIx_Info_list_add(list, PMIX_NODEID, &big, PMIX_UINT64) == PMIX_SUCCESS);
    BOOST_TEST(PMIx_Info_list_xfer(list, &info[1]) == PMIX_SUCCESS);
    BOOST_TEST(PMIx_Info_list_insert(list, &info[2]) == PMIX_SUCCESS);
    pmix_data_array_t arr;
    BOOST_TEST(PMIx_Info_list_convert(list, &arr) == PMIX_SUCCESS);
    PMIx_Info_list_release(list);
    BOOST_TEST(arr.size == 3u);
    BOOST_TEST(arr.type == PMIX_INFO);
    auto *ai = static_cast<pmix_info_t *>(arr.array);
    BOOST_TEST(std::string(ai[1].value.data.string) == "node1");
    BOOST_TEST(ai[2].value.data.uint64 == big);
    PMIX_DATA_ARRAY_DESTRUCT(&arr);
    PMIX_INFO_FREE(info, 3);
    BOOST_TEST(info == nullptr);
}

BOOST_AUTO_TEST_CASE(data_arrays_of_many_types) {
    pmix_data_array_t *da = nullptr;
    PMIX_DATA_ARRAY_CREATE(da, 2, PMIX_STRING);
    static_cast<char **>(da->array)[0] = strdup("a");
    static_cast<char **>(da->array)[1] = strdup("b");
    pmix_value_t v;
    PMIx_Value_load(&v, da, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(da);
    BOOST_TEST(std::string(static_cast<char **>(v.data.darray->array)[1]) == "b");
    PMIX_VALUE_DESTRUCT(&v);

    PMIX_DATA_ARRAY_CREATE(da, 2, PMIX_VALUE);
    auto *vals = static_cast<pmix_value_t *>(da->array);
    PMIx_Value_load(&vals[0], "s", PMIX_STRING);
    pmix_byte_object_t bo{const_cast<char *>("xyz"), 3};
    PMIx_Value_load(&vals[1], &bo, PMIX_BYTE_OBJECT);
    PMIX_DATA_ARRAY_FREE(da);

    PMIX_DATA_ARRAY_CREATE(da, 1, PMIX_APP);
    auto *app = static_cast<pmix_app_t *>(da->array);
    app->cmd = strdup("hostname");
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, app->argv, "hostname");
    PMIX_ARGV_APPEND(rc, app->argv, "-s");
    BOOST_TEST(rc == PMIX_SUCCESS);
    PMIX_APP_INFO_CREATE(app, 2);
    PMIX_INFO_LOAD(&app->info[0], "k", "v", PMIX_STRING);
    pmix_data_array_t *copy = nullptr;
    PMIX_DATA_ARRAY_CREATE(copy, 0, PMIX_UNDEF);
    pmix_value_t a, b;
    PMIx_Value_load(&a, da, PMIX_DATA_ARRAY);
    PMIx_Value_xfer(&b, &a);
    BOOST_TEST(PMIx_Value_compare(&a, &b) == PMIX_EQUAL);
    PMIX_VALUE_DESTRUCT(&a);
    PMIX_VALUE_DESTRUCT(&b);
    PMIX_DATA_ARRAY_FREE(copy);
    PMIX_DATA_ARRAY_FREE(da);

    pmix_query_t *q = nullptr;
    PMIX_QUERY_CREATE(q, 2);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, "ns", PMIX_STRING);
    BOOST_TEST(rc == PMIX_SUCCESS);
    PMIX_QUERY_FREE(q, 2);

    pmix_geometry_t *g = nullptr;
    PMIX_GEOMETRY_CREATE(g, 1);
    g->uuid = strdup("u");
    PMIX_COORD_CREATE(g->coordinates, 3, 2);
    g->ncoords = 2;
    PMIX_GEOMETRY_FREE(g, 1);

    pmix_envar_t e;
    PMIX_ENVAR_CONSTRUCT(&e);
    PMIX_ENVAR_LOAD(&e, "PATH", "/bin", ':');
    PMIX_ENVAR_DESTRUCT(&e);

    pmix_regattr_t r;
    PMIX_REGATTR_CONSTRUCT(&r);
    PMIX_REGATTR_LOAD(&r, "PMIX_JOB_SIZE", PMIX_JOB_SIZE, PMIX_UINT32, "the job size");
    BOOST_TEST(std::string(r.description[0]) == "the job size");
    PMIX_REGATTR_DESTRUCT(&r);
}

// The helpers programs written for the reference implementation call by name (its examples split
// PMIX_LOCAL_PEERS with pmix_argv_split and count it with pmix_argv_count).
BOOST_AUTO_TEST_CASE(reference_style_helpers) {
    char **peers = pmix_argv_split("0,1,,3", ',');
    BOOST_TEST(pmix_argv_count(peers) == 3);
    BOOST_TEST(std::string(peers[2]) == "3");
    pmix_argv_free(peers);
    char **fields = pmix_argv_split_with_empty("a::b:", ':');
    BOOST_TEST(pmix_argv_count(fields) == 4);
    BOOST_TEST(std::string(fields[1]).empty());
    BOOST_TEST(std::string(fields[3]).empty());
    BOOST_TEST(pmix_argv_append_nosize(&fields, "c") == PMIX_SUCCESS);
    BOOST_TEST(pmix_argv_prepend_nosize(&fields, "z") == PMIX_SUCCESS);
    BOOST_TEST(pmix_argv_append_unique_nosize(&fields, "c") == PMIX_SUCCESS);
    BOOST_TEST(pmix_argv_count(fields) == 6);
    char **copy = pmix_argv_copy(fields);
    pmix_argv_free(fields);
    char *joined = pmix_argv_join(copy, '|');
    BOOST_TEST(std::string(joined) == "z|a||b||c");
    free(joined);
    pmix_argv_free(copy);
    BOOST_TEST(pmix_argv_count(nullptr) == 0);

    char **env = nullptr;
    BOOST_TEST(pmix_setenv("ZPMIX_X", "1", true, &env) == PMIX_SUCCESS);
    BOOST_TEST(pmix_setenv("ZPMIX_X", "2", false, &env) == PMIX_ERR_EXISTS);
    BOOST_TEST(std::string(env[0]) == "ZPMIX_X=1");
    pmix_argv_free(env);

    char buf[5];
    memset(buf, 'x', sizeof buf);
    pmix_strncpy(buf, "abcdefgh", sizeof buf - 1);
    BOOST_TEST(std::string(buf) == "abcd");
    pmix_strncpy(buf, "ab", sizeof buf - 1);
    BOOST_TEST(std::string(buf) == "ab");
    BOOST_TEST(buf[3] == 'd');  // nothing written past the terminator
    std::string longkey(PMIX_MAX_KEYLEN + 10, 'k');
    BOOST_TEST(pmix_keylen(longkey.c_str()) == PMIX_MAX_KEYLEN);
    BOOST_TEST(pmix_nslen("ns") == 2u);
    BOOST_TEST(pmix_nslen(nullptr) == 0u);
}

BOOST_AUTO_TEST_CASE(argv_env_nspace) {
    char **argv = nullptr;
    PMIX_ARGV_SPLIT(argv, "a:b::c", ':');
    int n = 0;
    PMIX_ARGV_COUNT(n, argv);
    BOOST_TEST(n == 3);
    pmix_status_t rc;
    PMIX_ARGV_APPEND_UNIQUE(rc, argv, "b");
    PMIX_ARGV_PREPEND(rc, argv, "z");
    BOOST_TEST(rc == PMIX_SUCCESS);
    char *joined = nullptr;
    PMIX_ARGV_JOIN(joined, argv, ',');
    BOOST_TEST(std::string(joined) == "z,a,b,c");
    free(joined);
    PMIX_ARGV_FREE(argv);

    char **env = nullptr;
    PMIX_SETENV(rc, "FOO", "1", &env);
    PMIX_SETENV(rc, "FOO", "2", &env);
    BOOST_TEST(rc == PMIX_SUCCESS);
    BOOST_TEST(std::string(env[0]) == "FOO=2");
    PMIX_ARGV_FREE(env);

    pmix_nspace_t t, c, ns;
    PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, "cl", "job");
    BOOST_TEST(std::string(t) == "cl:job");
    PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, ns);
    BOOST_TEST(std::string(c) == "cl");
    BOOST_TEST(std::string(ns) == "job");

    pmix_data_buffer_t *buf = nullptr;
    PMIX_DATA_BUFFER_CREATE(buf);
    char *bytes = strdup("abc");
    PMIX_DATA_BUFFER_LOAD(buf, bytes, 4);
    char *back = nullptr;
    size_t sz = 0;
    PMIX_DATA_BUFFER_UNLOAD(buf, back, sz);
    BOOST_TEST(sz == 4u);
    BOOST_TEST(std::string(back) == "abc");
    free(back);
    PMIX_DATA_BUFFER_RELEASE(buf);
}
