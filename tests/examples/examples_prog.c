/* What OpenPMIx v4.2's example programs do, re-written here (their code is not copied), for the
 * examples that no other suite runs as they do (docs/examples.md maps all 22 to their tests):
 *   examples_prog client    client and client2: a default handler, PMIx_Load_topology, the job
 *       and universe sizes, a PMIX_LOCAL uint64 and a PMIX_REMOTE string put (and a
 *       PMIx_Store_internal value), a collecting fence, then each peer's key that its locality
 *       (PMIX_LOCAL_PEERS) says it can see, with its type and value
 *   examples_prog dmodex    dmodex: a PMIX_LOCAL and a PMIX_GLOBAL key and a shared "ghex" put, no
 *       fence before the Gets: each peer's keys by direct modex (PMIX_TIMEOUT 10), then a fence
 *   examples_prog pub       pub: rank 0 publishes two keys, a fence, every other rank looks one up
 *       (no wait), a fence, rank 0 unpublishes, a fence
 *   examples_prog pubi      pubi: the same, but the others look both up at once with PMIX_WAIT
 *       (perhaps before rank 0 published) and check who published them
 *   examples_prog fault     fault: a handler for PMIX_ERR_PROC_ABORTED and PMIX_ERR_JOB_TERMINATED
 *       filtered by PMIX_NSPACE, a fence, then rank 0 exits 1 while the others wait for the event
 *       (the job ends with status 1, ending them, and nothing is left)
 *   examples_prog hello     hello: PMIx_Query_info_nb of PMIX_QUERY_NUM_PSETS and
 *       PMIX_QUERY_PSET_NAMES with PMIX_QUERY_REFRESH_CACHE: two answers at the top level
 *   examples_prog nodeinfo  nodeinfo: PMIX_JOB_SIZE, PMIX_NODE_LIST, the next rank's PMIX_HOSTNAME,
 *       and its PMIX_FABRIC_COORDINATES (not there: a status, not a hang)
 *   examples_prog alloc     alloc: PMIx_Allocation_request_nb of new nodes, refused at once
 *       (PMIX_ERR_NOT_SUPPORTED, as under mpirun, whose host has no allocation upcall)
 *   examples_prog dynamic CHILD   dynamic: a fence, rank 0 spawns 2 ranks of CHILD with an env
 *       entry, reads the child job's PMIX_JOB_SIZE and its rank 1's PMIX_LOCAL_RANK, prints
 *       "spawned NSPACE", a fence, and every rank finalizes at once
 *   examples_prog child     a rank of dynamic's child job: checks its environment, a fence, prints
 *       "child RANK done"
 * Each rank prints "SCENARIO ok RANK" when its checks held; "FAILED: ..." lines and exit 1
 * otherwise. Every wait is bounded (20 s). */
#define _GNU_SOURCE
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/check.h"

static pmix_proc_t me;
static uint32_t nprocs;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* Waits (20 s at most) for *flag under mu. */
static int wait_flag(volatile int *flag) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    while (!*flag && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    const int got = *flag;
    pthread_mutex_unlock(&mu);
    return got;
}

static void raise_flag(volatile int *flag) {
    pthread_mutex_lock(&mu);
    *flag = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void fence(int collect) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info);
}

static uint32_t job_u32(const pmix_proc_t *p, const char *key) {
    pmix_value_t *v = NULL;
    uint32_t out = 0;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32, "%s: %s", key, PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32) out = v->data.uint32;
    if (v) PMIX_VALUE_RELEASE(v);
    return out;
}

static void nothing(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (cbfunc) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Whether rank r is on this node, by PMIX_LOCAL_PEERS. */
static int is_local(uint32_t r) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    int local = 0;
    if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING) {
        char *list = strdup(v->data.string), *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
            local = local || (uint32_t)strtoul(t, NULL, 10) == r;
        free(list);
    } else {
        CHECK(0, "PMIX_LOCAL_PEERS");
    }
    if (v) PMIX_VALUE_RELEASE(v);
    return local;
}

