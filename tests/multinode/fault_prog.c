/* A rank of test_faults_across.sh. On node $FAULT_VICTIM (whose broker the test kills) it says
 * "victim up" and sleeps. Elsewhere it registers for the events of a lost rank, says "up", and
 * blocks: even ranks in a fence over the whole job, odd ranks in a Get of a key the victims never
 * put. When the call returns it prints "rank R fence|get STATUS", and each event it gets as
 * "rank R event STATUS AFFECTED,RANKS"; it exits once it has the call's result and the events of
 * every rank on the victim node (or after 20 s). It ignores SIGTERM, so that the job's end does
 * not cut its report short (the launcher's SIGKILL after the grace period still bounds it). */
#define _GNU_SOURCE
#include <pmix.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int events_seen; /* NODE_DOWN, then one TERM_WO_SYNC and one PROC_TERMINATED per victim */
static pmix_rank_t me;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    char ranks[256] = "";
    for (size_t i = 0; i < ninfo; ++i) {
        if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0) {
            snprintf(ranks, sizeof ranks, "%u", info[i].value.data.proc->rank);
        } else if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROCS) == 0) {
            const pmix_data_array_t *a = info[i].value.data.darray;
            const pmix_proc_t *p = a->array;
            size_t len = 0;
            for (size_t k = 0; k < a->size && len < sizeof ranks - 12; ++k)
                len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%u", k ? "," : "",
                                        p[k].rank);
        }
    }
    pthread_mutex_lock(&mu);
    printf("rank %u event %s %s\n", me, PMIx_Error_string(status), ranks);
    fflush(stdout);
    ++events_seen;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(void) {
    signal(SIGTERM, SIG_IGN);
    pmix_proc_t self;
    if (PMIx_Init(&self, NULL, 0) != PMIX_SUCCESS) return 10;
    me = self.rank;
    char host[256] = "";
    gethostname(host, sizeof host);
    const char *victim = getenv("FAULT_VICTIM");
    if (victim && strcmp(host, victim) == 0) {
        printf("victim up\n");
        fflush(stdout);
        for (;;) pause();
    }
    int victims = 0; /* ranks on the victim node */
    pmix_proc_t wild = self;
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = NULL;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS) return 11;
    const uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p = self;
        p.rank = r;
        if (PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v) != PMIX_SUCCESS) return 12;
        victims += victim && strcmp(v->data.string, victim) == 0;
        PMIX_VALUE_RELEASE(v);
    }
    pmix_status_t codes[] = {PMIX_EVENT_NODE_DOWN, PMIX_ERR_PROC_TERM_WO_SYNC,
                             PMIX_EVENT_PROC_TERMINATED};
    if (PMIx_Register_event_handler(codes, 3, NULL, 0, handler, NULL, NULL) < 0) return 13;
    printf("up\n");
    fflush(stdout);

    pmix_status_t rc;
    const char *call;
    if (me % 2 == 0) {
        call = "fence";
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    } else {
        /* a rank of the victim node: the last one */
        pmix_proc_t p = self;
        p.rank = size - 1;
        call = "get";
        rc = PMIx_Get(&p, "fault.never", NULL, 0, &v);
    }
    pthread_mutex_lock(&mu);
    printf("rank %u %s %s\n", me, call, PMIx_Error_string(rc));
    fflush(stdout);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (events_seen < 1 + 2 * victims)
        if (pthread_cond_timedwait(&cv, &mu, &until) != 0) break;
    pthread_mutex_unlock(&mu);
    _exit(0); /* the job is failing: no Finalize (its broker may be ending it) */
}
