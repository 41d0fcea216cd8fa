/* A PMIx program for the group tests: `group_prog <scenario>`. Standard API only; prints what
 * went wrong on stderr and "<scenario> ok" on stdout, and exits 0 when its scenario held. */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static uint32_t size;
static int failures;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "rank %u: %s:%d: %s\n", me.rank, __FILE__, __LINE__, #cond); \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)
#define CHECK_RC(expr, want)                                                                     \
    do {                                                                                         \
        pmix_status_t rc_ = (expr);                                                              \
        if (rc_ != (want)) {                                                                     \
            fprintf(stderr, "rank %u: %s:%d: %s = %s, wanted %s\n", me.rank, __FILE__, __LINE__, \
                    #expr, PMIx_Error_string(rc_), PMIx_Error_string(want));                     \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The job's ranks, listed from `first` on, wrapping: every rank names them in its own order. */
static pmix_proc_t *ranks_from(uint32_t first, uint32_t n) {
    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, n);
    for (uint32_t i = 0; i < n; ++i) PMIX_LOAD_PROCID(&procs[i], me.nspace, (first + i) % n);
    return procs;
}

/* Construct `grp` over `procs`; the directives: a context id, a timeout, perhaps optional. */
static pmix_status_t construct(const char *grp, const pmix_proc_t *procs, size_t n, int timeout,
                               int optional, pmix_info_t **results, size_t *nresults) {
    pmix_info_t info[3];
    bool yes = true;
    size_t ninfo = 0;
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (optional) PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Group_construct(grp, procs, n, info, ninfo, results, nresults);
    for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

/* The context id and membership size in a construct's results (0 when absent). */
static size_t result_cid(const pmix_info_t *r, size_t n, size_t *members) {
    size_t cid = 0;
    *members = 0;
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&r[i], PMIX_GROUP_CONTEXT_ID) && r[i].value.type == PMIX_SIZE)
            cid = r[i].value.data.size;
        if (PMIX_CHECK_KEY(&r[i], PMIX_GROUP_MEMBERSHIP) && r[i].value.type == PMIX_DATA_ARRAY &&
            r[i].value.data.darray->type == PMIX_PROC)
            *members = r[i].value.data.darray->size;
    }
    return cid;
}

/* Every rank's value of `key` (put by each) is the same: ids agree across the job. */
static void same_everywhere(const char *key, size_t mine) {
    pmix_value_t v, *got = NULL;
    PMIX_VALUE_LOAD(&v, &mine, PMIX_SIZE);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, key, &v), PMIX_SUCCESS);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, key, NULL, 0, &got), PMIX_SUCCESS);
        if (got) {
            CHECK(got->type == PMIX_SIZE && got->data.size == mine);
            PMIX_VALUE_RELEASE(got);
        }
    }
}

/* An event to a group's members (PMIx_Notify_event, PMIX_RANGE_CUSTOM naming the group). */
#define GROUP_EVENT (-31337)
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int group_events;

static void on_group_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    ++group_events;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void notify_group(const char *grp) {
    pmix_status_t code = GROUP_EVENT;
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_group_event, NULL, NULL) >= 0);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS); /* every handler is in */
    if (me.rank == 0) {
        pmix_proc_t target;
        pmix_info_t info;
        PMIX_LOAD_PROCID(&target, grp, PMIX_RANK_WILDCARD);
        pmix_data_array_t a = {PMIX_PROC, 1, &target};
        PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &a, PMIX_DATA_ARRAY);
        CHECK_RC(PMIx_Notify_event(GROUP_EVENT, &me, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL),
                 PMIX_SUCCESS);
        PMIX_INFO_DESTRUCT(&info);
        return;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (group_events == 0)
        if (pthread_cond_timedwait(&cv, &mu, &until) != 0) break;
    CHECK(group_events == 1);
    pthread_mutex_unlock(&mu);
}

/* The info `key` among the results of one query (at the top level, one per key), or NULL. */
static const pmix_info_t *answer(const pmix_info_t *results, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], key)) return &results[i];
    return NULL;
}

/* PMIx_Query_info knows group `grp` of `nmembers` (with this rank among them). */
static void query_group(const char *grp, size_t nmembers) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NUM_GROUPS);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_GROUP_NAMES);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_GROUP_MEMBERSHIP);
    CHECK_RC(rc, PMIX_SUCCESS);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_GROUP_ID, grp, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t n = 0;
    CHECK_RC(PMIx_Query_info(&q, 1, &results, &n), PMIX_SUCCESS);
    const pmix_info_t *num = answer(results, n, PMIX_QUERY_NUM_GROUPS);
    CHECK(num && num->value.type == PMIX_SIZE && num->value.data.size >= 1);
    const pmix_info_t *names = answer(results, n, PMIX_QUERY_GROUP_NAMES);
    int named = 0;
    if (names && names->value.type == PMIX_DATA_ARRAY &&
        names->value.data.darray->type == PMIX_STRING) {
        char **s = names->value.data.darray->array;
        for (size_t i = 0; i < names->value.data.darray->size; ++i) named += !strcmp(s[i], grp);
    }
    CHECK(named == 1);
    const pmix_info_t *m = answer(results, n, PMIX_QUERY_GROUP_MEMBERSHIP);
    int me_in = 0;
    if (m && m->value.type == PMIX_DATA_ARRAY && m->value.data.darray->type == PMIX_PROC) {
        CHECK(m->value.data.darray->size == nmembers);
        const pmix_proc_t *p = m->value.data.darray->array;
        for (size_t i = 0; i < m->value.data.darray->size; ++i)
            me_in += PMIX_CHECK_PROCID(&p[i], &me);
    }
    CHECK(me_in == 1);
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_QUERY_DESTRUCT(&q);
}

/* N ranks in shuffled orders, a wildcard, context ids, group info and endpoint data, fences over
 * the group, destruct and build again. */