static void client(void) {
    pmix_status_t rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, nothing, NULL, NULL);
    CHECK(rc >= 0, "default handler: %s", PMIx_Error_string(rc));
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    /* Not stopped for a debugger: the key is not there, and nothing waits for a release. */
    CHECK(PMIx_Get(&wild, PMIX_DEBUG_STOP_IN_APP, NULL, 0, &v) != PMIX_SUCCESS,
          "PMIX_DEBUG_STOP_IN_APP set");
    pmix_topology_t topo;
    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    rc = PMIx_Load_topology(&topo);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Load_topology: %s", PMIx_Error_string(rc));
    /* The library's own description: never destructed by the caller. */
    CHECK(job_u32(&wild, PMIX_UNIV_SIZE) >= nprocs, "universe smaller than the job");
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t val;
    val.type = PMIX_UINT32;
    val.data.uint32 = 1234;
    snprintf(key, sizeof key, "%s-%u-internal", me.nspace, me.rank);
    CHECK(PMIx_Store_internal(&me, key, &val) == PMIX_SUCCESS, "PMIx_Store_internal");
    val.type = PMIX_UINT64;
    val.data.uint64 = 1234;
    snprintf(key, sizeof key, "%s-%u-local", me.nspace, me.rank);
    CHECK(PMIx_Put(PMIX_LOCAL, key, &val) == PMIX_SUCCESS, "put local");
    val.type = PMIX_STRING;
    val.data.string = "1234";
    snprintf(key, sizeof key, "%s-%u-remote", me.nspace, me.rank);
    CHECK(PMIx_Put(PMIX_REMOTE, key, &val) == PMIX_SUCCESS, "put remote");
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    fence(1);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        const int local = is_local(r);
        snprintf(key, sizeof key, "%s-%u-%s", me.nspace, r, local ? "local" : "remote");
        v = NULL;
        rc = PMIx_Get(&p, key, NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS, "get %s: %s", key, PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS && local)
            CHECK(v->type == PMIX_UINT64 && v->data.uint64 == 1234, "%s: wrong value", key);
        if (rc == PMIX_SUCCESS && !local)
            CHECK(v->type == PMIX_STRING && strcmp(v->data.string, "1234") == 0, "%s: wrong value",
                  key);
        if (v) PMIX_VALUE_RELEASE(v);
    }
}

static void dmodex(void) {
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t val;
    val.type = PMIX_UINT64;
    val.data.uint64 = 1234;
    snprintf(key, sizeof key, "%s-%u-local", me.nspace, me.rank);
    CHECK(PMIx_Put(PMIX_LOCAL, key, &val) == PMIX_SUCCESS, "put local");
    val.type = PMIX_STRING;
    val.data.string = "1234";
    snprintf(key, sizeof key, "%s-%u-remote", me.nspace, me.rank);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS, "put global");
    val.type = PMIX_BYTE_OBJECT;
    char bytes[3] = {1, 2, 3};
    val.data.bo.bytes = bytes;
    val.data.bo.size = sizeof bytes;
    CHECK(PMIx_Put(PMIX_GLOBAL, "ghex", &val) == PMIX_SUCCESS, "put ghex");
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    pmix_info_t timeout;
    int limit = 10;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &limit, PMIX_INT);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        const char *kinds[2] = {is_local(r) ? "local" : NULL, "remote"};
        for (int k = 0; k < 2; ++k) {
            if (!kinds[k]) continue;
            snprintf(key, sizeof key, "%s-%u-%s", me.nspace, r, kinds[k]);
            pmix_value_t *v = NULL;
            pmix_status_t rc = PMIx_Get(&p, key, &timeout, 1, &v);
            CHECK(rc == PMIX_SUCCESS, "get %s: %s", key, PMIx_Error_string(rc));
            if (v) PMIX_VALUE_RELEASE(v);
        }
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, "ghex", &timeout, 1, &v);
        CHECK(rc == PMIX_SUCCESS && v->type == PMIX_BYTE_OBJECT && v->data.bo.size == 3,
              "ghex of %u: %s", r, PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
    }
    PMIX_INFO_DESTRUCT(&timeout);
    fence(0);
}

