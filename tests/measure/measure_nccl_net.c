/* Which network NCCL chose, from NCCL's own INFO log (src/bench/nccl_net.c): the log lines as NCCL
 * 2.x and aws-ofi-nccl print them ("<host>:<pid>:<tid> [<dev>] NCCL INFO ..."), each transport,
 * aws-ofi-nccl on a provider other than efa, no line at all, hostile bytes in a name; and the
 * private log file: armed only when the user set neither NCCL_DEBUG nor NCCL_DEBUG_FILE, read as
 * NCCL would have written it, the variables unset and the file and its directory gone afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "instbench/bench.h"

#include "check.h"

static void expect(const char *log, const char *want_name, const char *want_transport)
{
    char name[64], tr[16];
    nccl_net_from_log(log, name, sizeof name, tr, sizeof tr);
    CHECK(!strcmp(name, want_name) && !strcmp(tr, want_transport), "got '%s' %s, want '%s' %s in: %.120s", name, tr,
          want_name, want_transport, log);
}

int main(void)
{
    expect("ip-10-0-0-5:4121:4121 [0] NCCL INFO Bootstrap : Using ens5:10.0.0.5<0>\n"
           "ip-10-0-0-5:4121:4121 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network "
           "plugin.\n"
           "ip-10-0-0-5:4121:4121 [0] NCCL INFO NET/Socket : Using [0]ens5:10.0.0.5<0>\n"
           "ip-10-0-0-5:4121:4121 [0] NCCL INFO Using network Socket\n",
           "Socket", "socket");
    expect("gpu07:88:88 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.1.0.7<0>\n"
           "gpu07:88:88 [3] NCCL INFO Using network IB\r\n",
           "IB", "infiniband");
    expect("ip-172-31-9-1:700:700 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws\n"
           "ip-172-31-9-1:700:700 [0] NCCL INFO NET/OFI Using Libfabric version 1.21\n"
           "ip-172-31-9-1:700:700 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"
           "ip-172-31-9-1:700:700 [0] NCCL INFO Using network AWS Libfabric\n",
           "AWS Libfabric", "efa");
    /* newer aws-ofi-nccl: lower-case "provider", plugin named "Libfabric" */
    expect("h:1:1 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 32 nics)\n"
           "h:1:1 [0] NCCL INFO Using network Libfabric\n",
           "Libfabric", "efa");
    /* libfabric over its tcp provider is not EFA */
    expect("h:1:1 [0] NCCL INFO NET/OFI Selected Provider is tcp\nh:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
           "AWS Libfabric", "other");
    /* NVIDIA's HPC-X plugin (nccl-rdma-sharp-plugins, libnccl-net.so): InfiniBand verbs under the names
     * its src/ib_plugin.c registers, "IBext" (older releases) and "IBext_v<N>" (Mellanox/
     * nccl-rdma-sharp-plugins 2f5ac02e: IBext_v6 ... IBext_v11) */
    expect("dgx1:9:9 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)\n"
           "dgx1:9:9 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB ib0:10.2.0.1<0>\n"
           "dgx1:9:9 [0] NCCL INFO Using network IBext_v8\n",
           "IBext_v8", "infiniband");
    expect("h:1:1 [0] NCCL INFO Using network IBext\n", "IBext", "infiniband");
    expect("h:1:1 [0] NCCL INFO Using network IBext_v11\n", "IBext_v11", "infiniband");
    expect("h:1:1 [0] NCCL INFO Using network IBextra\n", "IBextra", "other");
    expect("h:1:1 [0] NCCL INFO Using network IBext_v\n", "IBext_v", "other");
    expect("h:1:1 [0] NCCL INFO Using network MyNet\n", "MyNet", "other");
    expect("h:1:1 [0] NCCL INFO comm 0x55 rank 0 nranks 2 - Init COMPLETE\n", "", "unknown");
    expect("", "", "unknown");
    /* the last choice wins (a second communicator), control bytes never reach the result */
    expect("x NCCL INFO Using network IB\nx NCCL INFO Using network Sock\033[2Jet\n", "Sock?[2Jet", "other");

    /* the private log, as NCCL writes it */
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_DEBUG_FILE");
    bench_nccl_log l;
    CHECK(nccl_log_begin(&l) == 1, "not armed with NCCL_DEBUG unset");
    const char *path = getenv("NCCL_DEBUG_FILE");
    CHECK(path && getenv("NCCL_DEBUG") && !strcmp(getenv("NCCL_DEBUG"), "INFO"), "NCCL_DEBUG_FILE/NCCL_DEBUG not set");
    char dir[300] = "";
    if (path) {
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        FILE *f = fopen(path, "w");
        CHECK(f != NULL, "cannot write %s", path);
        if (f) {
            fputs("h:2:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)\n"
                  "h:2:2 [0] NCCL INFO Using network AWS Libfabric\n",
                  f);
            fclose(f);
        }
    }
    char name[64], tr[16];
    nccl_log_end(&l, name, sizeof name, tr, sizeof tr);
    CHECK(!strcmp(tr, "efa") && !strcmp(name, "AWS Libfabric"), "log file: '%s' %s", name, tr);
    CHECK(!getenv("NCCL_DEBUG") && !getenv("NCCL_DEBUG_FILE") && !getenv("NCCL_DEBUG_SUBSYS"), "variables left set");
    struct stat st;
    CHECK(dir[0] && stat(dir, &st) != 0, "the log's directory %s is left behind", dir);

    /* the user's own NCCL_DEBUG: left alone, and the network unknown */
    setenv("NCCL_DEBUG", "WARN", 1);
    CHECK(nccl_log_begin(&l) == 0 && !getenv("NCCL_DEBUG_FILE") && !strcmp(getenv("NCCL_DEBUG"), "WARN"),
          "armed over the user's NCCL_DEBUG");
    nccl_log_end(&l, name, sizeof name, tr, sizeof tr);
    CHECK(!strcmp(tr, "unknown") && !strcmp(getenv("NCCL_DEBUG"), "WARN"), "user's NCCL_DEBUG: %s", tr);
    unsetenv("NCCL_DEBUG");
    setenv("NCCL_DEBUG_FILE", "/dev/null", 1);
    CHECK(nccl_log_begin(&l) == 0 && !getenv("NCCL_DEBUG"), "armed over the user's NCCL_DEBUG_FILE");

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_nccl_net: all checks passed\n");
    return failures ? 1 : 0;
}
