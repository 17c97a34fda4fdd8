/* cpu/simd: what lets the elementwise ops vectorise.  CPU_KERNEL compiles a function for AVX-512,
 * AVX2 and baseline x86-64 and picks one at load time (the binary stays portable; elsewhere it is
 * one baseline build, below); the ops put their inner loops in such kernels and call them from
 * OpenMP loops.  expf/erff from libm are scalar calls that block vectorisation, so the kernels use
 * the polynomial forms below. */
#ifndef INSTBENCH_CPU_SIMD_H
#define INSTBENCH_CPU_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && __GNUC__ >= 12
#define CPU_KERNEL __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
/* GCC 11 (Ubuntu 22.04's, what a sweep instance builds with) has no dispatcher for the ISA levels
 * ("no dispatcher found for the versioning attributes"): one feature per clone there.  Its avx2
 * clone has no FMA, so its sums round as the baseline's do, not as GCC 12's x86-64-v3 clone's. */
#define CPU_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))
#else
/* aarch64 (Graviton, Grace) and the rest: one baseline build.  Advanced SIMD is part of every
 * aarch64 baseline, so the loops vectorise there without clones (GCC before 14 has no
 * target_clones for aarch64, and an SVE-only build would not start on a Graviton2). */
#define CPU_KERNEL
#endif

static inline float cpu_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t cpu_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* exp(x): 2^n * p(r), r = x - n ln2 in [-ln2/2, ln2/2], degree-6 Taylor/minimax, ~2 ulp;
 * underflows to 0 below -87.3 (softmax rows hold exp(s - max) <= 1). */
static inline float cpu_expf(float x)
{
    x = x < -87.3f ? -87.3f : (x > 88.3f ? 88.3f : x);
    /* round to nearest via the 1.5*2^23 trick: vectorises where roundf does not */
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return p * cpu_bits_f32((uint32_t)((int32_t)n + 127) << 23);
}

/* erf(x), Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7 absolute), given e = exp(-x^2): GELU's
 * backward has that exponential already (it is its pdf's), so it is computed once there. */
static inline float cpu_erff_e(float x, float e)
{
    const float ax = x < 0 ? -x : x;
    const float t = 1.0f / (1.0f + 0.3275911f * ax);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    const float y = 1.0f - p * t * e;
    return x < 0 ? -y : y;
}
static inline float cpu_erff(float x) { return cpu_erff_e(x, cpu_expf(-x * x)); }

/* fp32 -> bf16 round to nearest even, branch-free so loops vectorise; NaN stays (quiet) NaN. */
static inline uint16_t cpu_bf16_rne(float f)
{
    const uint32_t u = cpu_f32_bits(f);
    const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? ((u >> 16) | 0x40u) : r);
}

#endif