static void basic(void) {
    /* g1: each rank lists the ranks starting from itself, with its info and endpoint data. */
    pmix_proc_t *procs = ranks_from(me.rank, size);
    pmix_info_t info[3], *inner;
    bool yes = true;
    int t = 30;
    char key[32], ep[32];
    PMIX_INFO_CREATE(inner, 2);
    snprintf(key, sizeof key, "test.info.%u", me.rank);
    uint32_t val = 1000 + me.rank;
    PMIX_INFO_LOAD(&inner[0], key, &val, PMIX_UINT32);
    size_t lcid = 1234 + me.rank; /* as Open MPI gives its communicator's local cid */
    PMIX_INFO_LOAD(&inner[1], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    pmix_data_array_t darray = {PMIX_INFO, 2, inner};
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_INFO, &darray, PMIX_DATA_ARRAY);
    snprintf(ep, sizeof ep, "endpoint-%u", me.rank);
    pmix_byte_object_t bo = {ep, strlen(ep) + 1};
    PMIX_INFO_LOAD(&info[2], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    (void)t;
    pmix_info_t *results = NULL;
    size_t nresults = 0, members = 0;
    CHECK_RC(PMIx_Group_construct("g1", procs, size, info, 3, &results, &nresults), PMIX_SUCCESS);
    const size_t cid1 = result_cid(results, nresults, &members);
    CHECK(cid1 != 0);
    CHECK(members == size);
    /* The context id leads the results: OpenPMIx's group examples read results[0]. */
    CHECK(nresults == 2 && PMIX_CHECK_KEY(&results[0], PMIX_GROUP_CONTEXT_ID) &&
          results[0].value.type == PMIX_SIZE && results[0].value.data.size == cid1);
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_FREE(inner, 2);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);

    /* Everything contributed is there for every member. */
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, "g1", PMIX_RANK_WILDCARD);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_value_t *v = NULL;
        snprintf(key, sizeof key, "test.info.%u", r);
        CHECK_RC(PMIx_Get(&whole, key, NULL, 0, &v), PMIX_SUCCESS);
        if (v) {
            CHECK(v->type == PMIX_UINT32 && v->data.uint32 == 1000 + r);
            PMIX_VALUE_RELEASE(v);
        }
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, PMIX_GROUP_ENDPT_DATA, NULL, 0, &v), PMIX_SUCCESS);
        if (v) {
            snprintf(ep, sizeof ep, "endpoint-%u", r);
            CHECK(v->type == PMIX_BYTE_OBJECT && strcmp(v->data.bo.bytes, ep) == 0);
            PMIX_VALUE_RELEASE(v);
        }
    }
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&whole, PMIX_GROUP_CONTEXT_ID, NULL, 0, &v), PMIX_SUCCESS);
    if (v) {
        CHECK(v->type == PMIX_SIZE && v->data.size == cid1);
        PMIX_VALUE_RELEASE(v);
    }
    CHECK_RC(PMIx_Get(&whole, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v), PMIX_SUCCESS);
    if (v) {
        CHECK(v->type == PMIX_DATA_ARRAY && v->data.darray->size == size);
        PMIX_VALUE_RELEASE(v);
    }
    query_group("g1", size);

    /* g2: the namespace by wildcard; its context id differs from g1's. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_RC(construct("g2", &all, 1, 30, 0, &results, &nresults), PMIX_SUCCESS);
    const size_t cid2 = result_cid(results, nresults, &members);
    CHECK(cid2 != 0 && cid2 != cid1);
    CHECK(members == size);
    PMIX_INFO_FREE(results, nresults);
    /* A name in use is refused. */
    CHECK_RC(construct("g2", &all, 1, 30, 0, NULL, NULL), PMIX_ERR_EXISTS);
    /* The groups a process is in (PMIX_GROUP_NAMES): g1 and g2, for itself and another rank. */
    const uint32_t step = size > 1 ? size - 1 : 1; /* rank 0 and the last */
    for (uint32_t r = 0; r < size; r += step) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *names = NULL;
        CHECK_RC(PMIx_Get(&p, PMIX_GROUP_NAMES, NULL, 0, &names), PMIX_SUCCESS);
        int g1 = 0, g2 = 0;
        if (names && names->type == PMIX_DATA_ARRAY && names->data.darray->type == PMIX_STRING) {
            char **s = names->data.darray->array;
            for (size_t i = 0; i < names->data.darray->size; ++i) {
                g1 += strcmp(s[i], "g1") == 0;
                g2 += strcmp(s[i], "g2") == 0;
            }
        }
        CHECK(g1 == 1 && g2 == 1);
        if (names) PMIX_VALUE_RELEASE(names);
    }

    /* The group as a fence's target. */
    pmix_proc_t g2;
    PMIX_LOAD_PROCID(&g2, "g2", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Fence(&g2, 1, NULL, 0), PMIX_SUCCESS);

    /* Destruct g1, then build it again (from a wildcard this time): a new context id. */
    CHECK_RC(PMIx_Group_destruct("g1", NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("g1", NULL, 0), PMIX_ERR_NOT_FOUND);
    /* Each member's local cid by the context id, after the destruct too (OpenPMIx's
     * group_lcl_cid example, Open MPI's communicators). */
    pmix_info_t qual[2];
    PMIX_INFO_LOAD(&qual[0], PMIX_GROUP_CONTEXT_ID, &cid1, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&qual[0]);
    PMIX_INFO_LOAD(&qual[1], PMIX_TIMEOUT, &t, PMIX_INT);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, PMIX_GROUP_LOCAL_CID, qual, 2, &v), PMIX_SUCCESS);
        if (v) {
            CHECK(v->type == PMIX_SIZE && v->data.size == 1234 + r);
            PMIX_VALUE_RELEASE(v);
        }
    }
    PMIX_INFO_DESTRUCT(&qual[0]);
    PMIX_INFO_DESTRUCT(&qual[1]);
    CHECK_RC(construct("g1", procs, size, 30, 0, &results, &nresults), PMIX_SUCCESS);
    const size_t cid3 = result_cid(results, nresults, &members);
    CHECK(cid3 != 0 && cid3 != cid1 && cid3 != cid2);
    PMIX_INFO_FREE(results, nresults);
    same_everywhere("test.cid1", cid1);
    same_everywhere("test.cid3", cid3);
    /* A member's data by its group rank (g2's membership is the ranks, ascending). */
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t by_group;
        PMIX_LOAD_PROCID(&by_group, "g2", r);
        CHECK_RC(PMIx_Get(&by_group, "test.cid1", NULL, 0, &v), PMIX_SUCCESS);
        if (v) {
            CHECK(v->type == PMIX_SIZE && v->data.size == cid1);
            PMIX_VALUE_RELEASE(v);
        }
    }
    notify_group("g2");
    CHECK_RC(PMIx_Group_destruct("g1", NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("g2", NULL, 0), PMIX_SUCCESS);
    PMIX_PROC_FREE(procs, size);
}

