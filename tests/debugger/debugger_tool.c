/* A debugger of the standard tool API, for tests/debugger (written here, after the PMIx standard's
 * Tools and Debuggers chapter):
 *   debugger_tool spawn DIR NP PROG [gdb]    PMIx_Spawn of NP ranks of `PROG DIR` with
 *       PMIX_DEBUG_STOP_IN_INIT through the standalone broker; waits for PMIX_READY_FOR_DEBUG,
 *       checks that no rank went past PMIx_Init (no DIR/up.*), finds the ranks in the process
 *       table (PMIX_QUERY_PROC_TABLE), with `gdb` attaches Debian's gdb in batch mode to rank 0
 *       and reads zpmix_debug_value, then releases the job (PMIX_DEBUGGER_RELEASE) and waits for
 *       its end (PMIX_NOTIFY_COMPLETION)
 *   debugger_tool attach PID NSPACE DIR NP [exec|nogdb]   the same for a job already stopped in
 *       init (`zpmix run --stop-in-init`, pid PID), or with `exec` at exec (`--stop-on-exec`): its
 *       PMIX_READY_FOR_DEBUG, the checks, gdb (not with `nogdb`), the release
 *   debugger_tool release PID NSPACE DIR NP   attached to server PID: its PMIX_READY_FOR_DEBUG
 *       for NSPACE, no rank past PMIx_Init, then the release of the whole job (wherever it runs)
 *   debugger_tool exec DIR NP PROG [gdb]     as spawn, with PMIX_DEBUG_STOP_ON_EXEC: every rank
 *       is stopped (state T), already running PROG (/proc/PID/exe), until the release
 *   debugger_tool app DIR NP PROG            PMIX_DEBUG_STOP_IN_APP: the ranks wait themselves
 *   debugger_tool colaunch DIR NP PROG       a target stopped in init, then one debugger daemon
 *       per target rank (PMIX_DEBUGGER_DAEMONS, PMIX_DEBUG_TARGET, PMIX_DEBUG_DAEMONS_PER_PROC),
 *       which are told their target; then daemons as OpenPMIx's debugger example asks for them
 *       (in the app's info, one per node), which release the target as its debuggerd does
 *   debugger_tool daemons PID NSPACE DIR NP PROG   the same for a job already stopped in init
 *       (`zpmix run --stop-in-init`, pid PID, perhaps across nodes): one daemon of PROG per
 *       target rank, each printed as "daemon R: WHAT-IT-WROTE" (its target and the target's ranks
 *       on its node), then the release
 * Prints "ok" and exits 0 when every check passed; "FAILED: ..." lines otherwise. */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../support/check.h"

#define MAX_SEEN 16
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char ready[MAX_SEEN][PMIX_MAX_NSLEN + 1], ended[MAX_SEEN][PMIX_MAX_NSLEN + 1];
static int nready = 0, nended = 0;

/* The namespace an event is about: its affected proc, or its affected procs' (a job across a
 * host's nodes is ready node by node, naming that node's ranks). */
static const char *about(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            return info[i].value.data.proc->nspace;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
            info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray &&
            info[i].value.data.darray->type == PMIX_PROC && info[i].value.data.darray->size > 0)
            return ((const pmix_proc_t *)info[i].value.data.darray->array)[0].nspace;
    }
    return NULL;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    const char *ns = about(info, ninfo);
    pthread_mutex_lock(&mu);
    if (ns && status == PMIX_READY_FOR_DEBUG && nready < MAX_SEEN)
        PMIX_LOAD_NSPACE(ready[nready++], ns);
    if (ns && status == PMIX_EVENT_JOB_END && nended < MAX_SEEN)
        PMIX_LOAD_NSPACE(ended[nended++], ns);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int seen(char list[][PMIX_MAX_NSLEN + 1], const int *n, const char *ns) {
    for (int i = 0; i < *n; ++i)
        if (PMIX_CHECK_NSPACE(list[i], ns)) return 1;
    return 0;
}

/* Waits up to `secs` for the event (READY_FOR_DEBUG or JOB_END) about ns. */
static int wait_for(char list[][PMIX_MAX_NSLEN + 1], const int *n, const char *ns, int secs) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += secs;
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!seen(list, n, ns) && rc == 0) rc = pthread_cond_timedwait(&cv, &mu, &until);
    const int found = seen(list, n, ns);
    pthread_mutex_unlock(&mu);
    return found;
}

static int count_files(const char *dir, const char *what, int np) {
    int n = 0;
    for (int r = 0; r < np; ++r) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%d", dir, what, r);
        n += access(path, F_OK) == 0;
    }
    return n;
}

static void slurp(const char *dir, const char *what, int r, char *out, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, r);
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t got = fread(out, 1, len - 1, f);
    out[got] = 0;
    fclose(f);
}

