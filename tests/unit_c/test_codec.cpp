// Unit tests of the msgpack value codec: round-trip of every data type and malformed input.
#define BOOST_TEST_MODULE pmix_codec
#include <boost/test/unit_test.hpp>

#include <hwloc.h>

#include <cstring>
#include <string>
#include <vector>

#include <pmix.h>

#include "client/values/value_codec.hpp"

using namespace zpmix::c;

namespace {

std::string encode(const pmix_value_t &v, pmix_status_t expect = PMIX_SUCCESS) {
    msgpack::sbuffer sb;
    Packer pk(sb);
    BOOST_REQUIRE_EQUAL(encode_value(pk, v), expect);
    return std::string(sb.data(), sb.size());
}

void roundtrip(pmix_value_t *v) {
    std::string bytes = encode(*v);
    pmix_value_t out;
    BOOST_REQUIRE_MESSAGE(decode_value(bytes.data(), bytes.size(), &out) == PMIX_SUCCESS,
                          "decode of type " << v->type);
    BOOST_TEST(out.type == v->type);
    BOOST_TEST(
        PMIx_Value_compare(v, &out) == PMIX_EQUAL,
        "type " << v->type << " elem " << (v->type == PMIX_DATA_ARRAY ? v->data.darray->type : 0));
    // the decoded value is heap-owned exactly like a loaded one
    pmix_value_t *heap = nullptr;
    PMIX_VALUE_CREATE(heap, 1);
    BOOST_REQUIRE_EQUAL(decode_value(bytes.data(), bytes.size(), heap), PMIX_SUCCESS);
    PMIX_VALUE_RELEASE(heap);
    PMIX_VALUE_DESTRUCT(&out);
}

template <class T>
void load_rt(const T &data, pmix_data_type_t t) {
    pmix_value_t v;
    BOOST_REQUIRE_EQUAL(PMIx_Value_load(&v, &data, t), PMIX_SUCCESS);
    roundtrip(&v);
    PMIX_VALUE_DESTRUCT(&v);
}

pmix_info_t *sample_infos(size_t n) {
    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t x = static_cast<uint32_t>(i * 7);
        PMIX_INFO_LOAD(&info[i], ("key" + std::to_string(i)).c_str(), &x, PMIX_UINT32);
    }
    // Loading clears the flags, CREATE's end mark too (as in OpenPMIx): mark the end again, so
    // that the codec carries a flag.
    PMIX_INFO_SET_END(&info[n - 1]);
    return info;
}

}  // namespace

BOOST_AUTO_TEST_CASE(scalars) {
    load_rt(true, PMIX_BOOL);
    load_rt(uint8_t{200}, PMIX_BYTE);
    load_rt(size_t{1} << 50, PMIX_SIZE);
    load_rt(pid_t{4242}, PMIX_PID);
    load_rt(-17, PMIX_INT);
    load_rt(int8_t{-100}, PMIX_INT8);
    load_rt(int16_t{-30000}, PMIX_INT16);
    load_rt(int32_t{-2000000000}, PMIX_INT32);
    load_rt(int64_t{-(1ll << 60)}, PMIX_INT64);
    load_rt(4000000000u, PMIX_UINT);
    load_rt(uint8_t{255}, PMIX_UINT8);
    load_rt(uint16_t{65535}, PMIX_UINT16);
    load_rt(uint32_t{4000000000u}, PMIX_UINT32);
    load_rt(uint64_t{~0ull}, PMIX_UINT64);
    load_rt(1.5f, PMIX_FLOAT);
    load_rt(-2.25, PMIX_DOUBLE);
    load_rt(3.0, PMIX_DOUBLE);  // integral: msgpack-cxx packs it as an int
    load_rt(-4.0f, PMIX_FLOAT);
    load_rt(timeval{12345, 678}, PMIX_TIMEVAL);
    load_rt(time_t{1700000000}, PMIX_TIME);
    load_rt(pmix_status_t{PMIX_ERR_NOT_FOUND}, PMIX_STATUS);
    load_rt(pmix_rank_t{PMIX_RANK_WILDCARD}, PMIX_PROC_RANK);
    load_rt(pmix_persistence_t{PMIX_PERSIST_APP}, PMIX_PERSIST);
    load_rt(pmix_scope_t{PMIX_GLOBAL}, PMIX_SCOPE);
    load_rt(pmix_data_range_t{PMIX_RANGE_SESSION}, PMIX_DATA_RANGE);
    load_rt(uint8_t{3}, PMIX_COMMAND);
    load_rt(pmix_info_directives_t{PMIX_INFO_REQD}, PMIX_INFO_DIRECTIVES);
    load_rt(pmix_data_type_t{PMIX_INFO}, PMIX_DATA_TYPE);
    load_rt(pmix_proc_state_t{PMIX_PROC_STATE_ABORTED}, PMIX_PROC_STATE);
    load_rt(pmix_alloc_directive_t{PMIX_ALLOC_EXTEND}, PMIX_ALLOC_DIRECTIVE);
    load_rt(pmix_iof_channel_t{PMIX_FWD_STDERR_CHANNEL}, PMIX_IOF_CHANNEL);
    load_rt(pmix_job_state_t{PMIX_JOB_STATE_RUNNING}, PMIX_JOB_STATE);
    load_rt(pmix_link_state_t{PMIX_LINK_UP}, PMIX_LINK_STATE);
    load_rt(pmix_device_type_t{PMIX_DEVTYPE_GPU}, PMIX_DEVTYPE);
    load_rt(pmix_locality_t{PMIX_LOCALITY_SHARE_CORE}, PMIX_LOCTYPE);
    load_rt(pmix_storage_medium_t{PMIX_STORAGE_MEDIUM_SSD}, PMIX_STOR_MEDIUM);
    load_rt(pmix_storage_accessibility_t{PMIX_STORAGE_ACCESSIBILITY_JOB}, PMIX_STOR_ACCESS);
    load_rt(pmix_storage_persistence_t{PMIX_STORAGE_PERSISTENCE_JOB}, PMIX_STOR_PERSIST);
    load_rt(pmix_storage_access_type_t{PMIX_STORAGE_ACCESS_RDWR}, PMIX_STOR_ACCESS_TYPE);
    pmix_value_t undef;
    PMIX_VALUE_CONSTRUCT(&undef);
    roundtrip(&undef);
}

