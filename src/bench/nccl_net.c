/* nccl_net: which network NCCL chose between the nodes, read from NCCL itself.  Once it has picked
 * its net transport NCCL logs, at INFO level, "Using network <name>": "Socket" (TCP), "IB"
 * (InfiniBand verbs; "IBext"/"IBext_vN": NVIDIA's HPC-X plugin, the same verbs), or a plugin's name
 * ("AWS Libfabric" / "Libfabric": aws-ofi-nccl, whose own
 * lines say which libfabric provider it selected, "efa" on EFA instances).  measure asks NCCL to
 * write that log to a file of its own (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET,
 * NCCL_DEBUG_FILE in a private directory) when the user set neither NCCL_DEBUG nor
 * NCCL_DEBUG_FILE (their log stays theirs), reads it once the communicators exist, and removes it. */
#include "instbench/bench.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LOG_MAX = 4 << 20 };

static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n)) return p;
    return NULL;
}

/* NVIDIA's own net plugin (nccl-rdma-sharp-plugins, shipped in HPC-X and NGC's images) is InfiniBand
 * verbs too: it registers as "IBext", and from its versioned plugin APIs on as "IBext_v<N>" (src/
 * ib_plugin.c, .name = "IBext_v8" ... "IBext_v11" at Mellanox/nccl-rdma-sharp-plugins 2f5ac02e). */
static int is_ibext(const char *name)
{
    if (strncmp(name, "IBext", 5)) return 0;
    const char *v = name + 5;
    if (!*v) return 1;
    if (strncmp(v, "_v", 2) || !v[2]) return 0;
    for (v += 2; *v; v++)
        if (!isdigit((unsigned char)*v)) return 0;
    return 1;
}

void nccl_net_from_log(const char *log, char *name, size_t name_len, char *transport, size_t tlen)
{
    snprintf(name, name_len, "%s", "");
    snprintf(transport, tlen, "%s", "unknown");
    const char *key = "Using network ", *last = NULL;
    for (const char *p = strstr(log, key); p; p = strstr(p + 1, key)) last = p + strlen(key);
    if (!last) return;
    size_t n = 0;
    while (last[n] && last[n] != '\n' && last[n] != '\r' && n + 1 < name_len) n++;
    while (n > 0 && isspace((unsigned char)last[n - 1])) n--;
    /* the name is NCCL's or a plugin's: printable text only goes into the result */
    for (size_t i = 0; i < n; i++) name[i] = isprint((unsigned char)last[i]) ? last[i] : '?';
    name[n] = '\0';
    if (!strcmp(name, "Socket")) snprintf(transport, tlen, "socket");
    else if (!strcmp(name, "IB") || is_ibext(name)) snprintf(transport, tlen, "infiniband");
    else if (find_ci(name, "libfabric") || find_ci(name, "ofi"))
        /* aws-ofi-nccl says which provider it took: "Selected Provider is efa" (newer: "provider") */
        snprintf(transport, tlen, "%s", find_ci(log, "selected provider is efa") ? "efa" : "other");
    else snprintf(transport, tlen, "other");
}

int nccl_log_begin(bench_nccl_log *l)
{
    memset(l, 0, sizeof *l);
    const char *lvl = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
    if ((lvl && lvl[0]) || (file && file[0])) return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(l->dir, sizeof l->dir, "%s/instbench-nccl-XXXXXX", tmp && tmp[0] && strlen(tmp) < 200 ? tmp : "/tmp");
    if (!mkdtemp(l->dir)) return 0;
    snprintf(l->path, sizeof l->path, "%s/nccl.log", l->dir);
    if (setenv("NCCL_DEBUG", "INFO", 1) || setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1) ||
        setenv("NCCL_DEBUG_FILE", l->path, 1)) {
        unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_SUBSYS"), unsetenv("NCCL_DEBUG_FILE");
        rmdir(l->dir);
        return 0;
    }
    l->active = 1;
    return 1;
}

void nccl_log_end(bench_nccl_log *l, char *name, size_t name_len, char *transport, size_t tlen)
{
    snprintf(name, name_len, "%s", "");
    snprintf(transport, tlen, "%s", "unknown");
    if (!l->active) return;
    l->active = 0;
    unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_SUBSYS"), unsetenv("NCCL_DEBUG_FILE");
    FILE *f = fopen(l->path, "r");
    if (f) {
        char *buf = malloc(LOG_MAX + 1);
        if (buf) {
            size_t n = fread(buf, 1, LOG_MAX, f);
            buf[n] = '\0';
            nccl_net_from_log(buf, name, name_len, transport, tlen);
            free(buf);
        }
        fclose(f);
    }
    /* NCCL keeps the file open for later lines: unlinked, they go nowhere */
    unlink(l->path);
    rmdir(l->dir);
}
