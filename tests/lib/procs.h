/* procs: helpers of the tests that fork processes which meet over the real rendezvous
 * (comm_liveness, comm_rendezvous_errors, cuda_dp_procs, cuda_dp_sim, cuda_dp_module). */
#ifndef INSTBENCH_TESTS_PROCS_H
#define INSTBENCH_TESTS_PROCS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "instbench/util.h"

/* A TCP port nothing listens on now: the kernel's pick for port 0 on loopback, released for the
 * rendezvous to bind.  Another program can take it in between (ctest -j, a busy CI machine), and
 * the rendezvous has no way to be handed a bound socket, so a test whose rank 0 listens on it
 * runs its case again on another port, PORT_TRIES times in all, when rank 0 finds it taken
 * (port_taken), and only then: any other failure stands. */
static inline int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

enum { PORT_TRIES = 3 };

/* SAID, rank 0's error, is that its port was taken: the rendezvous names bind's EADDRINUSE. */
static inline int port_taken(const char *said) { return strstr(said, strerror(EADDRINUSE)) != NULL; }

/* The next line a child writes to FD within MS milliseconds, without its newline, into LINE
 * [CAP]; "" when none came (or it was longer than CAP - 1). */
static inline const char *read_line_within(int fd, char *line, size_t cap, int ms)
{
    size_t n = 0;
    const double deadline = util_now_seconds() + ms / 1000.0;
    while (n + 1 < cap) {
        int left = (int)((deadline - util_now_seconds()) * 1000);
        struct pollfd pf = {fd, POLLIN, 0};
        char c;
        if (left <= 0 || poll(&pf, 1, left) != 1 || read(fd, &c, 1) != 1) break;
        if (c == '\n') {
            line[n] = '\0';
            return line;
        }
        line[n++] = c;
    }
    line[0] = '\0';
    return line;
}

/* A forked process of a test and the pipe it reports on, a line at a time (proc_next_line). */
typedef struct proc {
    pid_t pid; /* -1: none (the pipe or the fork failed) */
    int out;   /* the pipe's read end */
    char line[1200];
} proc;

/* Forks a process that reports on a pipe.  In the child: pid 0 and *CHILD_OUT the pipe's write
 * end.  In the parent: the process, or pid -1 with errno when the pipe or the fork failed. */
static inline proc proc_fork(int *child_out)
{
    proc p = {.pid = -1, .out = -1};
    int o[2];
    if (pipe(o)) return p;
    fflush(stdout), fflush(stderr); /* nothing buffered is written twice */
    p.pid = fork();
    if (p.pid == 0) {
        close(o[0]);
        *child_out = o[1];
        return p;
    }
    close(o[1]);
    if (p.pid < 0) close(o[0]);
    else p.out = o[0];
    return p;
}

/* P's next line within MS milliseconds, "" when none came. */
static inline const char *proc_next_line(proc *p, int ms)
{
    return read_line_within(p->out, p->line, sizeof p->line, ms);
}

#endif