BOOST_AUTO_TEST_CASE(strings_bytes_procs) {
    pmix_value_t v;
    PMIx_Value_load(&v, "hello world", PMIX_STRING);
    roundtrip(&v);
    PMIX_VALUE_DESTRUCT(&v);
    v.type = PMIX_STRING;  // NULL string
    v.data.string = nullptr;
    roundtrip(&v);
    pmix_byte_object_t bo{const_cast<char *>("\0\1\2binary"), 9};
    for (pmix_data_type_t t :
         {PMIX_BYTE_OBJECT, PMIX_COMPRESSED_STRING, PMIX_REGEX, PMIX_COMPRESSED_BYTE_OBJECT})
        load_rt(bo, t);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "myjob", 12);
    load_rt(p, PMIX_PROC);
    PMIx_Value_load(&v, "nspace-1", PMIX_PROC_NSPACE);
    roundtrip(&v);
    PMIX_VALUE_DESTRUCT(&v);
    pmix_envar_t e{const_cast<char *>("PATH"), const_cast<char *>("/usr/bin"), ':'};
    load_rt(e, PMIX_ENVAR);
}

BOOST_AUTO_TEST_CASE(structured_types) {
    pmix_proc_info_t pi{};
    PMIX_LOAD_PROCID(&pi.proc, "ns", 1);
    pi.hostname = const_cast<char *>("node7");
    pi.executable_name = const_cast<char *>("/bin/app");
    pi.pid = 99;
    pi.exit_code = -1;
    pi.state = PMIX_PROC_STATE_TERMINATED;
    load_rt(pi, PMIX_PROC_INFO);

    uint32_t coords[3] = {1, 2, 3};
    pmix_coord_t c{PMIX_COORD_LOGICAL_VIEW, coords, 3};
    load_rt(c, PMIX_COORD);

    pmix_regattr_t r{};
    PMIX_REGATTR_LOAD(&r, "PMIX_JOB_SIZE", PMIX_JOB_SIZE, PMIX_UINT32, "size");
    load_rt(r, PMIX_REGATTR);
    PMIX_REGATTR_DESTRUCT(&r);

    pmix_geometry_t g{3, const_cast<char *>("uuid"), const_cast<char *>("eth0"), &c, 1};
    load_rt(g, PMIX_GEOMETRY);

    pmix_device_distance_t d{const_cast<char *>("u"), const_cast<char *>("gpu0"), PMIX_DEVTYPE_GPU,
                             1, 5};
    load_rt(d, PMIX_DEVICE_DIST);

    pmix_endpoint_t ep{
        const_cast<char *>("u"), const_cast<char *>("ib0"), {const_cast<char *>("addr"), 4}};
    load_rt(ep, PMIX_ENDPOINT);

    pmix_proc_stats_t ps{};
    ps.node = const_cast<char *>("n1");
    PMIX_LOAD_PROCID(&ps.proc, "ns", 2);
    ps.cmd = const_cast<char *>("a.out");
    ps.state = 'R';
    ps.percent_cpu = 12.5f;
    ps.time = {1, 2};
    ps.sample_time = {3, 4};
    load_rt(ps, PMIX_PROC_STATS);
    pmix_disk_stats_t ds{};
    ds.disk = const_cast<char *>("sda");
    ds.weighted_milliseconds_io = 77;
    load_rt(ds, PMIX_DISK_STATS);
    pmix_net_stats_t ns{};
    ns.net_interface = const_cast<char *>("eth0");
    ns.num_send_errs = 3;
    load_rt(ns, PMIX_NET_STATS);
    pmix_node_stats_t nd{};
    nd.node = const_cast<char *>("n1");
    nd.la15 = 0.5f;
    nd.diskstats = &ds;
    nd.ndiskstats = 1;
    nd.netstats = &ns;
    nd.nnetstats = 1;
    load_rt(nd, PMIX_NODE_STATS);

    char raw[] = "buffered";
    pmix_data_buffer_t db{raw, raw + 8, raw + 2, 8, 8};
    load_rt(db, PMIX_DATA_BUFFER);

    pmix_cpuset_t cs{};
    BOOST_REQUIRE_EQUAL(PMIx_Parse_cpuset_string("hwloc:0-3,7", &cs), PMIX_SUCCESS);
    load_rt(cs, PMIX_PROC_CPUSET);
    PMIx_Cpuset_destruct(&cs);

    pmix_topology_t empty_topo{const_cast<char *>("hwloc"), nullptr};
    load_rt(empty_topo, PMIX_TOPO);
}

