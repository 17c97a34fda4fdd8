/* ec2_network: the EC2 calls behind a multi-node sweep candidate's EFA network (declared in
 * aws_services.h): what a type's network is (DescribeInstanceTypes), the security group EFA needs
 * (all traffic to and from itself), the Elastic IP that gives an instance with several interfaces
 * a way out to S3, and the lookups `sweep cleanup` finds them again by.
 *
 * Answers read (paths below the root; see ec2_xml_spec):
 *   DescribeInstanceTypesResponse  instanceTypeSet/item/{instanceType, networkInfo/efaSupported,
 *                                  networkInfo/efaInfo/maximumEfaInterfaces,
 *                                  networkInfo/maximumNetworkCards,
 *                                  networkInfo/networkCards/item/{networkCardIndex,
 *                                  maximumNetworkInterfaces, interfaceTypeSet/item},
 *                                  processorInfo/supportedArchitectures/item (the last)}
 *   DescribeSecurityGroupRulesResponse securityGroupRuleSet/item/{groupId, isEgress, ipProtocol,
 *                                  referencedGroupInfo/groupId}, nextToken
 *   CreateSecurityGroupResponse    groupId
 *   DescribeSecurityGroupsResponse securityGroupInfo/item/{groupId, groupName}
 *   AllocateAddressResponse        allocationId, publicIp
 *   DescribeAddressesResponse      addressesSet/item/{allocationId, publicIp, associationId}
 *   DescribeNetworkInterfacesResponse networkInterfaceSet/item/{networkInterfaceId,
 *                                  attachment/deviceIndex, attachment/networkCardIndex,
 *                                  privateIpAddress, attachment/status}, nextToken */
#include "internal.h"
#include "instbench/aws_ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPES_PER_CALL 100 /* DescribeInstanceTypes' InstanceType.N limit */

/* "12" -> 12 within [lo, hi]; "" -> dflt; anything else -1 with err. */
static int count_field(const char *v, int lo, int hi, int dflt, const char *what, const char *field, ib_error *err)
{
    long n;
    if (!v[0]) return dflt;
    if (util_parse_int(v, lo, hi, &n) != 0) {
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s \"%.20s\" is not a count in %d..%d", what, field, v, lo, hi);
        return -1;
    }
    return (int)n;
}

/* ---- DescribeInstanceTypes ------------------------------------------------------------------ */
typedef struct types_ctx {
    char *const *types;
    size_t n;
    ec2_type_network *out;
    int *seen;
    int cards[EC2_CARDS_MAX]; /* this item's cards so far, by index */
    unsigned card_types[EC2_CARDS_MAX];
} types_ctx;

static const char *const types_what = "EC2 DescribeInstanceTypes";

static int type_card(void *ctx, char sub[][EC2_XML_VALUE_MAX], ib_error *err)
{
    types_ctx *t = ctx;
    int idx = count_field(sub[0], 0, EC2_CARDS_MAX - 1, -1, types_what, "networkCardIndex", err);
    int max = count_field(sub[1], 1, 1000, -1, types_what, "maximumNetworkInterfaces", err);
    if (idx < 0 || max < 0) {
        if (!err->code)
            ib_error_set(err, IB_EXIT_RUNTIME, "%s: a network card without its index or interfaces", types_what);
        return -1;
    }
    t->cards[idx] = max;
    /* interfaceTypeSet's entries, space-joined by the reader; a type EC2 adds later is skipped */
    unsigned bits = 0;
    for (const char *p = sub[2]; *p;) {
        size_t n = strcspn(p, " ");
        if (n) bits |= EC2_IF_STATED;
        if (n == 9 && !strncmp(p, "interface", n)) bits |= EC2_IF_ENA;
        else if (n == 3 && !strncmp(p, "efa", n)) bits |= EC2_IF_EFA;
        else if (n == 8 && !strncmp(p, "efa-only", n)) bits |= EC2_IF_EFA_ONLY;
        p += n + (p[n] == ' ');
    }
    t->card_types[idx] = bits;
    return 0;
}

