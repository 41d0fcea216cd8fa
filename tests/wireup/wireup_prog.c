/* A PMIx program for the wire-up integration tests: `wireup_prog <scenario>`. It uses only the
 * standard API, prints what went wrong on stderr, and exits 0 when its scenario held. */
#include <pmix.h>

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static uint32_t size;
static int failures;

/* What went wrong, printed when the program ends (one burst of output right before exit). */
static char report[1 << 16];
static size_t reported;
#define NOTE(...)                                                                            \
    (reported += (size_t)snprintf(report + reported, sizeof report - reported, __VA_ARGS__), \
     reported = reported < sizeof report ? reported : sizeof report - 1)

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            NOTE("rank %u: %s:%d: %s\n", me.rank, __FILE__, __LINE__, #cond); \
            ++failures;                                                       \
        }                                                                     \
    } while (0)
#define CHECK_RC(expr, want)                                                                 \
    do {                                                                                     \
        pmix_status_t rc_ = (expr);                                                          \
        if (rc_ != (want)) {                                                                 \
            NOTE("rank %u: %s:%d: %s = %s, wanted %s\n", me.rank, __FILE__, __LINE__, #expr, \
                 PMIx_Error_string(rc_), PMIx_Error_string(want));                           \
            ++failures;                                                                      \
        }                                                                                    \
    } while (0)

static void fence_with(const pmix_proc_t *procs, size_t n, int collect, pmix_status_t want) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK_RC(PMIx_Fence(procs, n, collect ? &info : NULL, collect ? 1 : 0), want);
    PMIX_INFO_DESTRUCT(&info);
}

/* ------------------------------------------------------------------ every data type */

/* Loads the i-th sample value for `rank` into v; returns 0 past the last sample. */
static int sample(int i, uint32_t rank, pmix_value_t *v) {
    static char str[64];
    static char bytes[5] = {1, 0, 2, 0, 3};
    pmix_proc_t proc;
    pmix_byte_object_t bo;
    pmix_envar_t env;
    struct timeval tv;
    int ints[3];
    pmix_data_array_t arr;
    PMIX_VALUE_CONSTRUCT(v);
    switch (i) {
        case 0: {
            bool b = rank % 2;
            return PMIx_Value_load(v, &b, PMIX_BOOL) == PMIX_SUCCESS;
        }
        case 1: {
            uint8_t x = 200 + rank;
            return PMIx_Value_load(v, &x, PMIX_BYTE) == PMIX_SUCCESS;
        }
        case 2:
            snprintf(str, sizeof str, "rank-%u-string", rank);
            return PMIx_Value_load(v, str, PMIX_STRING) == PMIX_SUCCESS;
        case 3: {
            size_t x = (size_t)1 << 40 | rank;
            return PMIx_Value_load(v, &x, PMIX_SIZE) == PMIX_SUCCESS;
        }
        case 4: {
            pid_t x = 1000 + rank;
            return PMIx_Value_load(v, &x, PMIX_PID) == PMIX_SUCCESS;
        }
        case 5: {
            int x = -7 - (int)rank;
            return PMIx_Value_load(v, &x, PMIX_INT) == PMIX_SUCCESS;
        }
        case 6: {
            int8_t x = -100;
            return PMIx_Value_load(v, &x, PMIX_INT8) == PMIX_SUCCESS;
        }
        case 7: {
            int16_t x = -30000;
            return PMIx_Value_load(v, &x, PMIX_INT16) == PMIX_SUCCESS;
        }
        case 8: {
            int32_t x = -2000000000;
            return PMIx_Value_load(v, &x, PMIX_INT32) == PMIX_SUCCESS;
        }
        case 9: {
            int64_t x = INT64_MIN + rank;
            return PMIx_Value_load(v, &x, PMIX_INT64) == PMIX_SUCCESS;
        }
        case 10: {
            unsigned x = 4000000000u + rank;
            return PMIx_Value_load(v, &x, PMIX_UINT) == PMIX_SUCCESS;
        }
        case 11: {
            uint8_t x = 255;
            return PMIx_Value_load(v, &x, PMIX_UINT8) == PMIX_SUCCESS;
        }
        case 12: {
            uint16_t x = 65535 - rank;
            return PMIx_Value_load(v, &x, PMIX_UINT16) == PMIX_SUCCESS;
        }
        case 13: {
            uint32_t x = 0xdeadbeef ^ rank;
            return PMIx_Value_load(v, &x, PMIX_UINT32) == PMIX_SUCCESS;
        }
        case 14: {
            uint64_t x = UINT64_MAX - rank;
            return PMIx_Value_load(v, &x, PMIX_UINT64) == PMIX_SUCCESS;
        }
        case 15: {
            float x = 1.5f + rank;
            return PMIx_Value_load(v, &x, PMIX_FLOAT) == PMIX_SUCCESS;
        }
        case 16: {
            double x = 3.25e100 * (rank + 1);
            return PMIx_Value_load(v, &x, PMIX_DOUBLE) == PMIX_SUCCESS;
        }
        case 17:
            tv.tv_sec = 1700000000 + rank;
            tv.tv_usec = 123456;
            return PMIx_Value_load(v, &tv, PMIX_TIMEVAL) == PMIX_SUCCESS;
        case 18: {
            time_t x = 1700000000 + rank;
            return PMIx_Value_load(v, &x, PMIX_TIME) == PMIX_SUCCESS;
        }
        case 19: {
            pmix_status_t x = PMIX_ERR_TIMEOUT;
            return PMIx_Value_load(v, &x, PMIX_STATUS) == PMIX_SUCCESS;
        }
        case 20: {
            pmix_rank_t x = rank;
            return PMIx_Value_load(v, &x, PMIX_PROC_RANK) == PMIX_SUCCESS;
        }
        case 21:
            PMIX_LOAD_PROCID(&proc, "some.namespace", rank);
            return PMIx_Value_load(v, &proc, PMIX_PROC) == PMIX_SUCCESS;
        case 22:
            bo.bytes = bytes;
            bo.size = sizeof bytes;
            return PMIx_Value_load(v, &bo, PMIX_BYTE_OBJECT) == PMIX_SUCCESS;
        case 23: {
            pmix_persistence_t x = PMIX_PERSIST_PROC;
            return PMIx_Value_load(v, &x, PMIX_PERSIST) == PMIX_SUCCESS;
        }
        case 24: {
            pmix_scope_t x = PMIX_REMOTE;
            return PMIx_Value_load(v, &x, PMIX_SCOPE) == PMIX_SUCCESS;
        }
        case 25: {
            pmix_data_range_t x = PMIX_RANGE_NAMESPACE;
            return PMIx_Value_load(v, &x, PMIX_DATA_RANGE) == PMIX_SUCCESS;
        }
        case 26: {
            pmix_proc_state_t x = PMIX_PROC_STATE_RUNNING;
            return PMIx_Value_load(v, &x, PMIX_PROC_STATE) == PMIX_SUCCESS;
        }
        case 27:
            ints[0] = 1;
            ints[1] = -2;
            ints[2] = (int)rank;
            arr.type = PMIX_INT;
            arr.size = 3;
            arr.array = ints;
            return PMIx_Value_load(v, &arr, PMIX_DATA_ARRAY) == PMIX_SUCCESS;
        case 28:
            env.envar = "ZPMIX_TEST_VAR";
            env.value = "on";
            env.separator = ':';
            return PMIx_Value_load(v, &env, PMIX_ENVAR) == PMIX_SUCCESS;
        case 29: {
            pmix_link_state_t x = PMIX_LINK_UP;
            return PMIx_Value_load(v, &x, PMIX_LINK_STATE) == PMIX_SUCCESS;
        }
        case 30: {
            pmix_job_state_t x = PMIX_JOB_STATE_RUNNING;
            return PMIx_Value_load(v, &x, PMIX_JOB_STATE) == PMIX_SUCCESS;
        }
        case 31: {
            pmix_alloc_directive_t x = PMIX_ALLOC_EXTEND;
            return PMIx_Value_load(v, &x, PMIX_ALLOC_DIRECTIVE) == PMIX_SUCCESS;
        }
        case 32: {
            pmix_data_type_t x = PMIX_DOUBLE;
            return PMIx_Value_load(v, &x, PMIX_DATA_TYPE) == PMIX_SUCCESS;
        }
        case 33: {
            pmix_info_directives_t x = PMIX_INFO_REQD;
            return PMIx_Value_load(v, &x, PMIX_INFO_DIRECTIVES) == PMIX_SUCCESS;
        }
        case 34: {
            int16_t x = 0;
            (void)x;
            return PMIx_Value_load(v, NULL, PMIX_UNDEF) == PMIX_SUCCESS;
        }
        default:
            return 0;
    }
}

static void put_samples(const char *prefix) {
    pmix_value_t v;
    char key[64];
    for (int i = 0; sample(i, me.rank, &v); ++i) {
        snprintf(key, sizeof key, "%s.%d", prefix, i);
        CHECK_RC(PMIx_Put(i % 3 == 0   ? PMIX_LOCAL
                          : i % 3 == 1 ? PMIX_REMOTE
                                       : PMIX_GLOBAL,
                          key, &v),
                 PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&v);
    }
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
}

