/* master_here: whether rank 0's process runs where the others will look for it.  Rank 0 listens
 * on every interface, so a RANK=0 started on the wrong machine (torchrun --node-rank 0 on two
 * hosts, MASTER_ADDR naming another node) waits out its whole limit while the others knock at
 * MASTER_ADDR; it can say so at once.  An address is this machine's when a socket can bind to it
 * (the kernel's own answer, loopback's 127/8 and ::1 included; EADDRNOTAVAIL otherwise), which
 * needs neither getifaddrs nor privileges. */
#include "instbench/bench.h"
#include "instbench/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* 1: ADDR (one resolved address) is this machine's, 0: it is not, -1: cannot tell */
static int bindable(const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_storage a;
    memcpy(&a, sa, len);
    if (a.ss_family == AF_INET) ((struct sockaddr_in *)&a)->sin_port = 0;
    else ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    const int rc = bind(fd, (struct sockaddr *)&a, len) == 0 ? 1 : errno == EADDRNOTAVAIL ? 0 : -1;
    close(fd);
    return rc;
}

int rendezvous_master_here(const char *host, char *shown, size_t shown_len)
{
    if (shown_len) shown[0] = '\0';
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    if (!host || !host[0] || getaddrinfo(host, NULL, &hints, &res) != 0 || !res) return -1;
    /* here when any of its addresses is (a name may resolve to a loopback and a LAN address);
     * not here only when every one is refused outright */
    int verdict = 0;
    size_t used = 0;
    for (const struct addrinfo *ai = res; ai && verdict != 1; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
        const int b = bindable(ai->ai_addr, ai->ai_addrlen);
        if (b < 0) verdict = -1;
        if (b == 1) verdict = 1;
        char text[INET6_ADDRSTRLEN] = "";
        const void *raw = ai->ai_family == AF_INET ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                                                   : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
        if (inet_ntop(ai->ai_family, raw, text, sizeof text) && used < shown_len && !strstr(shown, text)) {
            int n = snprintf(shown + used, shown_len - used, "%s%s", used ? ", " : "", text);
            if (n > 0) used += (size_t)n < shown_len - used ? (size_t)n : shown_len - used - 1;
        }
    }
    freeaddrinfo(res);
    return verdict;
}

void rendezvous_check_master(const bench_rendezvous *r, int ranks)
{
    char shown[160];
    /* said, not refused: behind NAT or a container's published port, the address the others
     * reach is not one this machine has */
    if (r->rank == 0 && r->world_size > ranks && strcmp(r->kind, "none") &&
        rendezvous_master_here(r->master_addr, shown, sizeof shown) == 0)
        ib_warn("this process is rank 0, but MASTER_ADDR %s (%s) is not an address of this machine: the other "
                "processes look for rank 0 there (RANK=0 or --node-rank 0 on the wrong node?  Behind NAT or a "
                "container's published port, ignore this)",
                r->master_addr, shown);
}