/* The job's process table: rank -> pid, each on a host. */
static void proc_table(const char *ns, int np, pid_t pids[]) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
    pmix_info_t *r = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &r, &n);
    PMIX_QUERY_DESTRUCT(&q);
    CHECK(rc == PMIX_SUCCESS, "proc table: %s", PMIx_Error_string(rc));
    for (int i = 0; i < np; ++i) pids[i] = 0;
    if (rc != PMIX_SUCCESS) return;
    pmix_info_t *infos = r; /* one result per key, at the top level */
    for (size_t i = 0; i < n; ++i) {
        if (!PMIX_CHECK_KEY(&infos[i], PMIX_QUERY_PROC_TABLE) ||
            infos[i].value.type != PMIX_DATA_ARRAY)
            continue;
        pmix_proc_info_t *rows = (pmix_proc_info_t *)infos[i].value.data.darray->array;
        for (size_t k = 0; k < infos[i].value.data.darray->size; ++k) {
            CHECK(rows[k].hostname && rows[k].hostname[0], "rank %u has no host",
                  rows[k].proc.rank);
            if (rows[k].proc.rank < (pmix_rank_t)np) pids[rows[k].proc.rank] = rows[k].pid;
            printf("proc %u %d %s\n", rows[k].proc.rank, (int)rows[k].pid,
                   rows[k].hostname ? rows[k].hostname : "-");
        }
    }
    PMIX_INFO_FREE(r, n);
    for (int i = 0; i < np; ++i) CHECK(pids[i] > 0, "rank %d has no pid in the table", i);
}

/* Debian's gdb, in batch mode, attached to pid: reads zpmix_debug_value, detaches. */
static void gdb_reads(pid_t pid) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "gdb -nx -batch -p %d -ex 'print zpmix_debug_value' -ex detach 2>&1",
             (int)pid);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run gdb");
    if (!p) return;
    char line[1024];
    int read_it = 0;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "= 4242")) read_it = 1;
        if (strstr(line, "= 4242") || strstr(line, "rror")) printf("gdb: %s", line);
    }
    CHECK(pclose(p) == 0 && read_it, "gdb did not read zpmix_debug_value of pid %d", (int)pid);
}

static void release(const char *ns) {
    pmix_proc_t me, job;
    PMIX_LOAD_PROCID(&me, "", 0);
    PMIX_LOAD_PROCID(&job, ns, PMIX_RANK_WILDCARD);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &job, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROC, &job, PMIX_PROC);
    pmix_status_t rc =
        PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, info, 2, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "release: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* PMIx_Spawn of np ranks of `prog dir` with the given directives, and PMIX_NOTIFY_COMPLETION. */
static pmix_status_t spawn(const char *prog, const char *dir, int np, pmix_info_t *extra,
                           size_t nextra, char ns[PMIX_MAX_NSLEN + 1]) {
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(prog);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, app.argv, prog);
    PMIX_ARGV_APPEND(rc, app.argv, dir);
    app.maxprocs = np;
    pmix_info_t info[8];
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    for (size_t i = 0; i < nextra && i < 7; ++i) info[i + 1] = extra[i];
    pmix_nspace_t child;
    rc = PMIx_Spawn(info, nextra + 1, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    if (rc == PMIX_SUCCESS) PMIX_LOAD_NSPACE(ns, child);
    return rc;
}

/* /proc/PID/stat's state letter, or 0. */
static char proc_state(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
    return close && close[1] == ' ' ? close[2] : 0;
}