/* Whether rank runs on this process's node (PMIX_NODEID; without it, yes). */
static int on_my_node(uint32_t rank) {
    pmix_proc_t p;
    pmix_value_t *mine = NULL, *theirs = NULL;
    PMIX_LOAD_PROCID(&p, me.nspace, me.rank);
    int same = 1;
    if (PMIx_Get(&p, PMIX_NODEID, NULL, 0, &mine) == PMIX_SUCCESS) {
        p.rank = rank;
        if (PMIx_Get(&p, PMIX_NODEID, NULL, 0, &theirs) == PMIX_SUCCESS)
            same = mine->data.uint32 == theirs->data.uint32;
    }
    if (mine) PMIX_VALUE_RELEASE(mine);
    if (theirs) PMIX_VALUE_RELEASE(theirs);
    return same;
}

static void get_samples(const char *prefix, uint32_t rank, int remote_scope_expected) {
    pmix_value_t want, *got;
    pmix_proc_t p;
    char key[64];
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    const int near = on_my_node(rank);
    for (int i = 0; sample(i, rank, &want); ++i) {
        snprintf(key, sizeof key, "%s.%d", prefix, i);
        got = NULL;
        pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &got);
        /* REMOTE-scope data is not for processes on the owner's node, LOCAL-scope data only for
         * them (under a launcher of several nodes, such as the test host's two). */
        int hidden =
            rank != me.rank && (near ? (i % 3 == 1) && !remote_scope_expected : (i % 3 == 0));
        if (hidden) {
            CHECK_RC(rc, PMIX_ERR_NOT_FOUND);
        } else if (rc != PMIX_SUCCESS) {
            NOTE("rank %u: get %s of %u: %s\n", me.rank, key, rank, PMIx_Error_string(rc));
            ++failures;
        } else {
            if (got->type != want.type || PMIx_Value_compare(got, &want) != PMIX_EQUAL) {
                NOTE("rank %u: %s of %u: type %d vs %d, values differ\n", me.rank, key, rank,
                     got->type, want.type);
                ++failures;
            }
            PMIX_VALUE_RELEASE(got);
        }
        PMIX_VALUE_DESTRUCT(&want);
    }
}

static void scenario_types(int collect) {
    put_samples("t");
    fence_with(NULL, 0, collect, PMIX_SUCCESS);
    for (uint32_t r = 0; r < size; ++r) get_samples("t", r, 0);
}

/* ------------------------------------------------------------------ sparse: Get before commit */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int got_done;
static pmix_status_t got_status;
static int64_t got_value;

static void on_value(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&mu);
    got_status = status;
    if (status == PMIX_SUCCESS && kv->type == PMIX_INT64) got_value = kv->data.int64;
    got_done = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

static void wait_value(void) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (!got_done)
        if (pthread_cond_timedwait(&cv, &mu, &deadline) != 0) break;
    CHECK(got_done);
    pthread_mutex_unlock(&mu);
}

static void publish_flag(const char *key) {
    pmix_info_t info;
    int one = 1;
    PMIX_INFO_LOAD(&info, key, &one, PMIX_INT);
    CHECK_RC(PMIx_Publish(&info, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
}

static void wait_flag(const char *key) {
    pmix_pdata_t pd;
    pmix_info_t wait;
    int all = 0;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
    CHECK_RC(PMIx_Lookup(&pd, 1, &wait, 1), PMIX_SUCCESS);
    PMIX_PDATA_DESTRUCT(&pd);
    PMIX_INFO_DESTRUCT(&wait);
}

static void scenario_sparse(void) {
    pmix_proc_t peer;
    pmix_value_t v;
    int64_t x = 4242;
    if (me.rank == 0) {
        /* Ask for rank 1's key before it exists; the lookup after it is answered only once the
         * broker has registered the Get, so rank 1 commits after the Get waits. */
        PMIX_LOAD_PROCID(&peer, me.nspace, 1);
        CHECK_RC(PMIx_Get_nb(&peer, "late.key", NULL, 0, on_value, NULL), PMIX_SUCCESS);
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "nobody.published.this");
        CHECK_RC(PMIx_Lookup(&pd, 1, NULL, 0), PMIX_ERR_NOT_FOUND);
        PMIX_PDATA_DESTRUCT(&pd);
        publish_flag("sparse.waiting");
        wait_value();
        CHECK_RC(got_status, PMIX_SUCCESS);
        CHECK(got_value == 4242);
        /* Committed without the key: not found, at once. */
        pmix_value_t *none = NULL;
        CHECK_RC(PMIx_Get(&peer, "never.put", NULL, 0, &none), PMIX_ERR_NOT_FOUND);
        /* Optional: cached only, never remote. */
        pmix_info_t opt;
        bool yes = true;
        PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
        pmix_proc_t other;
        PMIX_LOAD_PROCID(&other, me.nspace, 2);
        CHECK_RC(PMIx_Get(&other, "late.key", &opt, 1, &none), PMIX_ERR_NOT_FOUND);
        /* PMIX_TIMEOUT bounds a Get of a key that never comes. */
        pmix_info_t to;
        int one = 1;
        PMIX_INFO_LOAD(&to, PMIX_TIMEOUT, &one, PMIX_INT);
        CHECK_RC(PMIx_Get(&other, "late.key", &to, 1, &none), PMIX_ERR_TIMEOUT);
        publish_flag("sparse.done");
    } else if (me.rank == 1) {
        wait_flag("sparse.waiting");
        PMIX_VALUE_LOAD(&v, &x, PMIX_INT64);
        CHECK_RC(PMIx_Put(PMIX_GLOBAL, "late.key", &v), PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&v);
        CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
        wait_flag("sparse.done");
    } else {
        wait_flag("sparse.done");
    }
    /* Data exchange without collect: every rank reads every other's card by direct modex. */
    put_samples("s");
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    for (uint32_t r = 0; r < size; ++r) get_samples("s", r, 0);
}

/* ------------------------------------------------------------------ fences */

static int nb_done;
static pmix_status_t nb_status[8];

static void on_fence(pmix_status_t status, void *cbdata) {
    pthread_mutex_lock(&mu);
    nb_status[(intptr_t)cbdata] = status;
    ++nb_done;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

/* Waits (at most 20 s) for `n` non-blocking fences, and checks they all succeeded. */
static void await_fences(int n) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (nb_done < n)
        if (pthread_cond_timedwait(&cv, &mu, &deadline) != 0) break;
    CHECK(nb_done == n);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; ++i) CHECK_RC(nb_status[i], PMIX_SUCCESS);
}

static void scenario_fences(void) {
    /* np = 4: halves, with their own data. */
    pmix_proc_t half[2], evens[2], all[4];
    pmix_value_t v, *got;
    uint32_t base = me.rank < 2 ? 0 : 2;
    PMIX_LOAD_PROCID(&half[0], me.nspace, base + 1); /* order does not matter */
    PMIX_LOAD_PROCID(&half[1], me.nspace, base);
    uint32_t x = 100 + me.rank;
    PMIX_VALUE_LOAD(&v, &x, PMIX_UINT32);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, "half", &v), PMIX_SUCCESS);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    for (int i = 0; i < 5; ++i) fence_with(half, 2, 1, PMIX_SUCCESS);
    pmix_proc_t partner;
    PMIX_LOAD_PROCID(&partner, me.nspace, base + (me.rank == base ? 1 : 0));
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    CHECK_RC(PMIx_Get(&partner, "half", &opt, 1, &got), PMIX_SUCCESS);
    if (got) {
        CHECK(got->type == PMIX_UINT32 && got->data.uint32 == 100 + partner.rank);
        PMIX_VALUE_RELEASE(got);
    }
    /* The other half's data did not come with this fence. */
    pmix_proc_t stranger;
    PMIX_LOAD_PROCID(&stranger, me.nspace, (base + 2) % 4);
    CHECK_RC(PMIx_Get(&stranger, "half", &opt, 1, &got), PMIX_ERR_NOT_FOUND);

    /* Concurrent non-blocking fences over two sets, started in different orders: the evens, and
     * the whole job, named with the wildcard and rank by rank (one set: its two fences meet in
     * the order each rank calls them, as on the fence board). */
    for (uint32_t r = 0; r < 4; ++r) PMIX_LOAD_PROCID(&all[r], me.nspace, r);
    PMIX_LOAD_PROCID(&evens[0], me.nspace, me.rank % 2);
    PMIX_LOAD_PROCID(&evens[1], me.nspace, me.rank % 2 + 2);
    nb_done = 0;
    if (me.rank % 2) {
        CHECK_RC(PMIx_Fence_nb(evens, 2, NULL, 0, on_fence, (void *)0), PMIX_SUCCESS);
        CHECK_RC(PMIx_Fence_nb(NULL, 0, NULL, 0, on_fence, (void *)1), PMIX_SUCCESS);
        CHECK_RC(PMIx_Fence_nb(all, 4, NULL, 0, on_fence, (void *)2), PMIX_SUCCESS);
    } else {
        CHECK_RC(PMIx_Fence_nb(all, 4, NULL, 0, on_fence, (void *)2), PMIX_SUCCESS);
        CHECK_RC(PMIx_Fence_nb(NULL, 0, NULL, 0, on_fence, (void *)1), PMIX_SUCCESS);
        CHECK_RC(PMIx_Fence_nb(evens, 2, NULL, 0, on_fence, (void *)0), PMIX_SUCCESS);
    }
    await_fences(3);
    /* A fence the caller is not part of is refused. */
    pmix_proc_t others[1];
    PMIX_LOAD_PROCID(&others[0], me.nspace, (me.rank + 1) % 4);
    CHECK_RC(PMIx_Fence(others, 1, NULL, 0), PMIX_ERR_BAD_PARAM);
    /* Just self: completes here. */
    CHECK_RC(PMIx_Fence(&me, 1, NULL, 0), PMIX_SUCCESS);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
}

