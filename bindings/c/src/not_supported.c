/* zpmix: every PMIx API function that zpmix does not implement yet. Each returns
 * PMIX_ERR_NOT_SUPPORTED (or the neutral value for non-status returns); later work replaces
 * them one by one, so keep one small block per function, in alphabetical order. */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults) {
    (void)directive;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)directive;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t *distances[],
                                                 size_t *ndist) {
    (void)topo;
    (void)cpuset;
    (void)info;
    (void)ninfo;
    (void)distances;
    (void)ndist;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc,
                                                    void *cbdata) {
    (void)topo;
    (void)cpuset;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo) {
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                    size_t *nbytes) {
    (void)inbytes;
    (void)size;
    (void)outbytes;
    (void)nbytes;
    return false;
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type) {
    (void)dest;
    (void)src;
    (void)type;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes,
                                      size_t *nbytes) {
    (void)inbytes;
    (void)size;
    (void)outbytes;
    (void)nbytes;
    return false;
}

PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer,
                                         void *src, int32_t num_vals, pmix_data_type_t type) {
    (void)target;
    (void)buffer;
    (void)src;
    (void)num_vals;
    (void)type;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src,
                                          pmix_data_type_t type) {
    (void)output;
    (void)prefix;
    (void)src;
    (void)type;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer,
                                           void *dest, int32_t *max_num_values,
                                           pmix_data_type_t type) {
    (void)source;
    (void)buffer;
    (void)dest;
    (void)max_num_values;
    (void)type;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo) {
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t ranges[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)ranges;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

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

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn) {
    (void)input;
    (void)ppn;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex) {
    (void)input;
    (void)regex;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref) {
    (void)cpuset;
    (void)ref;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential) {
    (void)info;
    (void)ninfo;
    (void)credential;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                                     pmix_locality_t *locality) {
    (void)locality1;
    (void)locality2;
    (void)locality;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[],
                                            size_t nprocs, const pmix_info_t info[], size_t ninfo,
                                            pmix_info_t **results, size_t *nresult) {
    (void)grp;
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresult;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[],
                                               size_t nprocs, const pmix_info_t info[],
                                               size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                               void *cbdata) {
    (void)grp;
    (void)procs;
    (void)nprocs;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt, const pmix_info_t info[],
                                          size_t ninfo, pmix_info_t **results, size_t *nresult) {
    (void)grp;
    (void)leader;
    (void)opt;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresult;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[],
                                             size_t ninfo, pmix_info_cbfunc_t cbfunc,
                                             void *cbdata) {
    (void)grp;
    (void)leader;
    (void)opt;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[],
                                           size_t ninfo) {
    (void)grp;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)grp;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)iofhdlr;
    (void)directives;
    (void)ndirs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata) {
    (void)procs;
    (void)nprocs;
    (void)directives;
    (void)ndirs;
    (void)channel;
    (void)cbfunc;
    (void)regcbfunc;
    (void)regcbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)targets;
    (void)ntargets;
    (void)bo;
    (void)directives;
    (void)ndirs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo) {
    (void)topo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT void PMIx_Progress(void) {}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t **results, size_t *nresults) {
    (void)queries;
    (void)nqueries;
    (void)results;
    (void)nresults;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)queries;
    (void)nqueries;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]) {
    (void)function;
    (void)attrs;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)directives;
    (void)ndirs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members,
                                                         size_t nmembers, const char *pset_name) {
    (void)members;
    (void)nmembers;
    (void)pset_name;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name) {
    (void)pset_name;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    (void)directives;
    (void)ndirs;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    (void)proc;
    (void)cbfunc;
    (void)cbdata;
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    (void)nspace;
    (void)cbfunc;
    (void)cbdata;
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata) {
    (void)proc;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void) {
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string) {
    (void)cpuset;
    (void)cpuset_string;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality) {
    (void)cpuset;
    (void)locality;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo) {
    (void)module;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)source;
    (void)channel;
    (void)bo;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata) {
    (void)proc;
    (void)uid;
    (void)gid;
    (void)server_object;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)nspace;
    (void)nlocalprocs;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace,
                                                        pmix_info_t info[], size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata) {
    (void)nspace;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env) {
    (void)proc;
    (void)env;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                                          pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)nspace;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo) {
    (void)myproc;
    (void)server;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[],
                                                      size_t ninfo) {
    (void)proc;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server) {
    (void)server;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers) {
    (void)servers;
    (void)nservers;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    (void)proc;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo) {
    (void)server;
    (void)info;
    (void)ninfo;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                                   const pmix_info_t info[], size_t ninfo,
                                                   pmix_info_t **results, size_t *nresults) {
    (void)cred;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc,
                                                      void *cbdata) {
    (void)cred;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}
