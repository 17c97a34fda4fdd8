/* comm/rendezvous_tcp: rank 0's listening port and the socket steps the liveness channel's
 * rendezvous is built from (comm/tcp.h; the wire format is in comm.h).  Plain POSIX sockets; every
 * blocking step is a poll() bounded by the caller's deadline, so a missing node ends in an error
 * naming the address, never a hang. */
#define _GNU_SOURCE /* accept4 */
#include "instbench/comm.h"
#include "comm/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STOP_POLL_MS 250 /* how often a wait looks at the stop flag */

static const volatile sig_atomic_t *g_comm_stop;

void comm_set_stop(const volatile sig_atomic_t *stop) { g_comm_stop = stop; }

int comm_stopped(void) { return g_comm_stop ? *g_comm_stop : 0; }

/* One poll() of at most STOP_POLL_MS: a timeout (0) means look at the deadline and the stop flag again. */
static int poll_slice(struct pollfd *pf, int ms) { return poll(pf, 1, ms > STOP_POLL_MS ? STOP_POLL_MS : ms); }

/* HEED_STOP 0: a stopping process's last words (tcp_send_final), bounded by DEADLINE alone. */
static int remaining_ms(double deadline, int heed_stop)
{
    if (heed_stop && comm_stopped()) return 0;
    double left = deadline - util_now_seconds();
    if (left <= 0) return 0;
    return left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

int tcp_remaining_ms(double deadline) { return remaining_ms(deadline, 1); }

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Moves N bytes through FD (WRITING 1: sends BUF, else reads into it) before DEADLINE, *DONE
 * saying how many went: 0 (all of them), -1 (the other end closed, or an error), -2 (the deadline,
 * or with HEED_STOP the stop flag).  HEED_STOP 0: a stopping process's last words. */
static int transfer(int fd, void *buf, size_t n, int writing, double deadline, int heed_stop, size_t *done)
{
    char *p = buf;
    *done = 0;
    while (*done < n) {
        struct pollfd pf = {fd, (short)(writing ? POLLOUT : POLLIN), 0};
        int ms = remaining_ms(deadline, heed_stop);
        if (ms == 0) return -2;
        int r = poll_slice(&pf, ms);
        if ((r < 0 && errno == EINTR) || r == 0) continue;
        if (r < 0) return -1;
        ssize_t k = writing ? send(fd, p + *done, n - *done, MSG_NOSIGNAL) : recv(fd, p + *done, n - *done, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (k <= 0) return -1;
        *done += (size_t)k;
    }
    return 0;
}

int tcp_io_all(int fd, void *buf, size_t n, int writing, double deadline)
{
    size_t done;
    return transfer(fd, buf, n, writing, deadline, 1, &done) ? -1 : 0;
}

int tcp_send_final(int fd, const void *buf, size_t n, double deadline)
{
    size_t done;
    return transfer(fd, (void *)buf, n, 1, deadline, 0, &done) ? -1 : 0;
}

int tcp_read_within(int fd, void *buf, size_t n, double deadline, size_t *got)
{
    return transfer(fd, buf, n, 0, deadline, 1, got);
}

int tcp_read_final(int fd, void *buf, size_t n, double deadline, size_t *got)
{
    return transfer(fd, buf, n, 0, deadline, 0, got);
}

static int set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void tcp_peer_address(int fd, char *addr, size_t cap)
{
    struct sockaddr_storage a;
    socklen_t al = sizeof a;
    char host[INET6_ADDRSTRLEN] = "?";
    if (getpeername(fd, (struct sockaddr *)&a, &al) == 0) {
        if (a.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a)->sin6_addr, host, sizeof host);
        else if (a.ss_family == AF_INET) inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, host, sizeof host);
    }
    /* an IPv4 peer of a dual-stack socket: show the address people typed */
    const char *shown = !strncmp(host, "::ffff:", 7) && strchr(host + 7, '.') ? host + 7 : host;
    snprintf(addr, cap, "%s", shown);
}

void tcp_keepalive(int fd)
{
    /* Best effort: where an option is missing the OS defaults apply (Linux: hours), and NCCL's
     * own timeout (INSTBENCH_NCCL_TIMEOUT_S) still bounds the job. */
    int one = 1, idle = TCP_KEEPIDLE_S, intvl = TCP_KEEPINTVL_S, cnt = TCP_KEEPCNT_N;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
#ifdef TCP_KEEPIDLE
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
#endif
#ifdef TCP_KEEPINTVL
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
#endif
#ifdef TCP_KEEPCNT
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
#endif
#ifdef TCP_USER_TIMEOUT
    unsigned user_ms = TCP_DEAD_AFTER_S * 1000u;
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
#endif
    (void)idle, (void)intvl, (void)cnt;
}