/* Rank 1 never joins: rank 0's fence with PMIX_TIMEOUT fails with PMIX_ERR_TIMEOUT. */
static void scenario_timeout(void) {
    if (me.rank == 0) {
        pmix_info_t info;
        int one = 1;
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &one, PMIX_INT);
        CHECK_RC(PMIx_Fence(NULL, 0, &info, 1), PMIX_ERR_TIMEOUT);
        publish_flag("timeout.seen");
    } else {
        wait_flag("timeout.seen");
    }
}

/* Gets and fences naming processes that cannot exist fail at once, without PMIX_TIMEOUT (the
 * test's own deadline catches a hang): a rank the job does not have, an unknown namespace. */
static void scenario_cannot_exist(void) {
    pmix_proc_t p;
    pmix_value_t *got = NULL;
    PMIX_LOAD_PROCID(&p, me.nspace, 1000);
    CHECK_RC(PMIx_Get(&p, "wireup.none", NULL, 0, &got), PMIX_ERR_BAD_PARAM);
    PMIX_LOAD_PROCID(&p, "wireup.nosuch", 0);
    CHECK_RC(PMIx_Get(&p, "wireup.none", NULL, 0, &got), PMIX_ERR_NOT_FOUND);
    pmix_proc_t set[2];
    PMIX_LOAD_PROCID(&set[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&set[1], "wireup.nosuch", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Fence(set, 2, NULL, 0), PMIX_ERR_NOT_FOUND);
    PMIX_LOAD_PROCID(&set[1], me.nspace, 1000);
    PMIX_LOAD_PROCID(&set[0], me.nspace, 0);
    CHECK_RC(PMIx_Fence(set, 2, NULL, 0), PMIX_ERR_BAD_PARAM);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS); /* the job still fences */
}

/* Rank 0 puts more than the broker takes in one message: PMIx_Commit refuses it with a status
 * that says so, and its connection survives (the fence and a Get of rank 1's data go through). */
static void scenario_bigput(void) {
    if (me.rank == 0) {
        pmix_value_t big;
        big.type = PMIX_BYTE_OBJECT;
        big.data.bo.size = (size_t)65 << 20; /* the default max_message_bytes is 64 MiB */
        big.data.bo.bytes = calloc(1, big.data.bo.size);
        CHECK(big.data.bo.bytes != NULL);
        CHECK_RC(PMIx_Put(PMIX_GLOBAL, "wireup.big", &big), PMIX_SUCCESS);
        free(big.data.bo.bytes);
        CHECK_RC(PMIx_Commit(), PMIX_ERR_OUT_OF_RESOURCE);
    } else {
        pmix_value_t v;
        v.type = PMIX_UINT32;
        v.data.uint32 = 4242;
        CHECK_RC(PMIx_Put(PMIX_GLOBAL, "wireup.small", &v), PMIX_SUCCESS);
        CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    }
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 0) {
        pmix_proc_t one;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&one, me.nspace, 1);
        CHECK_RC(PMIx_Get(&one, "wireup.small", NULL, 0, &got), PMIX_SUCCESS);
        CHECK(got != NULL && got->type == PMIX_UINT32 && got->data.uint32 == 4242);
        if (got) PMIX_VALUE_RELEASE(got);
    }
}

/* The last rank ends right after init: the others' fence fails instead of hanging. */
static void scenario_death(void) {
    if (me.rank == size - 1) {
        PMIx_Finalize(NULL, 0);
        exit(0);
    }
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_ERR_PROC_TERM_WO_SYNC) {
        NOTE("rank %u: fence with a dead participant: %s\n", me.rank, PMIx_Error_string(rc));
        ++failures;
    }
    pmix_proc_t dead;
    pmix_value_t *got = NULL;
    PMIX_LOAD_PROCID(&dead, me.nspace, size - 1);
    CHECK_RC(PMIx_Get(&dead, "never.committed", NULL, 0, &got), PMIX_ERR_NOT_FOUND);
}

/* np = 3: rank 2 arrives at a fence and ends before the others come. The fence completes
 * without it (it had arrived); the next one fails. */
static void scenario_leaver(void) {
    if (me.rank == 2) {
        CHECK_RC(PMIx_Fence_nb(NULL, 0, NULL, 0, on_fence, NULL), PMIX_SUCCESS);
        pmix_info_t info;
        int pid = (int)getpid();
        PMIX_INFO_LOAD(&info, "lv.pid", &pid, PMIX_INT);
        CHECK_RC(PMIx_Publish(&info, 1), PMIX_SUCCESS);
        _exit(0);
    }
    pmix_pdata_t pd;
    pmix_info_t wait;
    int all = 0;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, "lv.pid");
    PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
    CHECK_RC(PMIx_Lookup(&pd, 1, &wait, 1), PMIX_SUCCESS);
    /* Its end is reaped (and reported to the broker) before it is gone: at most 10 s. */
    const struct timespec tick = {0, 1000000};
    for (int i = 0; i < 10000 && kill((pid_t)pd.value.data.integer, 0) == 0; ++i)
        nanosleep(&tick, NULL);
    CHECK(kill((pid_t)pd.value.data.integer, 0) != 0);
    PMIX_PDATA_DESTRUCT(&pd);
    PMIX_INFO_DESTRUCT(&wait);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    fence_with(NULL, 0, 0, PMIX_ERR_PROC_TERM_WO_SYNC);
}

/* np = 3: rounds of a new key committed, then a fence without collect, after which every rank
 * reads every other's key of that round by direct modex. The broker must answer from the commit
 * made before that fence, never from an older one it still holds. */
static void scenario_recommit(void) {
    for (uint32_t round = 0; round < 50; ++round) {
        char key[32];
        snprintf(key, sizeof key, "rc.%u", round);
        uint32_t x = me.rank * 1000 + round;
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, &x, PMIX_UINT32);
        CHECK_RC(PMIx_Put(PMIX_GLOBAL, key, &v), PMIX_SUCCESS);
        PMIX_VALUE_DESTRUCT(&v);
        CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
        fence_with(NULL, 0, 0, PMIX_SUCCESS);
        for (uint32_t r = 0; r < size; ++r) {
            pmix_proc_t p;
            pmix_value_t *got = NULL;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            CHECK_RC(PMIx_Get(&p, key, NULL, 0, &got), PMIX_SUCCESS);
            if (got) {
                CHECK(got->type == PMIX_UINT32 && got->data.uint32 == r * 1000 + round);
                PMIX_VALUE_RELEASE(got);
            }
        }
    }
}

/* ------------------------------------------------------------------ cards of every size */

/* A card of `len` bytes, different for every (owner, len, round). */
static void fill_card(char *buf, size_t len, uint32_t owner, int round) {
    for (size_t i = 0; i < len; ++i) buf[i] = (char)('a' + (owner * 31 + round * 7 + i) % 26);
}

static void put_card(const char *key, size_t len, uint32_t owner, int round) {
    char *buf = malloc(len);
    fill_card(buf, len, owner, round);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = buf;
    v.data.bo.size = len;
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, key, &v), PMIX_SUCCESS);
    free(buf); /* Put copied it */
}

static void check_card(const char *nspace, uint32_t rank, const char *key, size_t len,
                       uint32_t owner, int round) {
    pmix_proc_t p;
    pmix_value_t *got = NULL;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &got);
    if (rc != PMIX_SUCCESS) {
        NOTE("rank %u: get %s of %s:%u: %s\n", me.rank, key, nspace, rank, PMIx_Error_string(rc));
        ++failures;
        return;
    }
    char *want = malloc(len);
    fill_card(want, len, owner, round);
    if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len ||
        memcmp(got->data.bo.bytes, want, len) != 0) {
        NOTE("rank %u: %s of %s:%u is not the card put\n", me.rank, key, nspace, rank);
        ++failures;
    }
    free(want);
    PMIX_VALUE_RELEASE(got);
}

/* The files that hold fence segments: arenas, and segments of their own. */
static int segments_in(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, "fence.", 6) == 0 || strncmp(e->d_name, "arena.", 6) == 0;
    closedir(d);
    return n;
}

/* np = 4: collecting fences, concurrent and back to back, with cards of 64 B to several MiB;
 * every rank checks every rank's card after each. */
static void scenario_cards(void) {
    pmix_proc_t half[2], evens[2];
    uint32_t base = me.rank < 2 ? 0 : 2;
    PMIX_LOAD_PROCID(&half[0], me.nspace, base);
    PMIX_LOAD_PROCID(&half[1], me.nspace, base + 1);
    PMIX_LOAD_PROCID(&evens[0], me.nspace, me.rank % 2);
    PMIX_LOAD_PROCID(&evens[1], me.nspace, me.rank % 2 + 2);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);

    /* Non-blocking: two sets at once, and one set twice before the first's result is in. */
    put_card("card.nb", 4096, me.rank, 1);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    nb_done = 0;
    CHECK_RC(PMIx_Fence_nb(half, 2, &collect, 1, on_fence, (void *)0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence_nb(evens, 2, &collect, 1, on_fence, (void *)1), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence_nb(half, 2, &collect, 1, on_fence, (void *)2), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence_nb(NULL, 0, &collect, 1, on_fence, (void *)3), PMIX_SUCCESS);
    await_fences(4);
    for (uint32_t r = 0; r < size; ++r) check_card(me.nspace, r, "card.nb", 4096, r, 1);

    /* Blocking, one size after the other (the biggest last: every commit carries all puts). */
    static const size_t sizes[] = {64, 4096, 3u << 20};
    for (int i = 0; i < 3; ++i) {
        char key[32];
        snprintf(key, sizeof key, "card.%zu", sizes[i]);
        put_card(key, sizes[i], me.rank, 10 + i);
        CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
        fence_with(NULL, 0, 1, PMIX_SUCCESS);
        for (uint32_t r = 0; r < size; ++r) check_card(me.nspace, r, key, sizes[i], r, 10 + i);
    }
    /* That fence's segment stays at least until this rank contributes to a later one. */
    pmix_value_t *dir = NULL;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Get(&wild, PMIX_TMPDIR, NULL, 0, &dir), PMIX_SUCCESS);
    if (dir) {
        CHECK(segments_in(dir->data.string) >= 1);
        PMIX_VALUE_RELEASE(dir);
    }
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&collect);
}

