/* A PMIx program for the event integration tests. argv[1] is the scenario:
 *   listen   register a default handler (and one for environment events), print "ready", then
 *            print every event code until code -9999 arrives: "got <code> <code> ... end"
 *   notify   like listen, but rank 0 first notifies -500 to its namespace and -501 globally
 *   slow     like listen, but each handler takes 300 ms before completing
 *   hybrid   declare a second programming model in this process: "model <name>"
 *   exit     rank 1 exits after every rank registered; the others print what they got
 *            (PMIX_EVENT_PROC_TERMINATED about rank 1)
 * Every wait is bounded (20 s): a missing event fails the test instead of hanging it. */
#include <pmix.h>
#include <pthread.h>
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
static int slow = 0;
static char model[128] = "";
static pmix_proc_t me;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    if (slow) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&mu);
    if (status == PMIX_MODEL_DECLARED) {
        for (size_t i = 0; i < ninfo; ++i)
            if (strcmp(info[i].key, PMIX_PROGRAMMING_MODEL) == 0)
                snprintf(model, sizeof model, "%s", info[i].value.data.string);
    }
    if (ncodes < 256) codes[ncodes++] = status;
    if (status == -9999) done = 1;
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
static int is_done(void) { return done; }
static int has_model(void) { return model[0] != 0; }
static int one_code(void) { return ncodes >= 1; }

static void print_codes(void) {
    pthread_mutex_lock(&mu);
    printf("got");
    for (int i = 0; i < ncodes; ++i) printf(" %d", codes[i]);
    printf(" end\n");
    fflush(stdout);
    pthread_mutex_unlock(&mu);
}

static int reg(pmix_status_t *c, size_t n, int enviro) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    int t = 1;
    PMIx_Info_load(&info, "pmix.evenv", &t, PMIX_BOOL);
    int rc = PMIx_Register_event_handler(c, n, enviro ? &info : NULL, enviro ? 1 : 0, handler,
                                         NULL, NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "listen";
    slow = strcmp(mode, "slow") == 0;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    if (strcmp(mode, "hybrid") == 0) {
        pmix_status_t code = PMIX_MODEL_DECLARED;
        if (reg(&code, 1, 0) < 0) return 11;
        pmix_info_t info;
        PMIX_INFO_CONSTRUCT(&info);
        PMIx_Info_load(&info, PMIX_PROGRAMMING_MODEL, "OpenMP", PMIX_STRING);
        pmix_proc_t again;
        if (PMIx_Init(&again, &info, 1) != PMIX_SUCCESS) return 12;
        if (!wait_for(has_model)) return 13;
        printf("model %s\n", model);
        PMIx_Finalize(NULL, 0);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    int rr = reg(NULL, 0, 0);
    if (rr < 0) {
        fprintf(stderr, "registration failed: %d\n", rr);
        return 11;
    }
    if (reg(NULL, 0, 1) < 0) return 11; /* environment events */
    printf("ready\n");
    fflush(stdout);
    if (strcmp(mode, "notify") == 0 && me.rank == 0) {
        if (PMIx_Notify_event(-500, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL) != PMIX_SUCCESS)
            return 14;
        if (PMIx_Notify_event(-501, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) != PMIX_SUCCESS)
            return 14;
    }
    if (strcmp(mode, "exit") == 0) {
        /* everyone registered before rank 1 goes: a fence is the barrier */
        if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) return 15;
        if (me.rank == 1) _exit(0);
        if (!wait_for(one_code)) return 16;
        print_codes();
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