/* pub and pubi: rank 0 publishes FOOBAR (uint8 1) and PANDA (size 123456). */
static void publish_two(void) {
    pmix_info_t info[2];
    uint8_t one = 1;
    size_t panda = 123456;
    PMIX_INFO_LOAD(&info[0], "FOOBAR", &one, PMIX_UINT8);
    PMIX_INFO_LOAD(&info[1], "PANDA", &panda, PMIX_SIZE);
    pmix_status_t rc = PMIx_Publish(info, 2);
    CHECK(rc == PMIX_SUCCESS, "publish: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static void unpublish_two(void) {
    char *keys[] = {"FOOBAR", "PANDA", NULL};
    pmix_status_t rc = PMIx_Unpublish(keys, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "unpublish: %s", PMIx_Error_string(rc));
}

static void check_published(pmix_pdata_t *d, size_t n) {
    for (size_t i = 0; i < n; ++i)
        CHECK(PMIX_CHECK_NSPACE(d[i].proc.nspace, me.nspace) && d[i].proc.rank == 0,
              "%s published by %s:%u", d[i].key, d[i].proc.nspace, d[i].proc.rank);
    CHECK(d[0].value.type == PMIX_UINT8 && d[0].value.data.uint8 == 1, "FOOBAR's value");
    if (n > 1) CHECK(d[1].value.type == PMIX_SIZE && d[1].value.data.size == 123456, "PANDA's");
}

static void pub(int immediate) {
    if (!immediate) {
        if (me.rank == 0) publish_two();
        fence(0);
    } else if (me.rank == 0) {
        publish_two();
    }
    if (me.rank != 0) {
        pmix_pdata_t pdata[2];
        PMIX_PDATA_CONSTRUCT(&pdata[0]);
        PMIX_PDATA_CONSTRUCT(&pdata[1]);
        PMIX_LOAD_KEY(pdata[0].key, "FOOBAR");
        PMIX_LOAD_KEY(pdata[1].key, "PANDA");
        pmix_info_t wait;
        int all = 0;
        PMIX_INFO_LOAD(&wait, PMIX_WAIT, &all, PMIX_INT);
        const size_t n = immediate ? 2 : 1;
        pmix_status_t rc = PMIx_Lookup(pdata, n, immediate ? &wait : NULL, immediate ? 1 : 0);
        CHECK(rc == PMIX_SUCCESS, "lookup: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) check_published(pdata, n);
        PMIX_INFO_DESTRUCT(&wait);
        PMIX_PDATA_DESTRUCT(&pdata[0]);
        PMIX_PDATA_DESTRUCT(&pdata[1]);
    }
    fence(0);
    if (me.rank == 0) unpublish_two();
    fence(0);
}

static volatile int fault_heard = 0;
static void on_fault(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    raise_flag(&fault_heard);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void fault(void) {
    pmix_status_t codes[2] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_JOB_TERMINATED};
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_NSPACE, me.nspace, PMIX_STRING);
    pmix_status_t rc = PMIx_Register_event_handler(codes, 2, &info, 1, on_fault, NULL, NULL);
    CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info);
    fence(0);
    if (me.rank == 0) {
        fflush(stdout);
        _exit(1); /* as the example: no finalize */
    }
    /* The others wait for the event (20 s at most); rank 0's failure ends them, perhaps first. */
    wait_flag(&fault_heard);
}

static volatile int hello_done = 0;
static pmix_status_t hello_status;
static size_t hello_n;
static int hello_shape = 0;
static void on_query(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    hello_status = status;
    hello_n = ninfo;
    hello_shape = ninfo == 2 && PMIX_CHECK_KEY(&info[0], PMIX_QUERY_NUM_PSETS) &&
                  PMIX_CHECK_KEY(&info[1], PMIX_QUERY_PSET_NAMES);
    if (release_fn) release_fn(release_cbdata);
    raise_flag(&hello_done);
}

static void hello(void) {
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, query.keys, PMIX_QUERY_NUM_PSETS);
    PMIX_ARGV_APPEND(rc, query.keys, PMIX_QUERY_PSET_NAMES);
    PMIX_INFO_CREATE(query.qualifiers, 1);
    query.nqual = 1;
    bool yes = true;
    PMIX_INFO_LOAD(&query.qualifiers[0], PMIX_QUERY_REFRESH_CACHE, &yes, PMIX_BOOL);
    rc = PMIx_Query_info_nb(&query, 1, on_query, NULL);
    CHECK(rc == PMIX_SUCCESS, "query: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        CHECK(wait_flag(&hello_done), "no query answer");
        CHECK(hello_status == PMIX_SUCCESS, "query answered %s", PMIx_Error_string(hello_status));
        CHECK(hello_shape, "%zu answers, not NUM_PSETS then PSET_NAMES", hello_n);
    }
    PMIX_QUERY_DESTRUCT(&query);
}

