/* spawn_parent SCENARIO CHILD [ARGS...]: a PMIx program that spawns jobs of CHILD (spawn_child)
 * with PMIx_Spawn. Only rank 0 spawns; the other ranks initialise and finalise. Scenarios:
 *   notify CHILD ARGS...  register for PMIX_EVENT_JOB_END, spawn 2 ranks of CHILD ARGS with
 *                         PMIX_NOTIFY_COMPLETION, print "spawned <nspace>", and once the event
 *                         comes "job-end <nspace> status <s> exit <code> affected <nspace>:<rank>"
 *                         (rank "*" for the wildcard); every line also says "me <nspace>:<rank>"
 *   multi CHILD DIR       the same with PMIx_Spawn_nb and two apps: 2 ranks of "CHILD app0"
 *                         (SPAWN_TEST_VAR=zero in pmix_app_t.env, cwd DIR) and 1 of "CHILD app1"
 *                         (SPAWN_TEST_VAR=one by PMIX_SET_ENVAR, PMIX_WDIR /)
 *   timeout CHILD         like notify, for 1 rank of "CHILD sleep" with PMIX_JOB_TIMEOUT 1
 *   errors CHILD          print "<case> <status>" for spawns that must fail (and one with an
 *                         optional unknown directive that must not)
 *   orphan CHILD DIR      spawn 2 ranks of "CHILD until:DIR/go", print "parent pid <pid>" and
 *                         "spawned <nspace>", wait until the file DIR/release exists, exit 0
 *   tied CHILD DIR        the same for 2 ranks of "CHILD sleep" with PMIX_SPAWN_CHILD_SEP false
 *   failing CHILD DIR     the same for 2 ranks of "CHILD sleep", and exit 7
 *   separate CHILD DIR    spawn 1 rank of "CHILD until:DIR/go" with PMIX_SPAWN_CHILD_SEP, print
 *                         "parent pid <pid>" and "spawned <nspace>", exit 0 at once
 *   lost CHILD DIR        print "ready", wait until DIR/go exists (the test kills the broker
 *                         first), then spawn CHILD and write "spawn <status>" to DIR/result
 * Every wait is bounded (60 s), so that a broken test fails instead of hanging. */
#define _GNU_SOURCE
#include <pmix.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pmix_proc_t me;
static int ended = 0;
static char end_line[1024];
static int spawned_done = 0;
static pmix_status_t spawned_status;
static char spawned_ns[PMIX_MAX_NSLEN + 1];

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    int term = -1, code = -1;
    char affected[PMIX_MAX_NSLEN + 16] = "none";
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS)) term = info[i].value.data.status;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE)) code = info[i].value.data.integer;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)) {
            const pmix_proc_t *p = info[i].value.data.proc;
            if (p->rank == PMIX_RANK_WILDCARD)
                snprintf(affected, sizeof affected, "%s:*", p->nspace);
            else
                snprintf(affected, sizeof affected, "%s:%u", p->nspace, p->rank);
        }
    }
    pthread_mutex_lock(&mu);
    if (status == PMIX_EVENT_JOB_END && !ended) {
        snprintf(end_line, sizeof end_line, "job-end status %d exit %d affected %s", term, code,
                 affected);
        ended = 1;
        pthread_cond_broadcast(&cv);
    }
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_spawned(pmix_status_t status, pmix_nspace_t nspace, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&mu);
    spawned_status = status;
    PMIX_LOAD_NSPACE(spawned_ns, nspace);
    spawned_done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static int wait_flag(int *flag) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!*flag && rc == 0) rc = pthread_cond_timedwait(&cv, &mu, &until);
    int ok = *flag;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* Waits (inotify, at most 60 s) until path exists. */
static int wait_file(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO) < 0) return 0;
    struct stat st;
    for (int waited = 0; stat(path, &st) != 0;) {
        struct pollfd p = {in, POLLIN, 0};
        if (waited >= 60 || poll(&p, 1, 1000) < 0) {
            close(in);
            return 0;
        }
        if (p.revents & POLLIN) {
            char buf[4096];
            (void)!read(in, buf, sizeof buf);
        } else {
            ++waited;
        }
    }
    close(in);
    return 1;
}

static int register_job_end(void) {
    pmix_status_t code = PMIX_EVENT_JOB_END;
    return PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL) >= 0;
}

static void app_of(pmix_app_t *app, const char *cmd, char **argv, int np) {
    PMIX_APP_CONSTRUCT(app);
    app->cmd = strdup(cmd);
    app->argv = argv;
    app->maxprocs = np;
}

static void say(const char *line) {
    printf("%s me %s:%u\n", line, me.nspace, me.rank);
    fflush(stdout);
}

