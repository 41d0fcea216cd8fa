/* A PMIx program for the event integration tests. argv[1] is the scenario:
 *   listen   register a default handler (and one for environment events), print "ready", then
 *            record every event code until code -9999 arrives and print them:
 *            "rank <rank> got <code> <code> ... -9999 end" (events after -9999 are not recorded)
 *   notify   like listen, but rank 0 first notifies -500 to its namespace and -501 globally, and
 *            prints "ready" once it got -501 back: the broker published both, so an event the
 *            test sends after "ready" comes after them (a return from PMIx_Notify_event only
 *            says the broker's socket has them, and the broker reads its sockets in any order)
 *   slow F   like listen, but the first handler call blocks until a byte can be read from the
 *            FIFO F (at most 20 s): the test releases it once the other processes are done
 *   exit     also registers for PMIX_EVENT_PROC_TERMINATED (not given to default handlers);
 *            rank 1 exits after every rank registered; the others print what they got up to
 *            PMIX_EVENT_PROC_TERMINATED and "affected <rank>"
 *   abort    rank 1 calls PMIx_Abort(7) after every rank registered; the others (SIGTERM
 *            ignored, so that the job's termination does not race the event) print what they
 *            got up to PMIX_ERR_PROC_REQUESTED_ABORT, "affected <rank>" and "exit_code <n>"
 *   lost D   print "ready"; rank 0 then waits in a fence that rank 1 never joins. When the
 *            broker dies, each rank writes "event <code> call <status>" to D/<rank>.out (the
 *            lost-connection event seen by the default handler, and the fence's status)
 *   hybrid   declare a second programming model in this process: "model <name>"
 * Every wait is bounded (20 s): a missing event fails the test instead of hanging it. */
#include <fcntl.h>
#include <pmix.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int codes[256];
static int ncodes = 0;
static int done = 0;
static pmix_status_t done_code = -9999;
static const char *fifo = NULL;
static char model[128] = "";
static int affected = -1;
static int exit_code = -1;
static pmix_proc_t me;

static void wait_fifo(void) {
    int fd = open(fifo, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 20000) == 1) {
        char c;
        (void)!read(fd, &c, 1);
    }
    close(fd);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    if (fifo != NULL) {
        wait_fifo();
        fifo = NULL; /* only the first call waits */
    }
    pthread_mutex_lock(&mu);
    if (status == PMIX_MODEL_DECLARED) {
        for (size_t i = 0; i < ninfo; ++i)
            if (strcmp(info[i].key, PMIX_PROGRAMMING_MODEL) == 0)
                snprintf(model, sizeof model, "%s", info[i].value.data.string);
    }
    if (!done) {
        if (ncodes < 256) codes[ncodes++] = status;
        if (status == done_code) {
            done = 1;
            for (size_t i = 0; i < ninfo; ++i) {
                if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0)
                    affected = (int)info[i].value.data.proc->rank;
                if (strcmp(info[i].key, PMIX_EXIT_CODE) == 0)
                    exit_code = info[i].value.data.integer;
            }
        }
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int wait_for(int (*pred)(void)) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!pred() && rc == 0) rc = pthread_cond_timedwait(&cv, &mu, &until);
    int ok = pred();
    pthread_mutex_unlock(&mu);
    return ok;
}
static int is_done(void) {
    return done;
}
static int has_501(void) {
    for (int i = 0; i < ncodes; ++i)
        if (codes[i] == -501) return 1;
    return 0;
}
static int has_model(void) {
    return model[0] != 0;
}

static void print_codes(void) {
    pthread_mutex_lock(&mu);
    printf("rank %u got", me.rank); /* the rank: under a host, every rank's lines are mixed */
    for (int i = 0; i < ncodes; ++i) printf(" %d", codes[i]);
    printf(" end\n");
    if (affected >= 0) printf("affected %d\n", affected);
    if (exit_code >= 0) printf("exit_code %d\n", exit_code);
    fflush(stdout);
    pthread_mutex_unlock(&mu);
}

