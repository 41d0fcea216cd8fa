/* Launch cost: a process that only initialises and finalises PMIx. */
#include <pmix.h>
#include <stdio.h>

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
