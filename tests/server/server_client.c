/* A client of the server-library tests (tests/server): standard API only.
 *   server_client check      job information the host registered, a fence with data, Finalize
 *   server_client abort R    rank R calls PMIx_Abort(7); the others wait in a fence
 *   server_client refused R  rank R's PMIx_Init must fail (the host refuses it); others only
 *                            Init and Finalize (a fence would fail: rank R ended)
 *   server_client impostor   a forked copy with a wrong job secret is refused; then Init, Finalize
 *   server_client fence      a fence with data, each rank's value read by all, a barrier
 *   server_client dmodex     each rank reads every other's committed key without a fence that
 *                            brings it (a barrier first, then put, then the Gets)
 *   server_client event      rank 0 notifies its namespace; the others' handlers hear it
 *   server_client enviro     each rank registers a handler for two environment events (the
 *                            host's register_events hears of them once), hears the host's
 *                            event for the namespace, and rank 1 alone the one for it; then
 *                            deregisters it. With NO_ENVIRO set (a host without the upcall),
 *                            the registration is PMIX_ERR_NOT_SUPPORTED.
 *   server_client spawn      rank 0 spawns two ranks of this program ("child"), through the
 *                            host's spawn upcall, connects to them and disconnects; with NO_SPAWN
 *                            set (a host without it), PMIx_Spawn is PMIX_ERR_NOT_SUPPORTED; with
 *                            STOP_SPAWNED set, with PMIX_DEBUG_STOP_IN_INIT (the children wait in
 *                            PMIx_Init until the host releases them)
 *   server_client jobend     every rank registers a handler for PMIX_EVENT_JOB_END; rank 0
 *                            spawns as in spawn, with PMIX_NOTIFY_COMPLETION, and hears the
 *                            child job's end from the host once, with the child's namespace as
 *                            the affected proc ("heard job end NSPACE status S exit E"); then
 *                            tells the others (an event of its namespace), which heard none
 *   server_client child      a spawned rank: its parent is rank 0 of the spawner's job; a fence
 *                            over its own job; connects to the parent and disconnects; with
 *                            STOP_SPAWNED set, its job information says PMIX_DEBUG_STOP_IN_INIT;
 *                            with CHILD_EXIT set, rank 1 exits with that status at its end
 *   server_client connect    every rank connects its whole job and disconnects; with
 *                            NO_CONNECT set (no upcall, the job across nodes), both are
 *                            PMIX_ERR_NOT_SUPPORTED
 *   server_client group      every rank constructs a group of its whole job with a context id
 *                            (GROUP_CONTEXT_ID: the one expected), finds it in its own and
 *                            another rank's PMIX_GROUP_NAMES and in the group queries (names,
 *                            membership: the whole job), then destructs it; with
 *                            NO_GROUP set (no upcall, the job across nodes), the construct is
 *                            PMIX_ERR_NOT_SUPPORTED
 *   server_client vanish     rank 0 exits without PMIx_Finalize (an abnormal end), others finish
 *   server_client publish    rank 0 publishes a key in the session (the host's directory) and one
 *                            on its node (the broker's); the others look both up; rank 0
 *                            unpublishes (the node's key is not found on another node). With
 *                            NO_DIRECTORY set (a host without the upcalls),
 *                            the session's is PMIX_ERR_NOT_SUPPORTED and the node's still works.
 *   server_client resources  (under server_host --resources --nodes 2) the host's resources
 *                            are job information (the job's own keys win, what it took back is
 *                            gone); the other node's devices, inventory, name and ranks are read
 *                            with Gets that name that node (PMIX_HOSTNAME, PMIX_NODEID)
 * Prints "rank R ok" when its scenario held; what went wrong on stderr. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_checks.h"

static _Atomic int heard_from = -1; /* the source rank of the event heard */

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id;
    (void)status;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    heard_from = (int)source->rank;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The environment events heard (server_client enviro): a bit per code. */
static const pmix_status_t kEnviroCode = PMIX_EXTERNAL_ERR_BASE - 78;
static const pmix_status_t kEnviroOne = PMIX_EXTERNAL_ERR_BASE - 79;
static _Atomic int enviro_heard;