static void nodeinfo(void) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_NODE_LIST, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING && v->data.string[0], "PMIX_NODE_LIST: %s",
          PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);
    if (nprocs > 1) {
        pmix_proc_t next;
        PMIX_LOAD_PROCID(&next, me.nspace, (me.rank + 1) % nprocs);
        v = NULL;
        rc = PMIx_Get(&next, PMIX_HOSTNAME, NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING, "PMIX_HOSTNAME: %s",
              PMIx_Error_string(rc));
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        rc = PMIx_Get(&next, PMIX_FABRIC_COORDINATES, NULL, 0, &v);
        CHECK(rc != PMIX_SUCCESS, "PMIX_FABRIC_COORDINATES answered");
        if (v) PMIX_VALUE_RELEASE(v);
    }
}

static volatile int alloc_done = 0;
static pmix_status_t alloc_status = PMIX_SUCCESS;
static void on_alloc(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)info, (void)ninfo, (void)cbdata;
    alloc_status = status;
    if (release_fn) release_fn(release_cbdata);
    raise_flag(&alloc_done);
}

static void alloc_example(void) {
    pmix_info_t info[2];
    uint64_t nodes = 2;
    PMIX_INFO_LOAD(&info[0], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    PMIX_INFO_LOAD(&info[1], PMIX_ALLOC_ID, "MYALLOCATION", PMIX_STRING);
    pmix_status_t rc = PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, info, 2, on_alloc, NULL);
    if (rc == PMIX_SUCCESS) { /* then its answer must say so */
        CHECK(wait_flag(&alloc_done), "no answer to the allocation request");
        rc = alloc_status;
    }
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "allocation request: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static void dynamic(const char *child_prog) {
    fence(0);
    if (me.rank == 0) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(child_prog);
        pmix_status_t rc;
        PMIX_ARGV_APPEND(rc, app.argv, child_prog);
        PMIX_ARGV_APPEND(rc, app.argv, "child");
        PMIX_ARGV_APPEND(rc, app.env, "PMIX_ENV_VALUE=3");
        app.maxprocs = 2;
        pmix_nspace_t child;
        rc = PMIx_Spawn(NULL, 0, &app, 1, child);
        PMIX_APP_DESTRUCT(&app);
        CHECK(rc == PMIX_SUCCESS, "spawn: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, child, PMIX_RANK_WILDCARD);
            CHECK(job_u32(&p, PMIX_JOB_SIZE) == 2, "the child's job size");
            PMIX_LOAD_PROCID(&p, child, 1);
            pmix_value_t *v = NULL;
            rc = PMIx_Get(&p, PMIX_LOCAL_RANK, NULL, 0, &v);
            CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT16, "the child's rank 1 local rank: %s",
                  PMIx_Error_string(rc));
            if (v) PMIX_VALUE_RELEASE(v);
            printf("spawned %s\n", child);
        }
    }
    fence(0);
}

static void child(void) {
    const char *env = getenv("PMIX_ENV_VALUE");
    CHECK(env && strcmp(env, "3") == 0, "PMIX_ENV_VALUE: %s", env ? env : "(unset)");
    fence(0);
    printf("child %u done\n", me.rank);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *what = argv[1];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    nprocs = job_u32(&wild, PMIX_JOB_SIZE);
    if (strcmp(what, "client") == 0)
        client();
    else if (strcmp(what, "dmodex") == 0)
        dmodex();
    else if (strcmp(what, "pub") == 0 || strcmp(what, "pubi") == 0)
        pub(strcmp(what, "pubi") == 0);
    else if (strcmp(what, "fault") == 0)
        fault();
    else if (strcmp(what, "hello") == 0)
        hello();
    else if (strcmp(what, "nodeinfo") == 0)
        nodeinfo();
    else if (strcmp(what, "alloc") == 0)
        alloc_example();
    else if (strcmp(what, "dynamic") == 0 && argc > 2)
        dynamic(argv[2]);
    else if (strcmp(what, "child") == 0)
        child();
    else
        CHECK(0, "unknown scenario %s", what);
    if (!failures) printf("%s ok %u\n", what, me.rank);
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "finalize: %s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
