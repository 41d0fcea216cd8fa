/* connect_prog MODE [TIMEOUT]: PMIx_Connect/Disconnect between a job and the job it spawns.
 * Every rank puts "conn.card" = "<nspace-role>-<rank>" and commits. Rank 0 of the parent job
 * spawns 2 ranks of this program ("connect_prog child:MODE"), and hands the child's namespace to
 * its peers by a collecting fence ("conn.child"). Then every rank of both jobs (unless MODE says
 * otherwise) connects over {parent:*, child:*} with PMIX_TIMEOUT TIMEOUT (seconds, default 20),
 * prints
 *   "<role> <rank> connect <status> size <other job's PMIX_JOB_SIZE> card <other rank 0's card>"
 * then disconnects and prints "<role> <rank> disconnect <status>"; in mode ok the parent's rank 0
 * then waits for the child job's end (PMIX_NOTIFY_COMPLETION) before it finalizes. MODE:
 *   ok      both sides connect (the child with PMIx_Connect_nb/PMIx_Disconnect_nb)
 *   absent  the child's ranks never connect (they wait for their job to be ended: spawned with
 *           PMIX_SPAWN_CHILD_SEP false, the parent job's end ends it)
 *   die     the child's ranks exit before connecting */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int nb_done = 0;
static pmix_status_t nb_status;

static void on_op(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&mu);
    nb_status = status;
    nb_done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* Rank 0 of the parent job in mode ok: whether the child job ended (PMIX_NOTIFY_COMPLETION). */
static int child_ended = 0;

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    child_ended = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (at most 60 s) for the non-blocking call's callback. */
static pmix_status_t wait_nb(pmix_status_t rc) {
    if (rc != PMIX_SUCCESS) return rc;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&mu);
    int err = 0;
    while (!nb_done && err == 0) err = pthread_cond_timedwait(&cv, &mu, &until);
    rc = nb_done ? nb_status : PMIX_ERR_TIMEOUT;
    nb_done = 0;
    pthread_mutex_unlock(&mu);
    return rc;
}

static void put_string(const char *key, const char *value) {
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, value, PMIX_STRING);
    PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
}

static void get_string(const pmix_proc_t *p, const char *key, char *out, size_t n) {
    pmix_value_t *v = NULL;
    snprintf(out, n, "none");
    if (PMIx_Get(p, key, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_STRING) snprintf(out, n, "%s", v->data.string);
        PMIX_VALUE_RELEASE(v);
    }
}

static unsigned job_size(const char *nspace) {
    pmix_proc_t job;
    pmix_value_t *v = NULL;
    unsigned out = 9999;
    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_UINT32) out = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    return out;
}

/* Connects and disconnects over both jobs, printing the outcome. */
static void connect_both(const pmix_proc_t *me, const char *role, const char *other_ns, int timeout,
                         int nb) {
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me->nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], other_ns, PMIX_RANK_WILDCARD);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc = nb ? wait_nb(PMIx_Connect_nb(procs, 2, &info, 1, on_op, NULL))
                          : PMIx_Connect(procs, 2, &info, 1);
    char card[256] = "none";
    unsigned size = 0;
    if (rc == PMIX_SUCCESS) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, other_ns, 0);
        get_string(&peer, "conn.card", card, sizeof card);
        size = job_size(other_ns);
    }
    printf("%s %u connect %s size %u card %s\n", role, me->rank, PMIx_Error_string(rc), size, card);
    fflush(stdout);
    if (rc != PMIX_SUCCESS) return;
    rc = nb ? wait_nb(PMIx_Disconnect_nb(procs, 2, &info, 1, on_op, NULL))
            : PMIx_Disconnect(procs, 2, &info, 1);
    printf("%s %u disconnect %s\n", role, me->rank, PMIx_Error_string(rc));
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    int timeout = argc > 2 ? atoi(argv[2]) : 20;
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 90;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    char card[128];
    const int child = strncmp(mode, "child:", 6) == 0;
    snprintf(card, sizeof card, "%s-%u", child ? "child" : "parent", me.rank);
    put_string("conn.card", card);
    PMIx_Commit();

    if (child) {
        mode += 6;
        pmix_value_t *v = NULL;
        if (PMIx_Get(&job, PMIX_PARENT_ID, NULL, 0, &v) != PMIX_SUCCESS) return 91;
        char parent[PMIX_MAX_NSLEN + 1];
        PMIX_LOAD_NSPACE(parent, v->data.proc->nspace);
        PMIX_VALUE_RELEASE(v);
        if (strcmp(mode, "die") == 0) {
            /* Ends cleanly (a rank that left without PMIx_Finalize would fail its job), but
             * never joins the connect its parents wait in. */
            PMIx_Finalize(NULL, 0);
            _exit(0);
        }
        if (strcmp(mode, "absent") == 0) {
            sleep(120); /* the parent's end ends this job (PMIX_SPAWN_CHILD_SEP false) */
            return 0;
        }
        connect_both(&me, "child", parent, timeout, 1);
        PMIx_Finalize(NULL, 0);
        return 0;
    }

    char child_ns[PMIX_MAX_NSLEN + 1] = "";
    if (me.rank == 0) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(argv[0]);
        char arg[64];
        snprintf(arg, sizeof arg, "child:%s", mode);
        char *cargv[] = {argv[0], arg, argc > 2 ? argv[2] : NULL, NULL};
        PMIX_ARGV_COPY(app.argv, cargv);
        app.maxprocs = 2;
        pmix_status_t end = PMIX_EVENT_JOB_END;
        PMIx_Register_event_handler(&end, 1, NULL, 0, on_job_end, NULL, NULL);
        bool yes = true, no = false;
        pmix_info_t notify[2];
        PMIX_INFO_LOAD(&notify[0], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
        /* absent: the child is ended with its parent job, though that ends normally */
        PMIX_INFO_LOAD(&notify[1], PMIX_SPAWN_CHILD_SEP, &no, PMIX_BOOL);
        pmix_status_t rc =
            PMIx_Spawn(notify, strcmp(mode, "absent") == 0 ? 2 : 1, &app, 1, child_ns);
        PMIX_APP_DESTRUCT(&app);
        if (rc != PMIX_SUCCESS) {
            printf("spawn %s\n", PMIx_Error_string(rc));
            return 3;
        }
        put_string("conn.child", child_ns);
        PMIx_Commit();
    }
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    if (PMIx_Fence(&job, 1, &collect, 1) != PMIX_SUCCESS) return 4;
    pmix_proc_t zero;
    PMIX_LOAD_PROCID(&zero, me.nspace, 0);
    get_string(&zero, "conn.child", child_ns, sizeof child_ns);
    connect_both(&me, "parent", child_ns, timeout, 0);
    if (me.rank == 0 && strcmp(mode, "ok") == 0) {
        /* Rank 0 hears of the child job's end (PMIX_NOTIFY_COMPLETION) before it finalizes. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&mu);
        while (!child_ended && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
        }
        pthread_mutex_unlock(&mu);
        if (!child_ended) printf("parent 0: the child job did not end\n");
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
