/* A tool of the standard API, as debuggers and monitors are written, for tests/tools:
 *   tool_prog pid PID NSPACE    find the broker of a `zpmix run` (or `zpmix broker`) by its pid
 *   tool_prog system NSPACE     the standalone broker (PMIX_CONNECT_TO_SYSTEM)
 *   tool_prog nspace NSPACE     the broker that runs NSPACE (PMIX_SERVER_NSPACE)
 *   tool_prog two PID1 NS1 PID2 NS2   attached to two brokers at once, each asked in turn
 *   tool_prog noconnect         PMIX_TOOL_DO_NOT_CONNECT: what the library answers alone
 *   tool_prog tcp URI NSPACE    over tcp (PMIX_TCP_URI, the keypair in $ZPMIX_TCP_KEYS): the
 *                               queries below, then an event to itself through the broker and
 *                               job control of NSPACE (SIGCONT to its ranks)
 * The first three query NSPACE: the namespaces, its process table (printed as
 * "row RANK PID STATE HOST EXE" lines), its job status, the attributes PMIx_Get honours, and an
 * unknown key beside a known one (PMIX_QUERY_PARTIAL_SUCCESS, PMIX_ERR_NOT_FOUND for that key),
 * and the results' shape (check_shape). Every mode first queries the ABI versions before init.
 * Prints "ok" and exits 0 when every check passed; "FAILED: ..." lines otherwise. */
#include <pmix_server.h> /* PMIx_Register_attributes */
#include <pmix_tool.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/check.h"

/* One query of `keys` (NULL-terminated) with an optional PMIX_NSPACE qualifier. */
static pmix_status_t query(const char *keys[], const char *nspace, pmix_info_t **results,
                           size_t *n) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    for (int i = 0; keys[i]; ++i) PMIX_ARGV_APPEND(rc, q.keys, keys[i]);
    if (nspace) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    }
    rc = PMIx_Query_info(&q, 1, results, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

/* The info of `key` among the results (at the top level, one per key), or NULL. */
static pmix_info_t *answer(pmix_info_t *results, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], key)) return &results[i];
    return NULL;
}

static int has_word(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static void check_namespaces(const char *nspace) {
    const char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    pmix_info_t *r = NULL;
    size_t n = 0;
    pmix_status_t rc = query(keys, NULL, &r, &n);
    CHECK(rc == PMIX_SUCCESS, "namespaces: %s", PMIx_Error_string(rc));
    pmix_info_t *a = answer(r, n, PMIX_QUERY_NAMESPACES);
    CHECK(a && a->value.type == PMIX_STRING && has_word(a->value.data.string, nspace),
          "namespaces: %s not in %s", nspace,
          a && a->value.type == PMIX_STRING ? a->value.data.string : "?");
    PMIX_INFO_FREE(r, n);
}

static volatile int nb_done = 0;
static pmix_status_t nb_status;
static pmix_info_t *nb_results;
static size_t nb_n;
static void nb_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release, void *release_data) {
    (void)cbdata;
    nb_status = status;
    nb_n = ninfo;
    if (ninfo > 0) {
        PMIX_INFO_CREATE(nb_results, ninfo);
        for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_XFER(&nb_results[i], &info[i]);
    }
    if (release) release(release_data);
    __atomic_store_n(&nb_done, 1, __ATOMIC_RELEASE);
}

/* The shape OpenPMIx's tool example and Open MPI's Sessions read: one result per key, at the top
 * level, in the order asked, across queries; a job-information key (PMIX_JOB_SIZE of NSPACE, of
 * `size` ranks) and PMIX_SERVER_URI are query keys too. */
