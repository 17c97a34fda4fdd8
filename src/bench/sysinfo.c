/* sysinfo: the facts about this machine that a result needs to be comparable: CPU, memory, OS,
 * the oneDNN build and the ISA it dispatches to, and GPUs.  GPUs are read through NVML, loaded
 * with dlopen, so a CPU build has no CUDA dependency and a machine without a driver just has
 * no GPUs.  Never fails: a fact that cannot be read stays empty. */
#include "instbench/bench.h"

#include <dlfcn.h>
#ifdef INSTBENCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

static void read_first_matching(const char *path, const char *key, char *out, size_t out_len)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0) continue;
        char *v = line + klen;
        while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=') v++;
        if (*v == '"') v++;
        size_t n = strcspn(v, "\"\n");
        v[n] = '\0';
        snprintf(out, out_len, "%s", v);
        break;
    }
    fclose(f);
}

static uint64_t meminfo_kib(const char *key)
{
    char v[64] = "";
    read_first_matching("/proc/meminfo", key, v, sizeof v);
    return (uint64_t)strtoull(v, NULL, 10) * 1024ull;
}

#ifdef INSTBENCH_HAVE_ONEDNN
static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_all: return "all";
    default: return "unknown";
    }
}
#endif

/* NVML through dlopen: only the handful of calls needed, declared here by their C ABI. */
typedef struct nvml_memory { unsigned long long total, free, used; } nvml_memory;
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_count_fn)(unsigned int *);
typedef int (*nvml_handle_fn)(unsigned int, void **);
typedef int (*nvml_name_fn)(void *, char *, unsigned int);
typedef int (*nvml_mem_fn)(void *, nvml_memory *);
typedef int (*nvml_cc_fn)(void *, int *, int *);
typedef int (*nvml_str_fn)(char *, unsigned int);
typedef int (*nvml_int_fn)(int *);

static void collect_gpus(bench_sysinfo *s)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    nvml_void_fn init = (nvml_void_fn)dlsym(h, "nvmlInit_v2");
    nvml_void_fn shutdown = (nvml_void_fn)dlsym(h, "nvmlShutdown");
    nvml_count_fn count = (nvml_count_fn)dlsym(h, "nvmlDeviceGetCount_v2");
    nvml_handle_fn handle = (nvml_handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    nvml_name_fn name = (nvml_name_fn)dlsym(h, "nvmlDeviceGetName");
    nvml_mem_fn mem = (nvml_mem_fn)dlsym(h, "nvmlDeviceGetMemoryInfo");
    nvml_cc_fn cc = (nvml_cc_fn)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
    nvml_str_fn driver = (nvml_str_fn)dlsym(h, "nvmlSystemGetDriverVersion");
    nvml_int_fn cuda = (nvml_int_fn)dlsym(h, "nvmlSystemGetCudaDriverVersion_v2");
    if (!init || !count || !handle || init() != 0) {
        dlclose(h);
        return;
    }
    unsigned int n = 0;
    if (count(&n) == 0) {
        if (n > sizeof s->gpus / sizeof s->gpus[0]) n = sizeof s->gpus / sizeof s->gpus[0];
        for (unsigned int i = 0; i < n; i++) {
            void *dev = NULL;
            if (handle(i, &dev) != 0) continue;
            bench_gpu *g = &s->gpus[s->gpu_count++];
            if (name) name(dev, g->name, sizeof g->name);
            nvml_memory m;
            if (mem && mem(dev, &m) == 0) g->memory_bytes = m.total;
            int ma = 0, mi = 0;
            if (cc && cc(dev, &ma, &mi) == 0)
                snprintf(g->compute_capability, sizeof g->compute_capability, "%d.%d", ma, mi);
        }
    }
    if (driver) driver(s->driver, sizeof s->driver);
    int cv = 0;
    if (cuda && cuda(&cv) == 0 && cv > 0)   /* 12040 -> "12.4" */
        snprintf(s->cuda, sizeof s->cuda, "%d.%d", cv / 1000, (cv % 1000) / 10);
    if (shutdown) shutdown();
    dlclose(h);
}

