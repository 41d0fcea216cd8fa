/* I/O forwarding throughput: lines per second from the ranks of a job to one tool.
 *   iof_bench rank FILE LINES       a rank: rank 0 prints "nspace NS ready", every rank waits
 *                                   for FILE (at most 120 s), then writes LINES lines of 64
 *                                   bytes to stdout and finalizes
 *   iof_bench tool PID NS LINES NP  a tool attached to the launcher with pid PID: pulls NS's
 *                                   stdout, creates FILE (argv of the ranks: NS's release file,
 *                                   given as $IOF_BENCH_RELEASE), counts lines until NP * LINES
 *                                   arrived (at most 120 s) and prints the rate
 * tests/bench/run_iof runs it with 16 ranks. */
#include <pmix_tool.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long lines = 0;

static void handler(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                    pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)source, (void)info, (void)ninfo;
    long n = 0;
    for (size_t i = 0; i < payload->size; ++i) n += payload->bytes[i] == '\n';
    pthread_mutex_lock(&mu);
    lines += n;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int rank_main(const char *file, long n) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    if (me.rank == 0) {
        printf("nspace %s ready\n", me.nspace);
        fflush(stdout);
    }
    for (int i = 0; i < 12000 && access(file, F_OK) != 0; ++i) usleep(10000);
    for (long i = 0; i < n; ++i)
        printf("rank %5u line %10ld ......................................\n", me.rank, i);
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}

static int tool_main(pid_t pid, const char *nspace, long n, long np) {
    const char *release = getenv("IOF_BENCH_RELEASE");
    if (!release) return 2;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_proc_t me, all;
    if (PMIx_tool_init(&me, &info, 1) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&all, nspace, PMIX_RANK_WILDCARD);
    /* A queue that holds all of it: the rate of delivery, not of drops. */
    uint32_t cache = 64u << 20;
    pmix_info_t size;
    PMIX_INFO_LOAD(&size, PMIX_IOF_CACHE_SIZE, &cache, PMIX_UINT32);
    pmix_status_t rc =
        PMIx_IOF_pull(&all, 1, &size, 1, PMIX_FWD_STDOUT_CHANNEL, handler, NULL, NULL);
    if (rc <= 0) {
        fprintf(stderr, "pull: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    const long want = n * np + 1; /* and rank 0's "nspace ... ready", from the cache */
    const double t0 = now();
    close(open(release, O_CREAT | O_WRONLY, 0600));
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 120;
    pthread_mutex_lock(&mu);
    while (lines < want && pthread_cond_timedwait(&cv, &mu, &until) == 0) {
    }
    const long got = lines;
    pthread_mutex_unlock(&mu);
    const double dt = now() - t0;
    printf("iof: %ld ranks x %ld lines of 64 B to one tool: %ld lines in %.3f s = %.0f lines/s\n",
           np, n, got, dt, (double)got / dt);
    PMIx_IOF_deregister((size_t)rc, NULL, 0, NULL, NULL);
    PMIx_tool_finalize();
    return got == want ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "rank") == 0) return rank_main(argv[2], atol(argv[3]));
    if (argc == 6 && strcmp(argv[1], "tool") == 0)
        return tool_main((pid_t)atoi(argv[2]), argv[3], atol(argv[4]), atol(argv[5]));
    fprintf(stderr, "usage: iof_bench rank FILE LINES | tool PID NS LINES NP\n");
    return 2;
}