/* ------------------------------------------------------------------ job information */

static pmix_value_t *job_get(uint32_t rank, const char *key, pmix_data_type_t type) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        NOTE("rank %u: get %s: %s\n", me.rank, key, PMIx_Error_string(rc));
        ++failures;
        return NULL;
    }
    if (v->type != type) {
        NOTE("rank %u: %s has type %s, wanted %s\n", me.rank, key, PMIx_Data_type_string(v->type),
             PMIx_Data_type_string(type));
        ++failures;
        PMIX_VALUE_RELEASE(v);
        return NULL;
    }
    return v;
}

#define JOB_CHECK(rank, key, type, cond)            \
    do {                                            \
        pmix_value_t *v = job_get(rank, key, type); \
        if (v) {                                    \
            CHECK(cond);                            \
            PMIX_VALUE_RELEASE(v);                  \
        }                                           \
    } while (0)

/* The same for a process of any namespace. */
#define JOB_CHECK_IN(proc, key, want, cond)                                                  \
    do {                                                                                     \
        pmix_value_t *v = NULL;                                                              \
        pmix_status_t rc_ = PMIx_Get(&(proc), key, NULL, 0, &v);                             \
        if (rc_ != PMIX_SUCCESS || v->type != (want)) {                                      \
            NOTE("rank %u: get %s of %s:%u: %s\n", me.rank, key, (proc).nspace, (proc).rank, \
                 PMIx_Error_string(rc_));                                                    \
            ++failures;                                                                      \
        } else {                                                                             \
            CHECK(cond);                                                                     \
        }                                                                                    \
        if (v) PMIX_VALUE_RELEASE(v);                                                        \
    } while (0)

static void scenario_jobinfo(int singleton) {
    const uint32_t W = PMIX_RANK_WILDCARD;
    JOB_CHECK(W, PMIX_JOB_SIZE, PMIX_UINT32, v->data.uint32 == size);
    JOB_CHECK(W, PMIX_UNIV_SIZE, PMIX_UINT32, v->data.uint32 >= size);
    JOB_CHECK(W, PMIX_MAX_PROCS, PMIX_UINT32, v->data.uint32 >= size);
    JOB_CHECK(W, PMIX_LOCAL_SIZE, PMIX_UINT32, v->data.uint32 == size);
    JOB_CHECK(W, PMIX_NUM_NODES, PMIX_UINT32, v->data.uint32 == 1);
    JOB_CHECK(W, PMIX_JOB_NUM_APPS, PMIX_UINT32, v->data.uint32 == 1);
    JOB_CHECK(W, PMIX_NSPACE, PMIX_STRING, strcmp(v->data.string, me.nspace) == 0);
    JOB_CHECK(W, PMIX_JOBID, PMIX_STRING, v->data.string[0] != '\0');
    JOB_CHECK(W, PMIX_NODE_LIST, PMIX_STRING, v->data.string[0] != '\0');
    JOB_CHECK(W, PMIX_NODE_MAP, PMIX_STRING, v->data.string[0] != '\0');
    JOB_CHECK(W, PMIX_PROC_MAP, PMIX_STRING, v->data.string[0] == '0');
    JOB_CHECK(W, PMIX_LOCAL_PEERS, PMIX_STRING, v->data.string[0] == '0');
    JOB_CHECK(W, PMIX_HOSTNAME, PMIX_STRING, v->data.string[0] != '\0');
    JOB_CHECK(me.rank, PMIX_JOB_SIZE, PMIX_UINT32, v->data.uint32 == size); /* also per rank */
    /* Node ranks count every job's ranks on the node: this job's come after the earlier jobs'. */
    uint16_t node_base = 0;
    JOB_CHECK(0, PMIX_NODE_RANK, PMIX_UINT16, ((node_base = v->data.uint16), 1));
    for (uint32_t r = 0; r < size; ++r) {
        JOB_CHECK(r, PMIX_RANK, PMIX_PROC_RANK, v->data.rank == r);
        JOB_CHECK(r, PMIX_GLOBAL_RANK, PMIX_PROC_RANK, v->data.rank == r);
        JOB_CHECK(r, PMIX_LOCAL_RANK, PMIX_UINT16, v->data.uint16 == r);
        JOB_CHECK(r, PMIX_NODE_RANK, PMIX_UINT16, v->data.uint16 == node_base + r);
        JOB_CHECK(r, PMIX_NODEID, PMIX_UINT32, v->data.uint32 == 0);
        JOB_CHECK(r, PMIX_APPNUM, PMIX_UINT32, v->data.uint32 == 0);
        JOB_CHECK(r, PMIX_HOSTNAME, PMIX_STRING, v->data.string[0] != '\0');
    }
    if (!singleton) {
        JOB_CHECK(W, PMIX_TMPDIR, PMIX_STRING, v->data.string[0] == '/');
        JOB_CHECK(W, PMIX_NSDIR, PMIX_STRING, v->data.string[0] == '/');
        JOB_CHECK(me.rank, PMIX_PROCDIR, PMIX_STRING, v->data.string[0] == '/');
        for (uint32_t r = 0; r < size; ++r) {
            JOB_CHECK(r, PMIX_LOCALITY_STRING, PMIX_STRING, v->data.string[0] != '\0');
            JOB_CHECK(r, PMIX_CPUSET, PMIX_STRING, v->data.string[0] != '\0');
        }
    }
    /* Errors. */
    pmix_value_t *v = NULL;
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, W);
    CHECK_RC(PMIx_Get(&p, "no.such.job.key", NULL, 0, &v), PMIX_ERR_NOT_FOUND);
    /* A NULL key asks for all the process posted: nothing, for the wildcard rank. */
    CHECK_RC(PMIx_Get(&p, NULL, NULL, 0, &v), PMIX_ERR_NOT_FOUND);
    CHECK_RC(PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, NULL), PMIX_ERR_BAD_PARAM);
    /* Own data, PMIx_Store_internal, resolve. */
    int64_t x = 77;
    pmix_value_t mine;
    PMIX_VALUE_LOAD(&mine, &x, PMIX_INT64);
    CHECK_RC(PMIx_Put(PMIX_LOCAL, "mine", &mine), PMIX_SUCCESS);
    CHECK_RC(PMIx_Store_internal(&me, "internal", &mine), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&mine);
    JOB_CHECK(me.rank, "mine", PMIX_INT64, v->data.int64 == 77);
    JOB_CHECK(me.rank, "internal", PMIX_INT64, v->data.int64 == 77);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    CHECK_RC(PMIx_Resolve_peers(NULL, NULL, &peers, &npeers), PMIX_SUCCESS);
    CHECK(npeers == size);
    PMIX_PROC_FREE(peers, npeers);
    char *nodes = NULL;
    CHECK_RC(PMIx_Resolve_nodes(me.nspace, &nodes), PMIX_SUCCESS);
    CHECK(nodes != NULL && nodes[0] != '\0');
    free(nodes);
    /* Nested init is counted. */
    pmix_proc_t again;
    CHECK_RC(PMIx_Init(&again, NULL, 0), PMIX_SUCCESS);
    CHECK(PMIX_CHECK_PROCID(&again, &me));
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    CHECK(PMIx_Initialized());
}

/* ------------------------------------------------------------------ two namespaces */

/* Two jobs of two ranks: each job's rank 0 publishes its namespace, the other job looks it up,
 * then all four fence over both namespaces and read each other's data. */
static void scenario_twojobs(void) {
    const char *side = getenv("WIREUP_SIDE"); /* "a" or "b" */
    char mykey[32], otherkey[32];
    snprintf(mykey, sizeof mykey, "ns.%s", side);
    snprintf(otherkey, sizeof otherkey, "ns.%s", side[0] == 'a' ? "b" : "a");
    if (me.rank == 0) {
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, mykey, me.nspace, PMIX_STRING);
        CHECK_RC(PMIx_Publish(&info, 1), PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&info);
    }
    pmix_pdata_t pd;
    pmix_info_t wait;
    int all = 0;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, otherkey);
    PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
    CHECK_RC(PMIx_Lookup(&pd, 1, &wait, 1), PMIX_SUCCESS);
    if (pd.value.type != PMIX_STRING) {
        ++failures;
        return;
    }
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], pd.value.data.string, PMIX_RANK_WILDCARD);
    uint32_t x = me.rank + (side[0] == 'a' ? 10 : 20);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, &x, PMIX_UINT32);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, "card", &v), PMIX_SUCCESS);
    put_card("bigcard", 8192, x, 0); /* 4 x 8 KiB: a segment file */
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(procs, 2, 1, PMIX_SUCCESS);
    fence_with(procs, 2, 0, PMIX_SUCCESS); /* a second one over the same set */
    for (uint32_t r = 0; r < 2; ++r) {
        pmix_proc_t p;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&p, pd.value.data.string, r);
        CHECK_RC(PMIx_Get(&p, "card", NULL, 0, &got), PMIX_SUCCESS);
        if (got) {
            CHECK(got->data.uint32 == r + (side[0] == 'a' ? 20 : 10));
            PMIX_VALUE_RELEASE(got);
        }
        check_card(pd.value.data.string, r, "bigcard", 8192, r + (side[0] == 'a' ? 20 : 10), 0);
    }
    PMIX_PDATA_DESTRUCT(&pd);
    PMIX_INFO_DESTRUCT(&wait);
}