void sysinfo_gpus_from_backend(bench_sysinfo *s, const ib_backend_ops *ops)
{
    if (!ops->device_describe) return;
    int n = ops->device_count();
    const int cap = (int)(sizeof s->gpus / sizeof s->gpus[0]);
    s->gpu_count = 0;
    for (int i = 0; i < n && i < cap; i++) {
        ib_device_desc d;
        ib_error err;
        bench_gpu *g = &s->gpus[s->gpu_count++];
        memset(g, 0, sizeof *g);
        if (ops->device_describe(i, &d, &err)) {
            ib_debug("GPU %d: %s", i, err.msg);   /* counted (the backend sees it), facts unknown */
            continue;
        }
        snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, d.name);
        g->memory_bytes = d.memory_bytes;
        if (d.cc_major > 0) snprintf(g->compute_capability, sizeof g->compute_capability, "%d.%d", d.cc_major, d.cc_minor);
    }
}

static void collect_nccl(bench_sysinfo *s)
{
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    int (*get)(int *) = (int (*)(int *))dlsym(h, "ncclGetVersion");
    int v = 0;
    if (get && get(&v) == 0 && v > 0) {
        /* NCCL encodes 2.9+ as major*10000 + minor*100 + patch, older as major*1000 + ... */
        if (v >= 10000) snprintf(s->nccl, sizeof s->nccl, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
        else snprintf(s->nccl, sizeof s->nccl, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
    }
    dlclose(h);
}

void sysinfo_onednn(bench_sysinfo *s)
{
#ifndef INSTBENCH_HAVE_ONEDNN
    /* a build without oneDNN (CMakeLists.txt): version and ISA stay empty (null in the result) */
    snprintf(s->onednn_isa_source, sizeof s->onednn_isa_source, "runtime");
#else
    const dnnl_version_t *v = dnnl_version();
    if (v) snprintf(s->onednn_version, sizeof s->onednn_version, "%d.%d.%d", v->major, v->minor, v->patch);
    snprintf(s->onednn_isa, sizeof s->onednn_isa, "%s", isa_name(dnnl_get_effective_cpu_isa()));
    /* ONEDNN_MAX_CPU_ISA (or the older DNNL_ spelling) caps the ISA; say so when it is set. */
    const char *env = getenv("ONEDNN_MAX_CPU_ISA");
    if (!env || !env[0]) env = getenv("DNNL_MAX_CPU_ISA");
    snprintf(s->onednn_isa_source, sizeof s->onednn_isa_source, "%s", env && env[0] ? "env" : "runtime");
    if (env && env[0]) snprintf(s->onednn_max_isa_env, sizeof s->onednn_max_isa_env, "%s", env);
#endif
}

void sysinfo_collect(bench_sysinfo *s)
{
    memset(s, 0, sizeof *s);
    if (gethostname(s->hostname, sizeof s->hostname - 1) != 0) s->hostname[0] = '\0';
    read_first_matching("/proc/cpuinfo", "model name", s->cpu_model, sizeof s->cpu_model);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->vcpus = n > 0 ? (int)n : 1;
    s->memory_bytes = meminfo_kib("MemTotal");
    s->memory_available_bytes = meminfo_kib("MemAvailable");
    if (!s->memory_available_bytes) s->memory_available_bytes = s->memory_bytes;
    read_first_matching("/etc/os-release", "PRETTY_NAME", s->os, sizeof s->os);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(s->kernel, sizeof s->kernel, "%s %s", u.sysname, u.release);
        if (!s->os[0]) snprintf(s->os, sizeof s->os, "%s", u.sysname);
    }
    double la[1];
    if (getloadavg(la, 1) == 1) s->loadavg1 = la[0];

    sysinfo_onednn(s);
    collect_gpus(s);
    collect_nccl(s);
}

void sysinfo_cpu_sample(bench_cpu_sample *out)
{
    memset(out, 0, sizeof *out);
    out->wall_s = util_now_seconds();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        out->self_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return;
    /* cpu  user nice system idle iowait irq softirq steal ... (USER_HZ ticks; guest is in user) */
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 7 || hz <= 0) return;
    out->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
    out->steal_s = n >= 8 ? (double)v[7] / hz : 0;
    out->ok = 1;
}

void sysinfo_host_load(const bench_cpu_sample *a, const bench_cpu_sample *b, int vcpus, double *others,
                       double *steal)
{
    *others = *steal = -1;
    double cap = (b->wall_s - a->wall_s) * (vcpus > 0 ? vcpus : 1);
    if (!a->ok || !b->ok || cap <= 0) return;
    double o = ((b->busy_s - a->busy_s) - (b->self_s - a->self_s)) / cap;
    /* Tick granularity (10 ms per CPU) makes small negative values possible. */
    *others = o < 0 ? 0 : (o > 1 ? 1 : o);
    double st = (b->steal_s - a->steal_s) / cap;
    *steal = st < 0 ? 0 : (st > 1 ? 1 : st);
}