static int reg(pmix_status_t *c, size_t n, int enviro) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    int t = 1;
    PMIx_Info_load(&info, "pmix.evenv", &t, PMIX_BOOL);
    int rc = PMIx_Register_event_handler(c, n, enviro ? &info : NULL, enviro ? 1 : 0, handler, NULL,
                                         NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static int lost(const char *dir) {
    signal(SIGPIPE, SIG_IGN); /* our stdout goes to the broker, which is about to die */
    done_code = PMIX_ERR_LOST_CONNECTION;
    if (reg(NULL, 0, 0) < 0) return 11;
    printf("ready\n");
    fflush(stdout);
    pmix_status_t call = PMIX_SUCCESS;
    if (me.rank == 0) call = PMIx_Fence(NULL, 0, NULL, 0); /* rank 1 never joins */
    int seen = wait_for(is_done);
    char path[4096];
    snprintf(path, sizeof path, "%s/%u.tmp", dir, me.rank);
    FILE *f = fopen(path, "w");
    if (f == NULL) return 18;
    fprintf(f, "event %d call %d\n", seen ? codes[ncodes - 1] : 0, call);
    fclose(f);
    char final[4096];
    snprintf(final, sizeof final, "%s/%u.out", dir, me.rank);
    rename(path, final); /* the test watches for the complete file */
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "listen";
    if (strcmp(mode, "slow") == 0) fifo = argc > 2 ? argv[2] : NULL;
    if (strcmp(mode, "abort") == 0) signal(SIGTERM, SIG_IGN);
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    if (strcmp(mode, "lost") == 0) return lost(argc > 2 ? argv[2] : ".");
    if (strcmp(mode, "hybrid") == 0) {
        pmix_status_t code = PMIX_MODEL_DECLARED;
        if (reg(&code, 1, 0) < 0) return 11;
        pmix_info_t info;
        PMIX_INFO_CONSTRUCT(&info);
        PMIx_Info_load(&info, PMIX_PROGRAMMING_MODEL, "OpenMP", PMIX_STRING);
        pmix_proc_t again;
        pmix_status_t rc = PMIx_Init(&again, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) return 12;
        if (!wait_for(has_model)) return 13;
        printf("model %s\n", model);
        PMIx_Finalize(NULL, 0);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "exit") == 0) done_code = PMIX_EVENT_PROC_TERMINATED;
    if (strcmp(mode, "abort") == 0) done_code = PMIX_ERR_PROC_REQUESTED_ABORT;
    int rr = reg(NULL, 0, 0);
    if (rr < 0) {
        fprintf(stderr, "registration failed: %d\n", rr);
        return 11;
    }
    if (reg(NULL, 0, 1) < 0) return 11; /* environment events */
    if (strcmp(mode, "exit") == 0) {    /* a rank's normal end reaches only handlers asking */
        pmix_status_t code = PMIX_EVENT_PROC_TERMINATED;
        if (reg(&code, 1, 0) < 0) return 11;
    }
    if (strcmp(mode, "notify") == 0 && me.rank == 0) {
        if (PMIx_Notify_event(-500, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL) != PMIX_SUCCESS)
            return 14;
        if (PMIx_Notify_event(-501, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) != PMIX_SUCCESS)
            return 14;
        /* a custom range naming nobody cannot be routed: refused here, sent nowhere */
        pmix_info_t nobody;
        pmix_data_array_t empty = {PMIX_PROC, 0, NULL};
        PMIX_INFO_LOAD(&nobody, PMIX_EVENT_CUSTOM_RANGE, &empty, PMIX_DATA_ARRAY);
        pmix_status_t refused =
            PMIx_Notify_event(-502, &me, PMIX_RANGE_CUSTOM, &nobody, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&nobody);
        if (refused != PMIX_ERR_BAD_PARAM) return 17;
        if (!wait_for(has_501)) return 19;
    }
    printf("ready\n");
    fflush(stdout);
    if (strcmp(mode, "exit") == 0 || strcmp(mode, "abort") == 0) {
        /* everyone registered before rank 1 goes: a fence is the barrier */
        if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 15;
        if (me.rank == 1) {
            if (strcmp(mode, "exit") == 0) _exit(0);
            PMIx_Abort(7, "events test", NULL, 0);
            _exit(7);
        }
        if (!wait_for(is_done)) return 16;
        print_codes();
        if (strcmp(mode, "abort") == 0) _exit(0); /* the job is being torn down */
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (!wait_for(is_done)) {
        print_codes();
        return 17;
    }
    print_codes();
    PMIx_Finalize(NULL, 0);
    return 0;
}