/* ------------------------------------------------------------------ scopes */

static void put_u32(pmix_scope_t scope, const char *key, uint32_t x) {
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, &x, PMIX_UINT32);
    CHECK_RC(PMIx_Put(scope, key, &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
}

/* PMIx_Get of a uint32 with PMIX_DATA_SCOPE (PMIX_SCOPE_UNDEF: without it). */
static pmix_status_t scoped_get(const pmix_proc_t *p, const char *key, pmix_scope_t scope,
                                uint32_t *out) {
    pmix_info_t info;
    pmix_value_t *v = NULL;
    PMIX_INFO_LOAD(&info, PMIX_DATA_SCOPE, &scope, PMIX_SCOPE);
    pmix_status_t rc = PMIx_Get(p, key, scope == PMIX_SCOPE_UNDEF ? NULL : &info,
                                scope == PMIX_SCOPE_UNDEF ? 0 : 1, &v);
    if (rc == PMIX_SUCCESS && out != NULL) *out = v->type == PMIX_UINT32 ? v->data.uint32 : 0;
    if (v) PMIX_VALUE_RELEASE(v);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static pmix_status_t nb_status_of;
static uint32_t nb_u32;

static void on_u32(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&mu);
    nb_status_of = status;
    nb_u32 = status == PMIX_SUCCESS && kv->type == PMIX_UINT32 ? kv->data.uint32 : 0;
    got_done = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

/* PMIx_Get_nb, waited for (bounded). */
static pmix_status_t get_nb(const pmix_proc_t *p, const char *key, pmix_info_t *info, size_t ninfo,
                            uint32_t *out) {
    got_done = 0;
    pmix_status_t rc = PMIx_Get_nb(p, key, info, ninfo, on_u32, NULL);
    if (rc != PMIX_SUCCESS) return rc;
    wait_value();
    if (out) *out = nb_u32;
    return nb_status_of;
}

/* Two ranks on one node: each sees the other's LOCAL and GLOBAL data, never its REMOTE or
 * INTERNAL data, and a Get naming a scope finds only data put with that scope. */
static void scenario_scope(void) {
    pmix_proc_t peer, wild;
    uint32_t x = 0;
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    put_u32(PMIX_LOCAL, "sc.l", 10 + me.rank);
    put_u32(PMIX_REMOTE, "sc.r", 20 + me.rank);
    put_u32(PMIX_GLOBAL, "sc.g", 30 + me.rank);
    put_u32(PMIX_INTERNAL, "sc.i", 40 + me.rank);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(NULL, 0, 1, PMIX_SUCCESS);
    /* Own data: all of it without a scope, each under the scope it was put with. */
    CHECK_RC(scoped_get(&me, "sc.l", PMIX_LOCAL, &x), PMIX_SUCCESS);
    CHECK(x == 10 + me.rank);
    CHECK_RC(scoped_get(&me, "sc.r", PMIX_REMOTE, &x), PMIX_SUCCESS);
    CHECK(x == 20 + me.rank);
    CHECK_RC(scoped_get(&me, "sc.i", PMIX_INTERNAL, &x), PMIX_SUCCESS);
    CHECK(x == 40 + me.rank);
    CHECK_RC(scoped_get(&me, "sc.i", PMIX_SCOPE_UNDEF, NULL), PMIX_SUCCESS);
    CHECK_RC(scoped_get(&me, "sc.i", PMIX_GLOBAL, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&me, "sc.g", PMIX_LOCAL, NULL), PMIX_ERR_NOT_FOUND);
    /* The peer's, from the collecting fence. */
    CHECK_RC(scoped_get(&peer, "sc.l", PMIX_LOCAL, &x), PMIX_SUCCESS);
    CHECK(x == 10 + peer.rank);
    CHECK_RC(scoped_get(&peer, "sc.l", PMIX_GLOBAL, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.g", PMIX_GLOBAL, &x), PMIX_SUCCESS);
    CHECK(x == 30 + peer.rank);
    CHECK_RC(scoped_get(&peer, "sc.g", PMIX_REMOTE, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.r", PMIX_REMOTE, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.r", PMIX_SCOPE_UNDEF, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.i", PMIX_INTERNAL, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.i", PMIX_SCOPE_UNDEF, NULL), PMIX_ERR_NOT_FOUND);
    /* PMIx_Store_internal keeps data in the INTERNAL scope. */
    pmix_value_t v;
    uint32_t fifty = 50;
    PMIX_VALUE_LOAD(&v, &fifty, PMIX_UINT32);
    CHECK_RC(PMIx_Store_internal(&peer, "sc.s", &v), PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    CHECK_RC(scoped_get(&peer, "sc.s", PMIX_INTERNAL, &x), PMIX_SUCCESS);
    CHECK(x == 50);
    CHECK_RC(scoped_get(&peer, "sc.s", PMIX_GLOBAL, NULL), PMIX_ERR_NOT_FOUND);
    /* Data that comes by direct modex is tagged the same way. */
    put_u32(PMIX_LOCAL, "sc.dl", 60 + me.rank);
    put_u32(PMIX_GLOBAL, "sc.dg", 70 + me.rank);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    CHECK_RC(scoped_get(&peer, "sc.dl", PMIX_LOCAL, &x), PMIX_SUCCESS);
    CHECK(x == 60 + peer.rank);
    CHECK_RC(scoped_get(&peer, "sc.dg", PMIX_LOCAL, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&peer, "sc.dg", PMIX_GLOBAL, &x), PMIX_SUCCESS);
    CHECK(x == 70 + peer.rank);
    /* Non-blocking, the same. */
    pmix_info_t info;
    pmix_scope_t scope = PMIX_GLOBAL;
    PMIX_INFO_LOAD(&info, PMIX_DATA_SCOPE, &scope, PMIX_SCOPE);
    CHECK_RC(get_nb(&peer, "sc.l", &info, 1, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(get_nb(&peer, "sc.g", &info, 1, &x), PMIX_SUCCESS);
    CHECK(x == 30 + peer.rank);
    PMIX_INFO_DESTRUCT(&info);
    /* No such scope. */
    CHECK_RC(scoped_get(&peer, "sc.g", (pmix_scope_t)9, NULL), PMIX_ERR_BAD_PARAM);
    /* Job information is not put data: a scope does not hide it. */
    CHECK_RC(scoped_get(&wild, PMIX_JOB_SIZE, PMIX_LOCAL, &x), PMIX_SUCCESS);
    CHECK(x == size);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
}

/* ------------------------------------------------------------------ another job's information */

static void get_string(const pmix_proc_t *p, const char *key, char *out, size_t n) {
    pmix_value_t *v = NULL;
    out[0] = '\0';
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v->type != PMIX_STRING) {
        NOTE("rank %u: get %s of %s:%u: %s\n", me.rank, key, p->nspace, p->rank,
             PMIx_Error_string(rc));
        ++failures;
    } else {
        snprintf(out, n, "%s", v->data.string);
    }
    if (v) PMIX_VALUE_RELEASE(v);
}

/* Two jobs of 2 and 3 ranks (bound, so that ranks have locality strings): each reads the
 * other's job-level and per-process information; job a keeps it after job b has ended. */
static void scenario_otherjob(void) {
    const char *side = getenv("WIREUP_SIDE"); /* "a" (2 ranks) or "b" (3 ranks) */
    const int a = side[0] == 'a';
    const uint32_t other_size = a ? 3 : 2;
    if (me.rank == 0) {
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, a ? "oj.a" : "oj.b", me.nspace, PMIX_STRING);
        CHECK_RC(PMIx_Publish(&info, 1), PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&info);
    }
    pmix_pdata_t pd;
    pmix_info_t wait;
    int all = 0;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, a ? "oj.b" : "oj.a");
    PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
    CHECK_RC(PMIx_Lookup(&pd, 1, &wait, 1), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&wait);
    if (pd.value.type != PMIX_STRING) {
        ++failures;
        return;
    }
    pmix_proc_t wild, p;
    char host[256], theirs[256];
    uint32_t x = 0;
    PMIX_LOAD_PROCID(&wild, pd.value.data.string, PMIX_RANK_WILDCARD);
    get_string(&me, PMIX_HOSTNAME, host, sizeof host);
    CHECK_RC(scoped_get(&wild, PMIX_JOB_SIZE, PMIX_SCOPE_UNDEF, &x), PMIX_SUCCESS);
    CHECK(x == other_size);
    get_string(&wild, PMIX_NSPACE, theirs, sizeof theirs);
    CHECK(strcmp(theirs, wild.nspace) == 0);
    /* The two jobs share the node: their node ranks are two runs that do not meet. */
    uint16_t mine = 0, base = 0;
    PMIX_LOAD_PROCID(&p, me.nspace, 0);
    JOB_CHECK_IN(p, PMIX_NODE_RANK, PMIX_UINT16, ((mine = v->data.uint16), 1));
    PMIX_LOAD_PROCID(&p, wild.nspace, 0);
    JOB_CHECK_IN(p, PMIX_NODE_RANK, PMIX_UINT16, ((base = v->data.uint16), 1));
    CHECK(base >= mine + size || mine >= base + other_size);
    for (uint32_t r = 0; r < other_size; ++r) {
        PMIX_LOAD_PROCID(&p, wild.nspace, r);
        get_string(&p, PMIX_HOSTNAME, theirs, sizeof theirs);
        CHECK(strcmp(theirs, host) == 0);
        get_string(&p, PMIX_LOCALITY_STRING, theirs, sizeof theirs);
        CHECK(theirs[0] != '\0');
        JOB_CHECK_IN(p, PMIX_LOCAL_RANK, PMIX_UINT16, v->data.uint16 == r);
        JOB_CHECK_IN(p, PMIX_NODE_RANK, PMIX_UINT16, v->data.uint16 == base + r);
        JOB_CHECK_IN(p, PMIX_RANK, PMIX_PROC_RANK, v->data.rank == r);
    }
    PMIX_LOAD_PROCID(&p, wild.nspace, other_size);
    CHECK_RC(scoped_get(&p, PMIX_LOCAL_RANK, PMIX_SCOPE_UNDEF, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(scoped_get(&wild, "pmix.no.such.key", PMIX_SCOPE_UNDEF, NULL), PMIX_ERR_NOT_FOUND);
    CHECK_RC(get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, &x), PMIX_SUCCESS);
    CHECK(x == other_size);
    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    CHECK_RC(PMIx_Resolve_peers(NULL, wild.nspace, &peers, &npeers), PMIX_SUCCESS);
    CHECK(npeers == other_size);
    PMIX_PROC_FREE(peers, npeers);
    /* A namespace nobody registered: not found, at once, with or without a timeout. */
    pmix_proc_t nobody;
    pmix_info_t to;
    int one = 1;
    PMIX_LOAD_PROCID(&nobody, "no.such.namespace", PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&to, PMIX_TIMEOUT, &one, PMIX_INT);
    pmix_value_t *none = NULL;
    CHECK_RC(PMIx_Get(&nobody, PMIX_JOB_SIZE, NULL, 0, &none), PMIX_ERR_NOT_FOUND);
    CHECK_RC(PMIx_Get(&nobody, PMIX_JOB_SIZE, &to, 1, &none), PMIX_ERR_NOT_FOUND);
    CHECK_RC(get_nb(&nobody, PMIX_JOB_SIZE, NULL, 0, NULL), PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&to);
    /* Both jobs have read: b ends; a then still answers from what it fetched. */
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (!a) {
        if (me.rank == 0) wait_flag("oj.a.read");
        PMIX_PDATA_DESTRUCT(&pd);
        return;
    }
    if (me.rank == 0) publish_flag("oj.a.read");
    pmix_info_t refresh;
    bool yes = true;
    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    struct timespec pause = {0, 10 * 1000 * 1000};
    pmix_status_t rc = PMIX_SUCCESS;
    for (int i = 0; i < 2000 && rc == PMIX_SUCCESS; ++i) { /* until the broker forgets b */
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, &refresh, 1, &none);
        if (none) PMIX_VALUE_RELEASE(none);
        none = NULL;
        if (rc == PMIX_SUCCESS) nanosleep(&pause, NULL);
    }
    CHECK_RC(rc, PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&refresh);
    x = 0;
    CHECK_RC(scoped_get(&wild, PMIX_JOB_SIZE, PMIX_SCOPE_UNDEF, &x), PMIX_SUCCESS);
    CHECK(x == other_size);
    PMIX_PDATA_DESTRUCT(&pd);
}

/* ------------------------------------------------------------------ abort of some processes */

static volatile sig_atomic_t terminated;
static void on_sigterm(int sig) {
    (void)sig;
    terminated = 1;
}

/* Rank 0 aborts rank 2 only. Rank 2 catches the SIGTERM and holds on until ranks 0 and 1 have
 * fenced together (they were not terminated), then dies of it; its end fails their next fence,
 * and they finalize. The job ends with the abort's status. */
static void scenario_abortone(void) {
    if (me.rank == 2) {
        sigset_t term, old;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &term, &old);
        signal(SIGTERM, on_sigterm);
        publish_flag("ab.ready");
        while (!terminated) sigsuspend(&old);
        publish_flag("ab.terminating");
        wait_flag("ab.others.done");
        signal(SIGTERM, SIG_DFL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        raise(SIGTERM);
        for (;;) pause();
    }
    pmix_proc_t pair[2], target;
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
    PMIX_LOAD_PROCID(&target, me.nspace, 2);
    if (me.rank == 0) {
        wait_flag("ab.ready");
        CHECK_RC(PMIx_Abort(7, "abort one", &target, 1), PMIX_SUCCESS);
    }
    wait_flag("ab.terminating");
    fence_with(pair, 2, 1, PMIX_SUCCESS);
    fence_with(pair, 2, 0, PMIX_SUCCESS);
    if (me.rank == 0) publish_flag("ab.others.done");
    /* Rank 2 now dies of its SIGTERM: a fence with it fails then, and we end after it. */
    fence_with(NULL, 0, 0, PMIX_ERR_PROC_TERM_WO_SYNC);
    if (failures == 0)
        printf("rank %u: abortone ok\n", me.rank);
    else
        fputs(report, stderr);
    fflush(stdout);
    fflush(stderr);
    PMIx_Finalize(NULL, 0);
    exit(0);
}

/* Across nodes (tests/multinode: ranks 0 and 1 on one node, 2 on another): rank 0 aborts rank 2
 * only. Rank 2 catches the SIGTERM, says so with an event to ranks 0 and 1, which then fence
 * together (the job was not ended with the abort) and tell it so with an event; it then dies of
 * its SIGTERM, and its end fails the job with the abort's status. */
static pthread_mutex_t remote_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t remote_cv = PTHREAD_COND_INITIALIZER;
static int remote_seen[2];
static void remote_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&remote_mu);
    ++remote_seen[status == -4301 ? 0 : 1];
    pthread_cond_broadcast(&remote_cv);
    pthread_mutex_unlock(&remote_mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static int remote_wait(int which) { /* bounded: 20 s */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&remote_mu);
    while (remote_seen[which] == 0 && pthread_cond_timedwait(&remote_cv, &remote_mu, &until) == 0) {
    }
    const int got = remote_seen[which];
    pthread_mutex_unlock(&remote_mu);
    return got;
}

static void scenario_abortremote(void) {
    pmix_status_t codes[2] = {-4301, -4302}; /* rank 2 is terminating; ranks 0 and 1 fenced */
    CHECK(PMIx_Register_event_handler(codes, 2, NULL, 0, remote_handler, NULL, NULL) >= 0);
    pmix_proc_t pair[2], target;
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
    PMIX_LOAD_PROCID(&target, me.nspace, 2);
    if (me.rank == 2) signal(SIGTERM, on_sigterm); /* any thread may take it: polled below */
    fence_with(NULL, 0, 0, PMIX_SUCCESS);          /* every handler is in */
    if (me.rank == 0) CHECK_RC(PMIx_Abort(7, "abort remote", &target, 1), PMIX_SUCCESS);
    if (me.rank == 2) {
        for (int i = 0; i < 3000 && !terminated; ++i) {
            struct timespec tick = {0, 10000000};
            nanosleep(&tick, NULL);
        }
        printf("rank 2: terminated by the abort: %d\n", (int)terminated);
        fflush(stdout);
        PMIx_Notify_event(-4301, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        remote_wait(1);
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
        for (;;) pause();
    }
    CHECK(remote_wait(0) == 1);
    fence_with(pair, 2, 1, PMIX_SUCCESS);
    if (failures == 0)
        printf("rank %u: abortremote ok\n", me.rank);
    else
        fputs(report, stderr);
    fflush(stdout);
    fflush(stderr);
    fence_with(pair, 2, 0, PMIX_SUCCESS);
    if (me.rank == 0) PMIx_Notify_event(-4302, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    for (;;) pause(); /* the job ends us */
}

/* ------------------------------------------------------------------ a forged identity */

static int forger; /* this process is rank 0; its first PMIx_Init said it was rank 1 */

/* Rank 0's first PMIx_Init claimed rank 1 and was refused (main); initialised again as itself,
 * it takes part as rank 0, and every rank reads the real rank 1's card. */
static void scenario_forge(void) {
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    uint32_t x = 0;
    CHECK(me.rank != 0 || forger);
    put_u32(PMIX_GLOBAL, "fg.card", me.rank + 1);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(scoped_get(&one, "fg.card", PMIX_GLOBAL, &x), PMIX_SUCCESS);
    CHECK(x == 2);
}

static void scenario_abort(void) {
    if (me.rank == 1) {
        /* Returns once the broker has the request (or never: the job may end first). */
        PMIx_Abort(7, "wireup abort test", NULL, 0);
        for (;;) PMIx_Fence(NULL, 0, NULL, 0);
    }
    PMIx_Fence(NULL, 0, NULL, 0); /* fails or never returns: the job is ended */
    for (;;) PMIx_Fence(NULL, 0, NULL, 0);
}

/* ------------------------------------------------------------------ across nodes */

static pthread_mutex_t across_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t across_cv = PTHREAD_COND_INITIALIZER;
static int across_events;
static void across_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&across_mu);
    ++across_events;
    pthread_cond_broadcast(&across_cv);
    pthread_mutex_unlock(&across_mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* A job whose ranks are on `nodes` nodes (tests/multinode): each rank's job information names
 * its node, and data crosses nodes by collecting fence and by direct modex, each scope reaching
 * exactly the readers the standard says. */
static void scenario_across(uint32_t nodes) {
    const uint32_t W = PMIX_RANK_WILDCARD;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    /* Under the test host's two nodes on one machine, the node's name is the host's. */
    if (getenv("HOST_NODE_NAME")) snprintf(host, sizeof host, "%s", getenv("HOST_NODE_NAME"));
    JOB_CHECK(W, PMIX_NUM_NODES, PMIX_UINT32, v->data.uint32 == nodes);
    JOB_CHECK(me.rank, PMIX_HOSTNAME, PMIX_STRING, strcmp(v->data.string, host) == 0);
    uint32_t mine = 0, local = 0;
    uint32_t *node_of = calloc(size, sizeof *node_of);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        pmix_value_t *v = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, PMIX_NODEID, NULL, 0, &v), PMIX_SUCCESS);
        if (v) {
            node_of[r] = v->data.uint32;
            PMIX_VALUE_RELEASE(v);
        }
        CHECK(node_of[r] < nodes);
    }
    mine = node_of[me.rank];
    for (uint32_t r = 0; r < size; ++r) local += node_of[r] == mine;
    JOB_CHECK(W, PMIX_LOCAL_SIZE, PMIX_UINT32, v->data.uint32 == local);

    put_u32(PMIX_LOCAL, "x.l", 10 + me.rank);
    put_u32(PMIX_REMOTE, "x.r", 20 + me.rank);
    put_u32(PMIX_GLOBAL, "x.g", 30 + me.rank);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(NULL, 0, 1, PMIX_SUCCESS);
    for (uint32_t r = 0; r < size; ++r) {
        if (r == me.rank) continue;
        pmix_proc_t p;
        uint32_t x = 0;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(scoped_get(&p, "x.g", PMIX_SCOPE_UNDEF, &x), PMIX_SUCCESS);
        CHECK(x == 30 + r);
        const int near = node_of[r] == mine;
        CHECK_RC(scoped_get(&p, "x.l", PMIX_SCOPE_UNDEF, &x),
                 near ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND);
        CHECK_RC(scoped_get(&p, "x.r", PMIX_SCOPE_UNDEF, &x),
                 near ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS);
        if (!near) CHECK(x == 20 + r);
    }
    /* Data-less fences: the whole job, then the first and last ranks alone. */
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (me.rank == 0 || me.rank == size - 1) {
        pmix_proc_t two[2];
        PMIX_LOAD_PROCID(&two[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&two[1], me.nspace, size - 1);
        fence_with(two, 2, 0, PMIX_SUCCESS);
    }
    /* Direct modex: committed after the last collecting fence, read from the next rank. */
    put_u32(PMIX_GLOBAL, "x.late", 40 + me.rank);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    pmix_proc_t next;
    uint32_t x = 0;
    PMIX_LOAD_PROCID(&next, me.nspace, (me.rank + 1) % size);
    CHECK_RC(scoped_get(&next, "x.late", PMIX_SCOPE_UNDEF, &x), PMIX_SUCCESS);
    CHECK(x == 40 + next.rank);
    CHECK_RC(scoped_get(&next, "x.never", PMIX_SCOPE_UNDEF, &x), PMIX_ERR_NOT_FOUND);
    /* An event to the namespace reaches every rank, on every node. */
    pmix_status_t code = -4242;
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, across_handler, NULL, NULL) >= 0);
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (me.rank == size - 1)
        CHECK_RC(PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL),
                 PMIX_SUCCESS);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&across_mu);
    while (me.rank != size - 1 && across_events == 0 &&
           pthread_cond_timedwait(&across_cv, &across_mu, &until) == 0) {
    }
    const int got = across_events;
    pthread_mutex_unlock(&across_mu);
    if (me.rank != size - 1) { /* whether the notifier hears itself is not the point here */
        if (got != 1) NOTE("rank %u: the namespace event came %d times\n", me.rank, got);
        CHECK(got == 1);
    }
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    free(node_of);
}

