/* comm/tcp: the socket steps of the rendezvous (rendezvous_tcp.c) that the liveness channel
 * (liveness*.c) is built from.  Private to src/comm.  Every wait is bounded by a deadline on
 * util_now_seconds()'s clock; sockets are non-blocking. */
#ifndef INSTBENCH_COMM_TCP_H
#define INSTBENCH_COMM_TCP_H

#include <stddef.h>

/* Milliseconds left before DEADLINE for poll(): 0 once it has passed. */
int tcp_remaining_ms(double deadline);
/* Full read (writing 0) or write (1) of N bytes before DEADLINE: 0, or -1 (deadline, error, EOF). */
int tcp_io_all(int fd, void *buf, size_t n, int writing, double deadline);
/* Reads N bytes before DEADLINE, *GOT saying how many came: 0 (all of them), -1 (the other end
 * closed, or an error), -2 (the deadline, or the stop flag). */
int tcp_read_within(int fd, void *buf, size_t n, double deadline, size_t *got);
/* A stopping process's last words (an 'F' frame, a refusal and the wait for its reader to close):
 * tcp_io_all's write and tcp_read_within, bounded by DEADLINE alone instead of ending at once when
 * the stop flag is set, so that a process stopped by a signal still tells the others why. */
int tcp_send_final(int fd, const void *buf, size_t n, double deadline);
int tcp_read_final(int fd, void *buf, size_t n, double deadline, size_t *got);
/* The next connection on listening socket LFD before DEADLINE, non-blocking with TCP_NODELAY, its
 * numeric peer address in ADDR (never empty): the socket, or -1 at the deadline. */
int tcp_accept(int lfd, double deadline, char *addr, size_t cap);
/* The same without waiting: a connection already waiting on LFD, or -1 when none does (-2 when
 * one went away before it was taken: ask again). */
int tcp_accept_pending(int lfd, char *addr, size_t cap);
/* Connects to ADDR:PORT until DEADLINE, retrying (the listener may start later), and runs
 * HANDSHAKE on each connected socket; the first socket whose handshake returns 0 is returned,
 * the others closed.  -1 at the deadline; -2 before it when the resolver has said for TCP_NAME_WAIT_S
 * that ADDR does not exist.  *GAI: 0 once ADDR resolved, else getaddrinfo's last error.
 * *REFUSED_S: for how long every attempt up to the end was refused (nothing listening), else 0.
 * WAITING (may be NULL) is called with ARG, *GAI and *REFUSED_S after each round of attempts that
 * did not connect (about 5 a second), so the caller can say it is still waiting. */
int tcp_connect_until(const char *addr, int port, double deadline, int (*handshake)(int fd, void *arg),
                      void (*waiting)(void *arg, int gai, double refused_s), void *arg, int *gai, double *refused_s);
#define TCP_NAME_WAIT_S 30.0 /* why: rendezvous_tcp.c, above tcp_connect_until */
/* The numeric address of FD's other end ("10.0.0.5", "::1"; an IPv4-mapped one without its
 * "::ffff:"), "?" when unknown. */
void tcp_peer_address(int fd, char *addr, size_t cap);
/* TCP keepalive on FD (see TCP_DEAD_AFTER_S) and the same bound on unacknowledged data. */
void tcp_keepalive(int fd);
/* A node that vanishes without closing its sockets (power cut, network gone) is seen after at
 * most this long: keepalive probes start after KEEPIDLE s of silence, every KEEPINTVL s, and
 * KEEPCNT unanswered ones close the connection (TCP_USER_TIMEOUT bounds unacknowledged data). */
#define TCP_KEEPIDLE_S 5
#define TCP_KEEPINTVL_S 2
#define TCP_KEEPCNT_N 4
#define TCP_DEAD_AFTER_S (TCP_KEEPIDLE_S + TCP_KEEPINTVL_S * TCP_KEEPCNT_N)

#endif
