/* aws/config_file: the AWS CLI's shared config and credentials files (~/.aws/config, ~/.aws/credentials). */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "aws/aws_internal.h"

typedef struct cfg_entry {
    char *profile, *key, *value;
} cfg_entry;

struct aws_config_file {
    cfg_entry *e;
    size_t n, cap;
    char **profiles;
    size_t n_profiles, cap_profiles;
};

static char *dup_range(const char *s, size_t n, int lower)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    char *d = malloc(n + 1);
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) d[i] = lower ? (char)tolower((unsigned char)s[i]) : s[i];
    d[n] = '\0';
    return d;
}

static int add_profile(aws_config_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_profiles; i++)
        if (!strcmp(f->profiles[i], name)) return 0;
    if (f->n_profiles == f->cap_profiles) {
        size_t cap = f->cap_profiles ? f->cap_profiles * 2 : 8;
        char **np = realloc(f->profiles, cap * sizeof *np);
        if (!np) return -1;
        f->profiles = np;
        f->cap_profiles = cap;
    }
    f->profiles[f->n_profiles] = strdup(name);
    if (!f->profiles[f->n_profiles]) return -1;
    f->n_profiles++;
    return 0;
}

static int add_entry(aws_config_file *f, const char *profile, char *key, char *value)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!strcmp(f->e[i].profile, profile) && !strcmp(f->e[i].key, key)) {
            free(f->e[i].value);
            f->e[i].value = value;
            free(key);
            return 0;
        }
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        cfg_entry *ne = realloc(f->e, cap * sizeof *ne);
        if (!ne) return -1;
        f->e = ne;
        f->cap = cap;
    }
    f->e[f->n].profile = strdup(profile);
    if (!f->e[f->n].profile) return -1;
    f->e[f->n].key = key;
    f->e[f->n].value = value;
    f->n++;
    return 0;
}

/* "[profile x]" -> "x" in the config file ("[default]" and "[profile default]" both mean default);
 * "[x]" -> "x" in the credentials file.  Returns NULL for sections that are not profiles
 * (e.g. "[sso-session s]", "[services s]" in the config file). */
static char *section_profile(const char *s, size_t n, int is_config)
{
    char *name = dup_range(s, n, 0);
    if (!name || !is_config) return name;
    if (!strcmp(name, "default")) return name;
    if (!strncmp(name, "profile", 7) && (name[7] == ' ' || name[7] == '\t')) {
        char *p = dup_range(name + 8, strlen(name + 8), 0);
        free(name);
        return p;
    }
    free(name);
    return NULL;
}

aws_config_file *aws_config_parse(const char *text, size_t len, int is_config_file)
{
    aws_config_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    char *profile = NULL; /* current section, NULL outside a profile section */
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n') j++;
        const char *line = text + i;
        size_t n = j - i;
        i = j + 1;
        if (n && line[n - 1] == '\r') n--;
        if (n == 0) continue;
        int indented = line[0] == ' ' || line[0] == '\t';
        size_t k = 0;
        while (k < n && isspace((unsigned char)line[k])) k++;
        if (k == n || line[k] == '#' || line[k] == ';') continue;
        if (indented) continue; /* nested sub-setting, e.g. "s3 =\n  max_concurrent_requests = 10" */
        if (line[0] == '[') {
            const char *close = memchr(line, ']', n);
            free(profile);
            profile = close ? section_profile(line + 1, (size_t)(close - line - 1), is_config_file) : NULL;
            if (profile && (!profile[0] || add_profile(f, profile) != 0)) {
                free(profile);
                profile = NULL;
            }
            continue;
        }
        const char *eq = memchr(line, '=', n);
        if (!eq || !profile) continue;
        char *key = dup_range(line, (size_t)(eq - line), 1);
        char *value = dup_range(eq + 1, n - (size_t)(eq + 1 - line), 0);
        if (!key || !value || !key[0] || add_entry(f, profile, key, value) != 0) {
            free(key);
            free(value);
        }
    }
    free(profile);
    return f;
}

const char *aws_config_get(const aws_config_file *f, const char *profile, const char *key)
{
    if (!f) return NULL;
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].profile, profile) && !strcmp(f->e[i].key, key)) return f->e[i].value;
    return NULL;
}

int aws_config_has_profile(const aws_config_file *f, const char *profile)
{
    if (!f) return 0;
    for (size_t i = 0; i < f->n_profiles; i++)
        if (!strcmp(f->profiles[i], profile)) return 1;
    return 0;
}

void aws_config_free(aws_config_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->e[i].profile);
        free(f->e[i].key);
        /* values include secrets: wipe before freeing */
        volatile char *v = f->e[i].value;
        for (size_t k = 0; v && v[k]; k++) v[k] = 0;
        free(f->e[i].value);
    }
    for (size_t i = 0; i < f->n_profiles; i++) free(f->profiles[i]);
    free(f->profiles);
    free(f->e);
    free(f);
}

aws_config_file *aws_config_load(int is_config_file, char *path_out, size_t path_len)
{
    const char *env = getenv(is_config_file ? "AWS_CONFIG_FILE" : "AWS_SHARED_CREDENTIALS_FILE");
    char path[PATH_MAX];
    if (env && env[0]) {
        if (env[0] == '~' && env[1] == '/' && getenv("HOME"))
            snprintf(path, sizeof path, "%s%s", getenv("HOME"), env + 1);
        else
            snprintf(path, sizeof path, "%s", env);
    } else {
        const char *home = getenv("HOME");
        snprintf(path, sizeof path, "%s/.aws/%s", home ? home : "", is_config_file ? "config" : "credentials");
    }
    if (path_out) snprintf(path_out, path_len, "%s", path);
    char *data = NULL;
    size_t len = 0;
    ib_error err;
    if (util_read_file(path, &data, &len, &err) != 0) return aws_config_parse("", 0, is_config_file);
    aws_config_file *f = aws_config_parse(data, len, is_config_file);
    volatile char *v = data;
    for (size_t k = 0; k < len; k++) v[k] = 0;
    free(data);
    return f;
}

const char *aws_profile_name(int *explicit_profile)
{
    const char *p = getenv("AWS_PROFILE");
    if (p && p[0]) {
        if (explicit_profile) *explicit_profile = 1;
        return p;
    }
    p = getenv("AWS_DEFAULT_PROFILE"); /* older CLI spelling, still honoured by botocore */
    if (p && p[0]) {
        if (explicit_profile) *explicit_profile = 1;
        return p;
    }
    if (explicit_profile) *explicit_profile = 0;
    return "default";
}
