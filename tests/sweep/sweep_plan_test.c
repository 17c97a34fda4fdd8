/* Unit tests of the plan's pure parts (src/sweep/candidates.c, plan.c), where the CLI test
 * (sweep_plan.py) cannot reach: the architecture rule on names the catalogue lacks (AWS's
 * Graviton families, written here from AWS's instance type list), spec forms, plans over
 * synthetic prices (unpriced, no spot price, spot above on-demand, an AMI missing), and the EFA
 * layout (efa.c) on network descriptions moto's data and the CLI test never produce: a card 0
 * that takes one interface, cards missing from the list, more EFA interfaces than cards; and each
 * card's interface types on the shapes of P6-B300, P6-B200, P5 and G6e. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "instbench/sweep.h"

static price_record record(const char *type, double od, const double *spot, size_t n_spot, spot_price *zones)
{
    price_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.instance_type, sizeof r.instance_type, "%s", type);
    snprintf(r.region, sizeof r.region, "us-east-1");
    r.on_demand_usd_per_hour = od;
    snprintf(r.on_demand_source, sizeof r.on_demand_source, "live");
    snprintf(r.spot_source, sizeof r.spot_source, "live");
    r.on_demand_as_of = r.spot_as_of = 1764028800; /* 2025-11-25 */
    for (size_t i = 0; i < n_spot; i++) {
        snprintf(zones[i].az, sizeof zones[i].az, "us-east-1%c", (char)('a' + i));
        zones[i].usd_per_hour = spot[i];
    }
    r.spot = zones;
    r.n_spot = n_spot;
    return r;
}

/* The AMI kind: NVIDIA GPU or CPU and the architecture from the instance-type catalogue, EC2's
 * DescribeInstanceTypes answer winning when there is one (p6e-gb200 is a Grace host: arm64, which
 * the old name rule read as x86_64); types instbench does not measure are refused with the reason. */