/* The last rank comes only after the others timed out: they get PMIX_ERR_TIMEOUT, it is refused
 * at once with the same status, and the group is then built by all. */
static void timeout(void) {
    pmix_proc_t *procs = ranks_from(0, size);
    const uint32_t late = size - 1;
    double t0 = now();
    if (me.rank != late) {
        CHECK_RC(construct("gt", procs, size, 1, 0, NULL, NULL), PMIX_ERR_TIMEOUT);
        CHECK(now() - t0 < 10);
    }
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == late) {
        t0 = now();
        CHECK_RC(construct("gt", procs, size, 30, 0, NULL, NULL), PMIX_ERR_TIMEOUT);
        CHECK(now() - t0 < 5);
    }
    CHECK_RC(construct("gt", procs, size, 30, 0, NULL, NULL), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("gt", NULL, 0), PMIX_SUCCESS);
    PMIX_PROC_FREE(procs, size);
}

/* The last rank ends without contributing (`how`: "exit" or "kill"): the others' construct fails
 * with PMIX_ERR_PROC_TERM_WO_SYNC long before its timeout; with PMIX_GROUP_OPTIONAL it completes
 * without it. */
static void death(const char *how) {
    pmix_proc_t *procs = ranks_from(me.rank, size);
    if (me.rank == size - 1) {
        if (strcmp(how, "kill") == 0) raise(SIGKILL);
        _exit(0);
    }
    const double t0 = now();
    CHECK_RC(construct("gd", procs, size, 60, 0, NULL, NULL), PMIX_ERR_PROC_TERM_WO_SYNC);
    CHECK(now() - t0 < 20);
    /* Every survivor got its answer; now with the dead one optional. */
    pmix_info_t *results = NULL;
    size_t nresults = 0, members = 0;
    CHECK_RC(construct("gd", procs, size, 60, 1, &results, &nresults), PMIX_SUCCESS);
    (void)result_cid(results, nresults, &members);
    CHECK(members == size - 1);
    PMIX_INFO_FREE(results, nresults);
    CHECK_RC(PMIx_Group_destruct("gd", NULL, 0), PMIX_SUCCESS);
    PMIX_PROC_FREE(procs, size);
}

/* Each node's ranks (PMIX_LOCAL_PEERS) form a group of their own, with a context id: ids agree
 * within a node's group and differ between nodes' groups (assigned by different brokers). */
static void pernode(void) {
    pmix_proc_t self = me;
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&self, PMIX_LOCAL_PEERS, NULL, 0, &v), PMIX_SUCCESS);
    if (!v) return;
    pmix_proc_t procs[256];
    size_t n = 0;
    int local[1024] = {0};
    for (char *s = v->data.string, *end; *s && n < 256; s = *end ? end + 1 : end) {
        const unsigned long r = strtoul(s, &end, 10);
        PMIX_LOAD_PROCID(&procs[n], me.nspace, (pmix_rank_t)r);
        ++n;
        if (r < 1024) local[r] = 1;
    }
    PMIX_VALUE_RELEASE(v);
    char host[256] = "", grp[300];
    gethostname(host, sizeof host);
    snprintf(grp, sizeof grp, "node-%s", host);
    pmix_info_t *results = NULL;
    size_t nresults = 0, members = 0;
    CHECK_RC(construct(grp, procs, n, 30, 0, &results, &nresults), PMIX_SUCCESS);
    const size_t cid = result_cid(results, nresults, &members);
    CHECK(cid != 0 && members == n);
    PMIX_INFO_FREE(results, nresults);
    pmix_value_t put;
    PMIX_VALUE_LOAD(&put, &cid, PMIX_SIZE);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, "test.nodecid", &put), PMIX_SUCCESS);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    for (uint32_t r = 0; r < size && r < 1024; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, "test.nodecid", NULL, 0, &v), PMIX_SUCCESS);
        if (!v) continue;
        CHECK(v->type == PMIX_SIZE && (local[r] ? v->data.size == cid : v->data.size != cid));
        PMIX_VALUE_RELEASE(v);
    }
    CHECK_RC(PMIx_Group_destruct(grp, NULL, 0), PMIX_SUCCESS);
}

/* For test_group_across.sh: the ranks on node $GROUP_VICTIM say "victim up" and sleep (the test
 * kills their broker); the others say "up" and construct a group of every rank, then print
 * "rank R construct STATUS". SIGTERM is ignored so that the job's end does not cut the report
 * short (the launcher's SIGKILL still bounds it). */
