/* util/instance_type.c: the instance-type catalogue (instbench/instance_type.h).
 *
 * Transcribed from AWS's documentation, read 2026-11-28; each family names its page:
 *   AC   https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html  (accelerated computing
 *        specifications: accelerators, their count and memory per size, network and EFA)
 *   EFA  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types
 *        (which sizes take EFA; maximumEfaInterfaces as DescribeInstanceTypes reports it)
 *   P6   https://aws.amazon.com/ec2/instance-types/p6/  (P6-B200, P6-B300, P6e-GB200 UltraServers)
 *   EKS  https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html
 *        (p6e-gb200.36xlarge: 4 Blackwell GPUs, sold only inside u-p6e-gb200x36 / x72)
 *   TRN2 https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trn2-arch.html
 *   DIT  AWS's own DescribeInstanceTypes answers as recorded in getmoto/moto 5.2.5,
 *        moto/ec2/resources/instance_types.json (GpuInfo, NetworkInfo.EfaSupported,
 *        EfaInfo.MaximumEfaInterfaces): the 2026 sizes the pages above do not list yet (g7) and
 *        the EFA facts of the new sizes
 *   CC   https://developer.nvidia.com/cuda-gpus  (each NVIDIA GPU's compute capability; A10G, T4g:
 *        the A10's and T4's, the same chips; B300: sm_103, as CUDA 12.9's release notes name it)
 *   NAME https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html
 *        (the attribute letter 'g' marks AWS Graviton processors: those families are arm64; the
 *        CPU families here are listed by name, never inferred from one)
 * Accelerator memory is the total per instance in GiB as the page gives it (GB on some pages:
 * within a few percent of DescribeInstanceTypes' MiB, which the price snapshot carries);
 * 0 where the page gives none.  EFA: 1/0 per size, -1 where the page leaves it open;
 * maximumEfaInterfaces only where a page states it (0 otherwise: ask DescribeInstanceTypes). */
#include "instbench/instance_type.h"

#include <stdio.h>
#include <string.h>

typedef struct size_row {
    const char *size;
    int count;
    double mem_gib;
    int efa, max_efa;
} size_row;

#define SIZES_MAX 8
typedef struct family_row {
    const char *family, *accelerator;
    instance_accel_kind kind;
    const char *arch, *source, *ultraserver;
    size_row sizes[SIZES_MAX]; /* empty: a CPU-only family, every size without accelerators */
} family_row;

#define AC "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
#define P6 "https://aws.amazon.com/ec2/instance-types/p6/"
#define EKS_US "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html"
#define TRN2 "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trn2-arch.html"
#define NAME "https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html"
#define DIT "https://github.com/getmoto/moto/blob/5.2.5/moto/ec2/resources/instance_types.json"
#define X86 "x86_64"
#define ARM "arm64"