BOOST_AUTO_TEST_CASE(topology_as_xml) {
    hwloc_topology_t topo;
    BOOST_REQUIRE_EQUAL(hwloc_topology_init(&topo), 0);
    BOOST_REQUIRE_EQUAL(hwloc_topology_load(topo), 0);
    pmix_topology_t t{const_cast<char *>("hwloc"), topo};
    pmix_value_t v;
    BOOST_REQUIRE_EQUAL(PMIx_Value_load(&v, &t, PMIX_TOPO), PMIX_SUCCESS);
    std::string bytes = encode(v);
    pmix_value_t out;
    BOOST_REQUIRE_EQUAL(decode_value(bytes.data(), bytes.size(), &out), PMIX_SUCCESS);
    BOOST_TEST(out.data.topo->topology != nullptr);
    BOOST_TEST(hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(out.data.topo->topology),
                                        HWLOC_OBJ_PU) ==
               hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
    PMIX_VALUE_DESTRUCT(&out);
    PMIX_VALUE_DESTRUCT(&v);
    hwloc_topology_destroy(topo);
}

BOOST_AUTO_TEST_CASE(data_arrays_of_every_container_type) {
    // info, value, pdata, app, query, string, proc, data array of data arrays
    pmix_data_array_t *inner = nullptr;
    PMIX_DATA_ARRAY_CREATE(inner, 2, PMIX_INT64);
    static_cast<int64_t *>(inner->array)[1] = -5;

    std::vector<pmix_data_array_t *> arrays;
    pmix_data_array_t *a = nullptr;
    PMIX_DATA_ARRAY_CREATE(a, 3, PMIX_INFO);
    pmix_info_t *infos = sample_infos(3);
    for (int i = 0; i < 3; ++i) PMIx_Info_xfer(&static_cast<pmix_info_t *>(a->array)[i], &infos[i]);
    PMIX_INFO_FREE(infos, 3);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 2, PMIX_VALUE);
    PMIx_Value_load(&static_cast<pmix_value_t *>(a->array)[0], "v", PMIX_STRING);
    PMIx_Value_load(&static_cast<pmix_value_t *>(a->array)[1], inner, PMIX_DATA_ARRAY);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 1, PMIX_PDATA);
    auto *pd = static_cast<pmix_pdata_t *>(a->array);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "ns", 0);
    PMIX_PDATA_LOAD(pd, &p, "pkey", "pval", PMIX_STRING);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 1, PMIX_APP);
    auto *app = static_cast<pmix_app_t *>(a->array);
    app->cmd = strdup("ls");
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, app->argv, "ls");
    PMIX_ARGV_APPEND(rc, app->env, "A=1");
    app->maxprocs = 4;
    PMIX_APP_INFO_CREATE(app, 1);
    PMIX_INFO_LOAD(&app->info[0], PMIX_WDIR, "/tmp", PMIX_STRING);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 1, PMIX_QUERY);
    auto *q = static_cast<pmix_query_t *>(a->array);
    PMIX_ARGV_APPEND(rc, q->keys, PMIX_QUERY_NAMESPACES);
    PMIX_QUERY_QUALIFIERS_CREATE(q, 1);
    PMIX_INFO_LOAD(&q->qualifiers[0], PMIX_NSPACE, "ns", PMIX_STRING);
    arrays.push_back(a);
    BOOST_TEST(rc == PMIX_SUCCESS);

    PMIX_DATA_ARRAY_CREATE(a, 2, PMIX_STRING);
    static_cast<char **>(a->array)[0] = strdup("x");
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 2, PMIX_PROC);
    PMIX_LOAD_PROCID(&static_cast<pmix_proc_t *>(a->array)[1], "ns", 5);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 2, PMIX_DATA_ARRAY);
    PMIx_Value_xfer(nullptr, nullptr);  // bad param, no crash
    zpmix_object_xfer(PMIX_DATA_ARRAY, &static_cast<pmix_data_array_t *>(a->array)[0], inner);
    arrays.push_back(a);

    PMIX_DATA_ARRAY_CREATE(a, 0, PMIX_UINT16);  // empty
    arrays.push_back(a);

    for (pmix_data_array_t *arr : arrays) {
        load_rt(*arr, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(arr);
    }
    PMIX_DATA_ARRAY_FREE(inner);
}

