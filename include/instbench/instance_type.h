/* instance_type: the one home for what instbench knows about an EC2 (or SageMaker ml.*) instance
 * type without asking AWS: its family, accelerator (model, count, memory), CPU architecture, EFA
 * support, whether it is a SageMaker type, and whether instbench can measure it.
 *
 * The catalogue (src/util/instance_type.c) is transcribed from AWS's documentation, each family
 * with the page it comes from; it answers offline.  A live path that has DescribeInstanceTypes'
 * answer passes it in (instance_type_arch) and is told which of the two it used.  No other module
 * parses a type name for a fact: they ask here. */
#ifndef INSTBENCH_INSTANCE_TYPE_H
#define INSTBENCH_INSTANCE_TYPE_H

#include <stddef.h>

typedef enum instance_accel_kind {
    INSTANCE_ACCEL_NONE = 0,   /* CPU only */
    INSTANCE_ACCEL_NVIDIA,     /* NVIDIA GPUs: the CUDA backend */
    INSTANCE_ACCEL_TRAINIUM,   /* AWS Trainium: AWS Neuron, not CUDA */
    INSTANCE_ACCEL_INFERENTIA, /* AWS Inferentia: AWS Neuron, not CUDA */
    INSTANCE_ACCEL_OTHER       /* Gaudi, Qualcomm, AMD Radeon, Xilinx: no backend of ours */
} instance_accel_kind;

typedef struct instance_type_facts {
    char family[40];         /* "p6-b200", "g5" (no "ml.") */
    int sagemaker;           /* the name has SageMaker's "ml." prefix */
    int known;               /* 1: the catalogue has this family; 0: nothing below is known */
    int size_known;          /* 1: and this size (accelerator count and memory hold) */
    const char *accelerator; /* "B200", "A10G"; NULL for CPU-only types (or not known) */
    int compute_capability;  /* its NVIDIA GPUs' compute capability x10 (86 for 8.6); 0: not NVIDIA */
    instance_accel_kind accel_kind;
    int accelerator_count;         /* per instance; 0 for CPU-only or a size not known */
    double accelerator_memory_gib; /* total per instance; 0 when not known */
    const char *arch;              /* "x86_64" | "arm64" (as EC2 and DescribeImages name them) */
    int efa;                       /* 1 EFA supported, 0 not, -1 not known for this size */
    int max_efa_interfaces;        /* DescribeInstanceTypes' maximumEfaInterfaces; 0 when not known */
    const char *ultraserver;       /* "u-p6e-gb200x36 (9 instances), ..." for UltraServer-only types */
    const char *not_measurable;    /* NULL: instbench measures it; else why not (a phrase) */
    const char *source;            /* the AWS page the family's facts come from */
} instance_type_facts;

/* The facts of TYPE ("g5.xlarge", "ml.p5.48xlarge"): 0 when its family is in the catalogue, 1
 * when not (out->known = 0, only family and sagemaker set), -1 when TYPE is not shaped like a type. */
int instance_type_facts_get(const char *type, instance_type_facts *out);

/* SageMaker's "ml." prefix: priced by the Pricing API's AmazonSageMaker, no spot, no EC2 calls. */
int instance_type_is_sagemaker(const char *type);
/* TYPE without "ml." (the EC2 type a SageMaker type runs on). */
const char *instance_type_ec2_name(const char *type);

/* Whether AWS sells TYPE as an EC2 Capacity Block: a type of those families (p4d, p5, ..., trn2),
 * or an UltraServer of one (u-p6e-gb200x72). */
int instance_type_capacity_block(const char *type);
/* Those families, "p4d, p4de, ..., trn2", into OUT. */
void instance_type_capacity_block_families(char *out, size_t len);

/* 1: TYPE takes EFA interfaces, 0: it does not, -1: the catalogue does not know. */
int instance_type_efa(const char *type);

/* TYPE's architecture: EC2_ARCH (DescribeInstanceTypes' processorInfo/supportedArchitectures, as
 * aws_ec2_type_networks reads it) when given and one of x86_64 / arm64, else the catalogue's;
 * NULL when neither knows.  *source (optional) says which: "DescribeInstanceTypes" or
 * "instance-type catalogue". */
const char *instance_type_arch(const char *type, const char *ec2_arch, const char **source);

/* Why instbench does not measure TYPE (a sentence to show), or NULL when it does or the
 * catalogue does not know the type. */
const char *instance_type_not_measurable(const char *type);

/* The catalogue's entries, for listings and tests: the I-th family's name and source, NULL past
 * the end. */
const char *instance_type_family_at(size_t i, const char **source);

#endif
