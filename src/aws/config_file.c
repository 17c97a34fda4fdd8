/* aws/config_file: the AWS CLI's shared config and credentials files (~/.aws/config, ~/.aws/credentials). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/internal.h"

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

/* Profiles and entries are appended, duplicates too, and looked up from the end, so the later
 * one wins: a check for an earlier one at every line made a file of 20,000 SSO profiles (3.5 MB,
 * well under the cap) take 16 s to read, and it is read several times per command. */
static int add_profile(aws_config_file *f, const char *name)
{
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

/* Returns the entry's index, -1 on failure (KEY and VALUE then the caller's to free). */
static long add_entry(aws_config_file *f, const char *profile, char *key, char *value)
{
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
    return (long)f->n++;
}

/* Keys of a [DEFAULT] section apply to every section, as Python's configparser (and so the AWS
 * CLI) reads these files; it is kept under a name no profile can have. */
static const char DEFAULTS_SECTION[] = "\001DEFAULT";

/* The profile a section header names.  Config file: "[default]", or "[profile NAME]" (the header
 * splits into exactly two whitespace-separated words, the first starting with "profile"); other
 * sections ("[sso-session x]", "[services x]") are not profiles -> NULL.  Credentials file: the
 * header verbatim.  "[DEFAULT]" is configparser's defaults section in both. */
static char *section_profile(const char *h, size_t n, int is_config)
{
    if (n == 7 && !memcmp(h, "DEFAULT", 7)) return strdup(DEFAULTS_SECTION);
    if (!is_config) {
        char *d = malloc(n + 1);
        if (d) memcpy(d, h, n), d[n] = '\0';
        return d;
    }
    if (n == 7 && !memcmp(h, "default", 7)) return strdup("default");
    /* "[sso-session NAME]" (botocore: a first word starting with sso-session) is kept under a name
     * no profile header gives (AWS_SSO_SESSION_SECTION + NAME) */
    int sso = n >= 11 && !memcmp(h, "sso-session", 11);
    if (!sso && (n < 7 || memcmp(h, "profile", 7))) return NULL;
    size_t w1_end = 0, w2_start, w2_end;
    while (w1_end < n && !isspace((unsigned char)h[w1_end])) w1_end++;
    w2_start = w1_end;
    while (w2_start < n && isspace((unsigned char)h[w2_start])) w2_start++;
    w2_end = w2_start;
    while (w2_end < n && !isspace((unsigned char)h[w2_end])) w2_end++;
    size_t rest = w2_end;
    while (rest < n && isspace((unsigned char)h[rest])) rest++;
    if (w2_start == w2_end || rest != n) return NULL;
    size_t pre = sso ? strlen(AWS_SSO_SESSION_SECTION) : 0;
    char *d = malloc(pre + w2_end - w2_start + 1);
    if (d) {
        memcpy(d, AWS_SSO_SESSION_SECTION, pre);
        memcpy(d + pre, h + w2_start, w2_end - w2_start);
        d[pre + w2_end - w2_start] = '\0';
    }
    return d;
}

/* Appends "\n"*blanks + "\n" + line to a value: configparser's multi-line values. */
static void append_continuation(aws_config_file *f, long idx, int blanks, const char *s, size_t n)
{
    if (idx < 0) return;
    char *v = f->e[idx].value;
    size_t old = strlen(v), add = (size_t)blanks + 1 + n;
    char *nv = realloc(v, old + add + 1);
    if (!nv) return;
    memset(nv + old, '\n', (size_t)blanks + 1);
    memcpy(nv + old + blanks + 1, s, n);
    nv[old + add] = '\0';
    f->e[idx].value = nv;
}

aws_config_file *aws_config_parse(const char *text, size_t len, int is_config_file)
{
    aws_config_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    char *profile = NULL; /* current section's profile; NULL when it is not one */
    int in_section = 0;   /* lines before the first header are ignored (configparser: an error) */
    int have_option = 0;  /* an option line since the header: indented lines continue it */
    long entry = -1;      /* its entry, -1 when its section is not a profile */
    size_t opt_indent = 0;
    int blanks = 0; /* blank lines since, kept only if a continuation follows */
    size_t i = 0;
    while (i < len) {
        /* lines end at \n, \r\n or \r (Python's universal newlines) */
        size_t j = i;
        while (j < len && text[j] != '\n' && text[j] != '\r') j++;
        const char *line = text + i;
        size_t n = j - i;
        i = j + 1;
        if (j < len && text[j] == '\r' && j + 1 < len && text[j + 1] == '\n') i++;

        size_t a = 0, b = n;
        while (a < n && isspace((unsigned char)line[a])) a++;
        while (b > a && isspace((unsigned char)line[b - 1])) b--;
        if (a == b) {
            if (have_option) blanks++;
            continue;
        }
        if (line[a] == '#' || line[a] == ';') continue; /* full-line comments only */
        const char *v = line + a;
        size_t vn = b - a;
        if (in_section && have_option && a > opt_indent) {
            append_continuation(f, entry, blanks, v, vn);
            blanks = 0;
            continue;
        }
        opt_indent = a;
        blanks = 0;
        if (v[0] == '[') {
            size_t close = vn;
            while (close > 1 && v[close - 1] != ']') close--;
            if (close > 2) { /* "[" header "]" with a non-empty header; the last ']' closes it */
                free(profile);
                profile = section_profile(v + 1, close - 2, is_config_file);
                in_section = 1;
                have_option = 0;
                entry = -1;
                if (profile && strcmp(profile, DEFAULTS_SECTION) && add_profile(f, profile) != 0) {
                    free(profile);
                    profile = NULL;
                }
                continue;
            }
        }
        if (!in_section) continue;
        size_t d = 0;
        while (d < vn && v[d] != '=' && v[d] != ':') d++;
        char *key = d < vn ? dup_range(v, d, 1) : NULL;
        if (!key || !key[0]) {
            free(key);
            have_option = 0;
            entry = -1;
            continue;
        }
        have_option = 1;
        entry = -1;
        if (!profile) {
            free(key);
            continue;
        }
        char *value = dup_range(v + d + 1, vn - d - 1, 0);
        if (!value) {
            free(key);
            continue;
        }
        entry = add_entry(f, profile, key, value);
        if (entry < 0) {
            free(key);
            free(value);
        }
    }
    free(profile);
    return f;
}

static const char *lookup(const aws_config_file *f, const char *profile, const char *key)
{
    for (size_t i = f->n; i-- > 0;)
        if (!strcmp(f->e[i].profile, profile) && !strcmp(f->e[i].key, key)) return f->e[i].value;
    return NULL;
}

const char *aws_config_get(const aws_config_file *f, const char *profile, const char *key)
{
    if (!f || !aws_config_has_profile(f, profile)) return NULL;
    const char *v = lookup(f, profile, key);
    if (!v) v = lookup(f, DEFAULTS_SECTION, key);
    /* "key =" followed by indented lines is a nested block (e.g. s3 settings), not a value */
    return v && v[0] == '\n' ? NULL : v;
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
        if (f->e[i].value) aws_wipe(f->e[i].value, strlen(f->e[i].value));
        free(f->e[i].value);
    }
    for (size_t i = 0; i < f->n_profiles; i++) free(f->profiles[i]);
    free(f->profiles);
    free(f->e);
    free(f);
}