static void on_enviro(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (status == kEnviroCode) enviro_heard |= 1;
    if (status == kEnviroOne) enviro_heard |= 2;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void wait_heard(int bits) {
    for (int ms = 0; (enviro_heard & bits) != bits && ms < 10000; ++ms) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void enviro_events(void) {
    pmix_status_t codes[2] = {kEnviroCode, kEnviroOne};
    pmix_info_t levels[2];
    bool yes = true;
    /* PMIX_EVENT_ENVIRO_LEVEL and PMIX_EVENT_JOB_LEVEL, of the v2 headers */
    PMIX_INFO_LOAD(&levels[0], "pmix.evenv", &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&levels[1], "pmix.evjob", &yes, PMIX_BOOL);
    pmix_status_t ref = PMIx_Register_event_handler(codes, 2, levels, 2, on_enviro, NULL, NULL);
    PMIX_INFO_DESTRUCT(&levels[0]);
    PMIX_INFO_DESTRUCT(&levels[1]);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    if (getenv("NO_ENVIRO")) {
        CHECK(ref == PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    CHECK(ref >= 0);
    wait_heard(me.rank == 1 ? 3 : 1);
    CHECK(enviro_heard & 1);
    CHECK_RC(PMIx_Fence(&all, 1, NULL, 0));
    /* Only rank 1 is in the custom range. */
    CHECK(((enviro_heard & 2) != 0) == (me.rank == 1));
    if (ref >= 0) CHECK_RC(PMIx_Deregister_event_handler((size_t)ref, NULL, NULL));
    CHECK_RC(PMIx_Fence(&all, 1, NULL, 0));
}

static pmix_nspace_t spawned_nspace; /* what rank 0's PMIx_Spawn returned */

/* `notify`: with PMIX_NOTIFY_COMPLETION (true), else without (zpmix's PMIx_Spawn then asks for
 * it all the same). */
static void spawn_children(const char *self, bool notify) {
    if (me.rank != 0) return;
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    app.argv = calloc(3, sizeof(char *));
    app.argv[0] = strdup(self);
    app.argv[1] = strdup("child");
    app.maxprocs = 2;
    pmix_nspace_t child;
    memset(child, 0, sizeof child);
    pmix_info_t job_info[2];
    size_t ninfo = 0;
    bool yes = true;
    if (getenv("STOP_SPAWNED"))
        PMIX_INFO_LOAD(&job_info[ninfo++], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    if (notify) PMIX_INFO_LOAD(&job_info[ninfo++], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Spawn(ninfo ? job_info : NULL, ninfo, &app, 1, child);
    for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&job_info[i]);
    PMIX_APP_DESTRUCT(&app);
    if (getenv("NO_SPAWN")) {
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    CHECK_RC(rc);
    CHECK(child[0] != '\0' && strcmp(child, me.nspace) != 0);
    printf("spawned %s\n", child);
    PMIX_LOAD_NSPACE(spawned_nspace, child);
    /* The spawner and its children: one connect, one disconnect, through the host. */
    pmix_proc_t both[2];
    both[0] = me;
    PMIX_LOAD_PROCID(&both[1], child, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Connect(both, 2, NULL, 0));
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&both[1], PMIX_JOB_SIZE, NULL, 0, &v)); /* the child job is known here */
    CHECK(v && v->type == PMIX_UINT32 && v->data.uint32 == 2);
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_RC(PMIx_Disconnect(both, 2, NULL, 0));
}

static void spawned_child(void) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v);
    CHECK_RC(rc);
    CHECK(v && v->type == PMIX_PROC && v->data.proc->rank == 0 &&
          strncmp(v->data.proc->nspace, me.nspace, strlen(v->data.proc->nspace)) == 0);
    pmix_proc_t both[2];
    PMIX_LOAD_PROCID(&both[0], "", 0);
    if (v) both[0] = *v->data.proc;
    if (v) PMIX_VALUE_RELEASE(v);
    if (getenv("STOP_SPAWNED")) { /* PMIx_Init returned: the host released it */
        CHECK_RC(PMIx_Get(&wild, PMIX_DEBUG_STOP_IN_INIT, NULL, 0, &v));
        CHECK(v && v->type == PMIX_BOOL && v->data.flag);
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK_RC(PMIx_Fence(&wild, 1, NULL, 0));
    both[1] = wild;
    CHECK_RC(PMIx_Connect(both, 2, NULL, 0));
    CHECK_RC(PMIx_Disconnect(both, 2, NULL, 0));
}

/* PMIX_EVENT_JOB_END heard (server_client jobend): how many, and the last one's affected proc,
 * termination status and exit code (set before the count). */
static pmix_proc_t job_end_affected, job_end_source;
static pmix_status_t job_end_status = PMIX_ERROR;
static int job_end_exit = -1;
static _Atomic int job_ends, job_end_told;
static const pmix_status_t kJobEndHeard = PMIX_EXTERNAL_ERR_BASE - 80; /* rank 0 tells the rest */

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    if (status == kJobEndHeard) {
        job_end_told = 1;
    } else {
        job_end_source = *source;
        for (size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                job_end_affected = *info[i].value.data.proc;
            else if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS) &&
                     info[i].value.type == PMIX_STATUS)
                job_end_status = info[i].value.data.status;
            else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
                job_end_exit = info[i].value.data.integer;
        ++job_ends;
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The host's PMIX_EVENT_JOB_END reaches the spawner alone, once. Rank 0 tells the others once it
 * heard it, with an event of its namespace: their broker publishes it after the JOB_END, so a
 * JOB_END misaddressed to them would have come first. */
static void job_end_to_spawner(const char *self) {
    pmix_status_t codes[2] = {PMIX_EVENT_JOB_END, kJobEndHeard};
    CHECK(PMIx_Register_event_handler(codes, 2, NULL, 0, on_job_end, NULL, NULL) >= 0);
    barrier(); /* every handler is in before the spawn */
    if (me.rank == 0) {
        spawn_children(self, true);
        wait_for(&job_ends, 10000);
        CHECK(job_ends >= 1);
        CHECK_RC(PMIx_Notify_event(kJobEndHeard, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL));
    } else {
        wait_for(&job_end_told, 10000);
        CHECK(job_end_told);
    }
    barrier();
    if (me.rank == 0) {
        CHECK(job_ends == 1);
        CHECK(PMIX_CHECK_NSPACE(job_end_affected.nspace, spawned_nspace));
        CHECK(job_end_affected.rank == PMIX_RANK_WILDCARD);
        printf("heard job end %s status %d exit %d from %s:%u\n", job_end_affected.nspace,
               job_end_status, job_end_exit, job_end_source.nspace, job_end_source.rank);
    } else {
        CHECK(job_ends == 0);
    }
}

/* Whether `v` (a PMIX_GROUP_NAMES or PMIX_QUERY_GROUP_NAMES answer) lists `grp` once. */
static int names_group(const pmix_value_t *v, const char *grp) {
    int named = 0;
    if (v && v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_STRING) {
        char **s = v->data.darray->array;
        for (size_t i = 0; i < v->data.darray->size; ++i) named += strcmp(s[i], grp) == 0;
    }
    return named == 1;
}

/* The group `grp` of the whole job, as PMIx_Get and PMIx_Query_info see it. */
static void check_group_known(const char *grp) {
    pmix_proc_t job, other;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v));
    const uint32_t size = v ? v->data.uint32 : 0;
    if (v) PMIX_VALUE_RELEASE(v);
    PMIX_LOAD_PROCID(&other, me.nspace, (me.rank + 1) % (size ? size : 1));
    const pmix_proc_t *whom[] = {&me, &other};
    for (int w = 0; w < 2; ++w) {
        v = NULL;
        CHECK_RC(PMIx_Get(whom[w], PMIX_GROUP_NAMES, NULL, 0, &v));
        CHECK(names_group(v, grp));
        if (v) PMIX_VALUE_RELEASE(v);
    }
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    char *keys[] = {PMIX_QUERY_GROUP_NAMES, PMIX_QUERY_GROUP_MEMBERSHIP, NULL};
    q.keys = keys;
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_GROUP_ID, grp, PMIX_STRING);
    q.qualifiers = &qual;
    q.nqual = 1;
    pmix_info_t *results = NULL;
    size_t n = 0;
    CHECK_RC(PMIx_Query_info(&q, 1, &results, &n));
    int named = 0, members = -1, me_in = 0;
    for (size_t i = 0; i < n; ++i) {
        const pmix_value_t *r = &results[i].value;
        if (PMIX_CHECK_KEY(&results[i], PMIX_QUERY_GROUP_NAMES)) named = names_group(r, grp);
        if (PMIX_CHECK_KEY(&results[i], PMIX_QUERY_GROUP_MEMBERSHIP) &&
            r->type == PMIX_DATA_ARRAY && r->data.darray->type == PMIX_PROC) {
            members = (int)r->data.darray->size;
            const pmix_proc_t *p = r->data.darray->array;
            for (size_t k = 0; k < r->data.darray->size; ++k)
                me_in += PMIX_CHECK_PROCID(&p[k], &me);
        }
    }
    CHECK(named);
    CHECK(members == (int)size && me_in == 1);
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_INFO_DESTRUCT(&qual);
}