/* A rank stopped at exec: stopped (T), and already the program (not the launcher's fork). */
static void stopped_at_exec(int rank, pid_t pid, const char *prog) {
    CHECK(proc_state(pid) == 'T', "rank %d (pid %d) is not stopped: state %c", rank, (int)pid,
          proc_state(pid));
    char path[64], exe[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    const char *got = strrchr(exe, '/');
    CHECK(got && strcmp(got + 1, base) == 0, "rank %d (pid %d) runs %s, not %s", rank, (int)pid,
          exe, base);
}

/* Co-launches one daemon of prog per rank of ns, a job stopped in init: they end once they wrote
 * what they were told (DIR/daemon.R, printed), the target still waiting; and daemons per node and
 * per proc at once are refused. */
static void colaunch(const char *ns, const char *dir, int np, const char *prog) {
    CHECK(wait_for(ready, &nready, ns, 30), "no PMIX_READY_FOR_DEBUG for %s", ns);
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, ns, PMIX_RANK_WILDCARD);
    bool yes = true;
    uint16_t one = 1;
    pmix_info_t d[3];
    PMIX_INFO_LOAD(&d[0], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[1], PMIX_DEBUG_TARGET, &target, PMIX_PROC);
    PMIX_INFO_LOAD(&d[2], PMIX_DEBUG_DAEMONS_PER_PROC, &one, PMIX_UINT16);
    char daemons[PMIX_MAX_NSLEN + 1] = "";
    pmix_status_t rc = spawn(prog, dir, 1, d, 3, daemons);
    CHECK(rc == PMIX_SUCCESS, "daemons: %s", PMIx_Error_string(rc));
    CHECK(wait_for(ended, &nended, daemons, 30), "the daemons did not end");
    CHECK(count_files(dir, "daemon", np) == np, "not one daemon per target rank");
    for (int r = 0; r < np; ++r) {
        char got[4096];
        slurp(dir, "daemon", r, got, sizeof got);
        printf("daemon %d: %s\n", r, got);
    }
    CHECK(count_files(dir, "up", np) == 0, "the target went on before its release");
    uint16_t two = 2;
    PMIX_INFO_LOAD(&d[2], PMIX_DEBUG_DAEMONS_PER_NODE, &two, PMIX_UINT16);
    pmix_info_t both[4] = {d[0], d[1], d[2]};
    PMIX_INFO_LOAD(&both[3], PMIX_DEBUG_DAEMONS_PER_PROC, &one, PMIX_UINT16);
    char none[PMIX_MAX_NSLEN + 1];
    CHECK(spawn(prog, dir, 1, both, 4, none) == PMIX_ERR_BAD_PARAM,
          "daemons per node and per proc at once");
    PMIX_INFO_DESTRUCT(&d[1]); /* the target proc (both[1] shares it) */
}

/* Daemons as OpenPMIx's debugger example asks for them: every directive in the app's info (job
 * directives there are the job's), the target as a namespace string, one per node by PMIX_MAPBY
 * ppr:1:node, and no job directive at all. On this node: one daemon, told its target
 * (PMIX_DEBUG_JOB), which it then releases, as OpenPMIx's debuggerd example does. */
