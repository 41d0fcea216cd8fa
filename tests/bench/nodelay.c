/* LD_PRELOAD shim for the comparison runs: sets TCP_NODELAY on every TCP socket a process
 * connects or accepts. OpenPMIx's clients and server talk over loopback TCP and leave Nagle's
 * algorithm on, so its small event messages wait up to 40 ms for an ACK; with this the event
 * benchmark compares the two implementations' own work, not Nagle. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static void nodelay(int fd) {
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &n) == 0 &&
        (a.ss_family == AF_INET || a.ss_family == AF_INET6)) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    int rc = real(fd, addr, len);
    nodelay(fd);
    return rc;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    static int (*real)(int, struct sockaddr *, socklen_t *);
    if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
    int s = real(fd, addr, len);
    if (s >= 0) nodelay(s);
    return s;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    static int (*real)(int, struct sockaddr *, socklen_t *, int);
    if (!real)
        real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
    int s = real(fd, addr, len, flags);
    if (s >= 0) nodelay(s);
    return s;
}