/* What every member of hgrp brought, as each reads it: its PMIX_GROUP_INFO (a key of its own and
 * its local context id, kept by the group's context id), its endpoint data. */
static void check_group_data(uint32_t size, size_t context_id) {
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, "hgrp", PMIX_RANK_WILDCARD);
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_GROUP_CONTEXT_ID, &context_id, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&qual);
    for (uint32_t r = 0; r < size; ++r) {
        char key[32], ep[32];
        snprintf(key, sizeof key, "host.grp.%u", r);
        snprintf(ep, sizeof ep, "endpoint-%u", r);
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *v = NULL;
        CHECK_RC(PMIx_Get(&whole, key, NULL, 0, &v));
        CHECK(v && v->type == PMIX_UINT32 && v->data.uint32 == 1000 + r);
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        CHECK_RC(PMIx_Get(&p, PMIX_GROUP_ENDPT_DATA, NULL, 0, &v));
        CHECK(v && v->type == PMIX_BYTE_OBJECT && v->data.bo.size == strlen(ep) + 1 &&
              memcmp(v->data.bo.bytes, ep, v->data.bo.size) == 0);
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
        CHECK_RC(PMIx_Get(&p, PMIX_GROUP_LOCAL_CID, &qual, 1, &v));
        CHECK(v && v->type == PMIX_SIZE && v->data.size == 500 + r);
        if (v) PMIX_VALUE_RELEASE(v);
    }
    PMIX_INFO_DESTRUCT(&qual);
}