static void lostnode(void) {
    signal(SIGTERM, SIG_IGN);
    char host[256] = "";
    gethostname(host, sizeof host);
    const char *victim = getenv("GROUP_VICTIM");
    if (victim && strcmp(host, victim) == 0) {
        printf("victim up\n");
        fflush(stdout);
        for (;;) pause();
    }
    printf("up\n");
    fflush(stdout);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    const pmix_status_t rc = construct("gl", &all, 1, 60, 0, NULL, NULL);
    printf("rank %u construct %s\n", me.rank, PMIx_Error_string(rc));
    fflush(stdout);
    _exit(0); /* the job is failing: no Finalize */
}

/* PMIX_GROUP_NOTIFY_TERMINATION: the last rank leaves the job after the group is built; every
 * other member gets PMIX_GROUP_MEMBER_FAILED naming it and the group (PMIX_GROUP_ID). */
static int member_failed = -1; /* the affected rank */
static char failed_in[PMIX_MAX_NSLEN + 1];
static void on_member_failed(size_t id, pmix_status_t status, const pmix_proc_t *source,
                             pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                             size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            member_failed = (int)info[i].value.data.proc->rank;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            snprintf(failed_in, sizeof failed_in, "%s", info[i].value.data.string);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void notify(void) {
    pmix_status_t code = PMIX_GROUP_MEMBER_FAILED;
    CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_member_failed, NULL, NULL) >= 0);
    pmix_proc_t all;
    pmix_info_t info;
    bool yes = true;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    CHECK_RC(PMIx_Group_construct("gn", &all, 1, &info, 1, NULL, NULL), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    if (me.rank == size - 1) _exit(0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (member_failed < 0)
        if (pthread_cond_timedwait(&cv, &mu, &until) != 0) break;
    CHECK(member_failed == (int)size - 1);
    CHECK(strcmp(failed_in, "gn") == 0);
    pthread_mutex_unlock(&mu);
    CHECK_RC(PMIx_Group_destruct("gn", NULL, 0), PMIX_SUCCESS);
}

/* ---- Groups by invitation -------------------------------------------------------------- */

/* What the group events of this process said: counts by code, the last affected rank, the
 * group named (PMIX_GROUP_ID). */
static int ev_invited, ev_accepted, ev_declined, ev_failed, ev_left, ev_complete, ev_leader_failed;
static int ev_selected, ev_aborted; /* PMIX_GROUP_LEADER_SELECTED, PMIX_GROUP_CONSTRUCT_ABORT */
static int ev_selected_rank = -1, ev_accepted_rank = -1; /* their last affected rank */
static pmix_proc_t ev_inviter;                           /* PMIX_GROUP_INVITED's source */
/* How this process's handler answers PMIX_GROUP_LEADER_FAILED: by declaring itself the new
 * leader (PMIX_GROUP_LEADER in its results), or not at all (its completion never called). */
static int volunteer, never_answer;
/* The completion never_answer holds back, called at the scenario's end (else the library's chain
 * for the event, waiting on it, is still there at exit). */
static pmix_event_notification_cbfunc_fn_t held_cbfunc;
static void *held_cbdata;
static int ev_update, ev_update_members; /* PMIX_GROUP_MEMBERSHIP_UPDATE: count, last size */
static int ev_affected = -1;
static int ev_failed_affected = -1; /* of the last PMIX_GROUP_INVITE_FAILED: others may follow it */
static char ev_grp[PMIX_MAX_NSLEN + 1];

static void on_invite_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                            pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    switch (status) {
        case PMIX_GROUP_INVITED:
            ++ev_invited;
            break;
        case PMIX_GROUP_INVITE_ACCEPTED:
            ++ev_accepted;
            break;
        case PMIX_GROUP_INVITE_DECLINED:
            ++ev_declined;
            break;
        case PMIX_GROUP_INVITE_FAILED:
            ++ev_failed;
            break;
        case PMIX_GROUP_LEFT:
            ++ev_left;
            break;
        case PMIX_GROUP_CONSTRUCT_COMPLETE:
            ++ev_complete;
            break;
        case PMIX_GROUP_LEADER_FAILED:
            ++ev_leader_failed;
            break;
        case PMIX_GROUP_LEADER_SELECTED:
            ++ev_selected;
            break;
        case PMIX_GROUP_CONSTRUCT_ABORT:
            ++ev_aborted;
            break;
        case PMIX_GROUP_MEMBERSHIP_UPDATE:
            for (size_t i = 0; i < ninfo; ++i)
                if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP) &&
                    info[i].value.type == PMIX_DATA_ARRAY)
                    ev_update_members = (int)info[i].value.data.darray->size;
            ++ev_update;
            break;
        default:
            break;
    }
    if (source && status == PMIX_GROUP_INVITED) ev_inviter = *source;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)) {
            ev_affected = (int)info[i].value.data.proc->rank;
            if (status == PMIX_GROUP_INVITE_FAILED) ev_failed_affected = ev_affected;
            if (status == PMIX_GROUP_LEADER_SELECTED) ev_selected_rank = ev_affected;
            if (status == PMIX_GROUP_INVITE_ACCEPTED) ev_accepted_rank = ev_affected;
        }
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            snprintf(ev_grp, sizeof ev_grp, "%s", info[i].value.data.string);
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (status == PMIX_GROUP_LEADER_FAILED && never_answer) {
        held_cbfunc = cbfunc;
        held_cbdata = cbdata;
        return;
    }
    if (status == PMIX_GROUP_LEADER_FAILED && volunteer && cbfunc) {
        pmix_info_t lead;
        bool yes = true;
        PMIX_INFO_LOAD(&lead, PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, &lead, 1, NULL, NULL, cbdata);
        PMIX_INFO_DESTRUCT(&lead);
        return;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void register_invite_events(void) {
    pmix_status_t codes[] = {PMIX_GROUP_INVITED,
                             PMIX_GROUP_INVITE_ACCEPTED,
                             PMIX_GROUP_INVITE_DECLINED,
                             PMIX_GROUP_INVITE_FAILED,
                             PMIX_GROUP_LEFT,
                             PMIX_GROUP_CONSTRUCT_COMPLETE,
                             PMIX_GROUP_LEADER_FAILED,
                             PMIX_GROUP_LEADER_SELECTED,
                             PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_MEMBERSHIP_UPDATE};
    CHECK(PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], NULL, 0,
                                      on_invite_event, NULL, NULL) >= 0);
}