/* ------------------------------------------------------------------ cleanup registration */

static pmix_status_t register_cleanup(const pmix_proc_t *target, const char *key, const char *path,
                                      const char *ignore) {
    pmix_info_t info[3];
    size_t n = 0;
    bool yes = true;
    PMIX_INFO_LOAD(&info[n], key, path, PMIX_STRING), ++n;
    if (ignore) {
        PMIX_INFO_LOAD(&info[n], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL), ++n;
        PMIX_INFO_LOAD(&info[n], PMIX_CLEANUP_IGNORE, ignore, PMIX_STRING), ++n;
    }
    pmix_status_t rc = PMIx_Job_control(target, target ? 1 : 0, info, n, NULL, NULL);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
}

/* Files registered for cleanup (PMIX_REGISTER_CLEANUP, as Open MPI does for its shared-memory
 * segments): each rank's file goes when that rank ends, rank 1 before rank 0 watches; rank 0's
 * directory (recursive, one name ignored) goes with the job, and rank 0 ends by SIGKILL, without
 * PMIx_Finalize. The test checks what is left after the job. Refused: a relative path, another
 * uid's file, another process's end. */
static void scenario_cleanup(void) {
    const char *dir = getenv("CLEANUP_DIR");
    CHECK(dir != NULL && size == 2);
    if (!dir || size != 2) return;
    char mine[512], other[512], jobdir[512], sub[512], path[512];
    snprintf(mine, sizeof mine, "%s/rank%u.seg", dir, me.rank);
    snprintf(other, sizeof other, "%s/rank1.seg", dir);
    touch(mine);
    CHECK_RC(register_cleanup(&me, PMIX_REGISTER_CLEANUP, mine, NULL), PMIX_SUCCESS);
    if (me.rank == 0) {
        snprintf(jobdir, sizeof jobdir, "%s/jobdir", dir);
        snprintf(sub, sizeof sub, "%s/jobdir/sub", dir);
        CHECK(mkdir(jobdir, 0700) == 0 && mkdir(sub, 0700) == 0);
        snprintf(path, sizeof path, "%s/jobdir/keep.me", dir);
        touch(path);
        snprintf(path, sizeof path, "%s/jobdir/sub/a", dir);
        touch(path);
        CHECK_RC(register_cleanup(NULL, PMIX_REGISTER_CLEANUP_DIR, jobdir, "keep.me"),
                 PMIX_SUCCESS);
        CHECK_RC(register_cleanup(&me, PMIX_REGISTER_CLEANUP, "relative/file", NULL),
                 PMIX_ERR_BAD_PARAM);
        pmix_proc_t peer = me;
        peer.rank = 1;
        CHECK_RC(register_cleanup(&peer, PMIX_REGISTER_CLEANUP, mine, NULL),
                 PMIX_ERR_NOT_SUPPORTED);
        if (geteuid() == 0) {
            snprintf(path, sizeof path, "%s/alien", dir);
            touch(path);
            CHECK(chown(path, 65534, 65534) == 0);
            CHECK_RC(register_cleanup(&me, PMIX_REGISTER_CLEANUP, path, NULL),
                     PMIX_ERR_NO_PERMISSIONS);
        }
    }
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (me.rank == 1) return;
    int gone = 0;
    for (int i = 0; i < 1000 && !gone; ++i) { /* 10 s */
        gone = access(other, F_OK) != 0;
        if (!gone) usleep(10000);
    }
    CHECK(gone);
    CHECK(access(mine, F_OK) == 0); /* not before its own end */
    if (failures) fputs(report, stderr);
    printf("rank %u: cleanup %s\n", me.rank, failures ? "failed" : "ok");
    fflush(stdout);
    fflush(stderr);
    kill(getpid(), SIGKILL);
}

