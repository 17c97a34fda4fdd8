/* util_instance_type: the instance-type catalogue (src/util/instance_type.c) against facts read
 * off AWS's own pages, not off the catalogue:
 *   [AC]  https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (accelerators per size)
 *   [P6]  https://aws.amazon.com/ec2/instance-types/p6/ ("8 NVIDIA B200 GPUs", "8 NVIDIA Blackwell
 *         Ultra GPUs", P6e-GB200 UltraServers)
 *   [EKS] https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html
 *         ("The p6e-gb200.36xlarge instance type with 4 NVIDIA Blackwell GPUs is only available as
 *         P6e-GB200 UltraServers ... u-p6e-gb200x36 ... 9 ... u-p6e-gb200x72 ... 18"; the guide
 *         recommends the ARM NVIDIA variant of the accelerated AMI: Grace hosts are arm64)
 *   [TRN2] Neuron's trn2-arch page: 16 Trainium2 chips, 1,536 GiB device memory per trn2.48xlarge
 *   [EFA] https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types, as
 *         src/rank/network.c transcribed it before this catalogue replaced it (the list below)
 *   [NAME] instance-type-names.html: the attribute 'g' = AWS Graviton (arm64)
 *   [DIT] AWS's DescribeInstanceTypes answers as moto 5.2.5 recorded them
 *         (moto/ec2/resources/instance_types.json, read with python's gzip/json, not with instbench):
 *         g7 and g7e sizes, GPU counts and MiB, EfaSupported, MaximumEfaInterfaces
 * and against the price snapshot's hardware (SkyPilot's compilation of DescribeInstanceTypes,
 * configs/prices-snapshot.json): every accelerated type priced there is in the catalogue with the
 * same accelerator count and memory within 10% (GB on AWS's pages, MiB in DescribeInstanceTypes). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "instbench/instance_type.h"
#include "instbench/prices.h"

static void documented(void)
{
    static const struct {
        const char *type, *accel, *arch;
        int count;
        double gib; /* 0: the page gives none for the instance */
        int efa;
        instance_accel_kind kind;
    } cases[] = {
        {"p6-b200.48xlarge", "B200", "x86_64", 8, 1440, 1, INSTANCE_ACCEL_NVIDIA},         /* [P6] */
        {"p6-b300.48xlarge", "B300", "x86_64", 8, 2100, 1, INSTANCE_ACCEL_NVIDIA},         /* [P6] 2.1 TB */
        {"p6e-gb200.36xlarge", "B200", "arm64", 4, 0, 1, INSTANCE_ACCEL_NVIDIA},           /* [EKS] */
        {"p5.4xlarge", "H100", "x86_64", 1, 80, 1, INSTANCE_ACCEL_NVIDIA},                 /* [AC], [DIT] */
        {"p5.48xlarge", "H100", "x86_64", 8, 640, 1, INSTANCE_ACCEL_NVIDIA},               /* [AC] */
        {"p5en.48xlarge", "H200", "x86_64", 8, 1128, 1, INSTANCE_ACCEL_NVIDIA},            /* [AC] */
        {"g7e.2xlarge", "RTX PRO Server 6000", "x86_64", 1, 96, 0, INSTANCE_ACCEL_NVIDIA}, /* [DIT] */
        {"g7e.8xlarge", "RTX PRO Server 6000", "x86_64", 1, 96, 1, INSTANCE_ACCEL_NVIDIA}, /* [DIT] */
        {"g7e.48xlarge", "RTX PRO Server 6000", "x86_64", 8, 768, 1, INSTANCE_ACCEL_NVIDIA},
        {"g7.2xlarge", "RTX PRO 4500", "x86_64", 1, 32, 0, INSTANCE_ACCEL_NVIDIA},         /* [DIT] */
        {"g7.12xlarge", "RTX PRO 4500", "x86_64", 2, 64, 1, INSTANCE_ACCEL_NVIDIA},        /* [DIT] */
        {"g7.48xlarge", "RTX PRO 4500", "x86_64", 8, 256, 1, INSTANCE_ACCEL_NVIDIA},       /* [DIT] */
        {"g5.xlarge", "A10G", "x86_64", 1, 24, 0, INSTANCE_ACCEL_NVIDIA},                  /* [AC] */
        {"g5g.16xlarge", "T4g", "arm64", 2, 32, 0, INSTANCE_ACCEL_NVIDIA},                 /* [AC], [NAME] */
        {"trn2.48xlarge", "Trainium2", "x86_64", 16, 1536, 1, INSTANCE_ACCEL_TRAINIUM},    /* [TRN2] */
        {"trn1.32xlarge", "Trainium", "x86_64", 16, 512, 1, INSTANCE_ACCEL_TRAINIUM},      /* [AC] */
        {"inf2.48xlarge", "Inferentia2", "x86_64", 12, 384, 1, INSTANCE_ACCEL_INFERENTIA}, /* [AC] */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        instance_type_facts f;
        int rc = instance_type_facts_get(cases[i].type, &f);
        CHECK(rc == 0 && f.known && f.size_known, "%s: not in the catalogue (rc %d)", cases[i].type, rc);
        if (rc != 0) continue;
        CHECK(f.accelerator && !strcmp(f.accelerator, cases[i].accel), "%s: accelerator %s", cases[i].type,
              f.accelerator ? f.accelerator : "(none)");
        CHECK(f.accelerator_count == cases[i].count, "%s: %d accelerators", cases[i].type, f.accelerator_count);
        CHECK(fabs(f.accelerator_memory_gib - cases[i].gib) < 0.5, "%s: %g GiB", cases[i].type,
              f.accelerator_memory_gib);
        CHECK(!strcmp(f.arch, cases[i].arch), "%s: arch %s", cases[i].type, f.arch);
        CHECK(f.efa == cases[i].efa, "%s: efa %d", cases[i].type, f.efa);
        CHECK(f.accel_kind == cases[i].kind, "%s: kind %d", cases[i].type, (int)f.accel_kind);
        CHECK(f.source && !strncmp(f.source, "https://", 8), "%s: no source page", cases[i].type);
        int ours = cases[i].kind == INSTANCE_ACCEL_NVIDIA;
        CHECK((!f.not_measurable) == ours, "%s: measurable %d", cases[i].type, !f.not_measurable);
    }
    instance_type_facts f;
    instance_type_facts_get("p6e-gb200.36xlarge", &f);
    CHECK(f.ultraserver && strstr(f.ultraserver, "u-p6e-gb200x36") && strstr(f.ultraserver, "u-p6e-gb200x72"),
          "p6e-gb200: its UltraServers are not named");
    CHECK(instance_type_facts_get("p6-b300.48xlarge", &f) == 0 && f.max_efa_interfaces == 16,
          "p6-b300: EFA on its 16 cards beside ENA-only card 0, got %d", f.max_efa_interfaces);
    /* [DIT] MaximumEfaInterfaces */
    static const struct {
        const char *type;
        int max;
    } max_efa[] = {{"p6-b200.48xlarge", 8}, {"p5.48xlarge", 32}, {"p5.4xlarge", 1},    {"g7e.48xlarge", 4},
                   {"g7e.24xlarge", 2},     {"g7.48xlarge", 2},  {"trn2.48xlarge", 16}};
    for (size_t i = 0; i < sizeof max_efa / sizeof *max_efa; i++)
        CHECK(instance_type_facts_get(max_efa[i].type, &f) == 0 && f.max_efa_interfaces == max_efa[i].max,
              "%s: maximumEfaInterfaces %d, want %d", max_efa[i].type, f.max_efa_interfaces, max_efa[i].max);
    const char *why = instance_type_not_measurable("trn2.48xlarge");
    CHECK(why && strstr(why, "Trainium") && strstr(why, "Neuron"), "trn2: the reason does not say why: %s", why);
    CHECK(!instance_type_not_measurable("p6-b200.48xlarge"), "p6-b200 must be measurable");
    CHECK(!instance_type_not_measurable("c7i.large"), "a CPU type must be measurable");
}