static int type_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    types_ctx *t = ctx;
    int cards[EC2_CARDS_MAX];
    unsigned card_types[EC2_CARDS_MAX];
    memcpy(cards, t->cards, sizeof cards);
    memcpy(card_types, t->card_types, sizeof card_types);
    memset(t->cards, 0, sizeof t->cards);
    memset(t->card_types, 0, sizeof t->card_types);
    size_t k = 0;
    while (k < t->n && strcmp(t->types[k], v[0])) k++;
    if (k == t->n) return 0; /* not asked: a server's extra is ignored */
    ec2_type_network *o = &t->out[k];
    memset(o, 0, sizeof *o);
    snprintf(o->type, sizeof o->type, "%s", t->types[k]);
    if (strcmp(v[1], "true") && strcmp(v[1], "false") && v[1][0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s: efaSupported \"%.20s\" is not a boolean", types_what,
                            o->type, v[1]);
    o->efa_supported = !strcmp(v[1], "true");
    if ((o->max_efa_interfaces = count_field(v[2], 0, EC2_CARDS_MAX, 0, types_what, "maximumEfaInterfaces", err)) < 0 ||
        (o->max_network_cards = count_field(v[3], 1, EC2_CARDS_MAX, 1, types_what, "maximumNetworkCards", err)) < 0)
        return -1;
    memcpy(o->card_max_interfaces, cards, sizeof cards);
    memcpy(o->card_types, card_types, sizeof card_types);
    /* the reader keeps a list's last item: EC2 lists "i386", "x86_64" for the x86 types that take
     * both, "arm64" alone for Graviton and Grace; a Mac's "x86_64_mac"/"arm64_mac" is neither */
    if (!strcmp(v[4], "arm64") || !strcmp(v[4], "x86_64")) snprintf(o->arch, sizeof o->arch, "%s", v[4]);
    else if (!strcmp(v[4], "i386")) snprintf(o->arch, sizeof o->arch, "x86_64");
    t->seen[k] = 1;
    return 0;
}

static const ec2_xml_spec types_spec = {
    .root = "DescribeInstanceTypesResponse",
    .item = "instanceTypeSet/item",
    .fields = {"instanceType", "networkInfo/efaSupported", "networkInfo/efaInfo/maximumEfaInterfaces",
               "networkInfo/maximumNetworkCards", "processorInfo/supportedArchitectures/item"},
    .on_item = type_item,
    .sub = "networkInfo/networkCards/item",
    .sub_fields = {"networkCardIndex", "maximumNetworkInterfaces", "interfaceTypeSet/item"},
    .on_sub = type_card,
    .what = "EC2 DescribeInstanceTypes"};

int aws_ec2_parse_type_networks(const char *xml, size_t len, char *const *types, size_t n, ec2_type_network *out,
                                int *seen, ib_error *err)
{
    types_ctx t = {.types = types, .n = n, .out = out, .seen = seen};
    return ec2_xml_parse(&types_spec, &t, xml, len, NULL, err);
}

int aws_ec2_type_networks(aws_client *c, const char *region, char *const *types, size_t n, ec2_type_network *out,
                          ib_error *err)
{
    if (n == 0) return 0;
    if (n > TYPES_PER_CALL)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: more than %d types", types_what, TYPES_PER_CALL);
    int *seen = calloc(n, sizeof *seen);
    if (!seen) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", types_what);
    ec2_form f = ec2_action("DescribeInstanceTypes");
    for (size_t i = 0; i < n; i++) ec2_addf(&f, types[i], "InstanceType.%zu", i + 1);
    char *body = ec2_form_text(&f);
    types_ctx t = {.types = types, .n = n, .out = out, .seen = seen};
    int rc = body ? ec2_describe_all(c, region, &body, 1, &types_spec, &t, err)
                  : ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", types_what);
    free(body);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!seen[i])
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: EC2 says nothing of %s in %s (not offered there?)", types_what,
                              types[i], region);
    free(seen);
    return rc;
}

/* ---- security groups ------------------------------------------------------------------------ */
typedef struct rules_ctx {
    const char *sg;
    int in_self, out_self;
} rules_ctx;

static int rule_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    rules_ctx *r = ctx;
    (void)err;
    if (strcmp(v[0], r->sg) || strcmp(v[2], "-1") || strcmp(v[3], r->sg)) return 0;
    if (!strcmp(v[1], "true")) r->out_self = 1;
    else if (!strcmp(v[1], "false")) r->in_self = 1;
    return 0;
}

