/* ec2_launch: the EC2 calls of `instbench sweep` (declared at the end of aws_services.h):
 * RunInstances, DescribeInstances, TerminateInstances, cluster placement groups, the default VPC's
 * network, an AMI's architecture.  Query API and XML reader shared with ec2.c (ec2_xml.c).
 *
 * Answers read (paths below the root; see ec2_xml_spec):
 *   RunInstancesResponse       instancesSet/item/{instanceId, instanceType, instanceState/name,
 *                              placement/availabilityZone, subnetId, privateIpAddress,
 *                              amiLaunchIndex, instanceLifecycle, stateReason/{code,message},
 *                              launchTime, reason (StateTransitionReason), tagSet/item/{key,value}}
 *   DescribeInstancesResponse  reservationSet/item/instancesSet/item/(the same), nextToken
 *   DescribePlacementGroupsResponse placementGroupSet/item/{groupName, state}
 *   DescribeVpcsResponse       vpcSet/item/vpcId
 *   DescribeSecurityGroupsResponse securityGroupInfo/item/groupId
 *   DescribeSubnetsResponse    subnetSet/item/{subnetId, availabilityZone}, nextToken
 *   DescribeImagesResponse     imagesSet/item/{imageId, architecture}
 * Errors (XML <Response><Errors><Error><Code>) arrive through the client as aws_response.error_code;
 * a DryRun that would have succeeded is the error DryRunOperation (HTTP 412). */
#include "internal.h"
#include "instbench/aws_ids.h"

#include "instbench/aws_values.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Filter values per DescribeInstances request (AWS accepts up to 200 per filter) and instance IDs
 * per TerminateInstances (AWS's limit is 1000). */
#define IDS_PER_DESCRIBE 200
#define IDS_PER_TERMINATE 1000
#define MAX_TAGS 50 /* EC2's limit per resource */

static int describe_page_size = 1000; /* MaxResults of DescribeInstances, 5..1000 */

void aws_ec2_set_describe_page_size(int n) { describe_page_size = n < 5 ? 5 : n > 1000 ? 1000 : n; }

/* ---- instances ------------------------------------------------------------------------------ */

time_t aws_ec2_transition_time(const char *reason)
{
    /* "User initiated (2026-11-25 21:45:00 GMT)": the time in the last parentheses that hold one */
    time_t t = 0;
    for (const char *p = reason ? strchr(reason, '(') : NULL; p; p = strchr(p + 1, '(')) {
        int y, mo, d, h, mi, se, used = 0;
        char zone[4] = "";
        if (sscanf(p, "(%4d-%2d-%2d %2d:%2d:%2d %3[A-Z])%n", &y, &mo, &d, &h, &mi, &se, zone, &used) != 7 || !used)
            continue;
        if (strcmp(zone, "GMT") && strcmp(zone, "UTC")) continue;
        char iso[32];
        time_t v;
        snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, se);
        if (util_aws_time(iso, &v) == 0 && v > 0) t = v;
    }
    return t;
}

enum {
    I_ID,
    I_TYPE,
    I_STATE,
    I_AZ,
    I_SUBNET,
    I_IP,
    I_INDEX,
    I_LIFECYCLE,
    I_REASON_CODE,
    I_REASON_MSG,
    I_LAUNCH,
    I_TRANSITION
};

typedef struct instances_ctx {
    ec2_instances *out;
    const char *what;
    char sweep[EC2_XML_VALUE_MAX], candidate[EC2_XML_VALUE_MAX]; /* this item's tags so far */
} instances_ctx;

static int instance_tag(void *ctx, char sub[][EC2_XML_VALUE_MAX], ib_error *err)
{
    instances_ctx *ic = ctx;
    (void)err;
    if (!strcmp(sub[0], EC2_TAG_SWEEP)) memcpy(ic->sweep, sub[1], sizeof ic->sweep);
    else if (!strcmp(sub[0], EC2_TAG_CANDIDATE)) memcpy(ic->candidate, sub[1], sizeof ic->candidate);
    return 0;
}