static void group_job(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t info[3], inner[2];
    bool yes = true;
    char key[32], ep[32];
    snprintf(key, sizeof key, "host.grp.%u", me.rank);
    uint32_t val = 1000 + me.rank;
    size_t lcid = 500 + me.rank;
    PMIX_INFO_LOAD(&inner[0], key, &val, PMIX_UINT32);
    PMIX_INFO_LOAD(&inner[1], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    pmix_data_array_t darray = {PMIX_INFO, 2, inner};
    snprintf(ep, sizeof ep, "endpoint-%u", me.rank);
    pmix_byte_object_t bo = {ep, strlen(ep) + 1};
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_INFO, &darray, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&info[2], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct("hgrp", &all, 1, info, 3, &results, &nresults);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    for (int i = 0; i < 2; ++i) PMIX_INFO_DESTRUCT(&inner[i]);
    if (getenv("NO_GROUP")) {
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    CHECK_RC(rc);
    size_t context_id = 0;
    for (size_t i = 0; i < nresults; ++i)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            pmix_status_t grc;
            PMIX_VALUE_GET_NUMBER(grc, &results[i].value, context_id, size_t);
            CHECK_RC(grc);
        }
    if (results) PMIX_INFO_FREE(results, nresults);
    const char *want = getenv("GROUP_CONTEXT_ID");
    CHECK(context_id != 0);
    if (want) CHECK(context_id == (size_t)atol(want));
    check_group_known("hgrp");
    pmix_value_t *v = NULL;
    CHECK_RC(PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v));
    check_group_data(v ? v->data.uint32 : 0, context_id);
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_RC(PMIx_Group_destruct("hgrp", NULL, 0));
    /* Destructed on every node: the name may be constructed again, and its new context id
     * differs. */
    pmix_info_t assign;
    PMIX_INFO_LOAD(&assign, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    CHECK_RC(PMIx_Group_construct("hgrp", &all, 1, &assign, 1, &results, &nresults));
    PMIX_INFO_DESTRUCT(&assign);
    size_t again = 0;
    for (size_t i = 0; i < nresults; ++i)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) again = results[i].value.data.size;
    if (results) PMIX_INFO_FREE(results, nresults);
    CHECK(again != 0 && again != context_id);
    CHECK_RC(PMIx_Group_destruct("hgrp", NULL, 0));
}