/* ------------------------------------------------------------------ PMIx_Spawn across nodes */

static pthread_mutex_t end_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t end_cv = PTHREAD_COND_INITIALIZER;
static int end_seen, end_code = -1;
static char end_ns[PMIX_MAX_NSLEN + 1];
static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&end_mu);
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE)) end_code = info[i].value.data.integer;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            PMIX_LOAD_NSPACE(end_ns, info[i].value.data.proc->nspace);
    }
    ++end_seen;
    pthread_cond_broadcast(&end_cv);
    pthread_mutex_unlock(&end_mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Rank 0 spawns `np` ranks of `wireup_prog spawned <its nspace> <exit>` ("full" instead: `np`
 * ranks of /bin/true, which the allocation has no room for: PMIX_ERR_OUT_OF_RESOURCE, and prints
 * "spawn refused"; else ranks exit with `exit`;
 * "sleep" instead: they wait to be terminated, spawned with PMIX_SPAWN_CHILD_SEP false so that
 * the parent job's end ends them, and rank 0 leaves once they are up), restricted to
 * `host` when given ("-" for none). Before, spawns that must fail: a host outside the allocation,
 * a program that does not exist (on `host` alone when given). With PMIX_NOTIFY_COMPLETION, rank 0
 * waits for the child's PMIX_EVENT_JOB_END and checks its exit code. */
static void scenario_spawn_across(int argc, char **argv) {
    if (argc < 4) {
        NOTE("usage: spawn_across NP EXIT|sleep|full [HOST]\n");
        ++failures;
        return;
    }
    const int np = atoi(argv[2]);
    const char *exit_with = argv[3];
    const char *host = argc > 4 && strcmp(argv[4], "-") != 0 ? argv[4] : NULL;
    const int sleeper = !strcmp(exit_with, "sleep");
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (me.rank != 0) return;
    if (!strcmp(exit_with, "full")) {
        /* More ranks than the allocation has slots left: refused, and nothing started. */
        char tru[] = "/bin/true";
        char *cargv[] = {tru, NULL};
        pmix_app_t full;
        PMIX_APP_CONSTRUCT(&full);
        full.cmd = tru;
        full.argv = cargv;
        full.maxprocs = np;
        CHECK_RC(PMIx_Spawn(NULL, 0, &full, 1, NULL), PMIX_ERR_OUT_OF_RESOURCE);
        printf("spawn refused\n");
        fflush(stdout);
        return;
    }
    pmix_status_t code = PMIX_EVENT_JOB_END;
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL) >= 0);

    char self[4096] = {0};
    CHECK(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    app.argv = calloc(5, sizeof(char *));
    app.argv[0] = strdup(self);
    app.argv[1] = strdup("spawned");
    app.argv[2] = strdup(me.nspace);
    app.argv[3] = strdup(exit_with);
    app.maxprocs = np;
    pmix_info_t info[3];
    bool yes = true;
    size_t ninfo = 0;
    PMIX_INFO_LOAD(&info[ninfo], PMIX_HOST, "no-such-node.invalid", PMIX_STRING);
    CHECK_RC(PMIx_Spawn(info, 1, &app, 1, NULL), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[ninfo]);

    if (host) PMIX_INFO_LOAD(&info[ninfo++], PMIX_HOST, host, PMIX_STRING);
    free(app.cmd);
    app.cmd = strdup("/no/such/program-zpmix");
    /* Its end is not waited for below (across nodes, a launch that failed ends as a job). */
    bool no_end = false;
    PMIX_INFO_LOAD(&info[ninfo], PMIX_NOTIFY_COMPLETION, &no_end, PMIX_BOOL);
    CHECK_RC(PMIx_Spawn(info, ninfo + 1, &app, 1, NULL), PMIX_ERR_JOB_EXE_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&info[ninfo]);
    free(app.cmd);
    app.cmd = strdup(self);

    bool no = false;
    if (!sleeper)
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    else /* ended with its parent job, though that ends normally */
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_SPAWN_CHILD_SEP, &no, PMIX_BOOL);
    pmix_nspace_t child;
    CHECK_RC(PMIx_Spawn(info, ninfo, &app, 1, child), PMIX_SUCCESS);
    for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    PMIX_APP_DESTRUCT(&app);
    printf("spawned %s\n", child);
    fflush(stdout);
    if (sleeper) {
        /* Leaves once every child rank is up (it said so in its data: a Get of another job's
         * rank's key that is not there yet fails at once, so it asks again, for 30 s at most). */
        struct timespec until, pause = {0, 10 * 1000 * 1000};
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 30;
        for (int r = 0; r < np; ++r) {
            pmix_proc_t p;
            pmix_value_t *up = NULL;
            PMIX_LOAD_PROCID(&p, child, (pmix_rank_t)r);
            pmix_status_t rc;
            struct timespec now;
            while ((rc = PMIx_Get(&p, "child.up", NULL, 0, &up)) == PMIX_ERR_NOT_FOUND &&
                   (clock_gettime(CLOCK_MONOTONIC, &now), now.tv_sec < until.tv_sec))
                nanosleep(&pause, NULL);
            CHECK_RC(rc, PMIX_SUCCESS);
            if (up) PMIX_VALUE_RELEASE(up);
        }
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&end_mu);
    while (end_seen == 0 && pthread_cond_timedwait(&end_cv, &end_mu, &until) == 0) {
    }
    CHECK(end_seen == 1);
    CHECK(strcmp(end_ns, child) == 0);
    if (end_code != atoi(exit_with)) NOTE("rank 0: the child ended with %d\n", end_code);
    CHECK(end_code == atoi(exit_with));
    pthread_mutex_unlock(&end_mu);
}