static void arch_rule(void)
{
    static const struct {
        const char *type, *ec2;
        sweep_ami_kind kind;
        const char *src;
    } ok[] = {
        {"p6e-gb200.36xlarge", NULL, SWEEP_AMI_GPU_ARM64, "instance-type catalogue"},
        {"p6e-gb200.36xlarge", "arm64", SWEEP_AMI_GPU_ARM64, "DescribeInstanceTypes"},
        {"p6-b200.48xlarge", NULL, SWEEP_AMI_GPU_X86_64, "instance-type catalogue"},
        {"g5g.xlarge", NULL, SWEEP_AMI_GPU_ARM64, "instance-type catalogue"},
        {"c7g.large", NULL, SWEEP_AMI_CPU_ARM64, "instance-type catalogue"},
        {"c7i.large", NULL, SWEEP_AMI_CPU_X86_64, "instance-type catalogue"},
        {"c7i.large", "arm64", SWEEP_AMI_CPU_ARM64, "DescribeInstanceTypes"}, /* EC2's word wins */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        sweep_ami_kind k = SWEEP_AMI_KINDS;
        const char *src = NULL;
        ib_error err = {0};
        int rc = sweep_type_ami_kind(ok[i].type, ok[i].ec2, &k, &src, &err);
        CHECK(rc == 0 && k == ok[i].kind && src && !strcmp(src, ok[i].src), "%s (EC2 %s): rc %d kind %d from %s: %s",
              ok[i].type, ok[i].ec2 ? ok[i].ec2 : "-", rc, (int)k, src ? src : "?", err.msg);
    }
    static const struct {
        const char *type, *ec2, *says;
    } bad[] = {
        {"trn2.48xlarge", NULL, "Trainium"},
        {"inf2.48xlarge", "x86_64", "Inferentia"},
        {"dl1.24xlarge", NULL, "not NVIDIA"},
        {"x2idn.16xlarge", NULL, "x2idn.16xlarge"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sweep_ami_kind k;
        ib_error err = {0};
        int rc = sweep_type_ami_kind(bad[i].type, bad[i].ec2, &k, NULL, &err);
        CHECK(rc != 0 && err.code == IB_EXIT_USAGE && strstr(err.msg, bad[i].says), "%s: rc %d: %s", bad[i].type, rc,
              err.msg);
    }
}

static void specs(void)
{
    static const struct {
        const char *in, *spec;
        int nodes, spot;
    } ok[] = {
        {"4xg5.xlarge:spot", "4xg5.xlarge:spot", 4, 1},
        {"4 x g5.xlarge", "4xg5.xlarge:on-demand", 4, 0},
        {" 2X g5.12xlarge : on-demand ", "2xg5.12xlarge:on-demand", 2, 0},
        {"1xg5.xlarge", "g5.xlarge:on-demand", 1, 0},
        {"64xc7i.large:spot", "64xc7i.large:spot", 64, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        sweep_candidate c;
        ib_error err = {0};
        int rc = sweep_candidate_parse(ok[i].in, &c, &err);
        CHECK(rc == 0 && !strcmp(c.spec, ok[i].spec) && c.nodes == ok[i].nodes && c.spot == ok[i].spot,
              "'%s': rc %d spec %s (%s)", ok[i].in, rc, c.spec, err.msg);
    }
    static const char *const bad[] = {"0xg5.xlarge", "65xg5.xlarge", "4g5.xlarge",
                                      "x",           "g5.xlarge:",   "g5.xlarge:spots",
                                      ":spot",       "4x",           "999999999999xg5.xlarge"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sweep_candidate c;
        ib_error err = {0};
        CHECK(sweep_candidate_parse(bad[i], &c, &err) != 0 && err.code == IB_EXIT_USAGE, "'%s' accepted", bad[i]);
    }
    sweep_candidate *v = NULL;
    size_t n = 0;
    ib_error err = {0};
    CHECK(sweep_candidates_add("g5.xlarge:spot,4xg5.xlarge", &v, &n, &err) == 0 && n == 2, "two: %s", err.msg);
    CHECK(sweep_candidates_add("g5.12xlarge,4 x g5.xlarge:on-demand", &v, &n, &err) != 0, "a repeat across values");
    CHECK(sweep_candidates_add("g5.xlarge,", &v, &n, &err) != 0, "an empty spec");
    /* the one trimming rule (docs/usage.md): no item of the flag's list has whitespace around it,
     * as `prices --instance-types 'a, b'` is refused; the spaces inside "4 x g5.xlarge" are the spec's */
    static const char *const spaced[] = {"g5.2xlarge, g5.4xlarge", "g5.2xlarge ,g5.4xlarge", " g5.2xlarge",
                                         "g5.2xlarge:spot ", "g5.2xlarge,\tg5.4xlarge"};
    for (size_t i = 0; i < sizeof spaced / sizeof *spaced; i++) {
        size_t before = n;
        ib_error_clear(&err);
        CHECK(sweep_candidates_add(spaced[i], &v, &n, &err) != 0 && err.code == IB_EXIT_USAGE &&
                  strstr(err.msg, "whitespace") && n == before,
              "'%s' taken: %s", spaced[i], err.msg);
    }
    ib_error_clear(&err);
    CHECK(sweep_candidates_add("2 x g5.2xlarge:spot", &v, &n, &err) == 0, "'2 x g5.2xlarge:spot': %s", err.msg);
    free(v);
}

static void plans(void)
{
    spot_price z1[3], z2[2], z3[1];
    const double s1[] = {0.40, 0.55, 0.45}, s2[] = {1.5, 2.5}, s3[] = {0.3};
    price_record g5 = record("g5.xlarge", 1.0, s1, 3, z1);      /* spot: highest 0.55 */
    price_record g12 = record("g5.12xlarge", 2.0, s2, 2, z2);   /* spot 2.5 > on-demand: capped */
    price_record p5 = record("p5.4xlarge", 7.0, NULL, 0, NULL); /* no spot: on-demand, said so */
    price_record c7 = record("c7i.large", NAN, s3, 1, z3);      /* no on-demand */
    sweep_candidate c[5];
    ib_error err = {0};
    sweep_candidate_parse("4xg5.xlarge:spot", &c[0], &err);
    sweep_candidate_parse("g5.12xlarge:spot", &c[1], &err);
    sweep_candidate_parse("2xp5.4xlarge:spot", &c[2], &err);
    sweep_candidate_parse("c7i.large:spot", &c[3], &err);
    sweep_candidate_parse("c7i.large", &c[4], &err);
    const price_record *prices[5] = {&g5, &g12, &p5, &c7, &c7};
    sweep_ami amis[SWEEP_AMI_KINDS] = {{"ami-gpu", "gpu-param"}, {"", ""}, {"ami-cpu", "cpu-param"}, {"", ""}};
    sweep_plan_input in = {"us-east-1", c, 4, prices, amis, NULL, 45, 100};
    sweep_plan p;
    /* 45 minutes: the instance's own timer 45, billed at most 45 + the boot allowance (5) = 50 */
    const double H = (45.0 + SWEEP_BOOT_ALLOWANCE_MINUTES) / 60;
    CHECK(sweep_plan_build(&in, &p, &err) == 0, "%s", err.msg);
    CHECK(p.billed_minutes_max == 50 && sweep_timer_minutes(45) == 45, "billed %g", p.billed_minutes_max);
    CHECK(p.lines[0].spot_max_price == p.lines[0].usd_per_node_hour && p.lines[1].spot_max_price == 2.0 &&
              p.lines[2].spot_max_price == 7.0 && p.lines[3].spot_max_price == 0.3,
          "MaxPrice: the price the worst case used: %g %g %g %g", p.lines[0].spot_max_price, p.lines[1].spot_max_price,
          p.lines[2].spot_max_price, p.lines[3].spot_max_price);
    CHECK(fabs(p.lines[0].usd_per_node_hour - 0.55) < 1e-12 && fabs(p.lines[0].worst_case_usd - 4 * 0.55 * H) < 1e-12,
          "highest zone: %g %g", p.lines[0].usd_per_node_hour, p.lines[0].worst_case_usd);
    CHECK(strstr(p.lines[0].price_source, "live 2025-11-25, highest of 3 zones") != NULL, "%s",
          p.lines[0].price_source);
    CHECK(p.lines[1].usd_per_node_hour == 2.0 && strstr(p.lines[1].price_source, "capped at on-demand"),
          "capped: %g %s", p.lines[1].usd_per_node_hour, p.lines[1].price_source);
    CHECK(p.lines[2].usd_per_node_hour == 7.0 && p.lines[2].spot_at_on_demand &&
              fabs(p.lines[2].worst_case_usd - 2 * 7.0 * H) < 1e-12,
          "no spot: %g %d", p.lines[2].usd_per_node_hour, p.lines[2].spot_at_on_demand);
    CHECK(p.lines[3].usd_per_node_hour == 0.3 && !strcmp(p.lines[3].ami.id, "ami-cpu") &&
              !strcmp(p.lines[0].ami.id, "ami-gpu"),
          "cpu spot without on-demand: %g %s", p.lines[3].usd_per_node_hour, p.lines[3].ami.id);
    double total = 4 * 0.55 * H + 2.0 * H + 2 * 7.0 * H + 0.3 * H;
    CHECK(fabs(p.total_usd - total) < 1e-12 && p.verdict == SWEEP_WITHIN && p.instances == 8, "total %g verdict %d",
          p.total_usd, p.verdict);
    sweep_plan_free(&p);
    in.max_cost_usd = total - 0.01;
    CHECK(sweep_plan_build(&in, &p, &err) == 0 && p.verdict == SWEEP_OVER, "over: %d", p.verdict);
    sweep_plan_free(&p);
    in.n = 5; /* c7i.large on-demand has no price: the total is unknown, never within */
    CHECK(sweep_plan_build(&in, &p, &err) == 0 && p.verdict == SWEEP_UNPRICED && isnan(p.total_usd) &&
              isnan(p.lines[4].worst_case_usd) && isnan(p.lines[4].spot_max_price),
          "unpriced: %d %g", p.verdict, p.total_usd);
    sweep_plan_free(&p);
    in.max_cost_usd = NAN;
    CHECK(sweep_plan_build(&in, &p, &err) == 0 && p.verdict == SWEEP_NO_CEILING, "no ceiling: %d", p.verdict);
    /* a fraction of a minute: the timer rounds it up, and the bound is that plus the boot allowance */
    sweep_plan_free(&p);
    in.n = 1;
    in.max_minutes = 0.5;
    CHECK(sweep_plan_build(&in, &p, &err) == 0 && p.billed_minutes_max == 1 + SWEEP_BOOT_ALLOWANCE_MINUTES &&
              fabs(p.lines[0].worst_case_usd - 4 * 0.55 * 6 / 60) < 1e-12,
          "0.5 min: billed %g, worst %g", p.billed_minutes_max, p.lines[0].worst_case_usd);
    CHECK(sweep_timer_minutes(0.01) == 1 && sweep_timer_minutes(30) == 30 && sweep_timer_minutes(30.0001) == 31 &&
              sweep_billed_minutes_max(44.2) == 50,
          "timer minutes: %d %d %d %g", sweep_timer_minutes(0.01), sweep_timer_minutes(30),
          sweep_timer_minutes(30.0001), sweep_billed_minutes_max(44.2));
    in.max_minutes = 45;
    in.n = 5;
    sweep_plan_free(&p);
    amis[SWEEP_AMI_CPU_X86_64].id[0] = '\0';
    CHECK(sweep_plan_build(&in, &p, &err) != 0 && strstr(err.msg, "no AMI for CPU types"), "AMI missing: %s", err.msg);
    in.max_minutes = 0;
    CHECK(sweep_plan_build(&in, &p, &err) != 0 && err.code == IB_EXIT_USAGE, "0 minutes accepted");
}

static ec2_type_network net(int efa, int max_efa, int cards, int per_card)
{
    ec2_type_network n;
    memset(&n, 0, sizeof n);
    n.efa_supported = efa;
    n.max_efa_interfaces = max_efa;
    n.max_network_cards = cards;
    for (int c = 0; c < cards && c < EC2_CARDS_MAX; c++) n.card_max_interfaces[c] = per_card;
    return n;
}

/* "card/device/type" per interface, joined by spaces */
static void layout_text(const sweep_efa *e, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < e->n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%d/%d/%s%s", i ? " " : "", e->nic[i].card, e->nic[i].device,
                              e->nic[i].type, e->nic[i].public_ip ? "+ip" : "");
}

static void efa_layouts(void)
{
    sweep_efa e;
    char t[2048];
    ec2_type_network n = net(1, 4, 4, 15); /* p4d.24xlarge as DescribeInstanceTypes states it */
    sweep_efa_layout(&n, "p4d.24xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 0/1/efa-only 1/0/efa-only 2/0/efa-only 3/0/efa-only") && e.devices == 4 &&
              e.elastic_ip,
          "p4d: %s (%d devices)", t, e.devices);
    sweep_efa_layout(&n, "p4d.24xlarge", 1, 0, &e);
    CHECK(e.n == 0 && strstr(e.why, "one node"), "one node gets no EFA: %d %s", e.n, e.why);
    sweep_efa_layout(&n, "p4d.24xlarge", 2, 1, &e);
    CHECK(e.n == 0 && strstr(e.why, "--efa off"), "--efa off: %d %s", e.n, e.why);
    n = net(1, 1, 1, 15); /* g5.12xlarge */
    sweep_efa_layout(&n, "g5.12xlarge", 4, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/efa+ip") && e.devices == 1 && !e.elastic_ip, "one EFA: %s", t);
    n = net(0, 0, 1, 4); /* g5.xlarge */
    sweep_efa_layout(&n, "g5.xlarge", 4, 0, &e);
    CHECK(e.n == 0 && strstr(e.why, "has no EFA"), "no EFA: %s", e.why);
    sweep_efa_layout(NULL, "g5.xlarge", 4, 0, &e);
    CHECK(e.n == 0, "a type not described gets none");
    n = net(1, 2, 2, 1); /* card 0 takes one interface: EFA with ENA is the primary */
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/efa 1/0/efa-only") && e.devices == 2 && e.elastic_ip, "card 0 of one interface: %s", t);
    n = net(1, 4, 4, 15);
    n.card_max_interfaces[2] = 0; /* a card the answer does not list is not there */
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 0/1/efa-only 1/0/efa-only 3/0/efa-only") && e.devices == 3, "card 2 unlisted: %s",
          t);
    n = net(1, 8, 2, 15); /* more EFA interfaces than cards: one per card */
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    CHECK(e.devices == 2 && e.n == 3, "one EFA per card: %d devices, %d interfaces", e.devices, e.n);
    n = net(1, 32, 32, 2); /* p5.48xlarge */
    sweep_efa_layout(&n, "p5.48xlarge", 2, 0, &e);
    sweep_efa_text(&e, t, sizeof t);
    CHECK(e.n == 33 && e.devices == 32 &&
              !strcmp(t, "card 0: interface (primary) + efa-only; cards 1-31: efa-only "
                         "(32 EFA devices, an Elastic IP on the primary)"),
          "p5: %s", t);
}