/* Waits (20 s at most) until *counter reaches n. */
static int wait_count(int *counter, int n) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (*counter < n)
        if (pthread_cond_timedwait(&cv, &mu, &until) != 0) break;
    const int got = *counter;
    pthread_mutex_unlock(&mu);
    return got >= n;
}

static pmix_status_t invite(const char *grp, const pmix_proc_t *procs, size_t n, int timeout,
                            pmix_info_t **results, size_t *nresults) {
    pmix_info_t info[2];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc = PMIx_Group_invite(grp, procs, n, info, 2, results, nresults);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

/* Waits for the invitation and answers it (`accept`); the results' membership size. */
static pmix_status_t answer_invitation(int accept, size_t *members, size_t *cid) {
    CHECK(wait_count(&ev_invited, 1));
    pthread_mutex_lock(&mu);
    const pmix_proc_t leader = ev_inviter;
    char grp[PMIX_MAX_NSLEN + 1];
    snprintf(grp, sizeof grp, "%s", ev_grp);
    pthread_mutex_unlock(&mu);
    CHECK(leader.rank == 0);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc =
        PMIx_Group_join(grp, &leader, accept ? PMIX_GROUP_ACCEPT : PMIX_GROUP_DECLINE, NULL, 0,
                        &results, &nresults);
    *cid = result_cid(results, nresults, members);
    if (results) PMIX_INFO_FREE(results, nresults);
    return rc;
}

/* The membership of `grp` as PMIx_Get gives it: its size, or -1. */
static int membership_size(const char *grp) {
    pmix_proc_t whole;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&whole, grp, PMIX_RANK_WILDCARD);
    int n = -1;
    if (PMIx_Get(&whole, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v) == PMIX_SUCCESS &&
        v->type == PMIX_DATA_ARRAY)
        n = (int)v->data.darray->size;
    if (v) PMIX_VALUE_RELEASE(v);
    return n;
}

/* OpenPMIx's asyncgroup: rank 0 invites every other rank, which accept with PMIx_Group_join_nb
 * and no callback at all; they learn that the group formed from PMIX_GROUP_CONSTRUCT_COMPLETE,
 * and the group is known to them (its membership), then everyone destructs it. */
static void async_join(void) {
    register_invite_events();
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 0) {
        pmix_proc_t *procs = ranks_from(0, size);
        pmix_info_t *results = NULL;
        size_t nresults = 0, members = 0;
        CHECK_RC(invite("ga", procs + 1, size - 1, 30, &results, &nresults), PMIX_SUCCESS);
        CHECK(result_cid(results, nresults, &members) != 0);
        CHECK(members == size);
        if (results) PMIX_INFO_FREE(results, nresults);
        PMIX_PROC_FREE(procs, size);
    } else {
        CHECK(wait_count(&ev_invited, 1));
        pthread_mutex_lock(&mu);
        const pmix_proc_t leader = ev_inviter;
        pthread_mutex_unlock(&mu);
        CHECK_RC(PMIx_Group_join_nb("ga", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL),
                 PMIX_SUCCESS);
        CHECK(wait_count(&ev_complete, 1));
        /* the group is known here once the join's answer is in (it may follow the event) */
        const double t0 = now();
        while (membership_size("ga") != (int)size && now() - t0 < 10) usleep(10000);
        CHECK(membership_size("ga") == (int)size);
    }
    CHECK_RC(PMIx_Group_destruct("ga", NULL, 0), PMIX_SUCCESS);
}

/* A fence over the whole group, bounded (a member it waited for in vain would time it out). */
static pmix_status_t group_fence(const char *grp) {
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, grp, PMIX_RANK_WILDCARD);
    pmix_info_t t;
    int secs = 10;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &secs, PMIX_INT);
    return PMIx_Fence(&whole, 1, &t, 1);
}

/* Rank 0 invites every other rank; the last declines, the others accept: the group is rank 0
 * and the acceptors, the leader heard each answer and gets PMIX_ERR_PARTIAL_SUCCESS, and the
 * members hear PMIX_GROUP_MEMBERSHIP_UPDATE (fewer than invited). Then rank 1 leaves: the others
 * hear PMIX_GROUP_LEFT and the update without it, fence over the group without waiting for it,
 * and destruct it. */
