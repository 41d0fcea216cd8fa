// A sample object of every PMIx data type zpmix holds, for tests that walk the type table.
#pragma once

#include <hwloc.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <pmix.h>

namespace zpmix_test {

inline char **sample_argv(const char *a, const char *b) {
    char **argv = nullptr;
    zpmix_argv_append(&argv, a);
    zpmix_argv_append(&argv, b);
    return argv;
}

inline pmix_info_t *sample_info(const char *key, const char *value) {
    pmix_info_t *info = nullptr;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(info, key, value, PMIX_STRING);
    return info;
}

inline void sample_proc(pmix_proc_t *p, const char *ns, pmix_rank_t rank) {
    PMIX_LOAD_PROCID(p, ns, rank);
}

// Fills the zeroed object `obj` of type `t` with a sample whose parts are all set (variant 0) or
// with other values (variant 1: negative numbers, other strings). What it allocates, the type's
// destruct frees. False: no sample for `t`.
inline bool fill_sample(pmix_data_type_t t, void *obj, int variant) {
    const bool v1 = variant != 0;
    auto set_int = [&](auto *p) {
        *p = static_cast<std::remove_pointer_t<decltype(p)>>(v1 ? -3 : 200);
    };
    switch (t) {
        case PMIX_BOOL:
            *static_cast<bool *>(obj) = !v1;
            return true;
        case PMIX_BYTE:
        case PMIX_UINT8:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_COMMAND:
        case PMIX_PROC_STATE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_JOB_STATE:
        case PMIX_LINK_STATE:
            set_int(static_cast<uint8_t *>(obj));
            return true;
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            set_int(static_cast<uint16_t *>(obj));
            return true;
        case PMIX_UINT32:
        case PMIX_PROC_RANK:
        case PMIX_INFO_DIRECTIVES:
            set_int(static_cast<uint32_t *>(obj));
            return true;
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            set_int(static_cast<uint64_t *>(obj));
            return true;
        case PMIX_SIZE:
            set_int(static_cast<size_t *>(obj));
            return true;
        case PMIX_UINT:
            set_int(static_cast<unsigned int *>(obj));
            return true;
        case PMIX_INT:
        case PMIX_STATUS:
            set_int(static_cast<int *>(obj));
            return true;
        case PMIX_INT8:
            *static_cast<int8_t *>(obj) = v1 ? -100 : 100;
            return true;
        case PMIX_INT16:
            set_int(static_cast<int16_t *>(obj));
            return true;
        case PMIX_INT32:
            set_int(static_cast<int32_t *>(obj));
            return true;
        case PMIX_INT64:
            *static_cast<int64_t *>(obj) = v1 ? -(1LL << 40) : (1LL << 40);
            return true;
        case PMIX_PID:
            set_int(static_cast<pid_t *>(obj));
            return true;
        case PMIX_TIME:
            set_int(static_cast<time_t *>(obj));
            return true;
        case PMIX_FLOAT:
            *static_cast<float *>(obj) = v1 ? -2.25f : 1.5f;
            return true;
        case PMIX_DOUBLE:
            *static_cast<double *>(obj) = v1 ? -1e100 : 0.125;
            return true;
        case PMIX_TIMEVAL: {
            auto *tv = static_cast<struct timeval *>(obj);
            tv->tv_sec = v1 ? -5 : 1700000000;
            tv->tv_usec = 123456;
            return true;
        }
        case PMIX_STRING:
            *static_cast<char **>(obj) = strdup(v1 ? "other" : "hello");
            return true;
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT: {
            auto *b = static_cast<pmix_byte_object_t *>(obj);
            if (v1) return true;  // empty
            b->bytes = static_cast<char *>(malloc(5));
            memcpy(b->bytes, "ab\0cd", 5);
            b->size = 5;
            return true;
        }
        case PMIX_POINTER:
            *static_cast<void **>(obj) = v1 ? nullptr : obj;
            return true;
        case PMIX_PROC_NSPACE:
            PMIX_LOAD_NSPACE(static_cast<char *>(obj), v1 ? "ns.2" : "nspace-x");
            return true;
        case PMIX_PROC:
            sample_proc(static_cast<pmix_proc_t *>(obj), "job.1", v1 ? PMIX_RANK_WILDCARD : 3);
            return true;
        case PMIX_VALUE: {
            uint32_t x = 42;
            auto *v = static_cast<pmix_value_t *>(obj);
            return v1 ? PMIx_Value_load(v, "inner", PMIX_STRING) == PMIX_SUCCESS
                      : PMIx_Value_load(v, &x, PMIX_UINT32) == PMIX_SUCCESS;
        }
        case PMIX_INFO: {
            auto *i = static_cast<pmix_info_t *>(obj);
            return PMIx_Info_load(i, "key.a", v1 ? "x" : "value", PMIX_STRING) == PMIX_SUCCESS;
        }
        case PMIX_PDATA: {
            auto *p = static_cast<pmix_pdata_t *>(obj);
            sample_proc(&p->proc, "job.2", 1);
            PMIX_LOAD_KEY(p->key, "pkey");
            int x = v1 ? -1 : 7;
            return PMIx_Value_load(&p->value, &x, PMIX_INT) == PMIX_SUCCESS;
        }
        case PMIX_APP: {
            auto *a = static_cast<pmix_app_t *>(obj);
            a->cmd = strdup("a.out");
            a->argv = sample_argv("a.out", "-x");
            a->env = sample_argv("A=1", "B=2");
            a->cwd = v1 ? nullptr : strdup("/tmp");
            a->maxprocs = v1 ? 1 : 4;
            a->info = sample_info("app.k", "app.v");
            a->ninfo = 1;
            return true;
        }
        case PMIX_QUERY: {
            auto *q = static_cast<pmix_query_t *>(obj);
            q->keys = sample_argv("pmix.qry.a", "pmix.qry.b");
            if (!v1) {
                q->qualifiers = sample_info("qual", "q");
                q->nqual = 1;
            }
            return true;
        }
        case PMIX_PROC_INFO: {
            auto *p = static_cast<pmix_proc_info_t *>(obj);
            sample_proc(&p->proc, "job.3", 2);
            p->hostname = strdup("node01");
            p->executable_name = v1 ? nullptr : strdup("/bin/app");
            p->pid = 4242;
            p->exit_code = v1 ? -1 : 0;
            p->state = PMIX_PROC_STATE_RUNNING;
            return true;
        }
        case PMIX_DATA_ARRAY: {
            auto *d = static_cast<pmix_data_array_t *>(obj);
            PMIX_DATA_ARRAY_CONSTRUCT(d, 2, v1 ? PMIX_STRING : PMIX_UINT16);
            for (size_t i = 0; i < 2; ++i)
                if (!fill_sample(d->type,
                                 static_cast<char *>(d->array) + i * zpmix_type_size(d->type),
                                 static_cast<int>(i)))
                    return false;
            return true;
        }
        case PMIX_ENVAR: {
            auto *e = static_cast<pmix_envar_t *>(obj);
            e->envar = strdup("PATH");
            e->value = v1 ? nullptr : strdup("/bin");
            e->separator = ':';
            return true;
        }
        case PMIX_COORD: {
            auto *c = static_cast<pmix_coord_t *>(obj);
            c->view = PMIX_COORD_PHYSICAL_VIEW;
            if (v1) return true;
            c->dims = 3;
            c->coord = static_cast<uint32_t *>(calloc(3, sizeof(uint32_t)));
            for (uint32_t i = 0; i < 3; ++i) c->coord[i] = 10 * i + 1;
            return true;
        }
        case PMIX_REGATTR: {
            auto *r = static_cast<pmix_regattr_t *>(obj);
            r->name = strdup("PMIX_SAMPLE");
            PMIX_LOAD_KEY(r->string, "pmix.sample");
            r->type = PMIX_UINT32;
            r->description = v1 ? nullptr : sample_argv("line one", "line two");
            return true;
        }
        case PMIX_PROC_CPUSET: {
            auto *c = static_cast<pmix_cpuset_t *>(obj);
            c->source = strdup("hwloc");
            if (v1) return true;
            hwloc_bitmap_t bm = hwloc_bitmap_alloc();
            hwloc_bitmap_set_range(bm, 0, 2);
            c->bitmap = bm;
            return true;
        }
        case PMIX_TOPO:
            // A loaded topology compares as "not available": the source alone here.
            static_cast<pmix_topology_t *>(obj)->source = strdup(v1 ? "other" : "hwloc");
            return true;
        case PMIX_GEOMETRY: {
            auto *g = static_cast<pmix_geometry_t *>(obj);
            g->fabric = 9;
            g->uuid = strdup("uuid-1");
            g->osname = v1 ? nullptr : strdup("ib0");
            if (v1) return true;
            g->coordinates = static_cast<pmix_coord_t *>(zpmix_array_create(PMIX_COORD, 1));
            g->ncoords = 1;
            return fill_sample(PMIX_COORD, g->coordinates, 0);
        }
        case PMIX_DEVICE_DIST: {
            auto *d = static_cast<pmix_device_distance_t *>(obj);
            d->uuid = strdup("dev-uuid");
            d->osname = strdup("mlx5_0");
            d->type = PMIX_DEVTYPE_NETWORK;
            d->mindist = 1;
            d->maxdist = v1 ? 1 : 65535;
            return true;
        }
        case PMIX_ENDPOINT: {
            auto *e = static_cast<pmix_endpoint_t *>(obj);
            e->uuid = strdup("ep-uuid");
            e->osname = v1 ? nullptr : strdup("ib0");
            return fill_sample(PMIX_BYTE_OBJECT, &e->endpt, variant);
        }
        case PMIX_PROC_STATS: {
            auto *s = static_cast<pmix_proc_stats_t *>(obj);
            s->node = strdup("node02");
            sample_proc(&s->proc, "job.4", 5);
            s->pid = 77;
            s->cmd = v1 ? nullptr : strdup("app");
            s->state = 'R';
            s->time.tv_sec = 3;
            s->percent_cpu = 12.5f;
            s->priority = v1 ? -20 : 20;
            s->num_threads = 8;
            s->pss = 1.0f;
            s->vsize = 2.0f;
            s->rss = 3.0f;
            s->peak_vsize = 4.0f;
            s->processor = 3;
            s->sample_time.tv_usec = 99;
            return true;
        }
        case PMIX_DISK_STATS: {
            auto *s = static_cast<pmix_disk_stats_t *>(obj);
            s->disk = strdup("sda");
            uint64_t *f = &s->num_reads_completed;
            for (int i = 0; i < 11; ++i) f[i] = v1 ? UINT64_MAX - i : static_cast<uint64_t>(i);
            return true;
        }
        case PMIX_NET_STATS: {
            auto *s = static_cast<pmix_net_stats_t *>(obj);
            s->net_interface = strdup("eth0");
            uint64_t *f = &s->num_bytes_recvd;
            for (int i = 0; i < 6; ++i) f[i] = static_cast<uint64_t>(1000 * i);
            return true;
        }
        case PMIX_NODE_STATS: {
            auto *s = static_cast<pmix_node_stats_t *>(obj);
            s->node = strdup("node03");
            float *f = &s->la;
            for (int i = 0; i < 11; ++i) f[i] = 0.5f * static_cast<float>(i);
            s->sample_time.tv_sec = 10;
            if (v1) return true;
            s->diskstats = static_cast<pmix_disk_stats_t *>(zpmix_array_create(PMIX_DISK_STATS, 1));
            s->ndiskstats = 1;
            s->netstats = static_cast<pmix_net_stats_t *>(zpmix_array_create(PMIX_NET_STATS, 1));
            s->nnetstats = 1;
            return fill_sample(PMIX_DISK_STATS, s->diskstats, 0) &&
                   fill_sample(PMIX_NET_STATS, s->netstats, 0);
        }
        case PMIX_DATA_BUFFER: {
            auto *b = static_cast<pmix_data_buffer_t *>(obj);
            if (v1) return true;
            b->base_ptr = static_cast<char *>(malloc(8));
            memcpy(b->base_ptr, "01234567", 8);
            b->bytes_allocated = b->bytes_used = 8;
            b->pack_ptr = b->base_ptr + 8;
            b->unpack_ptr = b->base_ptr + 3;
            return true;
        }
        default:
            return false;
    }
}

// What PMIx_Value_load takes for an object of type `t`: the object itself, except for strings
// and namespaces (the characters) and pointers (the pointer).
inline const void *load_data(pmix_data_type_t t, const void *obj) {
    switch (t) {
        case PMIX_STRING:
            return *static_cast<char *const *>(obj);
        case PMIX_POINTER:
            return *static_cast<void *const *>(obj);
        default:
            return obj;
    }
}

}  // namespace zpmix_test
