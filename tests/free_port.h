/* free_port: a TCP port nothing listens on now, for tests whose processes meet over the real
 * rendezvous (the kernel's pick for port 0 on loopback; the rendezvous binds it next, so a race
 * with another program is possible but harmless in practice: the test would fail, not hang). */
#ifndef INSTBENCH_TESTS_FREE_PORT_H
#define INSTBENCH_TESTS_FREE_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

#endif