BOOST_AUTO_TEST_CASE(info_and_proc_api) {
    pmix_info_t *infos = sample_infos(4);
    msgpack::sbuffer sb;
    Packer pk(sb);
    BOOST_REQUIRE_EQUAL(encode_infos(pk, infos, 4), PMIX_SUCCESS);
    pmix_info_t *out = nullptr;
    size_t n = 0;
    BOOST_REQUIRE_EQUAL(decode_infos(sb.data(), sb.size(), &out, &n), PMIX_SUCCESS);
    BOOST_REQUIRE_EQUAL(n, 4u);
    for (size_t i = 0; i < n; ++i) {
        BOOST_TEST(std::string(out[i].key) == infos[i].key);
        BOOST_TEST(PMIx_Value_compare(&out[i].value, &infos[i].value) == PMIX_EQUAL);
    }
    BOOST_TEST(PMIX_INFO_IS_END(&out[3]));
    PMIX_INFO_FREE(out, n);

    msgpack::sbuffer sb2;
    Packer pk2(sb2);
    BOOST_REQUIRE_EQUAL(encode_info(pk2, infos[1]), PMIX_SUCCESS);
    pmix_info_t one;
    BOOST_REQUIRE_EQUAL(decode_info(sb2.data(), sb2.size(), &one), PMIX_SUCCESS);
    BOOST_TEST(one.value.data.uint32 == 7u);
    PMIX_INFO_DESTRUCT(&one);
    PMIX_INFO_FREE(infos, 4);

    pmix_proc_t p, q;
    PMIX_LOAD_PROCID(&p, "job", 3);
    msgpack::sbuffer sb3;
    Packer pk3(sb3);
    encode_proc(pk3, p);
    msgpack::object_handle oh = msgpack::unpack(sb3.data(), sb3.size());
    BOOST_REQUIRE_EQUAL(decode_proc(oh.get(), &q), PMIX_SUCCESS);
    BOOST_TEST(PMIX_CHECK_PROCID(&p, &q));

    // empty info array
    msgpack::sbuffer sb4;
    Packer pk4(sb4);
    BOOST_REQUIRE_EQUAL(encode_infos(pk4, nullptr, 0), PMIX_SUCCESS);
    BOOST_REQUIRE_EQUAL(decode_infos(sb4.data(), sb4.size(), &out, &n), PMIX_SUCCESS);
    BOOST_TEST(out == nullptr);
    BOOST_TEST(n == 0u);
}

BOOST_AUTO_TEST_CASE(pointers_are_not_encodable) {
    int x = 0;
    pmix_value_t v;
    PMIx_Value_load(&v, &x, PMIX_POINTER);
    std::string bytes = encode(v, PMIX_ERR_NOT_SUPPORTED);
    BOOST_TEST(bytes.empty());  // nothing written
    pmix_data_array_t *a = nullptr;
    PMIX_DATA_ARRAY_CREATE(a, 1, PMIX_VALUE);
    static_cast<pmix_value_t *>(a->array)[0] = v;
    pmix_value_t outer;
    PMIx_Value_load(&outer, a, PMIX_DATA_ARRAY);
    BOOST_TEST(encode(outer, PMIX_ERR_NOT_SUPPORTED).empty());
    PMIX_VALUE_DESTRUCT(&outer);
    PMIX_DATA_ARRAY_FREE(a);
}