int rendezvous_tcp_listen(int port, rendezvous_tcp_server *s, ib_error *err)
{
    s->fd = -1;
    s->port = 0;
    if (port < 0 || port > 65535)
        return ib_error_set(err, IB_EXIT_USAGE, "rendezvous port %d outside [0, 65535]", port);
    /* IPv6 socket accepting IPv4 too where the host allows it; plain IPv4 otherwise */
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, zero = 0;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a6;
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_addr = in6addr_any;
        a6.sin6_port = htons((uint16_t)port);
        if (bind(fd, (struct sockaddr *)&a6, sizeof a6) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: socket: %s", strerror(errno));
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a4;
        memset(&a4, 0, sizeof a4);
        a4.sin_family = AF_INET;
        a4.sin_addr.s_addr = htonl(INADDR_ANY);
        a4.sin_port = htons((uint16_t)port);
        if (bind(fd, (struct sockaddr *)&a4, sizeof a4) != 0) {
            int e = errno;
            close(fd);
            return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: cannot listen on port %d: %s%s", port, strerror(e),
                                e == EADDRINUSE ? " (another process holds it: another rank 0, two processes given "
                                                  "RANK 0, or another program; pick another --master-port)"
                                                : "");
        }
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    if (listen(fd, 128) != 0 || getsockname(fd, (struct sockaddr *)&bound, &bl) != 0 || set_nonblocking(fd) != 0) {
        int e = errno;
        close(fd);
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: listen on port %d: %s", port, strerror(e));
    }
    s->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                          : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    s->fd = fd;
    return 0;
}

void rendezvous_tcp_close(rendezvous_tcp_server *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

int tcp_accept_pending(int lfd, char *addr, size_t cap)
{
    for (;;) {
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0 && errno == EINTR) continue;
        if (c < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2; /* -2: it went away, or no fd */
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        tcp_peer_address(c, addr, cap);
        return c;
    }
}

int tcp_accept(int lfd, double deadline, char *addr, size_t cap)
{
    for (;;) {
        struct pollfd pf = {lfd, POLLIN, 0};
        int ms = tcp_remaining_ms(deadline);
        if (ms == 0) return -1;
        int r = poll_slice(&pf, ms);
        if ((r < 0 && errno == EINTR) || r == 0) continue;
        if (r < 0) return -1;
        int c = tcp_accept_pending(lfd, addr, cap);
        if (c >= 0) return c; /* else the peer went away between poll and accept */
    }
}

/* One non-blocking connect attempt bounded by the deadline: the socket, or -1 with *REFUSED 1 when
 * the other end refused the connection (nothing listens on the port), -1 when the deadline (or
 * the stop flag) came first, else 0. */
static int connect_once(const struct addrinfo *ai, double deadline, int *refused)
{
    *refused = 0;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) return -1;
    if (set_nonblocking(fd) != 0) {
        close(fd);
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
    if (errno != EINPROGRESS) {
        *refused = errno == ECONNREFUSED;
        close(fd);
        return -1;
    }
    struct pollfd pf = {fd, POLLOUT, 0};
    int ms = tcp_remaining_ms(deadline);
    if (ms > 2000) ms = 2000; /* an unreachable host: retry rather than hang in one attempt */
    const double until = util_now_seconds() + ms / 1000.0;
    int r = 0, so = 0;
    socklen_t sl = sizeof so;
    while ((ms = tcp_remaining_ms(until)) > 0 && ((r = poll_slice(&pf, ms)) == 0 || (r < 0 && errno == EINTR))) r = 0;
    if (r != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0) {
        *refused = r == 1 ? so == ECONNREFUSED : r == 0 && tcp_remaining_ms(deadline) == 0 ? -1 : 0;
        close(fd);
        return -1;
    }
    return fd;
}

/* A name the resolver says does not exist (EAI_NONAME, EAI_FAIL) is asked again for TCP_NAME_WAIT_S:
 * cluster DNS can lag at a job's start (Kubernetes' DNS has a pod's name once the pod is ready and
 * caches a "no such name" for 5 s; a new node's name may reach a site's DNS a little late), but
 * not by half a minute, and a name mistyped would otherwise hold the job for the whole limit.  A
 * temporary failure (EAI_AGAIN: no DNS server answered) is asked again until the deadline. */

static int name_unknown(int gai)
{
#ifdef EAI_NODATA /* glibc's "no address for this name", under _GNU_SOURCE */
    if (gai == EAI_NODATA) return 1;
#endif
    return gai == EAI_NONAME || gai == EAI_FAIL;
}

int tcp_connect_until(const char *addr, int port, double deadline, int (*handshake)(int fd, void *arg),
                      void (*waiting)(void *arg, int gai, double refused_s), void *arg, int *gai, double *refused_s)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    *gai = EAI_AGAIN; /* not resolved yet */
    *refused_s = 0;
    double unknown_since = 0, refused_since = 0;
    for (;;) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        const int rc = getaddrinfo(addr, ps, &hints, &res);
        if (rc != 0) *gai = rc;
        if (name_unknown(rc)) {
            const double now = util_now_seconds();
            if (!unknown_since) unknown_since = now;
            if (now - unknown_since >= TCP_NAME_WAIT_S) return -2;
        }
        if (rc == 0) {
            *gai = 0;
            int all_refused = 1; /* an attempt the deadline cut short says nothing */
            for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                int refused, fd = connect_once(ai, deadline, &refused);
                all_refused = all_refused && refused != 0;
                if (fd < 0) continue;
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                if (handshake(fd, arg) == 0) {
                    freeaddrinfo(res);
                    return fd;
                }
                close(fd);
            }
            freeaddrinfo(res);
            if (!all_refused) refused_since = 0;
            else if (!refused_since) refused_since = util_now_seconds();
        }
        *refused_s = refused_since ? util_now_seconds() - refused_since : 0;
        int left = tcp_remaining_ms(deadline);
        if (left == 0) return -1;
        if (waiting) waiting(arg, *gai, *refused_s);
        sleep_ms(left < 200 ? left : 200);
    }
}