static void invitation(void) {
    register_invite_events();
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    size_t members = 0, cid = 0;
    if (me.rank == 0) {
        pmix_proc_t *procs = ranks_from(0, size);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        CHECK_RC(invite("gi", procs + 1, size - 1, 30, &results, &nresults),
                 PMIX_ERR_PARTIAL_SUCCESS);
        cid = result_cid(results, nresults, &members);
        if (results) PMIX_INFO_FREE(results, nresults);
        CHECK(wait_count(&ev_accepted, (int)size - 2));
        CHECK(wait_count(&ev_declined, 1));
        PMIX_PROC_FREE(procs, size);
    } else {
        CHECK_RC(answer_invitation(me.rank != size - 1, &members, &cid), PMIX_SUCCESS);
    }
    if (me.rank != size - 1) {
        CHECK(members == size - 1);
        CHECK(cid != 0);
        CHECK(wait_count(&ev_complete, 1));
        pmix_proc_t whole;
        pmix_value_t *v = NULL;
        PMIX_LOAD_PROCID(&whole, "gi", PMIX_RANK_WILDCARD);
        CHECK_RC(PMIx_Get(&whole, PMIX_GROUP_CONTEXT_ID, NULL, 0, &v), PMIX_SUCCESS);
        if (v) {
            CHECK(v->type == PMIX_SIZE && v->data.size == cid);
            PMIX_VALUE_RELEASE(v);
        }
    }
    /* The members' context ids agree (the last rank declined: not a member). */
    pmix_value_t put, *got = NULL;
    PMIX_VALUE_LOAD(&put, &cid, PMIX_SIZE);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, "test.gicid", &put), PMIX_SUCCESS);
    CHECK_RC(PMIx_Commit(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    for (uint32_t r = 0; me.rank != size - 1 && r < size - 1; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK_RC(PMIx_Get(&p, "test.gicid", NULL, 0, &got), PMIX_SUCCESS);
        if (got) {
            CHECK(got->type == PMIX_SIZE && got->data.size == cid);
            PMIX_VALUE_RELEASE(got);
        }
    }
    if (me.rank == 1) {
        CHECK_RC(PMIx_Group_leave("gi", NULL, 0), PMIX_SUCCESS);
        CHECK_RC(PMIx_Group_leave("gi", NULL, 0), PMIX_ERR_NOT_FOUND);
    } else if (me.rank != size - 1) {
        CHECK(wait_count(&ev_left, 1));
        CHECK(ev_affected == 1);
        CHECK(wait_count(&ev_update, 2));
        CHECK(ev_update_members == (int)size - 2);
        CHECK(membership_size("gi") == (int)size - 2);
        CHECK_RC(group_fence("gi"), PMIX_SUCCESS);
        CHECK_RC(PMIx_Group_destruct("gi", NULL, 0), PMIX_SUCCESS);
    }
}

static int constructed_nb; /* PMIx_Group_construct_nb callbacks that said PMIX_SUCCESS */
static void on_constructed_nb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                              pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)info, (void)ninfo, (void)cbdata;
    pthread_mutex_lock(&mu);
    if (status == PMIX_SUCCESS) ++constructed_nb;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (release_fn) release_fn(release_cbdata);
}

/* Every rank constructs a group (with `nb`, PMIx_Group_construct_nb), with no event handler
 * registered; rank 1 leaves it. The others' libraries follow the membership all the same:
 * PMIx_Get of PMIX_GROUP_MEMBERSHIP loses rank 1 (within 20 s), a fence over the group does not
 * wait for it, and the rest destruct it. */
static void leave_quietly(int nb) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    if (nb) {
        CHECK_RC(PMIx_Group_construct_nb("gq", &all, 1, NULL, 0, on_constructed_nb, NULL),
                 PMIX_SUCCESS);
        CHECK(wait_count(&constructed_nb, 1));
    } else {
        CHECK_RC(PMIx_Group_construct("gq", &all, 1, NULL, 0, NULL, NULL), PMIX_SUCCESS);
    }
    CHECK(membership_size("gq") == (int)size);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS); /* every library follows the group */
    if (me.rank == 1) {
        CHECK_RC(PMIx_Group_leave("gq", NULL, 0), PMIX_SUCCESS);
        return;
    }
    const double t0 = now();
    while (membership_size("gq") != (int)size - 1 && now() - t0 < 20) {
        struct timespec tick = {0, 2000000};
        nanosleep(&tick, NULL);
    }
    CHECK(membership_size("gq") == (int)size - 1);
    CHECK_RC(group_fence("gq"), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("gq", NULL, 0), PMIX_SUCCESS);
}

/* Rank 0 invites the others; the last never answers (it ends, or, with `silent`, waits): the
 * leader hears PMIX_GROUP_INVITE_FAILED and the group forms without it, at once for an ended
 * invitee and at the invitation's timeout for a silent one. */
static void invitation_failed(int silent) {
    register_invite_events();
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == size - 1) {
        if (!silent) _exit(0);
        CHECK(wait_count(&ev_invited, 1));
        CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
        return;
    }
    size_t members = 0, cid = 0;
    const double t0 = now();
    if (me.rank == 0) {
        pmix_proc_t *procs = ranks_from(0, size);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        CHECK_RC(invite("gf", procs + 1, size - 1, silent ? 2 : 60, &results, &nresults),
                 PMIX_ERR_PARTIAL_SUCCESS);
        cid = result_cid(results, nresults, &members);
        if (results) PMIX_INFO_FREE(results, nresults);
        CHECK(wait_count(&ev_failed, 1));
        CHECK(ev_failed_affected == (int)size - 1);
        PMIX_PROC_FREE(procs, size);
    } else {
        CHECK_RC(answer_invitation(1, &members, &cid), PMIX_SUCCESS);
    }
    CHECK(now() - t0 < 15);
    CHECK(members == size - 1);
    if (silent) CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("gf", NULL, 0), PMIX_SUCCESS);
}

static void on_invited_nb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                          pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)status, (void)info, (void)ninfo, (void)cbdata;
    if (release_fn) release_fn(release_cbdata);
}

/* Rank 0 invites every other rank with PMIX_TIMEOUT `timeout` and ends once `accepted` of them
 * accepted. */
static void invite_and_end(const char *grp, int timeout, int accepted) {
    pmix_proc_t *procs = ranks_from(0, size);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    CHECK_RC(PMIx_Group_invite_nb(grp, procs + 1, size - 1, &info, 1, on_invited_nb, NULL),
             PMIX_SUCCESS);
    CHECK(wait_count(&ev_accepted, accepted));
    _exit(failures == 0 ? 0 : 1);
}

/* Rank 0 invites the others and ends once rank 1 accepted; rank 1 does not take over (nor does
 * the last rank, which never answers the invitation): rank 1's join returns
 * PMIX_GROUP_CONSTRUCT_ABORT at once, every invitee hears PMIX_GROUP_LEADER_FAILED then
 * PMIX_GROUP_CONSTRUCT_ABORT, and no leader is selected. */