int aws_ec2_group_self_rules(aws_client *c, const char *region, const char *sg_id, int *in_self, int *out_self,
                             ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribeSecurityGroupRulesResponse",
                                      .item = "securityGroupRuleSet/item",
                                      .fields = {"groupId", "isEgress", "ipProtocol", "referencedGroupInfo/groupId"},
                                      .on_item = rule_item,
                                      .what = "EC2 DescribeSecurityGroupRules"};
    const char *filter[] = {"group-id", sg_id};
    rules_ctx r = {sg_id, 0, 0};
    int rc = ec2_describe_where(c, region, "DescribeSecurityGroupRules", filter, 1, &spec, &r, err);
    *in_self = r.in_self;
    *out_self = r.out_self;
    return rc;
}

/* A flat answer's two fields (below the root) into v. */
typedef struct one_ctx {
    char v[2][64];
    const char *what;
} one_ctx;

static int one_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    one_ctx *o = ctx;
    for (int i = 0; i < 2; i++)
        if (ec2_put(o->v[i], sizeof o->v[i], v[i], o->what, "a value", err) != 0) return -1;
    return 0;
}

static int read_flat(const char *xml, size_t len, const char *root, const char *f0, const char *f1, one_ctx *o,
                     ib_error *err)
{
    ec2_xml_spec spec = {.root = root, .item = "", .fields = {f0, f1}, .on_item = one_item, .what = o->what};
    return ec2_xml_parse(&spec, o, xml, len, NULL, err);
}

static int ids_by_name(aws_client *c, const char *region, const char *vpc_id, const char *name, char id[32],
                       ib_error *err);

int aws_ec2_create_self_group(aws_client *c, const char *region, const char *vpc_id, const char *name,
                              const char *description, const ec2_tag *tags, size_t n_tags, char id[32], ib_error *err)
{
    const char *what = "EC2 CreateSecurityGroup";
    ec2_form f = ec2_action("CreateSecurityGroup");
    ec2_add(&f, "GroupName", name);
    ec2_add(&f, "GroupDescription", description);
    ec2_add(&f, "VpcId", vpc_id);
    if (n_tags) ec2_tag_spec(&f, 1, "security-group", tags, n_tags);
    aws_response resp;
    char code[64];
    int rc = ec2_call(c, region, what, &f, &resp, code, err);
    id[0] = '\0';
    if (rc == 0) {
        one_ctx o = {.what = what};
        rc = read_flat(resp.body, resp.body_len, "CreateSecurityGroupResponse", "groupId", NULL, &o, err);
        if (rc == 0 && !aws_security_group_id_valid(o.v[0]))
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: no group id in the answer", what);
        if (rc == 0) snprintf(id, 32, "%.31s", o.v[0]); /* length checked above */
    } else if (!strcmp(code, "InvalidGroup.Duplicate")) {
        /* a retried create whose first attempt succeeded (the name is the sweep's own) */
        ib_error_clear(err);
        rc = ids_by_name(c, region, vpc_id, name, id, err);
    }
    aws_response_free(&resp);
    if (rc != 0) return -1;
    /* every protocol from and to the group itself: EFA's traffic is not TCP, and an EFA's
       outbound traffic must be allowed to the group as a group, not only to 0.0.0.0/0 */
    static const char *const dirs[] = {"AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress"};
    static const char *const done[] = {"InvalidPermission.Duplicate", NULL};
    for (int d = 0; d < 2; d++) {
        ec2_form g = ec2_action(dirs[d]);
        ec2_add(&g, "GroupId", id);
        ec2_add(&g, "IpPermissions.1.IpProtocol", "-1");
        ec2_add(&g, "IpPermissions.1.Groups.1.GroupId", id);
        char w[64];
        snprintf(w, sizeof w, "EC2 %s", dirs[d]);
        if (ec2_send(c, region, w, &g, done, NULL, err) != 0) return -1;
    }
    return 0;
}

int aws_ec2_delete_security_group(aws_client *c, const char *region, const char *id, char code[64], ib_error *err)
{
    ec2_form f = ec2_action("DeleteSecurityGroup");
    ec2_add(&f, "GroupId", id);
    static const char *const done[] = {"InvalidGroup.NotFound", NULL};
    return ec2_send(c, region, "EC2 DeleteSecurityGroup", &f, done, code, err);
}