/* A network as DescribeInstanceTypes states it with each card's interface types (NetworkCardInfo.
 * InterfaceTypes): CARD0 and REST are EC2_IF_* bits of card 0 and of every further card. */
static ec2_type_network net_typed(int max_efa, int cards, int per_card, unsigned card0, unsigned rest)
{
    ec2_type_network n = net(1, max_efa, cards, per_card);
    for (int c = 0; c < cards && c < EC2_CARDS_MAX; c++) n.card_types[c] = EC2_IF_STATED | (c ? rest : card0);
    return n;
}

/* "0/0/interface" then "C/0/efa-only" for cards FIRST..LAST, as AWS's EFA guide lays them out */
static void efa_only_run(char *out, size_t len, const char *head, int first, int last)
{
    size_t k = (size_t)snprintf(out, len, "%s", head);
    for (int c = first; c <= last && k < len; c++) k += (size_t)snprintf(out + k, len - k, " %d/0/efa-only", c);
}

/* The 2026 shapes, each as moto's copy of AWS's DescribeInstanceTypes data has it (moto 5.2.5,
 * instance_types.json), against the layout AWS's EFA guide gives (docs.aws.amazon.com/AWSEC2/
 * latest/UserGuide/efa-acc-inst-types.html: an ENA primary on card 0 device 0, "if the network card
 * index 0 supports EFA" an efa-only on card 0 device 1, then efa-only on device 0 of the next
 * cards; a single-EFA type: one "efa" interface, efa.html). */
