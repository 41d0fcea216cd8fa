/* zpmix: every PMIx API function that zpmix does not implement yet. Each returns
 * PMIX_ERR_NOT_SUPPORTED (or the neutral value for non-status returns); later work replaces
 * them one by one, so keep one small block per function, in alphabetical order. */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric) {
    (void)fabric;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                                    void *cbdata) {
    (void)fabric;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                               const pmix_info_t directives[], size_t ndirs) {
    (void)fabric;
    (void)directives;
    (void)ndirs;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)fabric;
    (void)directives;
    (void)ndirs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric) {
    (void)fabric;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric, pmix_op_cbfunc_t cbfunc,
                                                void *cbdata) {
    (void)fabric;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}