typedef struct groups_ctx {
    char (*ids)[32];
    size_t n, cap;
    const char *name; /* only the group of this name; NULL: every one */
} groups_ctx;

static int sg_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    groups_ctx *g = ctx;
    const char *what = "EC2 DescribeSecurityGroups";
    if (g->name && strcmp(v[1], g->name)) return 0;
    if (!aws_security_group_id_valid(v[0]))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: a group without a plausible id", what);
    if (g->n == g->cap) {
        size_t nc = g->cap ? 2 * g->cap : 4;
        char(*nv)[32] = realloc(g->ids, nc * sizeof *nv);
        if (!nv) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
        g->ids = nv;
        g->cap = nc;
    }
    snprintf(g->ids[g->n++], 32, "%s", v[0]);
    return 0;
}

static const ec2_xml_spec groups_spec = {.root = "DescribeSecurityGroupsResponse",
                                         .item = "securityGroupInfo/item",
                                         .fields = {"groupId", "groupName"},
                                         .on_item = sg_item,
                                         .what = "EC2 DescribeSecurityGroups"};

static int ids_by_name(aws_client *c, const char *region, const char *vpc_id, const char *name, char id[32],
                       ib_error *err)
{
    groups_ctx g = {.name = name};
    const char *filters[] = {"vpc-id", vpc_id, "group-name", name};
    int rc = ec2_describe_where(c, region, "DescribeSecurityGroups", filters, 2, &groups_spec, &g, err);
    if (rc == 0 && g.n != 1)
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "EC2 CreateSecurityGroup: %s exists, but %zu groups answer to its name",
                          name, g.n);
    if (rc == 0) snprintf(id, 32, "%s", g.ids[0]);
    free(g.ids);
    return rc;
}

int aws_ec2_security_groups_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                                   char (**ids)[32], size_t *n, ib_error *err)
{
    groups_ctx g = {0};
    if (ec2_describe_tagged(c, region, "DescribeSecurityGroups", tag_key, tag_value, &groups_spec, &g, err) != 0) {
        free(g.ids);
        return -1;
    }
    *ids = g.ids;
    *n = g.n;
    return 0;
}

/* ---- Elastic IPs -------------------------------------------------------------------------------- */
/* An address the sweep records: its allocation id and, when given, an IPv4 public address (the
 * state file is refused otherwise, so an answer is held to the same shapes). */
static int alloc_id_valid(const char *s) { return aws_eip_allocation_id_valid(s); }
static int public_ip_valid(const char *s) { return !s[0] || aws_ipv4_valid(s); }

int aws_ec2_allocate_address(aws_client *c, const char *region, const ec2_tag *tags, size_t n_tags, ec2_address *out,
                             ib_error *err)
{
    const char *what = "EC2 AllocateAddress";
    ec2_form f = ec2_action("AllocateAddress");
    ec2_add(&f, "Domain", "vpc");
    if (n_tags) ec2_tag_spec(&f, 1, "elastic-ip", tags, n_tags);
    aws_response resp;
    char code[64];
    memset(out, 0, sizeof *out);
    int rc = ec2_call(c, region, what, &f, &resp, code, err);
    if (rc == 0) {
        one_ctx o = {.what = what};
        rc = read_flat(resp.body, resp.body_len, "AllocateAddressResponse", "allocationId", "publicIp", &o, err);
        if (rc == 0 && (!alloc_id_valid(o.v[0]) || !public_ip_valid(o.v[1])))
            rc = ib_error_set(err, IB_EXIT_RUNTIME,
                              "%s: no allocation id and IPv4 address in the answer (an address "
                              "may have been allocated: it carries the sweep's tag)",
                              what);
        if (rc == 0) {
            snprintf(out->allocation_id, sizeof out->allocation_id, "%s", o.v[0]);
            snprintf(out->public_ip, sizeof out->public_ip, "%.47s", o.v[1]);
        }
    }
    aws_response_free(&resp);
    return rc;
}

int aws_ec2_associate_address(aws_client *c, const char *region, const char *allocation_id, const char *eni_id,
                              char code[64], ib_error *err)
{
    ec2_form f = ec2_action("AssociateAddress");
    ec2_add(&f, "AllocationId", allocation_id);
    ec2_add(&f, "NetworkInterfaceId", eni_id);
    return ec2_send(c, region, "EC2 AssociateAddress", &f, NULL, code, err);
}