static void sagemaker(void)
{
    instance_type_facts f;
    CHECK(instance_type_is_sagemaker("ml.g5.xlarge") && !instance_type_is_sagemaker("g5.xlarge") &&
              !instance_type_is_sagemaker("mlg5.xlarge") && !instance_type_is_sagemaker(NULL),
          "the ml. prefix");
    CHECK(!strcmp(instance_type_ec2_name("ml.p5.48xlarge"), "p5.48xlarge"), "ml. stripped");
    CHECK(!strcmp(instance_type_ec2_name("p5.48xlarge"), "p5.48xlarge"), "an EC2 name is itself");
    CHECK(instance_type_facts_get("ml.p5.48xlarge", &f) == 0 && f.sagemaker && !strcmp(f.family, "p5") &&
              f.accelerator_count == 8,
          "ml.p5.48xlarge: the EC2 type's facts, marked SageMaker");
    /* what is not a type at all */
    static const char *const bad[] = {"", "ml.", "g5", "ml.x", ".xlarge", "g5."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(instance_type_facts_get(bad[i], &f) == -1, "'%s' taken for a type", bad[i]);
    CHECK(instance_type_facts_get(NULL, &f) == -1, "NULL taken for a type");
}

static void architectures(void)
{
    /* [NAME]: Graviton families are arm64; [EKS]: p6e-gb200 is Grace (arm64); the x86 ones Intel/AMD */
    static const char *const arm[] = {"a1.large",   "c6g.xlarge",    "c6gn.16xlarge",     "c7g.large", "c8g.large",
                                      "g5g.xlarge", "im4gn.large",   "m7gd.large",        "r8g.large", "t4g.micro",
                                      "x2gd.large", "hpc7g.4xlarge", "p6e-gb200.36xlarge"};
    static const char *const x86[] = {"g5.xlarge",      "g4dn.xlarge",      "g6e.xlarge", "p4d.24xlarge",
                                      "p5en.48xlarge",  "p6-b200.48xlarge", "c7i.large",  "m7a.large",
                                      "trn1n.32xlarge", "dl1.24xlarge"};
    const char *src;
    for (size_t i = 0; i < sizeof arm / sizeof *arm; i++) {
        const char *a = instance_type_arch(arm[i], NULL, &src);
        CHECK(a && !strcmp(a, "arm64") && src && strstr(src, "catalogue"), "%s read as %s", arm[i], a ? a : "?");
    }
    for (size_t i = 0; i < sizeof x86 / sizeof *x86; i++) {
        const char *a = instance_type_arch(x86[i], NULL, &src);
        CHECK(a && !strcmp(a, "x86_64"), "%s read as %s", x86[i], a ? a : "?");
    }
    /* a family the catalogue lacks is not guessed from its name */
    CHECK(!instance_type_arch("x2idn.16xlarge", NULL, &src) && !src, "x2idn guessed");
    CHECK(!instance_type_arch("i8g.large", NULL, NULL), "i8g guessed");
    /* EC2's answer wins and is named; anything but x86_64/arm64 from EC2 is not taken */
    const char *a = instance_type_arch("i8g.large", "arm64", &src);
    CHECK(a && !strcmp(a, "arm64") && !strcmp(src, "DescribeInstanceTypes"), "EC2's arm64 not taken");
    a = instance_type_arch("p6e-gb200.36xlarge", "x86_64", &src);
    CHECK(a && !strcmp(a, "x86_64") && !strcmp(src, "DescribeInstanceTypes"), "EC2's answer must win");
    a = instance_type_arch("p6e-gb200.36xlarge", "arm64_mac", &src);
    CHECK(a && !strcmp(a, "arm64") && strstr(src, "catalogue"), "an odd EC2 value must fall back");
    CHECK(!instance_type_arch("x2idn.16xlarge", "", NULL), "an empty EC2 answer is no answer");
}

static void efa_list(void)
{
    /* [EFA] as src/rank/network.c had it: every one takes EFA */
    static const char *const efa[] = {
        "dl1.24xlarge",   "dl2q.24xlarge", "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge", "g4dn.metal",
        "g5.8xlarge",     "g5.12xlarge",   "g5.16xlarge",  "g5.24xlarge",   "g5.48xlarge",   "g6.8xlarge",
        "g6.12xlarge",    "g6.16xlarge",   "g6.24xlarge",  "g6.48xlarge",   "g6e.8xlarge",   "g6e.12xlarge",
        "g6e.16xlarge",   "g6e.24xlarge",  "g6e.48xlarge", "gr6.8xlarge",   "inf2.48xlarge", "p3dn.24xlarge",
        "p4d.24xlarge",   "p4de.24xlarge", "p5.48xlarge",  "p5e.48xlarge",  "p5en.48xlarge", "trn1.32xlarge",
        "trn1n.32xlarge", "trn2.48xlarge"};
    for (size_t i = 0; i < sizeof efa / sizeof *efa; i++)
        CHECK(instance_type_efa(efa[i]) == 1, "%s: EFA %d", efa[i], instance_type_efa(efa[i]));
    static const char *const none[] = {"g5.xlarge", "g4dn.xlarge", "g6e.4xlarge", "p3.16xlarge", "g5g.16xlarge"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        CHECK(instance_type_efa(none[i]) == 0, "%s: EFA %d", none[i], instance_type_efa(none[i]));
    CHECK(instance_type_efa("x2idn.16xlarge") == -1 && instance_type_efa("g5.99xlarge") == -1, "unknown EFA");
}

/* Two independent transcriptions agree: AWS's pages (the catalogue) and DescribeInstanceTypes as
 * SkyPilot compiled it (the price snapshot). */
static void snapshot_agrees(void)
{
    ib_error err = {0};
    const price_set *snap = prices_snapshot(&err);
    CHECK(snap && snap->n > 0, "no snapshot: %s", err.msg);
    size_t checked = 0;
    for (size_t i = 0; snap && i < snap->n; i++) {
        const price_record *r = &snap->items[i];
        instance_type_facts f;
        int rc = instance_type_facts_get(r->instance_type, &f);
        CHECK(rc == 0 && f.size_known, "%s: priced, but not in the instance-type catalogue", r->instance_type);
        if (rc != 0 || !f.size_known) continue;
        CHECK(f.arch != NULL, "%s: no architecture", r->instance_type);
        if (!r->hw.accelerator[0]) {
            CHECK(f.accel_kind == INSTANCE_ACCEL_NONE, "%s: the snapshot has no accelerator", r->instance_type);
            continue;
        }
        checked++;
        CHECK(f.accelerator_count == r->hw.accelerator_count, "%s: %d accelerators, the snapshot %d", r->instance_type,
              f.accelerator_count, r->hw.accelerator_count);
        if (f.accelerator_memory_gib > 0 && r->hw.accelerator_memory_gib > 0)
            CHECK(fabs(f.accelerator_memory_gib / r->hw.accelerator_memory_gib - 1) < 0.10,
                  "%s: %g GiB, the snapshot %g", r->instance_type, f.accelerator_memory_gib,
                  r->hw.accelerator_memory_gib);
    }
    CHECK(checked > 100, "only %zu accelerated records compared", checked);
}

/* Every NVIDIA family has its GPUs' compute capability (a missing one reads 0 and a bf16 sweep of
 * it would not be refused before launch); a few against NVIDIA's CUDA GPUs page
 * (https://developer.nvidia.com/cuda-gpus): T4 7.5, V100 7.0, A10G (the A10) 8.6, L40S 8.9,
 * A100 8.0, H100 9.0, B200 10.0. */
static void compute_capabilities(void)
{
    for (size_t i = 0; instance_type_family_at(i, NULL); i++) {
        char type[64];
        instance_type_facts f;
        snprintf(type, sizeof type, "%s.xlarge", instance_type_family_at(i, NULL));
        CHECK(instance_type_facts_get(type, &f) == 0, "%s: not in the catalogue", type);
        if (f.accel_kind == INSTANCE_ACCEL_NVIDIA)
            CHECK(f.compute_capability >= 70, "%s (%s): compute capability %d", f.family, f.accelerator,
                  f.compute_capability);
        else CHECK(f.compute_capability == 0, "%s: not NVIDIA, compute capability %d", f.family, f.compute_capability);
    }
    static const struct {
        const char *type;
        int cc;
    } known[] = {{"g4dn.xlarge", 75},  {"p3.2xlarge", 70},  {"g5.xlarge", 86},        {"g6e.xlarge", 89},
                 {"p4d.24xlarge", 80}, {"p5.48xlarge", 90}, {"p6-b200.48xlarge", 100}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        instance_type_facts f;
        instance_type_facts_get(known[i].type, &f);
        CHECK(f.compute_capability == known[i].cc, "%s: compute capability %d, NVIDIA says %d", known[i].type,
              f.compute_capability, known[i].cc);
    }
}

int main(void)
{
    compute_capabilities();
    documented();
    sagemaker();
    architectures();
    efa_list();
    snapshot_agrees();
    const char *src;
    for (size_t i = 0; instance_type_family_at(i, &src); i++)
        CHECK(src && !strncmp(src, "https://", 8), "%s: no source", instance_type_family_at(i, NULL));
    return failures != 0;
}