static int instance_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    instances_ctx *ic = ctx;
    ec2_instances *l = ic->out;
    ec2_instance in = {0};
    long idx = 0;
    int rc = 0;
    /* the ids and addresses the sweep records: held to the shapes its state reader takes */
    if (!aws_instance_id_valid(v[I_ID]))
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: an instance without an instanceId like i-0123456789abcdef0",
                          ic->what);
    if (!rc && v[I_IP][0] && !aws_ipv4_valid(v[I_IP]))
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: privateIpAddress \"%.40s\" is not an IPv4 address", ic->what,
                          v[I_IP]);
    if (!rc && v[I_INDEX][0] && util_parse_int(v[I_INDEX], 0, 1000000, &idx) != 0)
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: amiLaunchIndex \"%.20s\" is not a count", ic->what, v[I_INDEX]);
    if (!rc && v[I_LAUNCH][0] && util_aws_time(v[I_LAUNCH], &in.launch_time) != 0)
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: bad launchTime \"%.40s\"", ic->what, v[I_LAUNCH]);
    rc = rc || ec2_put(in.id, sizeof in.id, v[I_ID], ic->what, "instanceId", err) ||
         ec2_put(in.type, sizeof in.type, v[I_TYPE], ic->what, "instanceType", err) ||
         ec2_put(in.state, sizeof in.state, v[I_STATE], ic->what, "instance state", err) ||
         ec2_put(in.az, sizeof in.az, v[I_AZ], ic->what, "availabilityZone", err) ||
         ec2_put(in.subnet_id, sizeof in.subnet_id, v[I_SUBNET], ic->what, "subnetId", err) ||
         ec2_put(in.private_ip, sizeof in.private_ip, v[I_IP], ic->what, "privateIpAddress", err) ||
         ec2_put(in.state_reason_code, sizeof in.state_reason_code, v[I_REASON_CODE], ic->what, "stateReason code",
                 err) ||
         ec2_put(in.sweep_tag, sizeof in.sweep_tag, ic->sweep, ic->what, "the " EC2_TAG_SWEEP " tag", err) ||
         ec2_put(in.candidate_tag, sizeof in.candidate_tag, ic->candidate, ic->what, "the " EC2_TAG_CANDIDATE " tag",
                 err);
    ic->sweep[0] = ic->candidate[0] = '\0';
    if (rc) return -1;
    /* a long message is only shown: cut rather than refused */
    v[I_REASON_MSG][sizeof in.state_reason_message - 1] = '\0';
    ec2_put(in.state_reason_message, sizeof in.state_reason_message, v[I_REASON_MSG], ic->what, "", err);
    in.transition_time = aws_ec2_transition_time(v[I_TRANSITION]);
    in.launch_index = (int)idx;
    in.spot = !strcmp(v[I_LIFECYCLE], "spot");
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        ec2_instance *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", ic->what);
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = in;
    return 0;
}

#define INSTANCE_FIELDS                                                                                           \
    {                                                                                                             \
        "instanceId", "instanceType", "instanceState/name", "placement/availabilityZone", "subnetId",             \
            "privateIpAddress", "amiLaunchIndex", "instanceLifecycle", "stateReason/code", "stateReason/message", \
            "launchTime", "reason"                                                                                \
    }

static const ec2_xml_spec run_spec = {.root = "RunInstancesResponse",
                                      .item = "instancesSet/item",
                                      .fields = INSTANCE_FIELDS,
                                      .on_item = instance_item,
                                      .sub = "tagSet/item",
                                      .sub_fields = {"key", "value"},
                                      .on_sub = instance_tag,
                                      .what = "EC2 RunInstances"};