static void probe_daemons(const char *ns, const char *dir, int np, const char *prog) {
    for (int r = 0; r < np; ++r) {
        char path[4096];
        snprintf(path, sizeof path, "%s/daemon.%d", dir, r);
        unlink(path);
    }
    bool yes = true;
    pmix_status_t rc;
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(prog);
    PMIX_ARGV_APPEND(rc, app.argv, prog);
    PMIX_ARGV_APPEND(rc, app.argv, dir);
    PMIX_ARGV_APPEND(rc, app.argv, "release");
    app.maxprocs = 1;
    PMIX_INFO_CREATE(app.info, 3);
    app.ninfo = 3;
    PMIX_INFO_LOAD(&app.info[0], PMIX_MAPBY, "ppr:1:node", PMIX_STRING);
    PMIX_INFO_LOAD(&app.info[1], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&app.info[2], PMIX_DEBUG_TARGET, ns, PMIX_STRING);
    pmix_nspace_t probe;
    rc = PMIx_Spawn(NULL, 0, &app, 1, probe);
    PMIX_APP_DESTRUCT(&app);
    CHECK(rc == PMIX_SUCCESS, "daemons in the app's info: %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return;
    CHECK(wait_for(ended, &nended, probe, 30), "the app-info daemons did not end");
    char got[4096], job[PMIX_MAX_NSLEN + 8];
    slurp(dir, "daemon", 0, got, sizeof got);
    printf("probe daemon 0: %s\n", got);
    snprintf(job, sizeof job, "job=%s", ns);
    CHECK(strstr(got, job) != NULL, "the app-info daemon was not told its target %s", ns);
    CHECK(count_files(dir, "daemon", np) == 1, "not one app-info daemon on the node");
    /* The daemon released its target, as OpenPMIx's debuggerd does: the target goes on. */
    CHECK(wait_for(ended, &nended, ns, 30), "the daemon's release did not let %s go on", ns);
}

/* Stopped for the debugger: ready, nobody past PMIx_Init, the table, gdb, the release. With
 * `exec`, every rank is also stopped at the exec of prog. */
static void debug_stopped_job(const char *ns, const char *dir, int np, int gdb, const char *exec) {
    CHECK(wait_for(ready, &nready, ns, 30), "no PMIX_READY_FOR_DEBUG for %s", ns);
    CHECK(count_files(dir, "up", np) == 0, "a rank went past PMIx_Init before the release");
    pid_t pids[64];
    proc_table(ns, np, pids);
    for (int r = 0; exec && r < np; ++r)
        if (pids[r] > 0) stopped_at_exec(r, pids[r], exec);
    if (gdb && pids[0] > 0) gdb_reads(pids[0]);
    CHECK(count_files(dir, "up", np) == 0, "a rank went past PMIx_Init before the release");
    release(ns);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    const int exec = strcmp(mode, "exec") == 0;
    pmix_info_t init;
    bool yes = true;
    pid_t server = 0;
    if ((strcmp(mode, "attach") == 0 && (argc == 6 || argc == 7)) ||
        (strcmp(mode, "release") == 0 && argc == 6) ||
        (strcmp(mode, "daemons") == 0 && argc == 7)) {
        server = (pid_t)atoi(argv[2]);
        PMIX_INFO_LOAD(&init, PMIX_SERVER_PIDINFO, &server, PMIX_PID);
    } else if (argc >= 5) {
        PMIX_INFO_LOAD(&init, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    } else {
        return 2;
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &init, 1);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAILED: PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_status_t codes[] = {PMIX_READY_FOR_DEBUG, PMIX_EVENT_JOB_END};
    rc = PMIx_Register_event_handler(codes, 2, NULL, 0, on_event, NULL, NULL);
    CHECK(rc >= 0, "register: %s", PMIx_Error_string(rc));

    char ns[PMIX_MAX_NSLEN + 1] = "";
    if (strcmp(mode, "daemons") == 0) {
        PMIX_LOAD_NSPACE(ns, argv[3]);
        const char *dir = argv[4], *prog = argv[6];
        const int np = atoi(argv[5]);
        colaunch(ns, dir, np, prog);
        release(ns);
    } else if (strcmp(mode, "release") == 0) {
        PMIX_LOAD_NSPACE(ns, argv[3]);
        CHECK(wait_for(ready, &nready, ns, 30), "no PMIX_READY_FOR_DEBUG for %s", ns);
        CHECK(count_files(argv[4], "up", atoi(argv[5])) == 0,
              "a rank went past PMIx_Init before the release");
        release(ns);
    } else if (strcmp(mode, "attach") == 0) {
        PMIX_LOAD_NSPACE(ns, argv[3]);
        const int nogdb = argc == 7 && strcmp(argv[6], "nogdb") == 0;
        debug_stopped_job(ns, argv[4], atoi(argv[5]), !nogdb,
                          argc == 7 && !nogdb ? "debug_rank" : NULL);
    } else {
        const char *dir = argv[2], *prog = argv[4];
        const int np = atoi(argv[3]);
        pmix_info_t stop;
        PMIX_INFO_LOAD(&stop,
                       strcmp(mode, "app") == 0 ? PMIX_DEBUG_STOP_IN_APP
                       : exec                   ? PMIX_DEBUG_STOP_ON_EXEC
                                                : PMIX_DEBUG_STOP_IN_INIT,
                       &yes, PMIX_BOOL);
        rc = spawn(prog, dir, np, &stop, 1, ns);
        CHECK(rc == PMIX_SUCCESS, "spawn: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS && (strcmp(mode, "spawn") == 0 || exec)) {
            debug_stopped_job(ns, dir, np, argc > 5 && strcmp(argv[5], "gdb") == 0,
                              exec ? prog : NULL);
        } else if (rc == PMIX_SUCCESS && strcmp(mode, "app") == 0) {
            release(ns); /* kept for them by the broker, whenever they register */
        } else if (rc == PMIX_SUCCESS && strcmp(mode, "colaunch") == 0) {
            colaunch(ns, dir, np, prog);
            for (int r = 0; r < np; ++r) {
                char got[4096], want[4096];
                slurp(dir, "daemon", r, got, sizeof got);
                size_t len = (size_t)snprintf(want, sizeof want, "%s", ns);
                for (int k = 0; k < np; ++k)
                    len += (size_t)snprintf(want + len, sizeof want - len, " %d", k);
                /* Its node rank (after the target's, which the node ran first) follows. */
                snprintf(want + len, sizeof want - len, " node_rank=");
                CHECK(strncmp(got, want, strlen(want)) == 0,
                      "daemon %d was told \"%s\", not \"%s\"", r, got, want);
            }
            probe_daemons(ns, dir, np, prog); /* whose daemon releases the target */
        }
    }
    if (strcmp(mode, "attach") != 0 && strcmp(mode, "daemons") != 0 &&
        strcmp(mode, "release") != 0 && ns[0]) {
        CHECK(wait_for(ended, &nended, ns, 30), "%s did not end after its release", ns);
        const int np = atoi(argv[3]);
        CHECK(count_files(argv[2], "up", np) == np, "not every rank went on after the release");
        for (int r = 0; r < np; ++r) {
            char got[256];
            slurp(argv[2], "up", r, got, sizeof got);
            const char *want = strcmp(mode, "app") == 0 ? "init=0 app=1 exec=0 value=4242"
                               : exec                   ? "init=0 app=0 exec=1 value=4242"
                                                        : "init=1 app=0 exec=0 value=4242";
            CHECK(strcmp(got, want) == 0, "rank %d says \"%s\", not \"%s\"", r, got, want);
        }
    }
    PMIx_tool_finalize();
    if (failures == 0) printf("ok\n");
    return failures ? 1 : 0;
}
