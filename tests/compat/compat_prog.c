/* A program of the standard API for the cross-release tests (tests/compat/test_release.sh), built
 * once against each release's libpmix:
 *   compat_prog job DIR         a rank: wire-up (put, commit, fence, get of the next rank's
 *                               value), an event to its namespace that every other rank hears,
 *                               job control (its file DIR/rankN.seg registered for cleanup, which
 *                               the test finds gone after the job), the ABI query; then rank 0
 *                               writes DIR/ready (its namespace) and, when DIR/hold exists, waits
 *                               up to 30 s for DIR/go (the tool's turn)
 *   compat_prog tool PID NSPACE a tool attached to the broker of `zpmix run` PID: NSPACE is among
 *                               its namespaces, and job control (SIGCONT) reaches its ranks
 *   compat_prog lacks-group     under a broker without the "group" feature (test_negotiation.sh)
 *   compat_prog lacks-ev        a client without the "ev" feature (test_negotiation.sh)
 * Prints what failed ("FAILED: ...") and exits 1, else prints "ok" and exits 0. */
#include <pmix.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/check.h"

/* an application's own code: not among the runtime's, which a client may not notify */
#define COMPAT_EVENT (-4107)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int heard;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    if (status == COMPAT_EVENT) ++heard;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static bool wait_file(const char *path, int seconds) {
    struct timespec t = {0, 20 * 1000 * 1000};
    for (int i = 0; i < seconds * 50; ++i) {
        if (access(path, F_OK) == 0) return true;
        nanosleep(&t, NULL);
    }
    return false;
}

static int job(const char *dir) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v, "job size: %s", PMIx_Error_string(rc));
    const uint32_t size = v ? v->data.uint32 : 1;
    if (v) PMIX_VALUE_RELEASE(v);

    /* wire-up */
    pmix_value_t mine;
    PMIX_VALUE_LOAD(&mine, &me.rank, PMIX_UINT32);
    CHECK(PMIx_Put(PMIX_GLOBAL, "compat.rank", &mine) == PMIX_SUCCESS, "put");
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");

    /* the event handler, before the fence, so that every rank has one when rank 0 notifies */
    pmix_status_t code = COMPAT_EVENT;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    CHECK(rc >= 0, "register event handler: %s", PMIx_Error_string(rc));

    bool collect = true;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &info, 1);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    pmix_proc_t next = me;
    next.rank = (me.rank + 1) % size;
    v = NULL;
    rc = PMIx_Get(&next, "compat.rank", NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v && v->type == PMIX_UINT32 && v->data.uint32 == next.rank,
          "get of rank %u: %s", next.rank, PMIx_Error_string(rc));
    if (v) PMIX_VALUE_RELEASE(v);

    /* an event to the namespace */
    if (me.rank == 0) {
        rc = PMIx_Notify_event(COMPAT_EVENT, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS, "notify: %s", PMIx_Error_string(rc));
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        pthread_mutex_lock(&mu);
        while (!heard && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
        }
        pthread_mutex_unlock(&mu);
        CHECK(heard, "rank %u: the namespace's event did not come", me.rank);
    }

    /* job control: this rank's file goes with it */
    char seg[512];
    snprintf(seg, sizeof seg, "%s/rank%u.seg", dir, me.rank);
    FILE *f = fopen(seg, "w");
    CHECK(f != NULL, "cannot create %s", seg);
    if (f) fclose(f);
    pmix_info_t cleanup;
    PMIX_INFO_LOAD(&cleanup, PMIX_REGISTER_CLEANUP, seg, PMIX_STRING);
    rc = PMIx_Job_control(&me, 1, &cleanup, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "register cleanup: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&cleanup);

    /* the ABI the library and its server both serve */
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_STABLE_ABI_VERSION);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING,
          "ABI query: %s", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);

    if (me.rank == 0) {
        char path[512], tmp[512];
        snprintf(tmp, sizeof tmp, "%s/ready.tmp", dir);
        snprintf(path, sizeof path, "%s/ready", dir);
        f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%s\n", me.nspace);
            fclose(f);
        }
        CHECK(rename(tmp, path) == 0, "cannot write %s", path);
        snprintf(path, sizeof path, "%s/hold", dir);
        if (access(path, F_OK) == 0) {
            snprintf(path, sizeof path, "%s/go", dir);
            CHECK(wait_file(path, 30), "the tool's turn did not end within 30 s");
        }
    }
    rc = PMIx_Fence(&wild, 1, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "last fence: %s", PMIx_Error_string(rc));
    rc = PMIx_Finalize(NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "finalize: %s", PMIx_Error_string(rc));
    if (failures) return 1;
    printf("rank %u ok (%s)\n", me.rank, PMIx_Get_version());
    return 0;
}