static void leader_failed(void) {
    register_invite_events();
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 0) invite_and_end("gx", 60, 1);
    size_t members = 0, cid = 0;
    const double t0 = now();
    if (me.rank == 1) CHECK_RC(answer_invitation(1, &members, &cid), PMIX_GROUP_CONSTRUCT_ABORT);
    CHECK(wait_count(&ev_leader_failed, 1));
    CHECK(wait_count(&ev_aborted, 1));
    CHECK(ev_selected == 0);
    CHECK(now() - t0 < 15);
}

/* Rank 0 invites the others with a 4 s timeout and ends once all but the last accepted (the last
 * never answers, so the group is not formed); rank 1 does not take over, rank size-2's handler
 * never completes (its library cannot answer): no leader, so the joins return
 * PMIX_GROUP_CONSTRUCT_ABORT at the invitation's timeout, and every invitee hears it. */
static void leader_failed_silent(void) {
    never_answer = me.rank == size - 2;
    register_invite_events();
    CHECK(size >= 4);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 0) invite_and_end("gy", 4, (int)size - 2);
    size_t members = 0, cid = 0;
    const double t0 = now();
    if (me.rank != size - 1)
        CHECK_RC(answer_invitation(1, &members, &cid), PMIX_GROUP_CONSTRUCT_ABORT);
    CHECK(wait_count(&ev_leader_failed, 1));
    CHECK(wait_count(&ev_aborted, 1));
    CHECK(now() - t0 < 15);
    CHECK(ev_selected == 0);
    if (held_cbfunc) held_cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, held_cbdata);
}

/* Rank 0 invites the others (5 ranks or more) and ends once ranks 1 to size-3 accepted. Rank 1's
 * handler of PMIX_GROUP_LEADER_FAILED declares it the new leader: every invitee hears
 * PMIX_GROUP_LEADER_SELECTED naming rank 1. Then rank size-2 accepts and the last rank declines
 * (naming rank 0, who invited them), which rank 1 hears as the leader; the group forms of ranks 1
 * to size-2: rank 1's join returns as the invite would have (PMIX_ERR_PARTIAL_SUCCESS: an invitee
 * is out), the others' PMIX_SUCCESS, all with that membership; they fence over the group,
 * PMIx_Get gives its members, and they destruct it. */
static void leader_reselected(void) {
    volunteer = me.rank == 1;
    register_invite_events();
    CHECK(size >= 5);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == 0) invite_and_end("gr", 60, (int)size - 3);
    const int late = me.rank >= size - 2, member = me.rank != size - 1;
    if (late) {
        CHECK(wait_count(&ev_selected, 1));
        CHECK(ev_selected_rank == 1);
    }
    size_t members = 0, cid = 0;
    CHECK_RC(answer_invitation(member, &members, &cid),
             me.rank == 1 ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS);
    CHECK(wait_count(&ev_leader_failed, 1));
    CHECK(wait_count(&ev_selected, 1));
    CHECK(ev_selected_rank == 1);
    CHECK(ev_aborted == 0);
    if (!member) return;
    CHECK(members == size - 2);
    CHECK(wait_count(&ev_complete, 1));
    if (me.rank == 1) { /* the leader's events, from its selection on */
        CHECK(wait_count(&ev_accepted, 1));
        CHECK(ev_accepted_rank == (int)size - 2);
        CHECK(wait_count(&ev_declined, 1));
    }
    CHECK_RC(group_fence("gr"), PMIX_SUCCESS);
    pmix_proc_t whole;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&whole, "gr", PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Get(&whole, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v), PMIX_SUCCESS);
    if (v && v->type == PMIX_DATA_ARRAY) {
        CHECK(v->data.darray->size == size - 2);
        const pmix_proc_t *p = (const pmix_proc_t *)v->data.darray->array;
        for (size_t i = 0; i < v->data.darray->size; ++i)
            CHECK(p[i].rank == i + 1 && PMIX_CHECK_NSPACE(p[i].nspace, me.nspace));
    }
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_RC(PMIx_Group_destruct("gr", NULL, 0), PMIX_SUCCESS);
}

/* For test_group_across.sh: the last rank, on node $GROUP_VICTIM, invites the others and says
 * "victim up" once rank 0 accepted (the test then kills that node's broker, where the invitation
 * is); the others never answer (so the group does not form). Rank 0 accepts and prints "rank 0
 * join STATUS". SIGTERM is ignored, as in lostnode. */
static void leaderlost(void) {
    signal(SIGTERM, SIG_IGN);
    register_invite_events();
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == size - 1) {
        pmix_proc_t *procs = ranks_from(0, size);
        pmix_info_t info;
        int timeout = 60;
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
        CHECK_RC(PMIx_Group_invite_nb("gv", procs, size - 1, &info, 1, on_invited_nb, NULL),
                 PMIX_SUCCESS);
        CHECK(wait_count(&ev_accepted, 1));
        printf("victim up\n");
        fflush(stdout);
    }
    if (me.rank != 0)
        for (;;) pause();
    CHECK(wait_count(&ev_invited, 1));
    pthread_mutex_lock(&mu);
    const pmix_proc_t leader = ev_inviter;
    pthread_mutex_unlock(&mu);
    const pmix_status_t rc = PMIx_Group_join("gv", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
    printf("rank 0 join %s\n", PMIx_Error_string(rc));
    fflush(stdout);
    _exit(0); /* the job is failing: no Finalize */
}

/* Construct and destruct `iterations` times over the whole namespace; rank 0 prints the mean. */
static void bench(int iterations) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    const double t0 = now();
    for (int i = 0; i < iterations && failures == 0; ++i) {
        CHECK_RC(PMIx_Group_construct("gb", &all, 1, NULL, 0, NULL, NULL), PMIX_SUCCESS);
        CHECK_RC(PMIx_Group_destruct("gb", NULL, 0), PMIX_SUCCESS);
    }
    const double us = (now() - t0) * 1e6 / iterations;
    if (me.rank == 0) printf("group construct+destruct N=%u: %.1f us\n", size, us);
}