static void efa_card_types(void)
{
    const unsigned all = EC2_IF_ENA | EC2_IF_EFA | EC2_IF_EFA_ONLY;
    sweep_efa e;
    char t[4096], want[4096];
    /* P6-B300: 17 cards of 4 interfaces, card 0 ENA only, 16 EFA (aws-parallelcluster #7143) */
    ec2_type_network n = net_typed(16, 17, 4, EC2_IF_ENA, all);
    sweep_efa_layout(&n, "p6-b300.48xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    efa_only_run(want, sizeof want, "0/0/interface", 1, 16);
    CHECK(!strcmp(t, want) && e.devices == 16 && e.elastic_ip, "p6-b300: %s (%d devices)", t, e.devices);
    for (int i = 0; i < e.n; i++)
        CHECK(e.nic[i].card != 0 || !strcmp(e.nic[i].type, "interface"), "p6-b300: an EFA interface on card 0: %s", t);
    sweep_efa_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "card 0: interface (primary); cards 1-16: efa-only (16 EFA devices, an Elastic IP on the "
                     "primary)"),
          "p6-b300 text: %s", t);
    /* P6-B200: 8 cards of 4, each takes EFA, 8 EFA */
    n = net_typed(8, 8, 4, all, all);
    sweep_efa_layout(&n, "p6-b200.48xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    efa_only_run(want, sizeof want, "0/0/interface 0/1/efa-only", 1, 7);
    CHECK(!strcmp(t, want) && e.devices == 8, "p6-b200: %s", t);
    /* more cards than EFA interfaces (the reading of P6-B200; i7ie.48xlarge: 2 cards, 1 EFA) */
    n = net_typed(4, 10, 4, all, all);
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 0/1/efa-only 1/0/efa-only 2/0/efa-only 3/0/efa-only") && e.devices == 4,
          "10 cards, 4 EFA: %s", t);
    n = net_typed(1, 2, 15, all, all);
    sweep_efa_layout(&n, "i7ie.48xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/efa+ip") && !e.elastic_ip, "2 cards, 1 EFA: %s", t);
    /* P5: 32 cards of 2, each takes EFA, 32 EFA (the guide's "EFA configuration for P5") */
    n = net_typed(32, 32, 2, all, all);
    sweep_efa_layout(&n, "p5.48xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    efa_only_run(want, sizeof want, "0/0/interface 0/1/efa-only", 1, 31);
    CHECK(!strcmp(t, want) && e.devices == 32 && e.n == 33, "p5 typed: %s", t);
    /* G6e: 48xlarge 4 cards of 10 and 4 EFA; 12xlarge one card, one EFA */
    n = net_typed(4, 4, 10, all, all);
    sweep_efa_layout(&n, "g6e.48xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 0/1/efa-only 1/0/efa-only 2/0/efa-only 3/0/efa-only"), "g6e.48xlarge: %s", t);
    n = net_typed(1, 1, 10, all, all);
    sweep_efa_layout(&n, "g6e.12xlarge", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/efa+ip") && e.devices == 1 && !e.elastic_ip, "g6e.12xlarge: %s", t);
    /* one EFA on a type whose card 0 takes ENA only: the primary there, the EFA on card 1 */
    n = net_typed(1, 2, 4, EC2_IF_ENA, all);
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 1/0/efa-only") && e.devices == 1 && e.elastic_ip, "one EFA off card 0: %s", t);
    /* a card that takes EFA with ENA but not efa-only gets "efa"; one without EFA is skipped */
    n = net_typed(3, 4, 4, all, all);
    n.card_types[1] = EC2_IF_STATED | EC2_IF_ENA;
    n.card_types[2] = EC2_IF_STATED | EC2_IF_ENA | EC2_IF_EFA;
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    layout_text(&e, t, sizeof t);
    CHECK(!strcmp(t, "0/0/interface 0/1/efa-only 2/0/efa 3/0/efa-only") && e.devices == 3, "mixed cards: %s", t);
    /* no card takes EFA although efaSupported says so: none, with the reason */
    n = net_typed(4, 4, 4, EC2_IF_ENA, EC2_IF_ENA);
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    CHECK(e.n == 0 && e.devices == 0 && strstr(e.why, "no network card takes an EFA"), "no EFA card: %d %s", e.n,
          e.why);
    /* card 0 names only a type this code does not know: no primary it can give, none */
    n = net_typed(4, 4, 4, 0, all);
    sweep_efa_layout(&n, "x.test", 2, 0, &e);
    CHECK(e.n == 0 && strstr(e.why, "card 0"), "card 0 of unknown types: %d %s", e.n, e.why);
}

int main(void)
{
    arch_rule();
    specs();
    plans();
    efa_layouts();
    efa_card_types();
    return failures != 0;
}