static const ec2_xml_spec describe_spec = {.root = "DescribeInstancesResponse",
                                           .item = "reservationSet/item/instancesSet/item",
                                           .fields = INSTANCE_FIELDS,
                                           .on_item = instance_item,
                                           .sub = "tagSet/item",
                                           .sub_fields = {"key", "value"},
                                           .on_sub = instance_tag,
                                           .what = "EC2 DescribeInstances"};

int aws_ec2_parse_instances(const char *xml, size_t len, int run_response, ec2_instances *out, char **next,
                            ib_error *err)
{
    const ec2_xml_spec *spec = run_response ? &run_spec : &describe_spec;
    instances_ctx ic = {.out = out, .what = spec->what};
    return ec2_xml_parse(spec, &ic, xml, len, next, err);
}

void ec2_instances_free(ec2_instances *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int launch_valid(const ec2_launch *l, ib_error *err)
{
    const char *what = "EC2 RunInstances";
    if (!l->region || !l->instance_type || !l->image_id || l->count < 1 || l->count > 1000)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: region, instance type, image and a count of 1..1000 are needed",
                            what);
    if (l->client_token && (strlen(l->client_token) > 64 || !l->client_token[0]))
        return ib_error_set(err, IB_EXIT_USAGE, "%s: a client token is 1..64 characters", what);
    if (l->n_tags > MAX_TAGS) return ib_error_set(err, IB_EXIT_USAGE, "%s: more than %d tags", what, MAX_TAGS);
    if (l->n_nics > EC2_NICS_MAX)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: more than %d network interfaces", what, EC2_NICS_MAX);
    for (size_t i = 0; i < l->n_nics; i++) {
        const ec2_nic *n = &l->nics[i];
        if (n->card < 0 || n->card >= EC2_CARDS_MAX || n->device < 0 || n->device > 1 ||
            (strcmp(n->type, "interface") && strcmp(n->type, "efa") && strcmp(n->type, "efa-only")))
            return ib_error_set(err, IB_EXIT_USAGE, "%s: network interface %zu is not one EC2 takes", what, i + 1);
    }
    if (l->user_data && strlen(l->user_data) > 16384)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: user data longer than EC2's 16384 bytes", what);
    return 0;
}

