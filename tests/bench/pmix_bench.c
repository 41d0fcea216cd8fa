/* The wire-up benchmark: one standard-API PMIx program, built against zpmix and against another
 * PMIx implementation, run under each one's launcher. Rank 0 prints one line per figure:
 *   <figure> <value in microseconds>
 * Figures: init (time inside PMIx_Init), fence_barrier median/p99, fence_collect_64 and
 * fence_collect_4k medians (PMIX_COLLECT_DATA after a Put+Commit of a card of that size),
 * get_job (PMIx_Get of a cached job-level key), get_remote (PMIx_Get of a peer's card after a
 * collecting fence), get_first median/p99 (the first PMIx_Get of a peer's new key after a
 * data-less fence: the next rank's, on the same node when it is there), get_first_remote
 * median/p99 (the same of a rank on another node: the first after rank 0 that is not among its
 * PMIX_LOCAL_PEERS; only when the job spans nodes). */
#include <pmix.h>

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(pmix_status_t rc, const char *what) {
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmix_bench: %s failed: %s\n", what, PMIx_Error_string(rc));
        exit(1);
    }
}

static pmix_proc_t me;

/* The first rank after mine (cyclically) that is not on my node, per PMIX_LOCAL_PEERS; -1 if
 * every rank is. */
static long remote_peer(uint32_t size) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val) != PMIX_SUCCESS || !val) return -1;
    char *local = calloc(size, 1);
    if (val->type == PMIX_STRING && val->data.string) {
        char *list = strdup(val->data.string), *save = NULL;
        for (char *r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
            const unsigned long n = strtoul(r, NULL, 10);
            if (n < size) local[n] = 1;
        }
        free(list);
    }
    PMIX_VALUE_RELEASE(val);
    long found = -1;
    for (uint32_t i = 1; i < size && found < 0; ++i)
        if (!local[(me.rank + i) % size]) found = (long)((me.rank + i) % size);
    free(local);
    return found;
}

static void fence(int collect) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    check(PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0), "PMIx_Fence");
    PMIX_INFO_DESTRUCT(&info);
}

/* Median (and p99) of `iters` fences; with card > 0 every rank puts a card of that size first. */
static void time_fences(const char *name, int iters, size_t card, int report_p99) {
    double *t = malloc(sizeof(double) * iters);
    char *buf = malloc(card + 1);
    for (int i = 0; i < iters; ++i) {
        if (card > 0) {
            pmix_value_t v;
            memset(buf, 'a' + (i % 26), card);
            buf[card] = '\0';
            v.type = PMIX_BYTE_OBJECT;
            v.data.bo.bytes = buf;
            v.data.bo.size = card;
            check(PMIx_Put(PMIX_GLOBAL, "bench.card", &v), "PMIx_Put");
            check(PMIx_Commit(), "PMIx_Commit");
        }
        double t0 = now_us();
        fence(card > 0);
        t[i] = now_us() - t0;
    }
    if (me.rank == 0) {
        printf("%s_median %.2f\n", name, percentile(t, iters, 0.5));
        if (report_p99) printf("%s_p99 %.2f\n", name, percentile(t, iters, 0.99));
    }
    free(buf);
    free(t);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    double t0 = now_us();
    check(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    double t_init = now_us() - t0;

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get(job size)");
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    fence(0); /* warm up and line everyone up */
    pmix_proc_t peer, far;
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
    const long far_rank = remote_peer(size);
    PMIX_LOAD_PROCID(&far, me.nspace, far_rank < 0 ? 0 : (pmix_rank_t)far_rank);
    /* The first Get of a peer's key after a data-less fence (direct modex), a new key each time
     * so that nothing is cached; before any collecting fence, after which a client may hold all
     * of a peer's data and not ask at all. Then the same of a rank on another node. */
    /* A server whose direct modex does not find such a key (Slurm 22.05's, now and then) leaves
     * this figure out; every rank still makes every fence, so that the rest goes on. */
    int firsts = iters / 4 + 1, got = 0, got_far = 0;
    double *f = malloc(sizeof(double) * firsts), *ff = malloc(sizeof(double) * firsts);
    for (int i = 0; i < firsts; ++i) {
        char key[32];
        pmix_value_t v;
        snprintf(key, sizeof key, "bench.k%d", i);
        PMIX_VALUE_LOAD(&v, key, PMIX_STRING);
        check(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put");
        PMIX_VALUE_DESTRUCT(&v);
        check(PMIx_Commit(), "PMIx_Commit");
        fence(0);
        if (got == i) {
            double s = now_us();
            const pmix_status_t rc = PMIx_Get(&peer, key, NULL, 0, &val);
            f[i] = now_us() - s;
            if (rc == PMIX_SUCCESS) {
                PMIX_VALUE_RELEASE(val);
                ++got;
            } else {
                fprintf(stderr,
                        "pmix_bench: rank %u: the first Get of a peer's new key failed (%s): "
                        "get_first is not measured\n",
                        me.rank, PMIx_Error_string(rc));
            }
        }
        if (far_rank >= 0 && got_far == i) {
            double s = now_us();
            const pmix_status_t rc = PMIx_Get(&far, key, NULL, 0, &val);
            ff[i] = now_us() - s;
            if (rc == PMIX_SUCCESS) {
                PMIX_VALUE_RELEASE(val);
                ++got_far;
            } else {
                fprintf(stderr,
                        "pmix_bench: rank %u: the first Get of rank %ld's new key failed (%s): "
                        "get_first_remote is not measured\n",
                        me.rank, far_rank, PMIx_Error_string(rc));
            }
        }
    }
    time_fences("fence_barrier", iters, 0, 1);
    time_fences("fence_collect_64", iters / 4 + 1, 64, 0);
    time_fences("fence_collect_4k", iters / 4 + 1, 4096, 0);

    /* Cached job-level Get, many times: the median of batches of 100. */
    enum { batches = 200, per = 100 };
    double g[batches];
    for (int b = 0; b < batches; ++b) {
        double s = now_us();
        for (int i = 0; i < per; ++i) {
            check(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "PMIx_Get");
            PMIX_VALUE_RELEASE(val);
        }
        g[b] = (now_us() - s) / per;
    }
    /* A peer's card after the collecting fences above. */
    double r[batches];
    for (int b = 0; b < batches; ++b) {
        double s = now_us();
        for (int i = 0; i < per; ++i) {
            check(PMIx_Get(&peer, "bench.card", NULL, 0, &val), "PMIx_Get(card)");
            PMIX_VALUE_RELEASE(val);
        }
        r[b] = (now_us() - s) / per;
    }
    if (me.rank == 0) {
        printf("init %.2f\n", t_init);
        printf("get_job_median %.3f\n", percentile(g, batches, 0.5));
        printf("get_remote_median %.3f\n", percentile(r, batches, 0.5));
        if (got == firsts) {
            printf("get_first_median %.2f\n", percentile(f, firsts, 0.5));
            printf("get_first_p99 %.2f\n", percentile(f, firsts, 0.99));
        }
        if (far_rank >= 0 && got_far == firsts) {
            printf("get_first_remote_median %.2f\n", percentile(ff, firsts, 0.5));
            printf("get_first_remote_p99 %.2f\n", percentile(ff, firsts, 0.99));
        }
    }
    free(f);
    free(ff);
    fence(0);
    check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