/* a table, laid out by hand: */
/* clang-format off */
static const family_row families[] = {
    /* ---- NVIDIA GPUs ---- */
    {"g4dn", "T4", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL,
     {{"xlarge", 1, 16, 0, 0}, {"2xlarge", 1, 16, 0, 0}, {"4xlarge", 1, 16, 0, 0}, {"8xlarge", 1, 16, 1, 0},
      {"12xlarge", 4, 64, 1, 0}, {"16xlarge", 1, 16, 1, 0}, {"metal", 8, 128, 1, 0}}},
    {"g5", "A10G", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL,
     {{"xlarge", 1, 24, 0, 0}, {"2xlarge", 1, 24, 0, 0}, {"4xlarge", 1, 24, 0, 0}, {"8xlarge", 1, 24, 1, 0},
      {"12xlarge", 4, 96, 1, 0}, {"16xlarge", 1, 24, 1, 0}, {"24xlarge", 4, 96, 1, 0}, {"48xlarge", 8, 192, 1, 0}}},
    {"g5g", "T4g", INSTANCE_ACCEL_NVIDIA, ARM, AC, NULL,
     {{"xlarge", 1, 16, 0, 0}, {"2xlarge", 1, 16, 0, 0}, {"4xlarge", 1, 16, 0, 0}, {"8xlarge", 1, 16, 0, 0},
      {"16xlarge", 2, 32, 0, 0}, {"metal", 2, 32, 0, 0}}},
    {"g6", "L4", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL,
     {{"xlarge", 1, 24, 0, 0}, {"2xlarge", 1, 24, 0, 0}, {"4xlarge", 1, 24, 0, 0}, {"8xlarge", 1, 24, 1, 0},
      {"12xlarge", 4, 96, 1, 0}, {"16xlarge", 1, 24, 1, 0}, {"24xlarge", 4, 96, 1, 0}, {"48xlarge", 8, 192, 1, 0}}},
    {"g6e", "L40S", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL,
     {{"xlarge", 1, 48, 0, 0}, {"2xlarge", 1, 48, 0, 0}, {"4xlarge", 1, 48, 0, 0}, {"8xlarge", 1, 48, 1, 0},
      {"12xlarge", 4, 192, 1, 0}, {"16xlarge", 1, 48, 1, 0}, {"24xlarge", 4, 192, 1, 0}, {"48xlarge", 8, 384, 1, 0}}},
    {"gr6", "L4", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"4xlarge", 1, 24, 0, 0}, {"8xlarge", 1, 24, 1, 0}}},
    /* G7: NVIDIA RTX PRO 4500 Blackwell Server Edition, 32 GiB each; G7e: RTX PRO 6000 Blackwell
     * Server Edition, 96 GiB each (DescribeInstanceTypes names them "RTX PRO 4500" and "RTX PRO
     * Server 6000"); EFA from 8xlarge up */
    {"g7", "RTX PRO 4500", INSTANCE_ACCEL_NVIDIA, X86, DIT, NULL,
     {{"2xlarge", 1, 32, 0, 0}, {"4xlarge", 1, 32, 0, 0}, {"8xlarge", 1, 32, 1, 1}, {"12xlarge", 2, 64, 1, 1},
      {"24xlarge", 4, 128, 1, 1}, {"48xlarge", 8, 256, 1, 2}}},
    {"g7e", "RTX PRO Server 6000", INSTANCE_ACCEL_NVIDIA, X86, DIT, NULL,
     {{"2xlarge", 1, 96, 0, 0}, {"4xlarge", 1, 96, 0, 0}, {"8xlarge", 1, 96, 1, 1}, {"12xlarge", 2, 192, 1, 1},
      {"24xlarge", 4, 384, 1, 2}, {"48xlarge", 8, 768, 1, 4}}},
    {"p3", "V100", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL,
     {{"2xlarge", 1, 16, 0, 0}, {"8xlarge", 4, 64, 0, 0}, {"16xlarge", 8, 128, 0, 0}}},
    {"p3dn", "V100", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"24xlarge", 8, 256, 1, 0}}},
    {"p4d", "A100", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"24xlarge", 8, 320, 1, 4}}},
    {"p4de", "A100", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"24xlarge", 8, 640, 1, 4}}},
    /* p5.4xlarge: one H100 and one EFA interface [DIT] */
    {"p5", "H100", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"4xlarge", 1, 80, 1, 1}, {"48xlarge", 8, 640, 1, 32}}},
    {"p5e", "H200", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"48xlarge", 8, 1128, 1, 32}}},
    {"p5en", "H200", INSTANCE_ACCEL_NVIDIA, X86, AC, NULL, {{"48xlarge", 8, 1128, 1, 16}}},
    /* P6-B200: 8 B200, 1,440 GB HBM3e, 3.2 Tbps EFAv4 over 8 EFA interfaces [DIT]; P6-B300: 8 B300,
     * 2.1 TB, 6.4 Tbps over 16 EFA cards beside an ENA-only card 0 (P6 page; [DIT]: 17 cards, 16
     * EFA; EFA guide, "if the network card index 0 supports EFA") */
    {"p6-b200", "B200", INSTANCE_ACCEL_NVIDIA, X86, P6, NULL, {{"48xlarge", 8, 1440, 1, 8}}},
    {"p6-b300", "B300", INSTANCE_ACCEL_NVIDIA, X86, P6, NULL, {{"48xlarge", 8, 2100, 1, 16}}},
    /* P6e-GB200: Grace (arm64) hosts, 4 Blackwell GPUs of a GB200 NVL72 each, only inside an
     * UltraServer; the pages give the UltraServer's memory, not the instance's */
    {"p6e-gb200", "B200", INSTANCE_ACCEL_NVIDIA, ARM, EKS_US,
     "u-p6e-gb200x36 (9 instances) or u-p6e-gb200x72 (18 instances), through Capacity Blocks for ML",
     {{"36xlarge", 4, 0, 1, 0}}},
    /* ---- AWS Trainium and Inferentia: priced, not measured (AWS Neuron, not CUDA) ---- */
    {"trn1", "Trainium", INSTANCE_ACCEL_TRAINIUM, X86, AC, NULL, {{"2xlarge", 1, 32, 0, 0}, {"32xlarge", 16, 512, 1, 8}}},
    {"trn1n", "Trainium", INSTANCE_ACCEL_TRAINIUM, X86, AC, NULL, {{"32xlarge", 16, 512, 1, 16}}},
    {"trn2", "Trainium2", INSTANCE_ACCEL_TRAINIUM, X86, TRN2, NULL, {{"3xlarge", 1, 96, 1, 1}, {"48xlarge", 16, 1536, 1, 16}}},
    {"trn2u", "Trainium2", INSTANCE_ACCEL_TRAINIUM, X86, TRN2, "a Trn2 UltraServer (4 trn2u.48xlarge)",
     {{"48xlarge", 16, 1536, 1, 16}}},
    {"inf1", "Inferentia", INSTANCE_ACCEL_INFERENTIA, X86, AC, NULL,
     {{"xlarge", 1, 8, 0, 0}, {"2xlarge", 1, 8, 0, 0}, {"6xlarge", 4, 32, 0, 0}, {"24xlarge", 16, 128, -1, 0}}},
    {"inf2", "Inferentia2", INSTANCE_ACCEL_INFERENTIA, X86, AC, NULL,
     {{"xlarge", 1, 32, 0, 0}, {"8xlarge", 1, 32, 0, 0}, {"24xlarge", 6, 192, 0, 0}, {"48xlarge", 12, 384, 1, 0}}},
    /* ---- other accelerators: no backend of ours ---- */
    {"dl1", "Gaudi", INSTANCE_ACCEL_OTHER, X86, AC, NULL, {{"24xlarge", 8, 256, 1, 0}}},
    {"dl2q", "Qualcomm AI 100", INSTANCE_ACCEL_OTHER, X86, AC, NULL, {{"24xlarge", 8, 128, 1, 0}}},
    /* ---- CPU only: x86_64 (Intel, AMD) ---- */
    {"c5", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m5", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"r5", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"c6a", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"c6i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m6a", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m6i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"r6i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"c7a", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"c7i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m7a", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m7i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"r7a", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"r7i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"c8i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    {"m8i", NULL, INSTANCE_ACCEL_NONE, X86, NAME, NULL, {{0}}},
    /* ---- CPU only: arm64 (AWS Graviton) ---- */
    {"a1", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c6g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c6gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c6gn", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c7g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c7gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c7gn", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"c8g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"m6g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"m6gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"m7g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"m7gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"m8g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"r6g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"r6gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"r7g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"r7gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"r8g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"t4g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"x2gd", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"x8g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"im4gn", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"is4gen", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"i4g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
    {"hpc7g", NULL, INSTANCE_ACCEL_NONE, ARM, NAME, NULL, {{0}}},
};
/* clang-format on */
#define N_FAMILIES (sizeof families / sizeof *families)

int instance_type_is_sagemaker(const char *type) { return type && !strncmp(type, "ml.", 3); }

const char *instance_type_ec2_name(const char *type) { return instance_type_is_sagemaker(type) ? type + 3 : type; }

static const family_row *find_family(const char *type, const char **size)
{
    const char *ec2 = instance_type_ec2_name(type);
    const char *dot = ec2 ? strrchr(ec2, '.') : NULL;
    if (!dot) return NULL;
    size_t fl = (size_t)(dot - ec2);
    *size = dot + 1;
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (strlen(families[i].family) == fl && !strncmp(families[i].family, ec2, fl)) return &families[i];
    return NULL;
}

/* Each NVIDIA GPU of the catalogue, its compute capability x10 [CC]: below
 * IB_BF16_MIN_COMPUTE_CAPABILITY (Turing, Volta) it has no bf16 matmuls, which measure's default
 * precision needs. */
static const struct {
    const char *gpu;
    int cc;
} gpus[] = {{"T4", 75},
            {"T4g", 75},
            {"V100", 70},
            {"A10G", 86},
            {"L4", 89},
            {"L40S", 89},
            {"A100", 80},
            {"H100", 90},
            {"H200", 90},
            {"B200", 100},
            {"B300", 103},
            {"RTX PRO 4500", 120},
            {"RTX PRO Server 6000", 120}};

static int compute_capability(const char *gpu)
{
    for (size_t i = 0; gpu && i < sizeof gpus / sizeof gpus[0]; i++)
        if (!strcmp(gpus[i].gpu, gpu)) return gpus[i].cc;
    return 0;
}

static const char *why_not(instance_accel_kind kind)
{
    switch (kind) {
    case INSTANCE_ACCEL_TRAINIUM:
        return "its AWS Trainium accelerators are programmed through AWS Neuron, and instbench's backends are "
               "CUDA and CPU";
    case INSTANCE_ACCEL_INFERENTIA:
        return "its AWS Inferentia accelerators are programmed through AWS Neuron, and instbench's backends are "
               "CUDA and CPU";
    case INSTANCE_ACCEL_OTHER: return "its accelerators are not NVIDIA GPUs, and instbench's backends are CUDA and CPU";
    default: return NULL;
    }
}

int instance_type_facts_get(const char *type, instance_type_facts *out)
{
    memset(out, 0, sizeof *out);
    out->efa = -1;
    /* the shape only (names.c checks the characters; it asks here for the "ml." prefix) */
    const char *ec2 = instance_type_ec2_name(type);
    const char *dot = ec2 ? strrchr(ec2, '.') : NULL;
    if (!dot || dot == ec2 || !dot[1] || strlen(type) >= 64) return -1;
    out->sagemaker = instance_type_is_sagemaker(type);
    snprintf(out->family, sizeof out->family, "%.*s", (int)(dot - ec2), ec2);
    const char *size = NULL;
    const family_row *f = find_family(type, &size);
    if (!f) return 1;
    out->known = 1;
    out->accelerator = f->accelerator;
    out->accel_kind = f->kind;
    out->compute_capability = f->kind == INSTANCE_ACCEL_NVIDIA ? compute_capability(f->accelerator) : 0;
    out->arch = f->arch;
    out->source = f->source;
    out->ultraserver = f->ultraserver;
    out->not_measurable = why_not(f->kind);
    if (f->kind == INSTANCE_ACCEL_NONE) {
        out->size_known = 1; /* no accelerator at any size */
        return 0;
    }
    for (size_t i = 0; i < SIZES_MAX && f->sizes[i].size; i++)
        if (!strcmp(f->sizes[i].size, size)) {
            out->size_known = 1;
            out->accelerator_count = f->sizes[i].count;
            out->accelerator_memory_gib = f->sizes[i].mem_gib;
            out->efa = f->sizes[i].efa;
            out->max_efa_interfaces = f->sizes[i].max_efa;
        }
    return 0;
}

int instance_type_efa(const char *type)
{
    instance_type_facts f;
    if (instance_type_facts_get(type, &f) != 0) return -1;
    return f.efa;
}

const char *instance_type_arch(const char *type, const char *ec2_arch, const char **source)
{
    if (ec2_arch && (!strcmp(ec2_arch, X86) || !strcmp(ec2_arch, ARM))) {
        if (source) *source = "DescribeInstanceTypes";
        return !strcmp(ec2_arch, X86) ? X86 : ARM;
    }
    instance_type_facts f;
    if (instance_type_facts_get(type, &f) == 0 && f.arch) {
        if (source) *source = "instance-type catalogue";
        return f.arch;
    }
    if (source) *source = NULL;
    return NULL;
}

const char *instance_type_not_measurable(const char *type)
{
    instance_type_facts f;
    return instance_type_facts_get(type, &f) == 0 ? f.not_measurable : NULL;
}

const char *instance_type_family_at(size_t i, const char **source)
{
    if (i >= N_FAMILIES) return NULL;
    if (source) *source = families[i].source;
    return families[i].family;
}

/* The families AWS sells Capacity Blocks for (EC2 User Guide, "Capacity Blocks for ML"). */
static const char *const block_families[] = {"p4d",     "p4de",      "p5",   "p5e",  "p5en", "p6-b200",
                                             "p6-b300", "p6e-gb200", "trn1", "trn2", NULL};

int instance_type_capacity_block(const char *type)
{
    if (!type) return 0;
    size_t len = strcspn(type, ".");
    /* an UltraServer "u-p6e-gb200x72" is of the family between "u-" and its "x<hosts>" */
    const char *x = strrchr(type, 'x');
    if (!strncmp(type, "u-", 2) && !strchr(type, '.') && x && x > type + 2) type += 2, len = (size_t)(x - type);
    for (size_t i = 0; block_families[i]; i++)
        if (strlen(block_families[i]) == len && !strncmp(type, block_families[i], len)) return 1;
    return 0;
}

void instance_type_capacity_block_families(char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; block_families[i] && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", block_families[i]);
}