static void connect_job(void) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t want = getenv("NO_CONNECT") ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS;
    pmix_status_t rc = PMIx_Connect(&all, 1, NULL, 0);
    CHECK(rc == want);
    rc = PMIx_Disconnect(&all, 1, NULL, 0);
    CHECK(rc == want);
}

static pmix_value_t *get(const char *nspace, pmix_rank_t rank, const char *key) {
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank %u: Get(%s.%d, %s) = %s\n", me.rank, nspace, (int)rank, key,
                PMIx_Error_string(rc));
        ++failures;
        return NULL;
    }
    return v;
}

static void fence_and_read(uint32_t size);

/* PMIx_Get of a job-level key about a node, named by host name (or id when host is NULL). */
static pmix_status_t get_on(const char *host, uint32_t id, const char *key, pmix_value_t **v) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t q[2];
    bool yes = true;
    PMIX_INFO_LOAD(&q[0], PMIX_NODE_INFO, &yes, PMIX_BOOL);
    if (host)
        PMIX_INFO_LOAD(&q[1], PMIX_HOSTNAME, host, PMIX_STRING);
    else
        PMIX_INFO_LOAD(&q[1], PMIX_NODEID, &id, PMIX_UINT32);
    *v = NULL;
    pmix_status_t rc = PMIx_Get(&all, key, q, 2, v);
    PMIX_INFO_DESTRUCT(&q[0]);
    PMIX_INFO_DESTRUCT(&q[1]);
    return rc;
}

static bool is_string(const pmix_value_t *v, const char *want) {
    return v && v->type == PMIX_STRING && v->data.string && strcmp(v->data.string, want) == 0;
}

static _Atomic int nb_done;
static void gpu_nb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    CHECK_RC(status);
    CHECK(is_string(kv, (const char *)cbdata));
    nb_done = 1;
}

static void check_resources(void) {
    pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_CLUSTER_ID);
    CHECK(is_string(v, "test-cluster"));
    if (v) PMIX_VALUE_RELEASE(v);
    v = get(me.nspace, PMIX_RANK_WILDCARD, "host.greeting"); /* the job's own wins */
    CHECK(is_string(v, "hello from the host"));
    if (v) PMIX_VALUE_RELEASE(v);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    v = NULL;
    CHECK_STATUS(PMIx_Get(&all, "host.gone", NULL, 0, &v), PMIX_ERR_NOT_FOUND);

    pmix_value_t *mine = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_HOSTNAME);
    pmix_value_t *my_id = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_NODEID);
    pmix_value_t *size = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    pmix_value_t *local = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE);
    if (!mine || !my_id || !size || !local) return;
    const char *other = strcmp(mine->data.string, "node0") == 0 ? "node1" : "node0";
    const uint32_t other_id = 1 - my_id->data.uint32;
    char gpu[64];
    snprintf(gpu, sizeof gpu, "gpu-of-%s", other);

    CHECK_RC(get_on(other, 0, "host.node.gpu", &v));
    CHECK(is_string(v, gpu));
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_STATUS(get_on(other, 0, "host.node.nic", &v), PMIX_ERR_NOT_FOUND); /* taken back */
    CHECK_STATUS(get_on(mine->data.string, 0, "host.node.gpu", &v), PMIX_ERR_NOT_FOUND);
    CHECK_RC(get_on(other, 0, "pmix.hwlocxml2", &v)); /* its delivered inventory */
    CHECK(v && v->type == PMIX_STRING && strstr(v->data.string, "<topology"));
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_RC(get_on(NULL, other_id, PMIX_HOSTNAME, &v));
    CHECK(is_string(v, other));
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_RC(get_on(NULL, other_id, PMIX_LOCAL_SIZE, &v));
    CHECK(v && v->type == PMIX_UINT32 && v->data.uint32 == size->data.uint32 - local->data.uint32);
    if (v) PMIX_VALUE_RELEASE(v);
    /* The caller's own node: its own job information. */
    CHECK_RC(get_on(NULL, my_id->data.uint32, PMIX_LOCAL_SIZE, &v));
    CHECK(v && v->type == PMIX_UINT32 && v->data.uint32 == local->data.uint32);
    if (v) PMIX_VALUE_RELEASE(v);
    CHECK_STATUS(get_on(NULL, 7, PMIX_HOSTNAME, &v), PMIX_ERR_NOT_FOUND); /* no such node */

    pmix_info_t q;
    PMIX_INFO_LOAD(&q, PMIX_HOSTNAME, other, PMIX_STRING);
    CHECK_RC(PMIx_Get_nb(&all, "host.node.gpu", &q, 1, gpu_nb, gpu));
    wait_for(&nb_done, 10000);
    CHECK(nb_done);
    PMIX_INFO_DESTRUCT(&q);
    PMIX_VALUE_RELEASE(mine);
    PMIX_VALUE_RELEASE(my_id);
    PMIX_VALUE_RELEASE(size);
    PMIX_VALUE_RELEASE(local);
}

