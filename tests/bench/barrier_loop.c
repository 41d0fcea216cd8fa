/* CPU per fence of the daemons that serve a job (tests/bench/run_nodes --cpu, run_model): N
 * PMIx_Fence over the job, data-less, or with CARD > 0 each after a Put+Commit of a card of CARD
 * bytes and collecting the data. Around the loop rank 0 prints "start" and "end" (flushed, for a
 * script to sample the launcher's CPU; with SYNC, a directory, it then waits up to 10 s for the
 * file SYNC/start, and SYNC/end, that the script makes once it has) and then
 *   rank_cpu <us of its own CPU per fence>
 *   fence_median <us: the median time of its fences>
 * and the first rank of each node prints
 *   daemon_cpu <host> <its parent's name> <us of CPU per fence>
 * its parent being the node's PMIx server (zpmix's broker, Open MPI's orted, slurmstepd): the CPU
 * time of all its threads during the loop (/proc/<ppid>/task/<tid>/schedstat), divided by N.
 *
 *   barrier_loop N [CARD [SYNC]] */
#define _GNU_SOURCE
#include <dirent.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The threads of process `pid` and their nanoseconds on a CPU (schedstat: finer than the
 * process's clock ticks), at most 256. */
struct threads {
    int n;
    int tid[256];
    unsigned long long ns[256];
};

static void sample(pid_t pid, struct threads *t) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    t->n = 0;
    DIR *d = opendir(path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && t->n < 256;) {
        if (e->d_name[0] == '.') continue;
        char stat[400];
        snprintf(stat, sizeof stat, "%s/%s/schedstat", path, e->d_name);
        FILE *f = fopen(stat, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1) {
            t->tid[t->n] = atoi(e->d_name);
            t->ns[t->n++] = ns;
        }
        if (f) fclose(f);
    }
    closedir(d);
}

/* What the threads alive at the end ran since the start (a thread that ended meanwhile is not
 * counted: the servers' threads live as long as the job). */
static unsigned long long ran(const struct threads *start, const struct threads *end) {
    unsigned long long sum = 0;
    for (int i = 0; i < end->n; ++i) {
        unsigned long long before = 0;
        for (int j = 0; j < start->n; ++j)
            if (start->tid[j] == end->tid[i]) before = start->ns[j];
        sum += end->ns[i] - before;
    }
    return sum;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Rank 0 tells the script a point of the run and waits (bounded) until it has sampled. */
static void mark(const char *what, const char *sync) {
    printf("%s\n", what);
    fflush(stdout);
    if (!sync) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", sync, what);
    const struct timespec ms = {0, 1000000};
    for (int i = 0; i < 10000 && access(path, F_OK) != 0; ++i) nanosleep(&ms, NULL);
}

static double own_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static pmix_status_t fence(size_t card) {
    if (card == 0) return PMIx_Fence(NULL, 0, NULL, 0);
    static char *bytes;
    if (!bytes) bytes = calloc(card, 1);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = bytes;
    v.data.bo.size = card;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "bench.loop", &v);
    if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) return rc;
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 1000;
    const size_t card = argc > 2 ? (size_t)atol(argv[2]) : 0;
    const char *sync = argc > 3 ? argv[3] : NULL;
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "barrier_loop: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_value_t *val = NULL;
    int first_on_node = 0;
    if (PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &val) == PMIX_SUCCESS && val) {
        first_on_node = val->data.uint16 == 0;
        PMIX_VALUE_RELEASE(val);
    }
    const pid_t server = getppid();
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "barrier_loop: PMIx_Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 0) mark("start", sync);
    /* Everyone starts once the script has sampled. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "barrier_loop: PMIx_Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    static struct threads before, after;
    if (first_on_node) sample(server, &before);
    const double mine = own_cpu_us();
    double *took = calloc(n > 0 ? n : 1, sizeof(double));
    for (int i = 0; i < n; ++i) {
        const double t0 = now_us();
        if ((rc = fence(card)) != PMIX_SUCCESS) {
            fprintf(stderr, "barrier_loop: PMIx_Fence: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        took[i] = now_us() - t0;
    }
    const double mine_per_fence = n > 0 ? (own_cpu_us() - mine) / n : 0;
    if (first_on_node) sample(server, &after);
    if (me.rank == 0) {
        mark("end", sync);
        qsort(took, n, sizeof *took, by_value);
        printf("rank_cpu %.2f\nfence_median %.2f\n", mine_per_fence, n > 0 ? took[n / 2] : 0);
        fflush(stdout);
    }
    if (first_on_node && n > 0) {
        char host[256] = "?", comm[64] = "?", path[64];
        gethostname(host, sizeof host);
        snprintf(path, sizeof path, "/proc/%d/comm", (int)server);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
        if (f) fclose(f);
        printf("daemon_cpu %s %s %.2f\n", host, comm, (double)ran(&before, &after) / 1e3 / n);
        fflush(stdout);
    }
    /* Everyone reports before anyone finalizes. */
    PMIx_Fence(NULL, 0, NULL, 0);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