int aws_config_load(int is_config_file, char *path_out, size_t path_len, aws_config_file **out, ib_error *err)
{
    const char *var = is_config_file ? "AWS_CONFIG_FILE" : "AWS_SHARED_CREDENTIALS_FILE";
    const char *env = getenv(var);
    *out = NULL;
    char path[PATH_MAX];
    if (env && env[0]) {
        if (env[0] == '~' && env[1] == '/' && getenv("HOME"))
            snprintf(path, sizeof path, "%s%s", getenv("HOME"), env + 1);
        else snprintf(path, sizeof path, "%s", env);
    } else {
        const char *home = getenv("HOME");
        snprintf(path, sizeof path, "%s/.aws/%s", home ? home : "", is_config_file ? "config" : "credentials");
    }
    if (path_out) snprintf(path_out, path_len, "%s", path);
    char *data = NULL;
    size_t len = 0;
    ib_error rerr;
    if (util_read_file(path, AWS_CONFIG_MAX_BYTES, &data, &len, &rerr) != 0) {
        /* A file that is not there or cannot be opened configures nothing, as for the AWS CLI, and
         * so does /dev/null, the usual way of saying "no file".  One that opens but is no file of
         * settings (a device, a FIFO, a directory) or is too large is named, not read to the end. */
        if (errno != EINVAL || !strcmp(path, "/dev/null")) {
            *out = aws_config_parse("", 0, is_config_file);
            return 0;
        }
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", env && env[0] ? var : "the shared AWS file", rerr.msg);
    }
    *out = aws_config_parse(data, len, is_config_file);
    aws_wipe(data, len);
    free(data);
    return 0;
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

/* KEY inside a nested block ("s3 =" then indented "addressing_style = path" lines), read as
 * botocore's _parse_nested does: each non-empty line "k = v" (or "k: v"), trimmed. */
static int nested_get(const char *block, const char *key, char *out, size_t out_len)
{
    size_t kn = strlen(key);
    for (const char *l = block; *l;) {
        size_t n = strcspn(l, "\n");
        const char *p = l;
        while (p < l + n && (*p == ' ' || *p == '\t')) p++;
        const char *d = p;
        while (d < l + n && *d != '=' && *d != ':') d++;
        const char *ke = d;
        while (ke > p && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
        if (d < l + n && (size_t)(ke - p) == kn && !strncasecmp(p, key, kn)) {
            const char *v = d + 1, *ve = l + n;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r')) ve--;
            snprintf(out, out_len, "%.*s", (int)(ve - v), v);
            return 0;
        }
        l += n + (l[n] == '\n');
    }
    return -1;
}

const char *aws_s3_addressing_style_config(ib_error *err)
{
    aws_config_file *f;
    if (aws_config_load(1, NULL, 0, &f, err) != 0) return NULL;
    const char *profile = aws_profile_name(NULL);
    const char *style = "auto";
    if (f && aws_config_has_profile(f, profile)) {
        const char *v = lookup(f, profile, "s3");
        if (!v) v = lookup(f, DEFAULTS_SECTION, "s3");
        char got[16];
        if (v && v[0] == '\n' && nested_get(v + 1, "addressing_style", got, sizeof got) == 0) {
            if (!strcmp(got, "path")) style = "path";
            else if (!strcmp(got, "virtual")) style = "virtual";
        }
    }
    aws_config_free(f);
    return style;
}
