/* The test host's RFC0015/RFC0010 upcalls (host_rm.c): job control, monitoring, queries,
 * logging. host.c provides say() and the job's state. */
#ifndef ZPMIX_TESTS_SERVER_HOST_RM_H
#define ZPMIX_TESTS_SERVER_HOST_RM_H

#include <pmix_server.h>
#include <sys/types.h>

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The pid of a rank of the job this host started (0: not on this node, or not started). */
pid_t host_pid_of(int rank);
/* Sets the upcalls of host_rm.c into module. */
void rm_upcalls(pmix_server_module_t *module);

#endif
