/* A rank for the fault-injection suite (test_faults.sh). Its argument names the phase in which
 * the suite strikes; the rank that is struck prints "victim <pid>" there and waits (pause) to be
 * killed, the others carry on into the call that needs it, and report what it returned:
 *   init   rank 1 stops before PMIx_Init; rank 0 fences (waiting for rank 1)
 *   fence  rank 1 stops after PMIx_Init; rank 0 fences
 *   get    rank 1 stops after PMIx_Init without committing; rank 0 gets its key (no timeout)
 *   group  rank 1 stops after PMIx_Init; rank 0 constructs a group of both (no timeout)
 *   spawn  rank 0 spawns a child (this program, "child") and waits; the child prints
 *          "victim <pid>"... of rank 0, its parent, which the suite kills during the spawn
 *   hold   every rank prints "ready <pid>" after PMIx_Init, waits for the file $FAULT_GO; with
 *          $FAULT_TIMEOUT, gets a key its peer never commits with PMIX_TIMEOUT that many seconds
 *          ("get <status>", also appended to the file $FAULT_REPORT as "get <status> <ms>": that
 *          line must not depend on the broker forwarding output); then fences ("fence <status>")
 *   ok     init, put, commit, fence, get of the next rank's key, finalize: "done"
 *   big    each rank puts 4 MiB (its rank in every byte), fences collecting the data, gets the
 *          other rank's and checks every byte: "big ok" (across nodes its data crosses the tree
 *          in pieces of 64 KiB)
 *   default-handler  a default event handler (no codes) that, as Open MPI's does, ends the
 *          process on any event it gets ("event <code> from <ns>:<rank>", exit 42); prints
 *          "ready <pid> <nspace>", waits for the file $FAULT_GO, finalizes: "done"
 *   forge NS  another job's rank forging what would end job NS (its default handlers): prints
 *          "forge <what> <status>" for PMIX_ERR_PROC_ABORTED with NS's rank 0 as the source and
 *          affected process to CUSTOM {NS:*} ("custom") and to GLOBAL ("global"),
 *          PMIX_DEBUGGER_RELEASE to CUSTOM {NS:*} ("release"), a user code (-501) to CUSTOM
 *          {NS:0} ("other-job"); then, once the file $FAULT_GO exists, -501 to GLOBAL
 *          ("global-user"), which is allowed and cached
 *   impostor  run with a copy of a rank's environment by a process that is not that rank:
 *          PMIx_Init as it ("init <status>"), then PMIx_Abort of its job ("abort <status>")
 *   rounds N K  K rounds of N fences; after round k, "round <k> <status> <median us> <max us>"
 *          of its fences, then (but after the last) it waits for the file $FAULT_GO.<k>: the
 *          suite changes what happens around the job between rounds
 * Every line is flushed at once: the suite waits on them. */
#include <pmix.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;

static void say(const char *what) {
    printf("%s %d\n", what, (int)getpid());
    fflush(stdout);
}

static int fence(int timeout_s) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    if (timeout_s > 0) PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Fence(NULL, 0, timeout_s > 0 ? &info : NULL, timeout_s > 0 ? 1 : 0);
    printf("fence %d\n", rc);
    fflush(stdout);
    return rc;
}

static void die_on_any_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                             pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                             size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata) {
    (void)id;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    (void)cbfunc;
    (void)cbdata;
    printf("event %d from %s:%u\n", status, source ? source->nspace : "?",
           source ? source->rank : 0);
    fflush(stdout);
    _exit(42);
}

