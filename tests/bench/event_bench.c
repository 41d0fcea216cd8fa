/* The event benchmark: one standard-API PMIx program, built against zpmix and against another
 * PMIx implementation, run under each one's launcher with N >= 2 ranks.
 *     event_bench <rounds> <range>      range: custom | namespace | session | global
 * Rank 0 prints one line per figure: <figure> <value in microseconds>.
 *   event_rtt_median / _p99 (range custom only): rank 0 notifies an event whose custom range
 *     names rank 1; rank 1's handler notifies one back to rank 0 (custom range); the time from
 *     rank 0's PMIx_Notify_event to its handler seeing the answer.
 *   event_fanout_<range>_median / _p99: rank 0 notifies one event to ranks 1..N-1 (the custom
 *     range lists them; the other ranges name the whole job, rank 0 ignores its own copy); the
 *     time until all N-1 receivers have it: from rank 0's PMIx_Notify_event to the latest of the
 *     receivers' handler calls, each stamped with CLOCK_MONOTONIC (one clock on one node) and
 *     sent back to rank 0 in the receiver's answer event.
 *   event_fanout_acked_<range>_median: the same round until rank 0 has all N-1 answers, which
 *     adds the answers' hop back (made concurrently).
 * Every event carries PMIX_EVENT_DO_NOT_CACHE (they are ephemeral). Each round waits at most 5 s;
 * a round that gets no answer prints "hang" and the program exits with status 3. */
#include <pmix.h>

#include "bench_util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EV_PING = -7001, EV_PONG = -7002, EV_FAN = -7003, EV_ACK = -7004 };

static pmix_proc_t me;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int answers = 0;
static int wanted = 1;           /* the main thread is woken only once this many answers are in */
static double latest_recv = 0.0; /* the latest receiver's stamp among the answers */

static void check(pmix_status_t rc, const char *what) {
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "event_bench: %s failed: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

#define RECV_STAMP "bench.recv_us"

static void free_info(pmix_status_t status, void *cbdata) {
    (void)status;
    pmix_info_t *info = cbdata;
    PMIX_INFO_FREE(info, 3);
}

/* Notifies `code` to the `n` processes of `targets` (custom range), or to `range`; with a
 * receipt `stamp` (>= 0) for rank 0. */
static pmix_status_t notify(pmix_status_t code, pmix_data_range_t range, pmix_proc_t *targets,
                            size_t n, double stamp) {
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 3);
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_DO_NOT_CACHE, &yes, PMIX_BOOL);
    size_t ninfo = 1;
    if (range == PMIX_RANGE_CUSTOM) {
        pmix_data_array_t arr = {PMIX_PROC, n, targets};
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_EVENT_CUSTOM_RANGE, &arr, PMIX_DATA_ARRAY);
    }
    if (stamp >= 0) PMIX_INFO_LOAD(&info[ninfo++], RECV_STAMP, &stamp, PMIX_DOUBLE);
    /* non-blocking: handlers call this on the progress thread */
    return PMIx_Notify_event(code, &me, range, info, ninfo, free_info, info);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    const double got = now_us();
    pmix_proc_t root;
    PMIX_LOAD_PROCID(&root, me.nspace, 0);
    if (me.rank != 0 && status == EV_PING) {
        notify(EV_PONG, PMIX_RANGE_CUSTOM, &root, 1, -1);
    } else if (me.rank != 0 && status == EV_FAN) {
        notify(EV_ACK, PMIX_RANGE_CUSTOM, &root, 1, got);
    } else if (me.rank == 0 && (status == EV_PONG || status == EV_ACK)) {
        double stamp = 0.0;
        for (size_t i = 0; i < ninfo; ++i)
            if (PMIX_CHECK_KEY(&info[i], RECV_STAMP)) stamp = info[i].value.data.dval;
        pthread_mutex_lock(&mu);
        if (stamp > latest_recv) latest_recv = stamp;
        if (++answers >= wanted) pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits until `want` answers arrived (then resets the count and hands the latest receipt stamp
 * over in *stamp); 0 at the 5 s deadline. */
static int await_answers(int want, double *stamp) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&mu);
    wanted = want;
    int rc = 0;
    while (answers < want && rc == 0) rc = pthread_cond_timedwait(&cv, &mu, &until);
    int ok = answers >= want;
    answers -= ok ? want : 0;
    *stamp = latest_recv;
    latest_recv = 0.0;
    pthread_mutex_unlock(&mu);
    return ok;
}

static void hang(const char *what) {
    printf("hang %s\n", what);
    fflush(stdout);
    exit(3);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 500;
    const char *range_name = argc > 2 ? argv[2] : "custom";
    pmix_data_range_t range = PMIX_RANGE_CUSTOM;
    if (strcmp(range_name, "namespace") == 0) range = PMIX_RANGE_NAMESPACE;
    if (strcmp(range_name, "session") == 0) range = PMIX_RANGE_SESSION;
    if (strcmp(range_name, "global") == 0) range = PMIX_RANGE_GLOBAL;
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v), "PMIx_Get(job size)");
    int n = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    if (n < 2) {
        fprintf(stderr, "event_bench: needs at least 2 ranks\n");
        return 2;
    }
    pmix_status_t codes[] = {EV_PING, EV_PONG, EV_FAN, EV_ACK};
    if (PMIx_Register_event_handler(codes, 4, NULL, 0, handler, NULL, NULL) < 0) {
        fprintf(stderr, "event_bench: registration failed\n");
        return 1;
    }
    check(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence"); /* everyone is registered */

    if (me.rank == 0) {
        double *t = malloc(sizeof(double) * (size_t)rounds);
        double *acked = malloc(sizeof(double) * (size_t)rounds);
        double stamp;
        pmix_proc_t *peers = malloc(sizeof(pmix_proc_t) * (size_t)(n - 1));
        for (int r = 1; r < n; ++r) PMIX_LOAD_PROCID(&peers[r - 1], me.nspace, (pmix_rank_t)r);
        if (range == PMIX_RANGE_CUSTOM) {
            for (int i = 0; i < rounds; ++i) {
                double t0 = now_us();
                check(notify(EV_PING, PMIX_RANGE_CUSTOM, &peers[0], 1, -1), "notify");
                if (!await_answers(1, &stamp)) hang("rtt");
                t[i] = now_us() - t0;
            }
            printf("event_rtt_median %.2f\n", percentile(t, rounds, 0.5));
            printf("event_rtt_p99 %.2f\n", percentile(t, rounds, 0.99));
        }
        for (int i = 0; i < rounds; ++i) {
            double t0 = now_us();
            check(notify(EV_FAN, range, peers, (size_t)(n - 1), -1), "notify");
            if (!await_answers(n - 1, &stamp)) hang(range_name);
            acked[i] = now_us() - t0;
            t[i] = stamp - t0;
        }
        printf("event_fanout_%s_median %.2f\n", range_name, percentile(t, rounds, 0.5));
        printf("event_fanout_%s_p99 %.2f\n", range_name, percentile(t, rounds, 0.99));
        printf("event_fanout_acked_%s_median %.2f\n", range_name, percentile(acked, rounds, 0.5));
        fflush(stdout);
        free(peers);
        free(acked);
        free(t);
    }
    check(PMIx_Fence(NULL, 0, NULL, 0), "PMIx_Fence");
    PMIx_Finalize(NULL, 0);
    return 0;
}
