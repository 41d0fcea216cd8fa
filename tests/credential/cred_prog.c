/* cred_prog MODE FILE: PMIx_Get_credential / PMIx_Validate_credential under `zpmix run`.
 *   get FILE    rank 0 writes a "job" credential to FILE, prints "got job <length>"
 *   check FILE  validates FILE's credential, a forged copy of it, and one of its own made with
 *               PMIx_Get_credential_nb, with the blocking and the _nb call; prints one line each:
 *               "<what> <status name> [uid <u> gid <g>]"
 *   munge FILE  asks for a "munge" credential only: prints "munge <status name>"
 * Every line also goes to stdout at once; the exit code is 0 unless a call broke its contract. */
#define _GNU_SOURCE /* memmem */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done = 0;
static pmix_status_t nb_status;
static char nb_line[256];
static pmix_byte_object_t nb_cred;

static void ids_of(pmix_info_t *info, size_t n, char *out, size_t len) {
    unsigned uid = 9999, gid = 9999;
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_USERID)) uid = info[i].value.data.uint32;
        if (PMIX_CHECK_KEY(&info[i], PMIX_GRPID)) gid = info[i].value.data.uint32;
    }
    snprintf(out, len, " uid %u gid %u", uid, gid);
}

static void wait_done(void) {
    pthread_mutex_lock(&mu);
    while (!done) pthread_cond_wait(&cv, &mu);
    done = 0;
    pthread_mutex_unlock(&mu);
}

static void signal_done(void) {
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

static void validated(pmix_status_t st, pmix_info_t *info, size_t n, void *cbdata) {
    (void)cbdata;
    nb_status = st;
    nb_line[0] = '\0';
    if (st == PMIX_SUCCESS) ids_of(info, n, nb_line, sizeof nb_line);
    signal_done();
}

static void got(pmix_status_t st, pmix_byte_object_t *cred, pmix_info_t *info, size_t n,
                void *cbdata) {
    (void)cbdata;
    nb_status = st;
    nb_line[0] = '\0';
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_CRED_TYPE))
            snprintf(nb_line, sizeof nb_line, " type %s", info[i].value.data.string);
    if (st == PMIX_SUCCESS) {
        nb_cred.size = cred->size;
        nb_cred.bytes = malloc(cred->size);
        memcpy(nb_cred.bytes, cred->bytes, cred->size);
    }
    signal_done();
}

static void check(const char *what, pmix_byte_object_t *cred) {
    pmix_info_t *res = NULL;
    size_t nres = 0;
    char ids[128] = "";
    pmix_status_t st = PMIx_Validate_credential(cred, NULL, 0, &res, &nres);
    if (st == PMIX_SUCCESS) ids_of(res, nres, ids, sizeof ids);
    if (res) PMIX_INFO_FREE(res, nres);
    printf("%s %s%s\n", what, PMIx_Error_string(st), ids);
    if (PMIx_Validate_credential_nb(cred, NULL, 0, validated, NULL) == PMIX_SUCCESS) {
        wait_done();
        printf("%s-nb %s%s\n", what, PMIx_Error_string(nb_status), nb_line);
    } else {
        printf("%s-nb refused\n", what);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    pmix_byte_object_t early = {"x", 1};
    if (PMIx_Validate_credential(&early, NULL, 0, NULL, NULL) != PMIX_ERR_INIT) return 3;
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 4;
    pmix_info_t kind;
    PMIX_INFO_CONSTRUCT(&kind);
    int rc = 0;
    if (strcmp(argv[1], "get") == 0) {
        PMIX_INFO_LOAD(&kind, PMIX_CRED_TYPE, "job", PMIX_STRING);
        pmix_byte_object_t cred = {NULL, 0};
        if (PMIx_Get_credential(&kind, 1, &cred) != PMIX_SUCCESS) return 5;
        FILE *f = fopen(argv[2], "w");
        if (f == NULL || fwrite(cred.bytes, 1, cred.size, f) != cred.size) return 6;
        fclose(f);
        printf("got job %zu\n", cred.size);
        free(cred.bytes);
    } else if (strcmp(argv[1], "check") == 0) {
        char buf[4096];
        FILE *f = fopen(argv[2], "r");
        if (f == NULL) return 7;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        pmix_byte_object_t foreign = {buf, n};
        check("foreign", &foreign);
        PMIX_INFO_LOAD(&kind, PMIX_CRED_TYPE, "job", PMIX_STRING);
        if (PMIx_Get_credential_nb(&kind, 1, got, NULL) != PMIX_SUCCESS) return 8;
        wait_done();
        printf("get-nb %s%s\n", PMIx_Error_string(nb_status), nb_line);
        check("own", &nb_cred);
        nb_cred.bytes[nb_cred.size - 3] ^= 1; /* a bit of the MAC */
        check("forged", &nb_cred);
        nb_cred.bytes[nb_cred.size - 3] ^= 1;
        /* The namespace, MAC kept (a credential is bytes, not a string). */
        char *ns = memmem(nb_cred.bytes, nb_cred.size, ":1:", 3);
        if (ns == NULL) return 9;
        ns[3] = 'x';
        check("renamed", &nb_cred);
        pmix_byte_object_t junk = {"MUNGE:not-a-credential", 22};
        check("junk-munge", &junk);
        free(nb_cred.bytes);
    } else if (strcmp(argv[1], "munge") == 0) {
        PMIX_INFO_LOAD(&kind, PMIX_CRED_TYPE, "munge", PMIX_STRING);
        pmix_byte_object_t cred = {NULL, 0};
        pmix_status_t st = PMIx_Get_credential(&kind, 1, &cred);
        printf("munge %s\n", PMIx_Error_string(st));
        if (st == PMIX_SUCCESS) check("munge-own", &cred);
        free(cred.bytes);
    } else {
        rc = 2;
    }
    PMIX_INFO_DESTRUCT(&kind);
    PMIx_Finalize(NULL, 0);
    return rc;
}