/* The RunInstances form of L; NULL when out of memory. */
static ec2_form launch_form(const ec2_launch *l)
{
    char num[24];
    ec2_form f = ec2_action("RunInstances");
    ec2_add(&f, "ImageId", l->image_id);
    ec2_add(&f, "InstanceType", l->instance_type);
    snprintf(num, sizeof num, "%d", l->count);
    ec2_add(&f, "MinCount", num);
    ec2_add(&f, "MaxCount", num);
    ec2_add(&f, "InstanceInitiatedShutdownBehavior", "terminate");
    if (l->client_token) ec2_add(&f, "ClientToken", l->client_token);
    if (l->n_nics) {
        /* EC2 refuses a top-level SubnetId or SecurityGroupId beside NetworkInterface.N: each
           interface names its own (the same subnet: EFA reaches only its own subnet) */
        for (size_t i = 0; i < l->n_nics; i++) {
            const ec2_nic *n = &l->nics[i];
            char v[16];
            snprintf(v, sizeof v, "%d", n->card);
            ec2_addf(&f, v, "NetworkInterface.%zu.NetworkCardIndex", i + 1);
            snprintf(v, sizeof v, "%d", n->device);
            ec2_addf(&f, v, "NetworkInterface.%zu.DeviceIndex", i + 1);
            ec2_addf(&f, n->type, "NetworkInterface.%zu.InterfaceType", i + 1);
            if (l->subnet_id) ec2_addf(&f, l->subnet_id, "NetworkInterface.%zu.SubnetId", i + 1);
            if (l->security_group_id)
                ec2_addf(&f, l->security_group_id, "NetworkInterface.%zu.SecurityGroupId.1", i + 1);
            ec2_addf(&f, "true", "NetworkInterface.%zu.DeleteOnTermination", i + 1);
            if (n->public_ip) ec2_addf(&f, "true", "NetworkInterface.%zu.AssociatePublicIpAddress", i + 1);
        }
    } else {
        if (l->subnet_id) ec2_add(&f, "SubnetId", l->subnet_id);
        if (l->security_group_id) ec2_add(&f, "SecurityGroupId.1", l->security_group_id);
    }
    if (l->placement_group) ec2_add(&f, "Placement.GroupName", l->placement_group);
    if (l->capacity_reservation) {
        ec2_add(&f, "InstanceMarketOptions.MarketType", "capacity-block");
        ec2_add(&f, "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId",
                l->capacity_reservation);
    } else if (l->spot) {
        ec2_add(&f, "InstanceMarketOptions.MarketType", "spot");
        ec2_add(&f, "InstanceMarketOptions.SpotOptions.SpotInstanceType", "one-time");
        ec2_add(&f, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior", "terminate");
        if (l->spot_max_price > 0 && isfinite(l->spot_max_price)) {
            /* rounded down to a millionth of a dollar: what EC2 may bill never exceeds the price the
               caller bounded its cost with; in decimal, as the price was written, or a price that is
               already whole millionths ($1.041) would go below itself and EC2 refuse the launch */
            char price[32];
            snprintf(price, sizeof price, "%.6f", util_floor_millionths(l->spot_max_price));
            ec2_add(&f, "InstanceMarketOptions.SpotOptions.MaxPrice", price);
        }
    }
    if (l->root_volume_gb > 0) {
        /* /dev/sda1: the root device of Ubuntu's and the Deep Learning AMIs */
        snprintf(num, sizeof num, "%d", l->root_volume_gb);
        ec2_add(&f, "BlockDeviceMapping.1.DeviceName", "/dev/sda1");
        ec2_add(&f, "BlockDeviceMapping.1.Ebs.VolumeSize", num);
        ec2_add(&f, "BlockDeviceMapping.1.Ebs.VolumeType", "gp3");
        ec2_add(&f, "BlockDeviceMapping.1.Ebs.DeleteOnTermination", "true");
    }
    if (l->n_tags) {
        ec2_tag_spec(&f, 1, "instance", l->tags, l->n_tags);
        ec2_tag_spec(&f, 2, "volume", l->tags, l->n_tags);
        /* the interfaces too: what a stuck deletion leaves is then found by the sweep's tag */
        if (l->n_nics) ec2_tag_spec(&f, 3, "network-interface", l->tags, l->n_tags);
    }
    if (l->user_data && l->user_data[0]) {
        size_t n = strlen(l->user_data);
        unsigned char *b64 = malloc(4 * ((n + 2) / 3) + 1);
        if (!b64) f.bad = 1;
        else {
            EVP_EncodeBlock(b64, (const unsigned char *)l->user_data, (int)n);
            ec2_add(&f, "UserData", (const char *)b64);
        }
        free(b64);
    }
    if (l->dry_run) ec2_add(&f, "DryRun", "true");
    return f;
}

int aws_ec2_run_instances(aws_client *c, const ec2_launch *l, ec2_instances *out, char aws_code[64], ib_error *err)
{
    aws_code[0] = '\0';
    if (launch_valid(l, err) != 0) return -1;
    ec2_form f = launch_form(l);
    aws_response resp;
    int rc = ec2_call(c, l->region, "EC2 RunInstances", &f, &resp, aws_code, err);
    if (rc != 0 && l->dry_run && !strcmp(aws_code, "DryRunOperation")) {
        ib_error_clear(err);
        rc = 0;
    } else if (rc != 0) {
        ib_error e = *err;
        ib_error_set(err, e.code ? e.code : IB_EXIT_RUNTIME, "EC2 RunInstances (%d x %s in %s): %s", l->count,
                     l->instance_type, l->region, e.msg);
    } else if (!l->dry_run && aws_ec2_parse_instances(resp.body, resp.body_len, 1, out, NULL, err) != 0) {
        ib_error e = *err;
        ib_error_set(err, IB_EXIT_RUNTIME, "%s (instances may have been launched: they carry the launch's tags)",
                     e.msg);
        rc = -1;
    }
    aws_response_free(&resp);
    return rc;
}

int aws_ec2_describe_instances(aws_client *c, const char *region, char *const *ids, size_t n_ids, const char *tag_key,
                               const char *tag_value, ec2_instances *out, ib_error *err)
{
    /* By a filter on instance-id rather than InstanceId.N: an ID EC2 does not know yet is then left
     * out, where InstanceId.N would fail the whole call with InvalidInstanceID.NotFound. */
    size_t n = n_ids ? (n_ids + IDS_PER_DESCRIBE - 1) / IDS_PER_DESCRIBE : 1;
    char **bodies = calloc(n, sizeof *bodies);
    if (!bodies) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeInstances: out of memory");
    char page[16], tag[160];
    snprintf(page, sizeof page, "%d", describe_page_size);
    int rc = 0;
    for (size_t q = 0; q < n && !rc; q++) {
        ec2_form f = ec2_action("DescribeInstances");
        ec2_add(&f, "MaxResults", page);
        if (n_ids) {
            ec2_add(&f, "Filter.1.Name", "instance-id");
            for (size_t k = q * IDS_PER_DESCRIBE, j = 1; k < n_ids && j <= IDS_PER_DESCRIBE; k++, j++)
                ec2_addf(&f, ids[k], "Filter.1.Value.%zu", j);
        } else {
            snprintf(tag, sizeof tag, "tag:%s", tag_key);
            ec2_filter(&f, 1, tag, tag_value);
        }
        if (!(bodies[q] = ec2_form_text(&f)))
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeInstances: out of memory");
    }
    instances_ctx ic = {.out = out, .what = describe_spec.what};
    if (!rc) rc = ec2_describe_all(c, region, bodies, n, &describe_spec, &ic, err);
    for (size_t q = 0; q < n; q++) free(bodies[q]);
    free(bodies);
    return rc;
}

int aws_ec2_instances_by_client_token(aws_client *c, const char *region, const char *client_token, const char *tag_key,
                                      const char *tag_value, ec2_instances *out, ib_error *err)
{
    if (!client_token || !client_token[0] || strlen(client_token) > 64)
        return ib_error_set(err, IB_EXIT_USAGE, "EC2 DescribeInstances: a client token is 1..64 characters");
    char page[16], tag[160];
    snprintf(page, sizeof page, "%d", describe_page_size);
    snprintf(tag, sizeof tag, "tag:%s", tag_key);
    ec2_form f = ec2_action("DescribeInstances");
    ec2_add(&f, "MaxResults", page);
    ec2_filter(&f, 1, "client-token", client_token);
    ec2_filter(&f, 2, tag, tag_value);
    char *body = ec2_form_text(&f);
    if (!body) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeInstances: out of memory");
    instances_ctx ic = {.out = out, .what = describe_spec.what};
    int rc = ec2_describe_all(c, region, &body, 1, &describe_spec, &ic, err);
    free(body);
    return rc;
}

/* One TerminateInstances call for IDS[0..n). */
static int terminate_batch(aws_client *c, const char *region, char *const *ids, size_t n, char code[64], ib_error *err)
{
    ec2_form f = ec2_action("TerminateInstances");
    for (size_t i = 0; i < n; i++) ec2_addf(&f, ids[i], "InstanceId.%zu", i + 1);
    return ec2_send(c, region, "EC2 TerminateInstances", &f, NULL, code, err);
}

int aws_ec2_terminate_instances(aws_client *c, const char *region, char *const *ids, size_t n, ib_error *err)
{
    char code[64];
    for (size_t off = 0; off < n; off += IDS_PER_TERMINATE) {
        size_t k = n - off < IDS_PER_TERMINATE ? n - off : IDS_PER_TERMINATE;
        if (terminate_batch(c, region, ids + off, k, code, err) == 0) continue;
        if (strcmp(code, "InvalidInstanceID.NotFound") != 0) return -1;
        /* One unknown ID fails the whole batch and terminates none: one call per ID then, where
         * NotFound means already gone. */
        for (size_t i = 0; i < k; i++)
            if (terminate_batch(c, region, ids + off + i, 1, code, err) != 0 &&
                strcmp(code, "InvalidInstanceID.NotFound") != 0)
                return -1;
        ib_error_clear(err);
    }
    return 0;
}

/* ---- placement groups ---------------------------------------------------------------------- */

int aws_ec2_create_placement_group(aws_client *c, const char *region, const char *name, const ec2_tag *tags,
                                   size_t n_tags, ib_error *err)
{
    if (n_tags > MAX_TAGS)
        return ib_error_set(err, IB_EXIT_USAGE, "EC2 CreatePlacementGroup: more than %d tags", MAX_TAGS);
    ec2_form f = ec2_action("CreatePlacementGroup");
    ec2_add(&f, "GroupName", name);
    ec2_add(&f, "Strategy", "cluster");
    if (n_tags) ec2_tag_spec(&f, 1, "placement-group", tags, n_tags);
    /* Duplicate: a retried create whose first attempt succeeded (the names are the sweep's own) */
    static const char *const done[] = {"InvalidPlacementGroup.Duplicate", NULL};
    return ec2_send(c, region, "EC2 CreatePlacementGroup", &f, done, NULL, err);
}

int aws_ec2_delete_placement_group(aws_client *c, const char *region, const char *name, ib_error *err)
{
    ec2_form f = ec2_action("DeletePlacementGroup");
    ec2_add(&f, "GroupName", name);
    static const char *const done[] = {"InvalidPlacementGroup.Unknown", NULL};
    return ec2_send(c, region, "EC2 DeletePlacementGroup", &f, done, NULL, err);
}

typedef struct groups_ctx {
    ec2_placement_group *v;
    size_t n, cap;
} groups_ctx;

static int group_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    groups_ctx *g = ctx;
    const char *what = "EC2 DescribePlacementGroups";
    if (!v[0][0]) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: a group without groupName", what);
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 4;
        ec2_placement_group *nv = realloc(g->v, nc * sizeof *nv);
        if (!nv) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
        g->v = nv;
        g->cap = nc;
    }
    ec2_placement_group *p = &g->v[g->n];
    if (ec2_put(p->name, sizeof p->name, v[0], what, "groupName", err) ||
        ec2_put(p->state, sizeof p->state, v[1], what, "state", err))
        return -1;
    g->n++;
    return 0;
}