int aws_ec2_release_address(aws_client *c, const char *region, const char *allocation_id, char code[64], ib_error *err)
{
    ec2_form f = ec2_action("ReleaseAddress");
    ec2_add(&f, "AllocationId", allocation_id);
    static const char *const done[] = {"InvalidAllocationID.NotFound", NULL};
    return ec2_send(c, region, "EC2 ReleaseAddress", &f, done, code, err);
}

int aws_ec2_disassociate_address(aws_client *c, const char *region, const char *association_id, ib_error *err)
{
    ec2_form f = ec2_action("DisassociateAddress");
    ec2_add(&f, "AssociationId", association_id);
    static const char *const done[] = {"InvalidAssociationID.NotFound", "InvalidAssociationID.Malformed", NULL};
    return ec2_send(c, region, "EC2 DisassociateAddress", &f, done, NULL, err);
}

typedef struct addr_ctx {
    ec2_address *v;
    size_t n, cap;
} addr_ctx;

static int addr_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    addr_ctx *a = ctx;
    const char *what = "EC2 DescribeAddresses";
    if (!alloc_id_valid(v[0]) || !public_ip_valid(v[1]))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: an address without an allocation id and IPv4 address", what);
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 4;
        ec2_address *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
        a->v = nv;
        a->cap = nc;
    }
    ec2_address *o = &a->v[a->n];
    if (ec2_put(o->allocation_id, sizeof o->allocation_id, v[0], what, "allocationId", err) ||
        ec2_put(o->public_ip, sizeof o->public_ip, v[1], what, "publicIp", err) ||
        ec2_put(o->association_id, sizeof o->association_id, v[2], what, "associationId", err))
        return -1;
    a->n++;
    return 0;
}

int aws_ec2_addresses_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                             ec2_address **out, size_t *n, ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribeAddressesResponse",
                                      .item = "addressesSet/item",
                                      .fields = {"allocationId", "publicIp", "associationId"},
                                      .on_item = addr_item,
                                      .what = "EC2 DescribeAddresses"};
    addr_ctx a = {0};
    if (ec2_describe_tagged(c, region, "DescribeAddresses", tag_key, tag_value, &spec, &a, err) != 0) {
        free(a.v);
        return -1;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

/* ---- the primary interface ---------------------------------------------------------------------- */
typedef struct eni_ctx {
    const char *private_ip;
    char best[32];
    int found, ambiguous;
} eni_ctx;

static int eni_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    eni_ctx *e = ctx;
    (void)err;
    /* network card 0 (absent on a one-card type), device 0; several such (a stand-in that keeps no
       card index) are told apart by the primary private address, which only the primary holds */
    if (strcmp(v[1], "0") || (v[2][0] && strcmp(v[2], "0")) || strncmp(v[0], "eni-", 4) || strlen(v[0]) >= 32) return 0;
    int holds_ip = e->private_ip && e->private_ip[0] && !strcmp(v[3], e->private_ip);
    if (!e->found || holds_ip) {
        if (e->found && !holds_ip) e->ambiguous = 1;
        snprintf(e->best, sizeof e->best, "%s", v[0]);
        e->found = holds_ip ? 2 : 1;
    } else if (e->found == 1) {
        e->ambiguous = 1;
    }
    return 0;
}

int aws_ec2_primary_interface(aws_client *c, const char *region, const char *instance_id, const char *private_ip,
                              char eni[32], ib_error *err)
{
    static const ec2_xml_spec spec = {
        .root = "DescribeNetworkInterfacesResponse",
        .item = "networkInterfaceSet/item",
        .fields = {"networkInterfaceId", "attachment/deviceIndex", "attachment/networkCardIndex", "privateIpAddress"},
        .on_item = eni_item,
        .what = "EC2 DescribeNetworkInterfaces"};
    const char *filter[] = {"attachment.instance-id", instance_id};
    eni_ctx e = {.private_ip = private_ip};
    if (ec2_describe_where(c, region, "DescribeNetworkInterfaces", filter, 1, &spec, &e, err) != 0) return -1;
    if (!e.found || (e.found == 1 && e.ambiguous)) return 1; /* not attached (or not told apart) yet */
    snprintf(eni, 32, "%s", e.best);
    return 0;
}
