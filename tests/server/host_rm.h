/* The test host's RFC0015/RFC0010 upcalls (host_rm.c): job control, monitoring, queries,
 * logging. host.c provides say() and the job's state. */
#ifndef ZPMIX_TESTS_SERVER_HOST_RM_H
#define ZPMIX_TESTS_SERVER_HOST_RM_H

#include <pmix_server.h>
#include <stdbool.h>
#include <sys/types.h>

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The pid of a rank of the job this host started (0: not on this node, or not started). */
pid_t host_pid_of(int rank);
/* The job's size, the node a rank runs on (its name), the program the job runs (its path). */
int host_job_size(void);
const char *host_node_of(int rank);
bool host_runs_here(int rank);
const char *host_program(void);
/* --forward-io: whether the host forwards its ranks' I/O (then iof_pull hands nothing of its
 * own to the library); writes what push_stdin got to rank 0's stdin, ended when complete. */
bool host_forwards_io(void);
bool host_push_stdin(const pmix_proc_t targets[], size_t ntargets, const pmix_byte_object_t *bo,
                     bool complete);
/* Sets the upcalls of host_rm.c into module. */
void rm_upcalls(pmix_server_module_t *module);

#endif
