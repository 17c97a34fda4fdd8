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
#if defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

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

/* Arm Linux has no "model name" in /proc/cpuinfo: each core gives "CPU implementer" and "CPU part"
 * (MIDR_EL1's fields).  The parts AWS's Arm hosts run, from Arm's Neoverse reference manuals (and
 * the kernel's arch/arm64/include/asm/cputype.h): Graviton (Cortex-A72), Graviton2 (Neoverse N1),
 * Graviton3 (V1), Graviton4 and NVIDIA Grace (V2); others by their numbers. */
void sysinfo_arm_cpu_model(const char *cpuinfo, char *out, size_t out_len)
{
    static const struct {
        unsigned part;
        const char *name;
    } arm_parts[] = {
        {0xd08, "Cortex-A72"},  {0xd0c, "Neoverse-N1"}, {0xd40, "Neoverse-V1"}, {0xd49, "Neoverse-N2"},
        {0xd4f, "Neoverse-V2"}, {0xd84, "Neoverse-V3"}, {0xd8e, "Neoverse-N3"},
    };
    snprintf(out, out_len, "%s", "");
    const char *imp = cpuinfo ? strstr(cpuinfo, "CPU implementer") : NULL;
    const char *part = cpuinfo ? strstr(cpuinfo, "CPU part") : NULL;
    if (!imp || !part) return;
    imp = strchr(imp, ':'), part = strchr(part, ':');
    if (!imp || !part) return;
    char *end1, *end2;
    unsigned long i = strtoul(imp + 1, &end1, 16), p = strtoul(part + 1, &end2, 16);
    if (end1 == imp + 1 || end2 == part + 1 || i > 0xff || p > 0xfff) return;
    if (i == 0x41)
        for (size_t k = 0; k < sizeof arm_parts / sizeof *arm_parts; k++)
            if (arm_parts[k].part == p) {
                snprintf(out, out_len, "ARM %s", arm_parts[k].name);
                return;
            }
    snprintf(out, out_len, "Arm implementer 0x%02lx part 0x%03lx", i, p);
}

/* The CPU's name: x86's "model name"; on Arm (no such line) the first core's implementer and part. */
static void cpu_model(char *out, size_t out_len)
{
    read_first_matching("/proc/cpuinfo", "model name", out, out_len);
    if (out[0]) return;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    sysinfo_arm_cpu_model(buf, out, out_len);
}

#if defined(__aarch64__)
/* oneDNN 2.x's dnnl_cpu_isa_t names x86 levels only, and on Arm its answer ("all") says nothing.  Its
 * aarch64 kernels dispatch on SVE and the vector length (its own names: sve_512, sve_256, sve_128)
 * or Advanced SIMD (asimd), which the kernel reports here. */
static void arm_isa(char *out, size_t out_len)
{
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef PR_SVE_GET_VL
#define PR_SVE_GET_VL 51
#endif
    unsigned long hw = getauxval(AT_HWCAP);
    int vl = (hw & HWCAP_SVE) ? prctl(PR_SVE_GET_VL, 0, 0, 0, 0) : -1;
    if (vl > 0) snprintf(out, out_len, "sve_%d", (vl & 0xffff) * 8); /* PR_SVE_VL_LEN_MASK: bytes */
    else if (hw & HWCAP_SVE) snprintf(out, out_len, "sve");
    else if (hw & HWCAP_ASIMD) snprintf(out, out_len, "asimd");
    else snprintf(out, out_len, "armv8");
}
#endif

#if defined(INSTBENCH_HAVE_ONEDNN) && !defined(__aarch64__)
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
typedef struct nvml_memory {
    unsigned long long total, free, used;
} nvml_memory;
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
    if (cuda && cuda(&cv) == 0 && cv > 0) /* 12040 -> "12.4" */
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
            ib_debug("GPU %d: %s", i, err.msg); /* counted (the backend sees it), facts unknown */
            continue;
        }
        snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, d.name);
        g->memory_bytes = d.memory_bytes;
        if (d.cc_major > 0)
            snprintf(g->compute_capability, sizeof g->compute_capability, "%d.%d", d.cc_major, d.cc_minor);
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
#if defined(__aarch64__)
    arm_isa(s->onednn_isa, sizeof s->onednn_isa);
#else
    snprintf(s->onednn_isa, sizeof s->onednn_isa, "%s", isa_name(dnnl_get_effective_cpu_isa()));
#endif
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
    cpu_model(s->cpu_model, sizeof s->cpu_model);
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
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 7 || hz <= 0) return;
    out->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
    out->steal_s = n >= 8 ? (double)v[7] / hz : 0;
    out->ok = 1;
}

void sysinfo_host_load(const bench_cpu_sample *a, const bench_cpu_sample *b, int vcpus, double *others, double *steal)
{
    *others = *steal = -1;
    double cap = (b->wall_s - a->wall_s) * (vcpus > 0 ? vcpus : 1);
    if (!a->ok || !b->ok || cap <= 0) return;
    double o = ((b->busy_s - a->busy_s) - (b->self_s - a->self_s) - (b->peers_s - a->peers_s)) / cap;
    /* Tick granularity (10 ms per CPU) makes small negative values possible. */
    *others = o < 0 ? 0 : (o > 1 ? 1 : o);
    double st = (b->steal_s - a->steal_s) / cap;
    *steal = st < 0 ? 0 : (st > 1 ? 1 : st);
}