static void check_shape(const char *nspace, size_t size) {
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 2);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_JOB_SIZE);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_JOB_STATUS);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_SERVER_URI);
    nb_done = 0;
    rc = PMIx_Query_info_nb(q, 2, nb_answer, NULL);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Query_info_nb: %s", PMIx_Error_string(rc));
    for (int i = 0; rc == PMIX_SUCCESS && i < 10000 && !__atomic_load_n(&nb_done, __ATOMIC_ACQUIRE);
         ++i)
        usleep(1000);
    CHECK(nb_done && nb_status == PMIX_SUCCESS && nb_n == 3, "shape: %s, %zu results",
          PMIx_Error_string(nb_status), nb_n);
    if (nb_n == 3) {
        CHECK(PMIX_CHECK_KEY(&nb_results[0], PMIX_JOB_SIZE) &&
                  nb_results[0].value.type == PMIX_UINT32 &&
                  nb_results[0].value.data.uint32 == size,
              "results[0]: %s, not the job size %zu", nb_results[0].key, size);
        CHECK(PMIX_CHECK_KEY(&nb_results[1], PMIX_QUERY_JOB_STATUS), "results[1]: %s",
              nb_results[1].key);
        CHECK(PMIX_CHECK_KEY(&nb_results[2], PMIX_SERVER_URI) &&
                  nb_results[2].value.type == PMIX_STRING &&
                  strstr(nb_results[2].value.data.string, "://") != NULL,
              "results[2]: %s, not the server's URI", nb_results[2].key);
    }
    if (nb_results) PMIX_INFO_FREE(nb_results, nb_n);
    nb_results = NULL;
    PMIX_QUERY_FREE(q, 2);
}

/* Before PMIx_tool_init: the ABI versions are answered (OpenPMIx's abi_no_init example), one
 * query each; anything else is PMIX_ERR_INIT. */
static void check_before_init(void) {
    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 2);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    pmix_info_t *r = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(q, 2, &r, &n);
    CHECK(rc == PMIX_SUCCESS && n == 2, "ABI before init: %s, %zu results", PMIx_Error_string(rc),
          n);
    if (rc == PMIX_SUCCESS && n == 2) {
        CHECK(PMIX_CHECK_KEY(&r[0], PMIX_QUERY_STABLE_ABI_VERSION) &&
                  r[0].value.type == PMIX_STRING && strchr(r[0].value.data.string, '.'),
              "results[0]: %s", r[0].key);
        CHECK(PMIX_CHECK_KEY(&r[1], PMIX_QUERY_PROVISIONAL_ABI_VERSION) &&
                  r[1].value.type == PMIX_STRING,
              "results[1]: %s", r[1].key);
    }
    if (r) PMIX_INFO_FREE(r, n);
    PMIX_QUERY_FREE(q, 2);
    const char *keys[] = {PMIX_QUERY_NAMESPACES, NULL};
    rc = query(keys, NULL, &r, &n);
    CHECK(rc == PMIX_ERR_INIT, "namespaces before init: %s", PMIx_Error_string(rc));
}

static void check_job(const char *nspace) {
    check_namespaces(nspace);

    const char *table[] = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_JOB_STATUS, NULL};
    pmix_info_t *r = NULL;
    size_t n = 0;
    pmix_status_t rc = query(table, nspace, &r, &n);
    CHECK(rc == PMIX_SUCCESS, "proc table: %s", PMIx_Error_string(rc));
    pmix_info_t *a = answer(r, n, PMIX_QUERY_PROC_TABLE);
    CHECK(a && a->value.type == PMIX_DATA_ARRAY && a->value.data.darray->type == PMIX_PROC_INFO,
          "proc table: not an array of pmix_proc_info_t");
    if (a && a->value.type == PMIX_DATA_ARRAY) {
        pmix_proc_info_t *rows = (pmix_proc_info_t *)a->value.data.darray->array;
        for (size_t i = 0; i < a->value.data.darray->size; ++i) {
            CHECK(PMIX_CHECK_NSPACE(rows[i].proc.nspace, nspace), "row of %s", rows[i].proc.nspace);
            printf("row %u %d %d %s %s\n", rows[i].proc.rank, (int)rows[i].pid, (int)rows[i].state,
                   rows[i].hostname ? rows[i].hostname : "-",
                   rows[i].executable_name ? rows[i].executable_name : "-");
        }
    }
    a = answer(r, n, PMIX_QUERY_JOB_STATUS);
    CHECK(a && a->value.type == PMIX_STATUS && a->value.data.status == PMIX_SUCCESS, "job status");
    size_t rows = 0;
    if ((a = answer(r, n, PMIX_QUERY_PROC_TABLE)) && a->value.type == PMIX_DATA_ARRAY)
        rows = a->value.data.darray->size;
    PMIX_INFO_FREE(r, n);
    check_shape(nspace, rows);

    /* An unknown key answers for itself only. */
    const char *mixed[] = {"zpmix.no.such.key", PMIX_QUERY_NAMESPACES, NULL};
    rc = query(mixed, NULL, &r, &n);
    CHECK(rc == PMIX_QUERY_PARTIAL_SUCCESS, "unknown key: %s", PMIx_Error_string(rc));
    a = answer(r, n, "zpmix.no.such.key");
    CHECK(a && a->value.type == PMIX_STATUS && a->value.data.status == PMIX_ERR_NOT_FOUND,
          "unknown key's answer");
    a = answer(r, n, PMIX_QUERY_NAMESPACES);
    CHECK(a && a->value.type == PMIX_STRING && has_word(a->value.data.string, nspace),
          "namespaces beside an unknown key");
    PMIX_INFO_FREE(r, n);

    const char *unknown[] = {"zpmix.no.such.key", NULL};
    rc = query(unknown, NULL, &r, &n);
    CHECK(rc == PMIX_ERR_NOT_FOUND && r == NULL, "only an unknown key: %s", PMIx_Error_string(rc));
}