namespace {
template <class F>
std::string pack(F &&f) {
    msgpack::sbuffer sb;
    Packer pk(sb);
    f(pk);
    return std::string(sb.data(), sb.size());
}
pmix_status_t decode_bytes(const std::string &b) {
    pmix_value_t v;
    pmix_status_t rc = decode_value(b.data(), b.size(), &v);
    if (rc == PMIX_SUCCESS) PMIX_VALUE_DESTRUCT(&v);
    BOOST_TEST(v.type == PMIX_UNDEF);
    return rc;
}
}  // namespace

BOOST_AUTO_TEST_CASE(malformed_input) {
    // not an array / wrong arity
    BOOST_TEST(decode_bytes(pack([](Packer &pk) { pk.pack_int(3); })) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(3);
                   pk.pack_uint16(PMIX_INT);
                   pk.pack_int(1);
                   pk.pack_int(1);
               })) == PMIX_ERR_UNPACK_FAILURE);
    // unknown / non-transferable type codes
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(4999);
                   pk.pack_nil();
               })) == PMIX_ERR_BAD_PARAM);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_POINTER);
                   pk.pack_uint64(1);
               })) == PMIX_ERR_BAD_PARAM);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_int(-1);
                   pk.pack_nil();
               })) == PMIX_ERR_UNPACK_FAILURE);
    // wrong payload kinds and out-of-range numbers
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_STRING);
                   pk.pack_int(5);
               })) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_UINT8);
                   pk.pack_int(300);
               })) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_UINT32);
                   pk.pack_int(-1);
               })) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_BOOL);
                   pk.pack_int(1);
               })) == PMIX_ERR_UNPACK_FAILURE);
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_BYTE_OBJECT);
                   pk.pack(std::string("s"));
               })) == PMIX_ERR_UNPACK_FAILURE);
    // over-long nspace in a proc
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_PROC);
                   pk.pack_array(2);
                   pk.pack(std::string(300, 'n'));
                   pk.pack_uint32(0);
               })) == PMIX_ERR_BAD_PARAM);
    // a data array whose third element is bad: the partial copy is freed (ASan checks)
    BOOST_TEST(decode_bytes(pack([](Packer &pk) {
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_DATA_ARRAY);
                   pk.pack_array(2);
                   pk.pack_uint16(PMIX_STRING);
                   pk.pack_array(3);
                   pk.pack(std::string("a"));
                   pk.pack(std::string("b"));
                   pk.pack_int(1);
               })) == PMIX_ERR_UNPACK_FAILURE);
    // truncated input
    pmix_value_t v;
    PMIx_Value_load(&v, "truncate me please", PMIX_STRING);
    std::string good = encode(v);
    PMIX_VALUE_DESTRUCT(&v);
    for (size_t cut = 0; cut < good.size(); ++cut)
        BOOST_TEST(decode_bytes(good.substr(0, cut)) == PMIX_ERR_UNPACK_FAILURE);
    // trailing garbage
    BOOST_TEST(decode_bytes(good + "x") == PMIX_ERR_UNPACK_FAILURE);
    // huge declared sizes: array32/str32/bin32 headers claiming 4G entries in a few bytes
    for (const char *hdr : {"\x92\x18\xdd\xff\xff\xff\xff", "\x92\x03\xdb\xff\xff\xff\xff",
                            "\x92\x1b\xc6\xff\xff\xff\xff", "\xdd\xff\xff\xff\xff"}) {
        std::string b(hdr, strlen(hdr));
        b += std::string(8, '\0');
        BOOST_TEST(decode_bytes(b) == PMIX_ERR_UNPACK_FAILURE);
    }
    // deep nesting is refused instead of recursing without bound
    std::string deep = pack([](Packer &pk) {
        for (int i = 0; i < 200; ++i) {
            pk.pack_array(2);
            pk.pack_uint16(PMIX_DATA_ARRAY);
            pk.pack_array(2);
            pk.pack_uint16(PMIX_VALUE);
            pk.pack_array(1);
        }
        pk.pack_array(2);
        pk.pack_uint16(PMIX_UNDEF);
        pk.pack_nil();
    });
    BOOST_TEST(decode_bytes(deep) == PMIX_ERR_UNPACK_FAILURE);
}
