/* spawn_child [R=]ACTION...: a rank of a job that spawn_parent starts with PMIx_Spawn. After
 * PMIx_Init it prints one line of what it knows of itself:
 *   "child <nspace> rank <r> size <n> appnum <a> apprank <ar> appsize <as> appldr <al>
 *    parent <nspace>:<rank> spawned <0|1> arg <argv[1]> var <$SPAWN_TEST_VAR>
 *    localrank <lr> noderank <nr> cwd <cwd>"
 * (parent "none" when PMIX_PARENT_ID is not found), then does the action given for its rank
 * (R=ACTION) or the default one (ACTION): ok (exit 0) | exit:K | sleep (prints "child pid <pid>",
 * then waits forever) | until:PATH (prints "child pid <pid>", waits up to 60 s for PATH to exist,
 * then prints "child done" and exits 0, or 1 at the deadline). */
#define _GNU_SOURCE /* nanosleep */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned get_u32(const pmix_proc_t *p, const char *key) {
    pmix_value_t *v = NULL;
    unsigned out = 9999;
    if (PMIx_Get(p, key, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_UINT32) out = v->data.uint32;
        if (v->type == PMIX_PROC_RANK) out = v->data.rank;
        if (v->type == PMIX_UINT16) out = v->data.uint16;
        PMIX_VALUE_RELEASE(v);
    }
    return out;
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 90;
    const char *action = "ok";
    for (int i = 1; i < argc; ++i)
        if (strchr(argv[i], '=') == NULL) action = argv[i];
    for (int i = 1; i < argc; ++i) {
        const char *eq = strchr(argv[i], '=');
        if (eq && (unsigned)atoi(argv[i]) == me.rank) action = eq + 1;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    char parent[PMIX_MAX_NSLEN + 32] = "none";
    pmix_value_t *v = NULL;
    if (PMIx_Get(&job, PMIX_PARENT_ID, NULL, 0, &v) == PMIX_SUCCESS) {
        snprintf(parent, sizeof parent, "%s:%u", v->data.proc->nspace, v->data.proc->rank);
        PMIX_VALUE_RELEASE(v);
    }
    int spawned = -1;
    if (PMIx_Get(&job, PMIX_SPAWNED, NULL, 0, &v) == PMIX_SUCCESS) {
        spawned = v->data.flag;
        PMIX_VALUE_RELEASE(v);
    }
    char cwd[4096] = "";
    (void)!getcwd(cwd, sizeof cwd);
    const char *var = getenv("SPAWN_TEST_VAR");
    printf(
        "child %s rank %u size %u appnum %u apprank %u appsize %u appldr %u parent %s "
        "spawned %d arg %s var %s localrank %u noderank %u cwd %s\n",
        me.nspace, me.rank, get_u32(&job, PMIX_JOB_SIZE), get_u32(&me, PMIX_APPNUM),
        get_u32(&me, PMIX_APP_RANK), get_u32(&me, PMIX_APP_SIZE), get_u32(&me, PMIX_APPLDR), parent,
        spawned, argc > 1 ? argv[1] : "-", var ? var : "-", get_u32(&me, PMIX_LOCAL_RANK),
        get_u32(&me, PMIX_NODE_RANK), cwd);
    fflush(stdout);
    if (strncmp(action, "until:", 6) == 0) {
        printf("child pid %d\n", (int)getpid());
        fflush(stdout);
        for (int waited_ms = 0; access(action + 6, F_OK) != 0; waited_ms += 10) {
            if (waited_ms >= 60000) return 1;
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
        printf("child done\n");
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(action, "sleep") == 0) {
        printf("child pid %d\n", (int)getpid());
        fflush(stdout);
        for (;;) pause();
    }
    PMIx_Finalize(NULL, 0);
    return strncmp(action, "exit:", 5) == 0 ? atoi(action + 5) : 0;
}