/* The attributes PMIx_Get honours include PMIX_TIMEOUT (answered by the library). */
static void check_attributes(void) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_CLIENT_FUNCTIONS, "PMIx_Get", PMIX_STRING);
    pmix_info_t *r = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &r, &n);
    CHECK(rc == PMIX_SUCCESS, "attribute support: %s", PMIx_Error_string(rc));
    pmix_info_t *a = answer(r, n, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    int found = 0;
    if (a && a->value.type == PMIX_DATA_ARRAY) {
        pmix_info_t *classes = (pmix_info_t *)a->value.data.darray->array;
        for (size_t c = 0; c < a->value.data.darray->size; ++c) {
            if (!PMIX_CHECK_KEY(&classes[c], PMIX_CLIENT_ATTRIBUTES)) continue;
            pmix_info_t *fns = (pmix_info_t *)classes[c].value.data.darray->array;
            for (size_t f = 0; f < classes[c].value.data.darray->size; ++f) {
                if (!PMIX_CHECK_KEY(&fns[f], "PMIx_Get")) continue;
                pmix_regattr_t *attrs = (pmix_regattr_t *)fns[f].value.data.darray->array;
                for (size_t i = 0; i < fns[f].value.data.darray->size; ++i)
                    found |= strcmp(attrs[i].string, PMIX_TIMEOUT) == 0;
            }
        }
    }
    CHECK(found, "PMIx_Get does not say it honours PMIX_TIMEOUT");
    PMIX_INFO_FREE(r, n);
    PMIX_QUERY_DESTRUCT(&q);
}

static pmix_proc_t tool_self; /* as PMIx_tool_init named this tool */

/* The tcp mode's event to itself: whether it came back through the broker. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int heard = 0;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    heard = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Over tcp: an event to this tool comes back on the broker's tcp publisher (10 s at most), and
 * job control reaches the job's ranks. */
