/* bench_sysinfo_arm: an Arm host's CPU name (issue 38, arm64).  Arm Linux's /proc/cpuinfo has no
 * "model name" line, only each core's "CPU implementer" and "CPU part" (MIDR_EL1's fields); the
 * texts below are the kernel's format (arch/arm64/kernel/cpuinfo.c, c_show) with the values of
 * Graviton3 (Neoverse V1, part 0xd40) and Grace / Graviton4 (Neoverse V2, 0xd4f) as Arm's Neoverse
 * technical reference manuals give their MIDR; an x86 text (no such lines), another vendor's part
 * and malformed values. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "instbench/bench.h"

static void expect(const char *text, const char *want)
{
    char out[128];
    sysinfo_arm_cpu_model(text, out, sizeof out);
    CHECK(!strcmp(out, want), "got '%s', want '%s' from: %.80s", out, want, text ? text : "(null)");
}

int main(void)
{
    expect("processor\t: 0\nBogoMIPS\t: 2100.00\n"
           "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma "
           "lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm "
           "svebf16 i8mm bf16 dgh rng\n"
           "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n\n"
           "processor\t: 1\nBogoMIPS\t: 2100.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n",
           "ARM Neoverse-V1");
    expect("processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
           "CPU revision\t: 0\n",
           "ARM Neoverse-V2");
    expect("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", "ARM Neoverse-N1");
    /* NVIDIA's own Carmel core: named by its numbers, not guessed */
    expect("processor\t: 0\nCPU implementer\t: 0x4e\nCPU part\t: 0x004\n", "Arm implementer 0x4e part 0x004");
    expect("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8488C\n", "");
    expect("CPU implementer\t: zz\nCPU part\t: 0xd40\n", "");
    expect("CPU implementer\t: 0x41\nCPU part\t: 0x123456\n", "");
    expect("CPU implementer\t: 0x41\n", "");
    expect("", "");
    expect(NULL, "");

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("bench_sysinfo_arm: all checks passed\n");
    return failures ? 1 : 0;
}
