/* A driver for the sweep's EC2 and SSM calls (src/aws/services/ec2_launch.c, ssm.c), used by
 * tests/aws/ec2_calls.py against moto and the fake AWS.  Credentials, region and endpoint come from
 * the environment as for instbench itself.
 *   ec2_probe [-v] COMMAND ...
 *     ssm NAME                          GetParameter: the value on stdout (exit 4: not found)
 *     run TYPE AMI COUNT [OPT...]       RunInstances; OPT: spot  dry-run  subnet=ID  sg=ID  pg=NAME
 *                                       token=T  user-data=FILE  volume=GB  tag=KEY=VALUE
 *                                       prints {"code": AWS's code, "instances": [...]}
 *     describe ID...                    DescribeInstances by ids: {"instances": [...]}
 *     describe-tag KEY VALUE PAGE_SIZE  DescribeInstances by tag, PAGE_SIZE per page
 *     terminate ID...                   TerminateInstances
 *     pg-create NAME [KEY=VALUE...]     CreatePlacementGroup (cluster) with those tags
 *     pg-delete NAME                    DeletePlacementGroup
 *     pg-tag KEY VALUE                  placement groups by tag: {"groups": [{"name", "state"}]}
 *     network                           the default VPC: {"vpc", "sg", "subnets": [{"id", "az"}]}
 *     arch AMI                          the AMI's architecture
 *     types TYPE...                     DescribeInstanceTypes' networks: {"TYPE": {"efa", "max_efa",
 *                                       "cards", "card": [{"index", "max", "types": [...]}]}}
 * Exit 0 when it succeeded, else the error's code (message on stderr, one line). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws.h"
#include "instbench/aws_services.h"

static int die(const ib_error *e)
{
    fprintf(stderr, "ec2_probe: %s\n", e->msg);
    return e->code ? e->code : 1;
}

/* O on one line of stdout, then freed. */
static void print_json(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
}

static void print_instances(const ec2_instances *l, const char *code)
{
    cJSON *o = cJSON_CreateObject();
    if (code) cJSON_AddStringToObject(o, "code", code);
    cJSON *a = cJSON_AddArrayToObject(o, "instances");
    for (size_t i = 0; i < l->n; i++) {
        const ec2_instance *in = &l->v[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", in->id);
        cJSON_AddStringToObject(j, "type", in->type);
        cJSON_AddStringToObject(j, "state", in->state);
        cJSON_AddStringToObject(j, "az", in->az);
        cJSON_AddStringToObject(j, "subnet", in->subnet_id);
        cJSON_AddStringToObject(j, "ip", in->private_ip);
        cJSON_AddNumberToObject(j, "index", in->launch_index);
        cJSON_AddBoolToObject(j, "spot", in->spot);
        cJSON_AddStringToObject(j, "reason", in->state_reason_code);
        cJSON_AddNumberToObject(j, "launch_time", (double)in->launch_time);
        cJSON_AddStringToObject(j, "sweep", in->sweep_tag);
        cJSON_AddStringToObject(j, "candidate", in->candidate_tag);
        cJSON_AddItemToArray(a, j);
    }
    print_json(o);
}

/* KEY=VALUE into a tag; -1 when there is no '='. */
static int parse_tag(const char *s, ec2_tag *t)
{
    const char *eq = strchr(s, '=');
    if (!eq) return -1;
    snprintf(t->key, sizeof t->key, "%.*s", (int)(eq - s), s);
    snprintf(t->value, sizeof t->value, "%s", eq + 1);
    return 0;
}

static int run(aws_client *c, const char *region, char **argv, int argc, ib_error *err)
{
    ec2_launch l = {.region = region, .instance_type = argv[0], .image_id = argv[1], .count = atoi(argv[2])};
    ec2_tag tags[8];
    char *user_data = NULL;
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "spot")) l.spot = 1;
        else if (!strcmp(o, "dry-run")) l.dry_run = 1;
        else if (!strncmp(o, "subnet=", 7)) l.subnet_id = o + 7;
        else if (!strncmp(o, "sg=", 3)) l.security_group_id = o + 3;
        else if (!strncmp(o, "pg=", 3)) l.placement_group = o + 3;
        else if (!strncmp(o, "token=", 6)) l.client_token = o + 6;
        else if (!strncmp(o, "volume=", 7)) l.root_volume_gb = atoi(o + 7);
        else if (!strncmp(o, "user-data=", 10)) {
            size_t len;
            if (util_read_file(o + 10, 1 << 20, &user_data, &len, err) != 0) return -1;
            l.user_data = user_data;
        } else if (!strncmp(o, "tag=", 4) && l.n_tags < 8 && parse_tag(o + 4, &tags[l.n_tags]) == 0) l.n_tags++;
        else return ib_error_set(err, 2, "unknown option %s", o);
    }
    l.tags = tags;
    ec2_instances out = {0};
    char code[64];
    int rc = aws_ec2_run_instances(c, &l, &out, code, err);
    if (rc == 0) print_instances(&out, code);
    else fprintf(stderr, "ec2_probe: code %s\n", code);
    ec2_instances_free(&out);
    free(user_data);
    return rc;
}

static int groups(aws_client *c, const char *region, const char *key, const char *value, ib_error *err)
{
    ec2_placement_group *g = NULL;
    size_t n = 0;
    if (aws_ec2_placement_groups_by_tag(c, region, key, value, &g, &n, err) != 0) return -1;
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "groups");
    for (size_t i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", g[i].name);
        cJSON_AddStringToObject(j, "state", g[i].state);
        cJSON_AddItemToArray(a, j);
    }
    print_json(o);
    free(g);
    return 0;
}

