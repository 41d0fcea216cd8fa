/* pset_prog: a rank that watches process sets. It registers for PMIX_PROCESS_SET_DEFINE and
 * PMIX_PROCESS_SET_DELETE and waits for the launch-time set "world" to be announced ("launch
 * define world members <ns:rank,...>"), prints "ready <nspace> <rank> names <its
 * PMIX_PSET_NAMES> psetname <its PMIX_PSET_NAME> <rank 0's>", then for each of the next two
 * events (define first, delete second, each waited for at most 60 s) prints "define <name>
 * members <ns:rank,...>" / "delete <name>" and its set names again: "names <rank>
 * <name,name|none>", and what PMIx_Query_info says of the sets: "query <rank> num <N> names
 * <name,name|-> first <members of 'first', or the status of that key>". */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int seen = 0; /* events handled so far, after the launch-time set's */
static char lines[2][1024];
static int launch_seen = 0; /* the launch-time set "world" announced */
static char launch_line[1024];

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    char name[256] = "?", members[512] = "";
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PSET_NAME) && info[i].value.type == PMIX_STRING)
            snprintf(name, sizeof name, "%s", info[i].value.data.string);
        if (PMIX_CHECK_KEY(&info[i], PMIX_PSET_MEMBERS) && info[i].value.type == PMIX_DATA_ARRAY &&
            info[i].value.data.darray->type == PMIX_PROC) {
            const pmix_proc_t *p = info[i].value.data.darray->array;
            for (size_t n = 0; n < info[i].value.data.darray->size; ++n) {
                char one[PMIX_MAX_NSLEN + 16];
                snprintf(one, sizeof one, "%s%s:%u", n ? "," : "", p[n].nspace, p[n].rank);
                strncat(members, one, sizeof members - strlen(members) - 1);
            }
        }
    }
    pthread_mutex_lock(&mu);
    if (!launch_seen && status == PMIX_PROCESS_SET_DEFINE && strcmp(name, "world") == 0) {
        snprintf(launch_line, sizeof launch_line, "launch define %s members %s", name, members);
        launch_seen = 1;
    } else if (seen < 2) {
        if (status == PMIX_PROCESS_SET_DEFINE)
            snprintf(lines[seen++], sizeof lines[0], "define %s members %s", name, members);
        else if (status == PMIX_PROCESS_SET_DELETE)
            snprintf(lines[seen++], sizeof lines[0], "delete %s", name);
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void names(const pmix_proc_t *me, char *out, size_t n) {
    pmix_value_t *v = NULL;
    snprintf(out, n, "none");
    if (PMIx_Get(me, PMIX_PSET_NAMES, NULL, 0, &v) != PMIX_SUCCESS) return;
    if (v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_STRING) {
        char **s = v->data.darray->array;
        out[0] = '\0';
        for (size_t i = 0; i < v->data.darray->size; ++i) {
            strncat(out, i ? "," : "", n - strlen(out) - 1);
            strncat(out, s[i], n - strlen(out) - 1);
        }
    }
    PMIX_VALUE_RELEASE(v);
}

/* The info `key` among the results of one query (at the top level, one per key), or NULL. */
static const pmix_info_t *answer(const pmix_info_t *results, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], key)) return &results[i];
    return NULL;
}

static void query(unsigned rank) {
    char out[1024] = "";
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND_UNIQUE(q.nqual, q.keys, PMIX_QUERY_NUM_PSETS);
    PMIX_ARGV_APPEND_UNIQUE(q.nqual, q.keys, PMIX_QUERY_PSET_NAMES);
    PMIX_ARGV_APPEND_UNIQUE(q.nqual, q.keys, PMIX_QUERY_PSET_MEMBERSHIP);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_PSET_NAME, "first", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &results, &n);
    const pmix_info_t *num = answer(results, n, PMIX_QUERY_NUM_PSETS);
    const pmix_info_t *names = answer(results, n, PMIX_QUERY_PSET_NAMES);
    const pmix_info_t *first = answer(results, n, PMIX_QUERY_PSET_MEMBERSHIP);
    snprintf(out, sizeof out, "query %u rc %d num %zu names %s first ", rank, rc,
             num && num->value.type == PMIX_SIZE ? num->value.data.size : (size_t)999,
             names && names->value.type == PMIX_STRING && names->value.data.string[0]
                 ? names->value.data.string
                 : "-");
    if (first && first->value.type == PMIX_DATA_ARRAY &&
        first->value.data.darray->type == PMIX_PROC) {
        const pmix_proc_t *p = first->value.data.darray->array;
        for (size_t i = 0; i < first->value.data.darray->size; ++i) {
            char one[PMIX_MAX_NSLEN + 16];
            snprintf(one, sizeof one, "%s%s:%u", i ? "," : "", p[i].nspace, p[i].rank);
            strncat(out, one, sizeof out - strlen(out) - 1);
        }
    } else {
        char st[32];
        snprintf(st, sizeof st, "status:%d",
                 first && first->value.type == PMIX_STATUS ? first->value.data.status : 1);
        strncat(out, st, sizeof out - strlen(out) - 1);
    }
    printf("%s\n", out);
    if (results) PMIX_INFO_FREE(results, n);
    PMIX_QUERY_DESTRUCT(&q);
}

/* PMIx_Get(proc, PMIX_PSET_NAME): the name, or "status:<rc>". */
static void pset_name(const pmix_proc_t *proc, char *out, size_t size) {
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, PMIX_PSET_NAME, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_STRING)
        snprintf(out, size, "%s", v->data.string);
    else
        snprintf(out, size, "status:%d", rc == PMIX_SUCCESS ? 1 : rc);
    if (v) PMIX_VALUE_RELEASE(v);
}

int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 90;
    pmix_status_t codes[] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};
    if (PMIx_Register_event_handler(codes, 2, NULL, 0, on_event, NULL, NULL) < 0) return 91;
    /* The set given at launch is announced as a definition is (60 s at most). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&mu);
    while (!launch_seen && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    printf("%s\n", launch_seen ? launch_line : "launch none");
    pthread_mutex_unlock(&mu);
    char buf[1024];
    names(&me, buf, sizeof buf);
    /* Each rank's PMIX_PSET_NAME, as Open MPI's MPI_Session_get_pset_info reads it: its own, and
     * rank 0's. */
    char own[PMIX_MAX_NSLEN + 1], first[PMIX_MAX_NSLEN + 1];
    pmix_proc_t rank0 = me;
    rank0.rank = 0;
    pset_name(&me, own, sizeof own);
    pset_name(&rank0, first, sizeof first);
    printf("ready %s %u names %s psetname %s %s\n", me.nspace, me.rank, buf, own, first);
    fflush(stdout);
    for (int k = 0; k < 2; ++k) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&mu);
        int rc = 0;
        while (seen <= k && rc == 0) rc = pthread_cond_timedwait(&cv, &mu, &until);
        const int got = seen > k;
        pthread_mutex_unlock(&mu);
        if (!got) return 92;
        names(&me, buf, sizeof buf);
        printf("%s\nnames %u %s\n", lines[k], me.rank, buf);
        query(me.rank);
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