/* PMIx_Notify_event of code to range (custom: `target`), source and affected process NS:0. */
static void forge(const char *what, pmix_status_t code, pmix_data_range_t range, const char *ns,
                  pmix_rank_t target) {
    pmix_proc_t victim, members;
    PMIX_LOAD_PROCID(&victim, ns, 0);
    PMIX_LOAD_PROCID(&members, ns, target);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &victim, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_CUSTOM_RANGE, &members, PMIX_PROC);
    const pmix_status_t rc = PMIx_Notify_event(code, &victim, range, info,
                                               range == PMIX_RANGE_CUSTOM ? 2 : 1, NULL, NULL);
    printf("forge %s %d\n", what, rc);
    fflush(stdout);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void wait_for_file(const char *path) {
    /* The rank's own wait, bounded: the suite creates the file once it has struck. */
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 6000 && access(path, F_OK) != 0; ++i) nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ok";
    const char *rank_env = getenv("PMIX_RANK");
    const int rank = rank_env ? atoi(rank_env) : -1;
    if (strcmp(mode, "init") == 0 && rank == 1) {
        say("victim");
        for (;;) pause();
    }
    if (strcmp(mode, "child") == 0) {
        /* Spawned by rank 0, which it names as the victim: its parent is mid-spawn. */
        printf("victim %s\n", getenv("FAULT_PARENT"));
        fflush(stdout);
        for (;;) pause();
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("init %d\n", rc);
        return 1;
    }
    if ((strcmp(mode, "fence") == 0 || strcmp(mode, "get") == 0 || strcmp(mode, "group") == 0) &&
        rank == 1) {
        say("victim");
        for (;;) pause();
    }
    if (strcmp(mode, "init") == 0 || strcmp(mode, "fence") == 0) {
        fence(0);
    } else if (strcmp(mode, "get") == 0) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, 1);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&peer, "fault.key", NULL, 0, &v);
        printf("get %d\n", rc);
        fflush(stdout);
    } else if (strcmp(mode, "group") == 0) {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("fault.group", &all, 1, NULL, 0, &results, &nresults);
        if (results) PMIX_INFO_FREE(results, nresults);
        printf("group %d\n", rc);
        fflush(stdout);
    } else if (strcmp(mode, "spawn") == 0 && rank == 0) {
        char pid[32];
        snprintf(pid, sizeof pid, "FAULT_PARENT=%d", (int)getpid());
        char *child_argv[] = {argv[0], "child", NULL};
        char *child_env[] = {pid, NULL};
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(argv[0]);
        app.argv = child_argv;
        app.env = child_env;
        app.maxprocs = 1;
        pmix_nspace_t child;
        rc = PMIx_Spawn(NULL, 0, &app, 1, child);
        printf("spawn %d\n", rc);
        fflush(stdout);
        app.argv = NULL;
        app.env = NULL;
        PMIX_APP_DESTRUCT(&app);
        for (;;) pause(); /* killed by the suite */
    } else if (strcmp(mode, "hold") == 0) {
        say("ready");
        const char *go = getenv("FAULT_GO");
        if (go) wait_for_file(go);
        const char *t = getenv("FAULT_TIMEOUT");
        if (t) {
            /* A key the peer never commits: only the broker could answer, within the timeout. */
            int seconds = atoi(t);
            pmix_info_t info;
            PMIX_INFO_CONSTRUCT(&info);
            PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, rank == 0 ? 1 : 0);
            pmix_value_t *v = NULL;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = PMIx_Get(&peer, "fault.never", &info, 1, &v);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            const long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
            printf("get %d\n", rc);
            fflush(stdout);
            const char *report = getenv("FAULT_REPORT");
            FILE *f = report ? fopen(report, "a") : NULL;
            if (f) {
                fprintf(f, "get %d %ld\n", rc, ms); /* one short line per write: stays whole */
                fclose(f);
            }
        }
        fence(t ? atoi(t) : 0);
    } else if (strcmp(mode, "big") == 0) {
        const size_t size = (size_t)4 << 20;
        char *mine = malloc(size + 1);
        memset(mine, 'a' + rank % 26, size);
        mine[size] = '\0';
        pmix_value_t val;
        PMIX_VALUE_LOAD(&val, mine, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, "fault.big", &val);
        PMIX_VALUE_DESTRUCT(&val);
        free(mine);
        PMIx_Commit();
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, rank == 0 ? 1 : 0);
        pmix_value_t *v = NULL;
        if (rc == PMIX_SUCCESS) rc = PMIx_Get(&peer, "fault.big", NULL, 0, &v);
        int ok = rc == PMIX_SUCCESS && v->type == PMIX_STRING && strlen(v->data.string) == size;
        for (size_t i = 0; ok && i < size; ++i) ok = v->data.string[i] == 'a' + (int)peer.rank % 26;
        printf("big %s (%d)\n", ok ? "ok" : "bad", rc);
        fflush(stdout);
        if (v) PMIX_VALUE_RELEASE(v);
    } else if (strcmp(mode, "default-handler") == 0) {
        rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, die_on_any_event, NULL, NULL);
        if (rc < 0) {
            printf("register %d\n", rc);
            return 1;
        }
        printf("ready %d %s\n", (int)getpid(), me.nspace);
        fflush(stdout);
        const char *go = getenv("FAULT_GO");
        if (go) wait_for_file(go);
        printf("done\n");
    } else if (strcmp(mode, "forge") == 0 && argc > 2) {
        forge("custom", PMIX_ERR_PROC_ABORTED, PMIX_RANGE_CUSTOM, argv[2], PMIX_RANK_WILDCARD);
        forge("global", PMIX_ERR_PROC_ABORTED, PMIX_RANGE_GLOBAL, argv[2], 0);
        forge("release", PMIX_DEBUGGER_RELEASE, PMIX_RANGE_CUSTOM, argv[2], PMIX_RANK_WILDCARD);
        forge("other-job", -501, PMIX_RANGE_CUSTOM, argv[2], 0);
        const char *go = getenv("FAULT_GO");
        if (go) wait_for_file(go);
        forge("global-user", -501, PMIX_RANGE_GLOBAL, argv[2], 0);
    } else if (strcmp(mode, "impostor") == 0) {
        printf("init 0\n");
        fflush(stdout);
        rc = PMIx_Abort(3, "an impostor aborts the job", NULL, 0);
        printf("abort %d\n", rc);
        fflush(stdout);
    } else if (strcmp(mode, "rounds") == 0 && argc > 3) {
        const int n = atoi(argv[2]), rounds = atoi(argv[3]);
        double *us = calloc(n > 0 ? (size_t)n : 1, sizeof(double));
        const char *go = getenv("FAULT_GO");
        for (int k = 1; k <= rounds; ++k) {
            pmix_status_t worst = PMIX_SUCCESS;
            for (int i = 0; i < n; ++i) {
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                rc = PMIx_Fence(NULL, 0, NULL, 0);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                if (rc != PMIX_SUCCESS) worst = rc;
                us[i] = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
            }
            qsort(us, (size_t)n, sizeof(double), by_value);
            printf("round %d %d %.0f %.0f\n", k, worst, n > 0 ? us[n / 2] : 0.0,
                   n > 0 ? us[n - 1] : 0.0);
            fflush(stdout);
            if (k < rounds && go) {
                char path[4096];
                snprintf(path, sizeof path, "%s.%d", go, k);
                wait_for_file(path);
            }
        }
        free(us);
    } else if (strcmp(mode, "ok") == 0) {
        pmix_value_t val;
        PMIX_VALUE_LOAD(&val, &rank, PMIX_INT);
        PMIx_Put(PMIX_GLOBAL, "fault.key", &val);
        PMIx_Commit();
        if (fence(0) != PMIX_SUCCESS) return 1;
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, 0);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&peer, "fault.key", NULL, 0, &v);
        if (rc != PMIX_SUCCESS) {
            printf("get %d\n", rc);
            return 1;
        }
        PMIX_VALUE_RELEASE(v);
        printf("done\n");
    }
    PMIx_Finalize(NULL, 0);
    return 0;
}