static int network(aws_client *c, const char *region, ib_error *err)
{
    char vpc[32], sg[32];
    ec2_subnet *sn = NULL;
    size_t n = 0;
    if (aws_ec2_default_network(c, region, vpc, sg, &sn, &n, err) != 0) return -1;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "vpc", vpc);
    cJSON_AddStringToObject(o, "sg", sg);
    cJSON *a = cJSON_AddArrayToObject(o, "subnets");
    for (size_t i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", sn[i].id);
        cJSON_AddStringToObject(j, "az", sn[i].az);
        cJSON_AddItemToArray(a, j);
    }
    print_json(o);
    free(sn);
    return 0;
}

static int types(aws_client *c, const char *region, char **names, int n, ib_error *err)
{
    ec2_type_network *net = calloc((size_t)n, sizeof *net);
    if (!net || aws_ec2_type_networks(c, region, names, (size_t)n, net, err) != 0) {
        free(net);
        return net ? -1 : 2;
    }
    static const struct {
        unsigned bit;
        const char *name;
    } kinds[] = {{EC2_IF_ENA, "interface"}, {EC2_IF_EFA, "efa"}, {EC2_IF_EFA_ONLY, "efa-only"}};
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        cJSON *t = cJSON_AddObjectToObject(o, names[i]);
        cJSON_AddBoolToObject(t, "efa", net[i].efa_supported);
        cJSON_AddNumberToObject(t, "max_efa", net[i].max_efa_interfaces);
        cJSON_AddNumberToObject(t, "cards", net[i].max_network_cards);
        cJSON *cards = cJSON_AddArrayToObject(t, "card");
        for (int k = 0; k < EC2_CARDS_MAX; k++) {
            if (!net[i].card_max_interfaces[k]) continue;
            cJSON *card = cJSON_CreateObject();
            cJSON_AddNumberToObject(card, "index", k);
            cJSON_AddNumberToObject(card, "max", net[i].card_max_interfaces[k]);
            cJSON *ty = cJSON_AddArrayToObject(card, "types");
            for (size_t b = 0; b < sizeof kinds / sizeof *kinds; b++)
                if (net[i].card_types[k] & kinds[b].bit) cJSON_AddItemToArray(ty, cJSON_CreateString(kinds[b].name));
            cJSON_AddItemToArray(cards, card);
        }
    }
    print_json(o);
    free(net);
    return 0;
}

int main(int argc, char **argv)
{
    int a = 1;
    if (a < argc && !strcmp(argv[a], "-v")) {
        ib_log_level = 2;
        a++;
    }
    if (a >= argc) return 2;
    const char *cmd = argv[a++];
    int n = argc - a;
    char **args = argv + a;
    ib_error err = {0};
    aws_credentials cred;
    char region[32];
    if (aws_credentials_resolve(&cred, &err) != 0) return die(&err);
    if (aws_region_resolve(region, &err) != 0) return die(&err);
    aws_client *c = NULL;
    aws_client_options opt = {.refresh = aws_credentials_refresh};
    if (aws_client_create(&opt, &cred, &c, &err) != 0) return die(&err);
    int rc = 0;
    ec2_instances out = {0};
    if (!strcmp(cmd, "ssm") && n == 1) {
        char value[2048];
        rc = aws_ssm_get_parameter(c, region, args[0], value, sizeof value, &err);
        if (rc == 0) printf("%s\n", value);
        else if (rc == 1) rc = 4;
    } else if (!strcmp(cmd, "run") && n >= 3) {
        rc = run(c, region, args, n, &err);
    } else if (!strcmp(cmd, "describe") && n >= 1) {
        rc = aws_ec2_describe_instances(c, region, args, (size_t)n, NULL, NULL, &out, &err);
        if (rc == 0) print_instances(&out, NULL);
    } else if (!strcmp(cmd, "describe-tag") && n == 3) {
        aws_ec2_set_describe_page_size(atoi(args[2]));
        rc = aws_ec2_describe_instances(c, region, NULL, 0, args[0], args[1], &out, &err);
        if (rc == 0) print_instances(&out, NULL);
    } else if (!strcmp(cmd, "terminate") && n >= 1) {
        rc = aws_ec2_terminate_instances(c, region, args, (size_t)n, &err);
    } else if (!strcmp(cmd, "pg-create") && n >= 1) {
        ec2_tag tags[8];
        size_t nt = 0;
        for (int i = 1; i < n && nt < 8; i++)
            if (parse_tag(args[i], &tags[nt]) == 0) nt++;
        rc = aws_ec2_create_placement_group(c, region, args[0], tags, nt, &err);
    } else if (!strcmp(cmd, "pg-delete") && n == 1) {
        rc = aws_ec2_delete_placement_group(c, region, args[0], &err);
    } else if (!strcmp(cmd, "pg-tag") && n == 2) {
        rc = groups(c, region, args[0], args[1], &err);
    } else if (!strcmp(cmd, "network") && n == 0) {
        rc = network(c, region, &err);
    } else if (!strcmp(cmd, "arch") && n == 1) {
        char arch[16];
        rc = aws_ec2_image_arch(c, region, args[0], arch, &err);
        if (rc == 0) printf("%s\n", arch);
    } else if (!strcmp(cmd, "types") && n >= 1) {
        rc = types(c, region, args, n, &err);
    } else {
        fprintf(stderr, "ec2_probe: bad command\n");
        rc = 2;
    }
    ec2_instances_free(&out);
    aws_client_destroy(c);
    if (rc == 4) fprintf(stderr, "ec2_probe: %s\n", err.msg);
    if (rc != 0 && rc != 2 && rc != 4) return die(&err);
    return rc;
}