static void publish_one(const char *key, const char *value, pmix_data_range_t range,
                        pmix_status_t expect) {
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], key, value, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    pmix_status_t rc = PMIx_Publish(info, 2);
    if (rc != expect) {
        fprintf(stderr, "rank %u: PMIx_Publish(%s) = %s, expected %s\n", me.rank, key,
                PMIx_Error_string(rc), PMIx_Error_string(expect));
        ++failures;
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static void lookup_one(const char *key, const char *want, pmix_data_range_t range,
                       pmix_status_t expect) {
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_info_t r;
    PMIX_INFO_LOAD(&r, PMIX_RANGE, &range, PMIX_DATA_RANGE);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, &r, 1);
    if (rc != expect) {
        fprintf(stderr, "rank %u: PMIx_Lookup(%s) = %s, expected %s\n", me.rank, key,
                PMIx_Error_string(rc), PMIx_Error_string(expect));
        ++failures;
    } else if (rc == PMIX_SUCCESS) {
        CHECK(pd.value.type == PMIX_STRING && strcmp(pd.value.data.string, want) == 0);
        CHECK(pd.proc.rank == 0 && strcmp(pd.proc.nspace, me.nspace) == 0);
    }
    PMIX_PDATA_DESTRUCT(&pd);
    PMIX_INFO_DESTRUCT(&r);
}

/* Whether rank 0 runs on this node (its node's directory is this one's). */
static bool beside_rank0(void) {
    pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    bool beside = false;
    if (v && v->type == PMIX_STRING) {
        char *peers = strdup(v->data.string), *save = NULL;
        for (char *t = strtok_r(peers, ",", &save); t; t = strtok_r(NULL, ",", &save))
            beside |= strcmp(t, "0") == 0;
        free(peers);
    }
    if (v) PMIX_VALUE_RELEASE(v);
    return beside;
}

static void publish_and_lookup(void) {
    const pmix_status_t session = getenv("NO_DIRECTORY") ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS;
    const pmix_status_t node = beside_rank0() ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
    if (me.rank == 0) {
        publish_one("test.session", "s-0", PMIX_RANGE_SESSION, session);
        publish_one("test.node", "n-0", PMIX_RANGE_LOCAL, PMIX_SUCCESS);
    }
    barrier();
    if (me.rank != 0) {
        lookup_one("test.session", "s-0", PMIX_RANGE_SESSION, session);
        lookup_one("test.node", "n-0", PMIX_RANGE_LOCAL, node);
    }
    barrier();
    if (me.rank == 0) {
        pmix_info_t r;
        pmix_data_range_t range = PMIX_RANGE_SESSION;
        PMIX_INFO_LOAD(&r, PMIX_RANGE, &range, PMIX_DATA_RANGE);
        char *keys[] = {"test.session", NULL};
        pmix_status_t rc = PMIx_Unpublish(keys, &r, 1);
        if (rc != session) {
            fprintf(stderr, "rank 0: PMIx_Unpublish = %s\n", PMIx_Error_string(rc));
            ++failures;
        }
        PMIX_INFO_DESTRUCT(&r);
    }
}