static int notify(int argc, char **argv, int time_limit) {
    if (!register_job_end()) return 11;
    char **cargv = calloc((size_t)argc + 2, sizeof(char *));
    for (int i = 2; i < argc; ++i) cargv[i - 2] = strdup(argv[i]);
    if (time_limit) cargv[argc - 2] = strdup("sleep");
    pmix_app_t app;
    app_of(&app, argv[2], cargv, time_limit ? 1 : 2);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_NOTIFY_COMPLETION, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_TIMEOUT, &time_limit, PMIX_INT);
    pmix_nspace_t child;
    pmix_status_t rc = PMIx_Spawn(info, time_limit ? 2 : 1, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) {
        printf("spawn failed %s\n", PMIx_Error_string(rc));
        return 12;
    }
    char line[1200];
    snprintf(line, sizeof line, "spawned %s", child);
    say(line);
    if (!wait_flag(&ended)) return 13;
    say(end_line);
    return 0;
}

static int multi(char **argv) {
    if (!register_job_end()) return 11;
    pmix_app_t apps[2];
    char **a0 = calloc(3, sizeof(char *));
    a0[0] = strdup(argv[2]);
    a0[1] = strdup("app0");
    app_of(&apps[0], argv[2], a0, 2);
    apps[0].env = calloc(2, sizeof(char *));
    apps[0].env[0] = strdup("SPAWN_TEST_VAR=zero");
    apps[0].cwd = strdup(argv[3]);
    char **a1 = calloc(3, sizeof(char *));
    a1[0] = strdup(argv[2]);
    a1[1] = strdup("app1");
    app_of(&apps[1], argv[2], a1, 1);
    PMIX_INFO_CREATE(apps[1].info, 2);
    apps[1].ninfo = 2;
    pmix_envar_t var;
    PMIX_ENVAR_LOAD(&var, "SPAWN_TEST_VAR", "one", ':');
    PMIX_INFO_LOAD(&apps[1].info[0], PMIX_SET_ENVAR, &var, PMIX_ENVAR);
    PMIX_ENVAR_DESTRUCT(&var);
    PMIX_INFO_LOAD(&apps[1].info[1], PMIX_WDIR, "/", PMIX_STRING);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_NOTIFY_COMPLETION, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Spawn_nb(&info, 1, apps, 2, on_spawned, NULL);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (rc != PMIX_SUCCESS) return 12;
    if (!wait_flag(&spawned_done)) return 14;
    if (spawned_status != PMIX_SUCCESS) {
        printf("spawn failed %s\n", PMIx_Error_string(spawned_status));
        return 12;
    }
    char line[1200];
    snprintf(line, sizeof line, "spawned %s", spawned_ns);
    say(line);
    if (!wait_flag(&ended)) return 13;
    say(end_line);
    return 0;
}