/* A rank of a job `spawn_across` spawned: its parent, its node in the job information, a
 * collecting fence over the child's nodes; prints "child R of N on HOST node ID of NODES", fences
 * again, then exits with `exit` (or waits to be terminated: "sleep"). */
static int scenario_spawned(int argc, char **argv) {
    const uint32_t W = PMIX_RANK_WILDCARD;
    if (argc < 4) {
        NOTE("usage: spawned PARENT_NSPACE EXIT|sleep\n");
        ++failures;
        return 1;
    }
    pmix_value_t *parent = job_get(W, PMIX_PARENT_ID, PMIX_PROC);
    if (parent) {
        CHECK(strcmp(parent->data.proc->nspace, argv[2]) == 0 && parent->data.proc->rank == 0);
        PMIX_VALUE_RELEASE(parent);
    }
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    JOB_CHECK(me.rank, PMIX_HOSTNAME, PMIX_STRING, strcmp(v->data.string, host) == 0);
    uint32_t nodes = 0, node = 0;
    JOB_CHECK(W, PMIX_NUM_NODES, PMIX_UINT32, (nodes = v->data.uint32) > 0);
    JOB_CHECK(me.rank, PMIX_NODEID, PMIX_UINT32, (node = v->data.uint32) < nodes);
    /* Its parent has ranks on this node too: node ranks (every job's) run past local ranks. */
    uint16_t local = 0;
    JOB_CHECK(me.rank, PMIX_LOCAL_RANK, PMIX_UINT16, ((local = v->data.uint16), 1));
    JOB_CHECK(me.rank, PMIX_NODE_RANK, PMIX_UINT16, v->data.uint16 > local);
    put_u32(PMIX_GLOBAL, "child.x", 50 + me.rank);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    fence_with(NULL, 0, 1, PMIX_SUCCESS);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        uint32_t x = 0;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(scoped_get(&p, "child.x", PMIX_SCOPE_UNDEF, &x), PMIX_SUCCESS);
        CHECK(x == 50 + r);
    }
    printf("child %u of %u on %s node %u of %u\n", me.rank, size, host, node, nodes);
    fflush(stdout);
    put_u32(PMIX_GLOBAL, "child.up", 1);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    /* Every rank has said where it is before any exits: a rank's non-zero exit ends the others,
     * perhaps before they printed. */
    fence_with(NULL, 0, 0, PMIX_SUCCESS);
    if (!strcmp(argv[3], "sleep"))
        for (int i = 0; i < 600; ++i) sleep(1); /* terminated with its parent job */
    return atoi(argv[3]);
}

/* Prints "noderank N": this rank's PMIX_NODE_RANK (which counts every job's ranks on its node). */
static void scenario_noderank(void) {
    JOB_CHECK(me.rank, PMIX_NODE_RANK, PMIX_UINT16, (printf("noderank %u\n", v->data.uint16), 1));
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "types";
    int exit_with = 0;
    pmix_value_t *v = NULL;
    if (!strcmp(what, "forge") && getenv("PMIX_RANK") && !strcmp(getenv("PMIX_RANK"), "0")) {
        /* Claim to be rank 1: the broker knows this process is rank 0, and refuses it. */
        setenv("PMIX_RANK", "1", 1);
        pmix_status_t refused = PMIx_Init(&me, NULL, 0);
        if (refused != PMIX_ERR_NO_PERMISSIONS || PMIx_Initialized()) {
            fprintf(stderr, "PMIx_Init as another rank: %s\n", PMIx_Error_string(refused));
            return 1;
        }
        setenv("PMIX_RANK", "0", 1);
        forger = 1;
    }
    pmix_proc_t none;
    PMIX_LOAD_PROCID(&none, "x", 0);
    if (PMIx_Get(&none, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_ERR_INIT || PMIx_Initialized()) {
        fprintf(stderr, "Get before init did not give PMIX_ERR_INIT\n");
        return 1;
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS) return 1;
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);

    if (!strcmp(what, "types"))
        scenario_types(1);
    else if (!strcmp(what, "sparse"))
        scenario_sparse();
    else if (!strcmp(what, "fences"))
        scenario_fences();
    else if (!strcmp(what, "timeout"))
        scenario_timeout();
    else if (!strcmp(what, "death"))
        scenario_death();
    else if (!strcmp(what, "cannot_exist"))
        scenario_cannot_exist();
    else if (!strcmp(what, "bigput"))
        scenario_bigput();
    else if (!strcmp(what, "jobinfo"))
        scenario_jobinfo(0);
    else if (!strcmp(what, "noderank"))
        scenario_noderank();
    else if (!strcmp(what, "across"))
        scenario_across(argc > 2 ? (uint32_t)atoi(argv[2]) : 1);
    else if (!strcmp(what, "singleton")) {
        CHECK(size == 1 && me.rank == 0 && strncmp(me.nspace, "singleton.", 10) == 0);
        scenario_jobinfo(1);
        scenario_types(1);
    } else if (!strcmp(what, "twojobs"))
        scenario_twojobs();
    else if (!strcmp(what, "abort"))
        scenario_abort();
    else if (!strcmp(what, "scope"))
        scenario_scope();
    else if (!strcmp(what, "otherjob"))
        scenario_otherjob();
    else if (!strcmp(what, "abortone"))
        scenario_abortone();
    else if (!strcmp(what, "abortremote"))
        scenario_abortremote();
    else if (!strcmp(what, "forge"))
        scenario_forge();
    else if (!strcmp(what, "leaver"))
        scenario_leaver();
    else if (!strcmp(what, "recommit"))
        scenario_recommit();
    else if (!strcmp(what, "cards"))
        scenario_cards();
    else if (!strcmp(what, "cleanup"))
        scenario_cleanup();
    else if (!strcmp(what, "spawn_across"))
        scenario_spawn_across(argc, argv);
    else if (!strcmp(what, "spawned"))
        exit_with = scenario_spawned(argc, argv);
    else {
        fprintf(stderr, "unknown scenario %s\n", what);
        ++failures;
    }
    CHECK_RC(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    CHECK(!PMIx_Initialized());
    if (failures == 0)
        printf("rank %u: %s ok\n", me.rank, what);
    else
        fputs(report, stderr);
    return failures == 0 ? exit_with : 1;
}