static void check_job(void) {
    pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    uint32_t size = v ? v->data.uint32 : 0;
    CHECK(v && v->type == PMIX_UINT32 && size >= 1);
    PMIX_VALUE_RELEASE(v);
    const char *want_size = getenv("EXPECT_SIZE");
    if (want_size) CHECK(size == (uint32_t)atoi(want_size));

    v = get(me.nspace, PMIX_RANK_WILDCARD, "host.greeting");
    CHECK(v && v->type == PMIX_STRING && strcmp(v->data.string, "hello from the host") == 0);
    if (v) PMIX_VALUE_RELEASE(v);

    char word[32];
    snprintf(word, sizeof word, "proc-%u", me.rank);
    v = get(me.nspace, me.rank, "host.word");
    CHECK(v && v->type == PMIX_STRING && strcmp(v->data.string, word) == 0);
    if (v) PMIX_VALUE_RELEASE(v);

    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE);
    uint32_t local_size = v ? v->data.uint32 : 0;
    CHECK(v && local_size >= 1 && local_size <= size);
    if (v) PMIX_VALUE_RELEASE(v);

    v = get(me.nspace, me.rank, PMIX_LOCAL_RANK);
    CHECK(v && v->type == PMIX_UINT16 && v->data.uint16 < local_size);
    if (v) PMIX_VALUE_RELEASE(v);

    /* A job whose ranks all run on this node fences on a board in its namespace directory (as
     * under zpmix run), never through the broker; a job across nodes has none. */
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_NSDIR);
    CHECK(v && v->type == PMIX_STRING);
    if (v) {
        char board[4096];
        snprintf(board, sizeof board, "%s/fence-board", v->data.string);
        printf("fence board %s for %u\n", access(board, R_OK | W_OK) == 0 ? "yes" : "no", me.rank);
        PMIX_VALUE_RELEASE(v);
    }

    fence_and_read(size);
}

/* A modex: each rank's value reaches every other after a collecting fence; then a barrier. */
static void put_card(void) {
    pmix_value_t mine;
    char card[64];
    snprintf(card, sizeof card, "card-of-%u", me.rank);
    PMIX_VALUE_LOAD(&mine, card, PMIX_STRING);
    CHECK_RC(PMIx_Put(PMIX_GLOBAL, "test.card", &mine));
    PMIX_VALUE_DESTRUCT(&mine);
    CHECK_RC(PMIx_Commit());
}