static void report(const char *what, pmix_status_t rc) {
    printf("%s %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
}

static int errors(char **argv) {
    char *missing_argv[] = {"no-such-program-zpmix", NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = "no-such-program-zpmix";
    app.argv = missing_argv;
    app.maxprocs = 2;
    report("missing", PMIx_Spawn(NULL, 0, &app, 1, NULL));
    /* The first app's rank is started, then killed when the second app's program is missing. */
    char *sleep_argv[] = {argv[2], "sleep", NULL};
    pmix_app_t two[2];
    PMIX_APP_CONSTRUCT(&two[0]);
    two[0].cmd = argv[2];
    two[0].argv = sleep_argv;
    two[0].maxprocs = 1;
    two[1] = app;
    report("missing-second-app", PMIx_Spawn(NULL, 0, two, 2, NULL));
    report("napps0", PMIx_Spawn(NULL, 0, &app, 0, NULL));
    report("noapps", PMIx_Spawn(NULL, 0, NULL, 1, NULL));
    char *child_argv[] = {argv[2], NULL};
    app.cmd = argv[2];
    app.argv = child_argv;
    app.maxprocs = 0;
    report("maxprocs0", PMIx_Spawn(NULL, 0, &app, 1, NULL));
    app.maxprocs = 1;
    app.cwd = "/no/such/directory-zpmix";
    report("badwdir", PMIx_Spawn(NULL, 0, &app, 1, NULL));
    app.cwd = NULL;
    pmix_info_t odd;
    PMIX_INFO_LOAD(&odd, "zpmix.test.unknown", "x", PMIX_STRING);
    PMIX_INFO_REQUIRED(&odd);
    report("required", PMIx_Spawn(&odd, 1, &app, 1, NULL));
    PMIX_INFO_DESTRUCT(&odd);
    PMIX_INFO_LOAD(&odd, PMIX_HOST, "node-that-is-not-here.invalid", PMIX_STRING);
    PMIX_INFO_REQUIRED(&odd);
    report("otherhost", PMIx_Spawn(&odd, 1, &app, 1, NULL));
    PMIX_INFO_DESTRUCT(&odd);
    PMIX_INFO_LOAD(&odd, PMIX_WDIR, NULL, PMIX_BOOL);
    report("badtype", PMIx_Spawn(&odd, 1, &app, 1, NULL));
    PMIX_INFO_DESTRUCT(&odd);
    PMIX_INFO_LOAD(&odd, "zpmix.test.unknown", "x", PMIX_STRING);
    pmix_nspace_t child;
    report("optional", PMIx_Spawn(&odd, 1, &app, 1, child));
    PMIX_INFO_DESTRUCT(&odd);
    report("nb-nocallback", PMIx_Spawn_nb(NULL, 0, &app, 1, NULL, NULL));
    return 0;
}

/* The orphan, tied and failing scenarios. */
enum orphan_kind { ORPHAN, TIED, FAILING };
static int orphan(char **argv, enum orphan_kind kind) {
    char **cargv = calloc(3, sizeof(char *));
    cargv[0] = strdup(argv[2]);
    char until[4200];
    snprintf(until, sizeof until, "until:%s/go", argv[3]);
    cargv[1] = strdup(kind == ORPHAN ? until : "sleep");
    pmix_app_t app;
    app_of(&app, argv[2], cargv, 2);
    pmix_info_t sep;
    const bool no = false;
    PMIX_INFO_LOAD(&sep, PMIX_SPAWN_CHILD_SEP, &no, PMIX_BOOL);
    pmix_nspace_t child;
    pmix_status_t rc = PMIx_Spawn(kind == TIED ? &sep : NULL, kind == TIED ? 1 : 0, &app, 1, child);
    PMIX_INFO_DESTRUCT(&sep);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) return 12;
    char line[1200];
    snprintf(line, sizeof line, "parent pid %d", (int)getpid());
    say(line);
    snprintf(line, sizeof line, "spawned %s", child);
    say(line);
    if (!wait_file(argv[3], "release")) return 13;
    return kind == FAILING ? 7 : 0;
}

/* A child job of CHILD until:DIR/go, spawned with PMIX_SPAWN_CHILD_SEP; prints "parent pid <pid>"
 * and "spawned <nspace>", then ends at once. */
static int separate(char **argv) {
    char **cargv = calloc(3, sizeof(char *));
    cargv[0] = strdup(argv[2]);
    char until[4200];
    snprintf(until, sizeof until, "until:%s/go", argv[3]);
    cargv[1] = strdup(until);
    pmix_app_t app;
    app_of(&app, argv[2], cargv, 1);
    pmix_info_t sep;
    const bool yes = true;
    PMIX_INFO_LOAD(&sep, PMIX_SPAWN_CHILD_SEP, &yes, PMIX_BOOL);
    pmix_nspace_t child;
    pmix_status_t rc = PMIx_Spawn(&sep, 1, &app, 1, child);
    PMIX_INFO_DESTRUCT(&sep);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) return 12;
    char line[1200];
    snprintf(line, sizeof line, "parent pid %d", (int)getpid());
    say(line);
    snprintf(line, sizeof line, "spawned %s", child);
    say(line);
    return 0;
}

static int lost(char **argv) {
    signal(SIGPIPE, SIG_IGN); /* our stdout goes to the broker, which is about to die */
    say("ready");
    if (!wait_file(argv[3], "go")) return 13;
    char *cargv[] = {argv[2], NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = argv[2];
    app.argv = cargv;
    app.maxprocs = 1;
    pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, NULL);
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s/result.tmp", argv[3]);
    snprintf(path, sizeof path, "%s/result", argv[3]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) return 18;
    fprintf(f, "spawn %s\n", PMIx_Error_string(rc));
    fclose(f);
    rename(tmp, path); /* the test watches for the complete file */
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 10;
    int rc = 0;
    if (me.rank == 0) {
        const char *mode = argv[1];
        if (strcmp(mode, "notify") == 0)
            rc = notify(argc, argv, 0);
        else if (strcmp(mode, "timeout") == 0)
            rc = notify(argc, argv, 1);
        else if (strcmp(mode, "multi") == 0 && argc > 3)
            rc = multi(argv);
        else if (strcmp(mode, "errors") == 0)
            rc = errors(argv);
        else if (strcmp(mode, "orphan") == 0 && argc > 3)
            rc = orphan(argv, ORPHAN);
        else if (strcmp(mode, "tied") == 0 && argc > 3)
            rc = orphan(argv, TIED);
        else if (strcmp(mode, "failing") == 0 && argc > 3)
            rc = orphan(argv, FAILING);
        else if (strcmp(mode, "separate") == 0 && argc > 3)
            rc = separate(argv);
        else if (strcmp(mode, "lost") == 0 && argc > 3)
            return lost(argv);
        else
            rc = 3;
    }
    PMIx_Finalize(NULL, 0);
    return rc;
}
