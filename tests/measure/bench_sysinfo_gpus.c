/* bench_sysinfo_gpus: measure sizes its ranks and batch from the GPUs the backend sees, not from
 * NVML's list (review item 5 of issue 12): NVML lists every board of the machine, ignoring
 * CUDA_VISIBLE_DEVICES, and a MIG slice as its whole board.  A backend table standing in for
 * cuda sees 2 devices of 10 GiB (a slice) where the sysinfo NVML filled has 8 of 80 GiB.
 * And the memory a rank may fill (review item 6): the free memory of the devices this process
 * drives, not the total of device 0, less NCCL's buffers when ranks average. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "instbench/bench.h"

static int two(void) { return 2; }
static int describe(int i, ib_device_desc *out, ib_error *err)
{
    if (i == 1) return ib_error_set(err, IB_EXIT_RUNTIME, "device 1: no answer");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "NVIDIA A100-SXM4-80GB MIG 1g.10gb");
    out->memory_bytes = (uint64_t)10 << 30, out->cc_major = 8, out->cc_minor = 0;
    return 0;
}

/* free memory per device: 0 has 70 GiB, 1 cannot say, 2 has 75 GiB, 3 has 60 GiB */
static int free_of(int i, uint64_t *bytes, ib_error *err)
{
    static const uint64_t gib[] = {70, 0, 75, 60};
    if (i == 1) return ib_error_set(err, IB_EXIT_RUNTIME, "device 1: busy");
    *bytes = gib[i] << 30;
    return 0;
}

int main(void)
{
    bench_sysinfo s;
    memset(&s, 0, sizeof s);
    s.gpu_count = 8;
    for (int i = 0; i < 8; i++) {
        snprintf(s.gpus[i].name, sizeof s.gpus[i].name, "NVIDIA A100-SXM4-80GB");
        s.gpus[i].memory_bytes = (uint64_t)80 << 30;
    }
    const ib_backend_ops host = {.name = "host-like", .device = IB_DEVICE_HOST, .device_count = two};
    sysinfo_gpus_from_backend(&s, &host);
    CHECK(s.gpu_count == 8, "a backend without device_describe changed the list: %d", s.gpu_count);

    const ib_backend_ops gpu = {
        .name = "gpu-like", .device = IB_DEVICE_GPU, .device_count = two, .device_describe = describe};
    sysinfo_gpus_from_backend(&s, &gpu);
    CHECK(s.gpu_count == 2, "%d GPUs, the backend sees 2", s.gpu_count);
    CHECK(s.gpus[0].memory_bytes == (uint64_t)10 << 30, "device 0: %llu bytes, the slice has 10 GiB",
          (unsigned long long)s.gpus[0].memory_bytes);
    CHECK(strstr(s.gpus[0].name, "MIG") && !strcmp(s.gpus[0].compute_capability, "8.0"), "device 0: %s %s",
          s.gpus[0].name, s.gpus[0].compute_capability);
    /* a device the backend counts but cannot describe: counted, its facts unknown (not NVML's) */
    CHECK(s.gpus[1].name[0] == '\0' && s.gpus[1].memory_bytes == 0, "device 1 kept stale facts: %s %llu",
          s.gpus[1].name, (unsigned long long)s.gpus[1].memory_bytes);

    /* memory: free per device as the backend reads it; this process drives devices 2 and 3 */
    s.gpu_count = 4;
    for (int i = 0; i < 4; i++) s.gpus[i].memory_bytes = (uint64_t)80 << 30;
    const ib_backend_ops freeing = {
        .name = "gpu-like", .device = IB_DEVICE_GPU, .device_count = two, .device_memory_free = free_of};
    uint64_t got = memfit_device_available(&freeing, &s, 2, 2, 0);
    CHECK(got == (uint64_t)60 << 30, "devices 2-3: %llu, want the least free of them (60 GiB, not device 0's)",
          (unsigned long long)got);
    got = memfit_device_available(&freeing, &s, 2, 2, 1);
    CHECK(got == ((uint64_t)60 << 30) - MEMFIT_NCCL_BYTES, "averaging: %llu, want NCCL's buffers set aside",
          (unsigned long long)got);
    got = memfit_device_available(&freeing, &s, 0, 2, 0);
    CHECK(got == (uint64_t)70 << 30, "device 1 cannot say: %llu, want device 0's 70 GiB free (under 1's 80 total)",
          (unsigned long long)got);
    got = memfit_device_available(&host, &s, 0, 1, 0);
    CHECK(got == (uint64_t)80 << 30, "no free-memory query: %llu, want the total", (unsigned long long)got);
    s.gpus[3].memory_bytes = 0;
    CHECK(memfit_device_available(&host, &s, 2, 2, 0) == 0, "one device unknown: the answer is unknown");
    return failures != 0;
}
