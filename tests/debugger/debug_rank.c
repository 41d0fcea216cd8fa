/* A rank for tests/debugger: `debug_rank DIR`. PMIx_Init (which returns only once the debugger
 * released the job, when it was started with PMIX_DEBUG_STOP_IN_INIT), then DIR/up.<rank> with
 * "init=I app=A exec=E value=V": whether the job information says PMIX_DEBUG_STOP_IN_INIT,
 * _STOP_IN_APP and _STOP_ON_EXEC, and zpmix_debug_value. With
 * STOP_IN_APP the rank waits for PMIX_DEBUGGER_RELEASE itself (30 s at most) before writing.
 * zpmix_debug_value is what a debugger reads. As a debugger daemon (its job information has
 * PMIX_DEBUG_TARGET), it writes DIR/daemon.<rank> instead: "TARGET-NSPACE R1 R2 ... node_rank=N
 * job=NSPACE", the target's ranks on this node, its own PMIX_NODE_RANK and PMIX_DEBUG_JOB; with
 * `debug_rank DIR release`, it then releases its target as OpenPMIx's debuggerd example does. */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

volatile int zpmix_debug_value = 4242;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released = 0;

static void on_release(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int job_flag(const pmix_proc_t *job, const char *key) {
    pmix_value_t *v = NULL;
    int set =
        PMIx_Get(job, key, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_BOOL && v->data.flag;
    if (v) PMIX_VALUE_RELEASE(v);
    return set;
}

static int write_file(const char *dir, const char *what, unsigned rank, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%u", dir, what, rank);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fputs(text, f);
    return fclose(f) != 0;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) return 2;
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    char text[4096] = "";
    int failed = 0;
    pmix_value_t *target = NULL;
    if (PMIx_Get(&job, PMIX_DEBUG_TARGET, NULL, 0, &target) == PMIX_SUCCESS &&
        target->type == PMIX_PROC) {
        pmix_value_t *host = NULL;
        pmix_proc_t *peers = NULL;
        size_t npeers = 0;
        failed = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &host) != PMIX_SUCCESS ||
                 PMIx_Resolve_peers(host->data.string, target->data.proc->nspace, &peers,
                                    &npeers) != PMIX_SUCCESS;
        size_t len = (size_t)snprintf(text, sizeof text, "%s", target->data.proc->nspace);
        for (size_t i = 0; !failed && i < npeers && len < sizeof text; ++i)
            len += (size_t)snprintf(text + len, sizeof text - len, " %u", peers[i].rank);
        pmix_value_t *node_rank = NULL;
        failed = failed || PMIx_Get(&me, PMIX_NODE_RANK, NULL, 0, &node_rank) != PMIX_SUCCESS;
        if (!failed && len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, " node_rank=%u",
                                    node_rank->data.uint16);
        /* The target's namespace as OpenPMIx's debuggerd example reads it. */
        pmix_value_t *debug_job = NULL;
        if (PMIx_Get(&job, PMIX_DEBUG_JOB, NULL, 0, &debug_job) == PMIX_SUCCESS &&
            debug_job->type == PMIX_STRING && len < sizeof text)
            snprintf(text + len, sizeof text - len, " job=%s", debug_job->data.string);
        if (debug_job) PMIX_VALUE_RELEASE(debug_job);
        if (node_rank) PMIX_VALUE_RELEASE(node_rank);
        if (peers) PMIX_PROC_FREE(peers, npeers);
        if (host) PMIX_VALUE_RELEASE(host);
        failed = failed || write_file(argv[1], "daemon", me.rank, text);
        if (argc == 3 && strcmp(argv[2], "release") == 0) {
            /* As OpenPMIx's debuggerd example: PMIX_RANGE_LOCAL, the target as the custom range. */
            pmix_info_t to;
            pmix_proc_t all;
            PMIX_LOAD_PROCID(&all, target->data.proc->nspace, PMIX_RANK_WILDCARD);
            PMIX_INFO_LOAD(&to, PMIX_EVENT_CUSTOM_RANGE, &all, PMIX_PROC);
            failed = failed || PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_LOCAL, &to,
                                                 1, NULL, NULL) != PMIX_SUCCESS;
            PMIX_INFO_DESTRUCT(&to);
        }
    } else {
        const int app = job_flag(&job, PMIX_DEBUG_STOP_IN_APP);
        if (app) { /* the application's own stop: wait for the release */
            pmix_status_t code = PMIX_DEBUGGER_RELEASE;
            if (PMIx_Register_event_handler(&code, 1, NULL, 0, on_release, NULL, NULL) < 0)
                failed = 1;
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 30;
            pthread_mutex_lock(&mu);
            while (!released && !failed)
                if (pthread_cond_timedwait(&cv, &mu, &until) != 0) failed = 1;
            pthread_mutex_unlock(&mu);
        }
        snprintf(text, sizeof text, "init=%d app=%d exec=%d value=%d",
                 job_flag(&job, PMIX_DEBUG_STOP_IN_INIT), app,
                 job_flag(&job, PMIX_DEBUG_STOP_ON_EXEC), zpmix_debug_value);
        failed = failed || write_file(argv[1], "up", me.rank, text);
    }
    if (target) PMIX_VALUE_RELEASE(target);
    PMIx_Finalize(NULL, 0);
    return failed;
}