static void check_events_and_control(const char *nspace) {
    pmix_status_t code = -4242;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));
    pmix_info_t info;
    pmix_proc_t self = tool_self;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &self, PMIX_PROC);
    rc = PMIx_Notify_event(code, &self, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "notify: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&mu);
    while (!heard && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    pthread_mutex_unlock(&mu);
    CHECK(heard, "the event to itself did not come back over tcp");

    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    int sig = SIGCONT;
    pmix_info_t directive;
    PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Job_control(&job, 1, &directive, 1, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "job control over tcp: %s", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
}

static pmix_status_t init_with(const char *key, const void *value, pmix_data_type_t type) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, key, value, type);
    pmix_status_t rc = PMIx_tool_init(&tool_self, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    pmix_status_t rc;
    bool yes = true;
    check_before_init();
    if (strcmp(mode, "pid") == 0 && argc == 4) {
        pid_t pid = (pid_t)atoi(argv[2]);
        rc = init_with(PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    } else if (strcmp(mode, "system") == 0 && argc == 3) {
        rc = init_with(PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "nspace") == 0 && argc == 3) {
        rc = init_with(PMIX_SERVER_NSPACE, argv[2], PMIX_STRING);
    } else if (strcmp(mode, "two") == 0 && argc == 6) {
        pid_t pid = (pid_t)atoi(argv[2]);
        rc = init_with(PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    } else if (strcmp(mode, "noconnect") == 0) {
        rc = init_with(PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "tcp") == 0 && argc == 4) {
        rc = init_with(PMIX_TCP_URI, argv[2], PMIX_STRING);
    } else {
        return 2;
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (strcmp(mode, "noconnect") == 0) {
        check_attributes();
        /* What PMIx_Register_attributes registers is what the query answers. */
        char *attrs[] = {"zpmix.test.attr", NULL};
        CHECK(PMIx_Register_attributes("zpmix_test_fn", attrs) == PMIX_SUCCESS, "register");
        pmix_query_t hq;
        PMIX_QUERY_CONSTRUCT(&hq);
        PMIX_ARGV_APPEND(rc, hq.keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
        PMIX_QUERY_QUALIFIERS_CREATE(&hq, 1);
        PMIX_INFO_LOAD(&hq.qualifiers[0], PMIX_HOST_FUNCTIONS, "zpmix_test_fn", PMIX_STRING);
        pmix_info_t *hr = NULL;
        size_t hn = 0;
        rc = PMIx_Query_info(&hq, 1, &hr, &hn);
        pmix_info_t *ha = answer(hr, hn, PMIX_QUERY_ATTRIBUTE_SUPPORT);
        int registered = 0;
        if (rc == PMIX_SUCCESS && ha && ha->value.type == PMIX_DATA_ARRAY) {
            pmix_info_t *cls = (pmix_info_t *)ha->value.data.darray->array;
            if (PMIX_CHECK_KEY(&cls[0], PMIX_HOST_ATTRIBUTES)) {
                pmix_info_t *fns = (pmix_info_t *)cls[0].value.data.darray->array;
                pmix_regattr_t *regs = (pmix_regattr_t *)fns[0].value.data.darray->array;
                registered = PMIX_CHECK_KEY(&fns[0], "zpmix_test_fn") &&
                             strcmp(regs[0].string, "zpmix.test.attr") == 0;
            }
        }
        CHECK(registered, "a registered attribute is not in the answer");
        if (hr) PMIX_INFO_FREE(hr, hn);
        PMIX_QUERY_DESTRUCT(&hq);
        const char *keys[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_STABLE_ABI_VERSION, NULL};
        pmix_info_t *r = NULL;
        size_t n = 0;
        rc = query(keys, NULL, &r, &n);
        CHECK(rc == PMIX_QUERY_PARTIAL_SUCCESS, "no broker: %s", PMIx_Error_string(rc));
        pmix_info_t *a = answer(r, n, PMIX_QUERY_NAMESPACES);
        CHECK(a && a->value.type == PMIX_STATUS && a->value.data.status == PMIX_ERR_UNREACH,
              "no broker: namespaces");
        PMIX_INFO_FREE(r, n);
        pmix_proc_t *servers = NULL;
        size_t nservers = 9;
        CHECK(PMIx_tool_get_servers(&servers, &nservers) == PMIX_SUCCESS && nservers == 0,
              "no broker: %zu servers", nservers);
    } else if (strcmp(mode, "two") == 0) {
        pmix_proc_t me, second;
        pmix_info_t info;
        pid_t pid2 = (pid_t)atoi(argv[4]);
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid2, PMIX_PID);
        rc = PMIx_tool_attach_to_server(&me, &second, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        CHECK(rc == PMIX_SUCCESS, "attach: %s", PMIx_Error_string(rc));
        pmix_proc_t *servers = NULL;
        size_t nservers = 0;
        rc = PMIx_tool_get_servers(&servers, &nservers);
        CHECK(rc == PMIX_SUCCESS && nservers == 2, "%zu servers", nservers);
        if (nservers == 2) {
            CHECK(PMIX_CHECK_NSPACE(servers[1].nspace, second.nspace), "second server's name");
            check_namespaces(argv[3]); /* the first stays the primary */
            CHECK(PMIx_tool_set_server(&servers[1], NULL, 0) == PMIX_SUCCESS, "set_server");
            check_namespaces(argv[5]);
            CHECK(PMIx_tool_disconnect(&servers[1]) == PMIX_SUCCESS, "disconnect");
            check_namespaces(argv[3]); /* back on the first */
            PMIX_PROC_FREE(servers, nservers);
        }
    } else {
        check_job(argv[argc - 1]);
        check_attributes();
        if (strcmp(mode, "tcp") == 0) check_events_and_control(argv[argc - 1]);
    }
    rc = PMIx_tool_finalize();
    CHECK(rc == PMIX_SUCCESS, "PMIx_tool_finalize: %s", PMIx_Error_string(rc));
    if (failures == 0) printf("ok\n");
    return failures == 0 ? 0 : 1;
}