int aws_ec2_placement_groups_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                                    ec2_placement_group **out, size_t *n, ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribePlacementGroupsResponse",
                                      .item = "placementGroupSet/item",
                                      .fields = {"groupName", "state"},
                                      .on_item = group_item,
                                      .what = "EC2 DescribePlacementGroups"};
    groups_ctx g = {0};
    if (ec2_describe_tagged(c, region, "DescribePlacementGroups", tag_key, tag_value, &spec, &g, err) != 0) {
        free(g.v);
        return -1;
    }
    *out = g.v;
    *n = g.n;
    return 0;
}

/* ---- the default VPC ----------------------------------------------------------------------- */

/* Collects up to CAP rows of N_FIELDS values of an answer's items. */
typedef struct rows_ctx {
    char (*v)[2][64];
    size_t n, cap;
    const char *what;
} rows_ctx;

static int row_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    rows_ctx *r = ctx;
    if (!v[0][0] || r->n >= r->cap) return 0; /* beyond CAP: more zones than any region has */
    if (ec2_put(r->v[r->n][0], 64, v[0], r->what, "an id", err) ||
        ec2_put(r->v[r->n][1], 64, v[1], r->what, "a name", err))
        return -1;
    r->n++;
    return 0;
}

/* One describe call with FILTERS (name, value pairs), its items' two FIELDS into rows. */
static int describe_rows(aws_client *c, const char *region, const char *act, const char *root, const char *item,
                         const char *f1, const char *f2, const char *const *filters, size_t n_filters, rows_ctx *rows,
                         ib_error *err)
{
    char what[64];
    snprintf(what, sizeof what, "EC2 %s", act);
    ec2_xml_spec spec = {.root = root, .item = item, .fields = {f1, f2}, .on_item = row_item, .what = what};
    rows->what = spec.what;
    return ec2_describe_where(c, region, act, filters, n_filters, &spec, rows, err);
}