/* Constructs over the whole job, which meet on the job's fence board: with a context id, the
 * same at every member; with PMIX_GROUP_INFO from rank 0 alone (every member then takes the
 * broker's usual path), which every member reads; blocking and not; and two ranks constructing
 * different groups at once (a program's error), refused at once with PMIX_ERR_BAD_PARAM rather
 * than at the timeout. */
static int nb_status;
static int nb_done;
static void on_constructed(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                           pmix_release_cbfunc_t release, void *release_data) {
    (void)info, (void)ninfo, (void)cbdata;
    pthread_mutex_lock(&mu);
    nb_status = status;
    nb_done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (release) release(release_data);
}
static void on_destructed(pmix_status_t status, void *cbdata) {
    on_constructed(status, NULL, 0, cbdata, NULL, NULL);
}
static pmix_status_t wait_nb(void) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&mu);
    while (!nb_done && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    const pmix_status_t s = nb_done ? nb_status : PMIX_ERR_TIMEOUT;
    nb_done = 0;
    pthread_mutex_unlock(&mu);
    return s;
}

static void whole_job(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t *results = NULL;
    size_t nresults = 0, members = 0;
    CHECK_RC(construct("w1", &all, 1, 30, 0, &results, &nresults), PMIX_SUCCESS);
    const size_t cid = result_cid(results, nresults, &members);
    CHECK(cid != 0 && members == size);
    PMIX_INFO_FREE(results, nresults);
    same_everywhere("test.w1.cid", cid);
    CHECK_RC(PMIx_Group_destruct("w1", NULL, 0), PMIX_SUCCESS);

    /* Rank 0 alone brings PMIX_GROUP_INFO. */
    pmix_info_t info, *inner;
    PMIX_INFO_CREATE(inner, 1);
    uint32_t val = 4242;
    PMIX_INFO_LOAD(&inner[0], "test.w2.info", &val, PMIX_UINT32);
    pmix_data_array_t darray = {PMIX_INFO, 1, inner};
    PMIX_INFO_LOAD(&info, PMIX_GROUP_INFO, &darray, PMIX_DATA_ARRAY);
    CHECK_RC(PMIx_Group_construct("w2", &all, 1, me.rank == 0 ? &info : NULL, me.rank == 0 ? 1 : 0,
                                  NULL, NULL),
             PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_FREE(inner, 1);
    pmix_proc_t w2;
    PMIX_LOAD_PROCID(&w2, "w2", PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&w2, "test.w2.info", NULL, 0, &v), PMIX_SUCCESS);
    if (v) {
        CHECK(v->type == PMIX_UINT32 && v->data.uint32 == 4242);
        PMIX_VALUE_RELEASE(v);
    }
    CHECK_RC(PMIx_Group_destruct("w2", NULL, 0), PMIX_SUCCESS);

    /* Non-blocking, every rank naming every rank. */
    pmix_proc_t *procs = ranks_from(0, size);
    CHECK_RC(PMIx_Group_construct_nb("w3", procs, size, NULL, 0, on_constructed, NULL),
             PMIX_SUCCESS);
    CHECK_RC(wait_nb(), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct_nb("w3", NULL, 0, on_destructed, NULL), PMIX_SUCCESS);
    CHECK_RC(wait_nb(), PMIX_SUCCESS);
    PMIX_PROC_FREE(procs, size);

    /* Rank 0 constructs another group than the others, at once: refused, not timed out. */
    const double t0 = now();
    CHECK_RC(construct(me.rank == 0 ? "wx" : "wy", &all, 1, 20, 0, NULL, NULL), PMIX_ERR_BAD_PARAM);
    CHECK(now() - t0 < 10);
    CHECK_RC(construct("w4", &all, 1, 30, 0, NULL, NULL), PMIX_SUCCESS);
    CHECK_RC(PMIx_Group_destruct("w4", NULL, 0), PMIX_SUCCESS);
}

int main(int argc, char **argv) {
    const char *scenario = argc > 1 ? argv[1] : "basic";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    if (strcmp(scenario, "basic") == 0)
        basic();
    else if (strcmp(scenario, "timeout") == 0)
        timeout();
    else if (strcmp(scenario, "exit") == 0 || strcmp(scenario, "kill") == 0)
        death(scenario);
    else if (strcmp(scenario, "notify") == 0)
        notify();
    else if (strcmp(scenario, "pernode") == 0)
        pernode();
    else if (strcmp(scenario, "lostnode") == 0)
        lostnode();
    else if (strcmp(scenario, "invite") == 0)
        invitation();
    else if (strcmp(scenario, "asyncjoin") == 0)
        async_join();
    else if (strcmp(scenario, "leavequiet") == 0 || strcmp(scenario, "leavequietnb") == 0)
        leave_quietly(strcmp(scenario, "leavequietnb") == 0);
    else if (strcmp(scenario, "invitesilent") == 0)
        invitation_failed(1);
    else if (strcmp(scenario, "invitedeath") == 0)
        invitation_failed(0);
    else if (strcmp(scenario, "leaderdeath") == 0)
        leader_failed();
    else if (strcmp(scenario, "leadersilent") == 0)
        leader_failed_silent();
    else if (strcmp(scenario, "reselect") == 0)
        leader_reselected();
    else if (strcmp(scenario, "leaderlost") == 0)
        leaderlost();
    else if (strcmp(scenario, "wholejob") == 0)
        whole_job();
    else if (strcmp(scenario, "bench") == 0)
        bench(argc > 2 ? atoi(argv[2]) : 200);
    else {
        fprintf(stderr, "unknown scenario %s\n", scenario);
        ++failures;
    }
    if (failures == 0) printf("%s ok\n", scenario);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