static void fence_and_read(uint32_t size) {
    pmix_value_t *v;
    char card[64];
    put_card();
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    CHECK_RC(PMIx_Fence(&all, 1, &collect, 1));
    for (uint32_t r = 0; r < size; ++r) {
        snprintf(card, sizeof card, "card-of-%u", r);
        v = get(me.nspace, r, "test.card");
        CHECK(v && v->type == PMIX_STRING && strcmp(v->data.string, card) == 0);
        if (v) PMIX_VALUE_RELEASE(v);
    }
    CHECK_RC(PMIx_Fence(&all, 1, NULL, 0)); /* a barrier, as MPI_Init's second fence */
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "check";
    if (strcmp(mode, "impostor") == 0) {
        /* A process with the rank's environment but not its job's secret. */
        pid_t pid = fork();
        if (pid == 0) {
            setenv("ZPMIX_SECRET", "not-the-secret", 1);
            pmix_status_t rc = PMIx_Init(&me, NULL, 0);
            printf("impostor %s: %s\n", rc == PMIX_SUCCESS ? "accepted" : "refused",
                   PMIx_Error_string(rc));
            fflush(stdout);
            _exit(rc == PMIX_SUCCESS ? 1 : 0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    const char *env_rank = getenv("PMIX_RANK");
    if (strcmp(mode, "refused") == 0 && argc > 2 && env_rank && atoi(env_rank) != atoi(argv[2]))
        mode = "plain";
    if (strcmp(mode, "refused") == 0) {
        if (rc == PMIX_SUCCESS) {
            fprintf(stderr, "rank %u: PMIx_Init succeeded though the host refuses\n", me.rank);
            PMIx_Finalize(NULL, 0);
            return 1;
        }
        printf("init refused: %s\n", PMIx_Error_string(rc));
        return 0;
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (strcmp(mode, "check") == 0) {
        check_job();
    } else if (strcmp(mode, "resources") == 0) {
        check_resources();
    } else if (strcmp(mode, "abort") == 0 && argc > 2) {
        if (me.rank == (pmix_rank_t)atoi(argv[2])) {
            rc = PMIx_Abort(7, "rank aborts on purpose", NULL, 0);
            fprintf(stderr, "rank %u: PMIx_Abort returned %s\n", me.rank, PMIx_Error_string(rc));
            return 3;
        }
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        PMIx_Fence(&all, 1, NULL, 0); /* never completes: the host ends us */
        return 4;
    } else if (strcmp(mode, "fence") == 0) {
        pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
        uint32_t size = v ? v->data.uint32 : 0;
        if (v) PMIX_VALUE_RELEASE(v);
        fence_and_read(size);
    } else if (strcmp(mode, "event") == 0) {
        /* Rank 0 notifies its namespace; every other rank's handler hears it, with rank 0 as the
         * source, whichever node it runs on. */
        pmix_status_t code = PMIX_EXTERNAL_ERR_BASE - 77;
        /* Without a callback, the handler's reference is the return value. */
        CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL) >= 0);
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        CHECK_RC(PMIx_Fence(&all, 1, NULL, 0)); /* every handler is registered */
        if (me.rank == 0) {
            CHECK_RC(PMIx_Notify_event(code, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL));
        } else {
            for (int ms = 0; heard_from < 0 && ms < 10000; ++ms) {
                struct timespec ts = {0, 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            CHECK(heard_from == 0);
        }
        CHECK_RC(PMIx_Fence(&all, 1, NULL, 0));
    } else if (strcmp(mode, "dmodex") == 0) {
        /* No fence brings the data: each rank's Get of another's key waits for its commit, brought
         * by direct modex (from the other node through the host). A barrier first (a fence that
         * collects nothing): Slurm's stepds send a direct modex request to another node's stepd a
         * few times only, which under load may not be listening yet when a rank runs. */
        pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
        uint32_t size = v ? v->data.uint32 : 0;
        if (v) PMIX_VALUE_RELEASE(v);
        pmix_proc_t job;
        PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
        CHECK_RC(PMIx_Fence(&job, 1, NULL, 0));
        char card[64];
        put_card();
        for (uint32_t r = 0; r < size; ++r) {
            snprintf(card, sizeof card, "card-of-%u", r);
            v = get(me.nspace, r, "test.card");
            CHECK(v && v->type == PMIX_STRING && strcmp(v->data.string, card) == 0);
            if (v) PMIX_VALUE_RELEASE(v);
        }
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        CHECK_RC(PMIx_Fence(&all, 1, NULL, 0));
    } else if (strcmp(mode, "publish") == 0) {
        publish_and_lookup();
    } else if (strcmp(mode, "enviro") == 0) {
        enviro_events();
    } else if (strcmp(mode, "spawn") == 0) {
        spawn_children(argv[0], false);
    } else if (strcmp(mode, "jobend") == 0) {
        job_end_to_spawner(argv[0]);
    } else if (strcmp(mode, "child") == 0) {
        spawned_child();
    } else if (strcmp(mode, "connect") == 0) {
        connect_job();
    } else if (strcmp(mode, "group") == 0) {
        group_job();
    } else if (strcmp(mode, "vanish") == 0) {
        if (me.rank == 0) _exit(0);
    } else if (strcmp(mode, "impostor") == 0 || strcmp(mode, "plain") == 0) {
    } else {
        fprintf(stderr, "server_client: unknown mode %s\n", mode);
        return 2;
    }
    CHECK_RC(PMIx_Finalize(NULL, 0));
    if (failures == 0) printf("rank %u ok\n", me.rank);
    if (failures == 0 && strcmp(mode, "child") == 0 && me.rank == 1 && getenv("CHILD_EXIT"))
        return atoi(getenv("CHILD_EXIT"));
    return failures == 0 ? 0 : 1;
}
