/* zpmix_rank_prog [R=]ACTION...: a test rank. Prints "rank R pid P", then does the action given
 * for its rank (R=ACTION) or the default one (ACTION):
 *   ok | exit:K | exit:K:DIR:N (once DIR holds N files) | signal:S | sleep (forever) |
 *   sleep:DIR (forever, after creating DIR/<rank>) | env:VAR (prints VAR=value) | cpus (prints the
 *   number of CPUs it may run on) | noeol:TEXT (prints TEXT without a newline, exits 0). */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *r = getenv("PMIX_RANK");
    const int rank = r ? atoi(r) : -1;
    const char *action = "ok";
    for (int i = 1; i < argc; ++i) {
        const char *eq = strchr(argv[i], '=');
        const char *colon = strchr(argv[i], ':');
        if (!eq || (colon && colon < eq)) action = argv[i];
    }
    for (int i = 1; i < argc; ++i) {
        const char *eq = strchr(argv[i], '=');
        const char *colon = strchr(argv[i], ':');
        if (eq && (!colon || eq < colon) && atoi(argv[i]) == rank) action = eq + 1;
    }
    printf("rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    if (strncmp(action, "exit:", 5) == 0) {
        const char *dir = strchr(action + 5, ':');
        if (dir) { /* a test's rendezvous: the others are up, so their pids were printed */
            char path[4096];
            snprintf(path, sizeof path, "%.*s", (int)(strrchr(dir, ':') - dir - 1), dir + 1);
            const int want = atoi(strrchr(dir, ':') + 1);
            /* Waits for the files' creation (inotify), at most 60 s so that a broken test fails
               instead of hanging. */
            const int in = inotify_init1(IN_CLOEXEC);
            if (in < 0 || inotify_add_watch(in, path, IN_CREATE | IN_MOVED_TO) < 0) return 97;
            for (int waited_ms = 0;;) {
                int n = 0;
                DIR *d = opendir(path);
                for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
                if (d) closedir(d);
                if (n >= want) break;
                struct pollfd p = {in, POLLIN, 0};
                if (waited_ms >= 60000 || poll(&p, 1, 1000) < 0) return 98;
                if (p.revents & POLLIN) {
                    char buf[4096];
                    (void)!read(in, buf, sizeof buf);
                } else {
                    waited_ms += 1000;
                }
            }
            close(in);
        }
        return atoi(action + 5);
    }
    if (strncmp(action, "signal:", 7) == 0) {
        raise(atoi(action + 7));
        return 99;
    }
    if (strncmp(action, "sleep:", 6) == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d", action + 6, rank);
        fclose(fopen(path, "w"));
        for (;;) pause();
    }
    if (strcmp(action, "sleep") == 0) {
        for (;;) pause();
    }
    if (strncmp(action, "env:", 4) == 0) {
        const char *v = getenv(action + 4);
        printf("%s=%s\n", action + 4, v ? v : "(unset)");
        return 0;
    }
    if (strcmp(action, "cpus") == 0) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        printf("cpus %d\n", CPU_COUNT(&set));
        return 0;
    }
    if (strncmp(action, "noeol:", 6) == 0) {
        fputs(action + 6, stdout);
        return 0;
    }
    return 0;
}