static int tool(pid_t pid, const char *nspace) {
    pmix_proc_t self;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_status_t rc = PMIx_tool_init(&self, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_STRING &&
              strstr(results[0].value.data.string, nspace) != NULL,
          "the namespaces do not name %s: %s", nspace, PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);

    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, nspace, PMIX_RANK_WILDCARD);
    int sig = SIGCONT;
    pmix_info_t directive;
    PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    results = NULL;
    nresults = 0;
    rc = PMIx_Job_control(&target, 1, &directive, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "job control: %s", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIx_tool_finalize();
    if (failures) return 1;
    printf("tool ok (%s)\n", PMIx_Get_version());
    return 0;
}

/* Whether PMIX_QUERY_ATTRIBUTE_SUPPORT names `fn` among the client's functions: 1, 0, or -1
 * when the answer is not of the expected shape. */
static int attributes_name(const char *fn) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_CLIENT_FUNCTIONS, "all", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    int found = -1;
    if (rc == PMIX_SUCCESS && nresults == 1 && results[0].value.type == PMIX_DATA_ARRAY) {
        const pmix_data_array_t *classes = results[0].value.data.darray;
        const pmix_info_t *c = classes->array;
        if (classes->type == PMIX_INFO && classes->size == 1 &&
            c[0].value.type == PMIX_DATA_ARRAY) {
            const pmix_data_array_t *fns = c[0].value.data.darray;
            const pmix_info_t *f = fns->array;
            found = 0;
            for (size_t i = 0; i < fns->size; ++i)
                if (strcmp(f[i].key, fn) == 0) found = 1;
        }
    }
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    return found;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Under a broker that lacks "group": a group construct is refused at once, and attribute support
 * names no group function; the rest is served. */
static int lacks_group(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    const double t0 = now();
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Group_construct("compat", &wild, 1, NULL, 0, &results, &nresults);
    const double took = now() - t0;
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "group construct: %s", PMIx_Error_string(rc));
    CHECK(took < 1.0, "the refusal took %.3f s", took);
    if (results) PMIX_INFO_FREE(results, nresults);
    CHECK(attributes_name("PMIx_Group_construct") == 0,
          "attribute support names PMIx_Group_construct");
    CHECK(attributes_name("PMIx_Fence") != 0, "attribute support does not name PMIx_Fence");
    rc = PMIx_Fence(&wild, 1, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    rc = PMIx_Finalize(NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "finalize: %s", PMIx_Error_string(rc));
    if (failures) return 1;
    printf("lacks-group ok\n");
    return 0;
}

/* A client that lacks "ev" under a broker that has it: the broker answers its event registration
 * PMIX_ERR_NOT_SUPPORTED instead of sending it what it cannot read; the rest is served. */
static int lacks_ev(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_status_t code = COMPAT_EVENT;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "register event handler: %s", PMIx_Error_string(rc));
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    rc = PMIx_Fence(&wild, 1, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    rc = PMIx_Finalize(NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "finalize: %s", PMIx_Error_string(rc));
    if (failures) return 1;
    printf("lacks-ev ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "lacks-group") == 0) return lacks_group();
    if (argc == 2 && strcmp(argv[1], "lacks-ev") == 0) return lacks_ev();
    if (argc == 3 && strcmp(argv[1], "job") == 0) return job(argv[2]);
    if (argc == 4 && strcmp(argv[1], "tool") == 0) return tool((pid_t)atoi(argv[2]), argv[3]);
    fprintf(stderr, "usage: compat_prog job DIR | tool PID NSPACE\n");
    return 2;
}