int aws_ec2_default_network(aws_client *c, const char *region, char vpc_id[32], char sg_id[32], ec2_subnet **subnets,
                            size_t *n, ib_error *err)
{
    char rowbuf[64][2][64];
    rows_ctx rows = {rowbuf, 0, 1, NULL};
    const char *vpc_filter[] = {"isDefault", "true"};
    if (describe_rows(c, region, "DescribeVpcs", "DescribeVpcsResponse", "vpcSet/item", "vpcId", "", vpc_filter, 1,
                      &rows, err) != 0)
        return -1;
    if (rows.n == 0 || strlen(rowbuf[0][0]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "%s has no default VPC: create one (aws ec2 create-default-vpc --region %s) or use "
                            "another region",
                            region, region);
    snprintf(vpc_id, 32, "%.31s", rowbuf[0][0]); /* length checked above */

    const char *sg_filter[] = {"vpc-id", vpc_id, "group-name", "default"};
    rows = (rows_ctx){rowbuf, 0, 1, NULL};
    if (describe_rows(c, region, "DescribeSecurityGroups", "DescribeSecurityGroupsResponse", "securityGroupInfo/item",
                      "groupId", "", sg_filter, 2, &rows, err) != 0)
        return -1;
    if (rows.n == 0 || strlen(rowbuf[0][0]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME, "the default VPC %s of %s has no default security group", vpc_id,
                            region);
    snprintf(sg_id, 32, "%.31s", rowbuf[0][0]); /* length checked above */

    const char *sn_filter[] = {"vpc-id", vpc_id, "default-for-az", "true"};
    rows = (rows_ctx){rowbuf, 0, 64, NULL};
    if (describe_rows(c, region, "DescribeSubnets", "DescribeSubnetsResponse", "subnetSet/item", "subnetId",
                      "availabilityZone", sn_filter, 2, &rows, err) != 0)
        return -1;
    if (rows.n == 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "the default VPC %s of %s has no default subnets", vpc_id, region);
    ec2_subnet *s = calloc(rows.n, sizeof *s);
    if (!s) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSubnets: out of memory");
    for (size_t i = 0; i < rows.n; i++) {
        if (strlen(rowbuf[i][0]) >= sizeof s[i].id || strlen(rowbuf[i][1]) >= sizeof s[i].az) {
            free(s);
            return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSubnets: subnet id or zone too long");
        }
        strcpy(s[i].id, rowbuf[i][0]);
        strcpy(s[i].az, rowbuf[i][1]);
    }
    *subnets = s;
    *n = rows.n;
    return 0;
}

int aws_ec2_image_arch(aws_client *c, const char *region, const char *image_id, char arch[16], ib_error *err)
{
    char rowbuf[1][2][64];
    rows_ctx rows = {rowbuf, 0, 1, NULL};
    const char *img_filter[] = {"image-id", image_id};
    if (describe_rows(c, region, "DescribeImages", "DescribeImagesResponse", "imagesSet/item", "imageId",
                      "architecture", img_filter, 1, &rows, err) != 0)
        return -1;
    if (rows.n == 0 || strcmp(rowbuf[0][0], image_id) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "AMI %s does not exist in %s (or this account may not use it)",
                            image_id, region);
    if (strlen(rowbuf[0][1]) >= 16 || !rowbuf[0][1][0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeImages: AMI %s has no plausible architecture", image_id);
    strcpy(arch, rowbuf[0][1]);
    return 0;
}

/* ---- Capacity Reservations: the Capacity Block a sweep launches into -------------------------
 * DescribeCapacityReservations, CapacityReservationId.1=ID: <capacityReservationSet><item>
 * <capacityReservationId/><instanceType/><availabilityZone/><totalInstanceCount/>
 * <availableInstanceCount/><state/><reservationType/><startDate/><endDate/></item>. */
enum { CR_ID, CR_TYPE, CR_AZ, CR_TOTAL, CR_AVAIL, CR_STATE, CR_KIND, CR_START, CR_END };

typedef struct cr_ctx {
    ec2_capacity_reservation *out;
    const char *want;
    int found;
} cr_ctx;

static int cr_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    cr_ctx *r = ctx;
    const char *what = "EC2 DescribeCapacityReservations";
    if (strcmp(v[CR_ID], r->want) != 0) return 0; /* only the one asked */
    ec2_capacity_reservation *o = r->out;
    memset(o, 0, sizeof *o);
    char *end;
    long total = strtol(v[CR_TOTAL], &end, 10);
    int total_ok = v[CR_TOTAL][0] && !*end && total >= 0 && total <= 100000;
    long avail = strtol(v[CR_AVAIL], &end, 10);
    int avail_ok = v[CR_AVAIL][0] && !*end && avail >= 0 && avail <= total;
    if (ec2_put(o->id, sizeof o->id, v[CR_ID], what, "an id", err) ||
        ec2_put(o->instance_type, sizeof o->instance_type, v[CR_TYPE], what, "an instance type", err) ||
        ec2_put(o->az, sizeof o->az, v[CR_AZ], what, "a zone", err) ||
        ec2_put(o->state, sizeof o->state, v[CR_STATE], what, "a state", err) ||
        ec2_put(o->reservation_type, sizeof o->reservation_type, v[CR_KIND], what, "a reservation type", err))
        return -1;
    if (!total_ok || !avail_ok || !o->instance_type[0] || !o->az[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s without a plausible type, zone or instance counts", what,
                            o->id);
    o->total = (int)total;
    o->available = (int)avail;
    if ((v[CR_START][0] && util_aws_time(v[CR_START], &o->start) != 0) ||
        (v[CR_END][0] && util_aws_time(v[CR_END], &o->end) != 0) || (o->start && o->end && o->end <= o->start))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s has no plausible start and end", what, o->id);
    r->found = 1;
    return 0;
}

int aws_ec2_capacity_reservation(aws_client *c, const char *region, const char *id, ec2_capacity_reservation *out,
                                 ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribeCapacityReservationsResponse",
                                      .item = "capacityReservationSet/item",
                                      .fields = {"capacityReservationId", "instanceType", "availabilityZone",
                                                 "totalInstanceCount", "availableInstanceCount", "state",
                                                 "reservationType", "startDate", "endDate"},
                                      .on_item = cr_item,
                                      .what = "EC2 DescribeCapacityReservations"};
    ec2_form f = ec2_action("DescribeCapacityReservations");
    ec2_add(&f, "CapacityReservationId.1", id);
    aws_response resp;
    char code[64];
    int rc = ec2_call(c, region, spec.what, &f, &resp, code, err);
    cr_ctx ctx = {out, id, 0};
    if (rc != 0) {
        if (!strcmp(code, "InvalidCapacityReservationId.NotFound") ||
            !strcmp(code, "InvalidCapacityReservationId.Malformed"))
            ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s: EC2 knows no such reservation in %s (%s)", id,
                         region, code);
    } else if ((rc = ec2_xml_parse(&spec, &ctx, resp.body, resp.body_len, NULL, err)) == 0 && !ctx.found) {
        rc = ib_error_set(err, IB_EXIT_USAGE, "--capacity-reservation %s: EC2 knows no such reservation in %s", id,
                          region);
    }
    aws_response_free(&resp);
    return rc;
}
