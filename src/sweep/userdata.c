/* userdata: the instance's script (src/sweep/userdata.sh, embedded at build time as
 * sweep_userdata_template) with the sweep's values filled in, and the source archive it builds. */
#include "instbench/sweep.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char sweep_userdata_template[];
extern const size_t sweep_userdata_template_len;

/* The template's line the values replace. */
static const char VALUES_MARK[] = "#@INSTBENCH_VALUES@\n";

/* EFA devices a node may be asked to see: p5.48xlarge has 32, twice that leaves room. */
enum { EFA_DEVICES_MAX = 64 };

/* 'S' for bash: every byte literal inside single quotes; a quote closes, escapes and reopens. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
        fwrite(s, 1, (size_t)(q - s), f);
        fputs("'\\''", f);
    }
    fputs(s, f);
    fputc('\'', f);
}

static void put_var(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s=", name);
    put_quoted(f, value ? value : "");
    fputc('\n', f);
}

static void put_array(FILE *f, const char *name, const char *const *values, size_t n)
{
    fprintf(f, "%s=(", name);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(' ', f);
        put_quoted(f, values[i]);
    }
    fputs(")\n", f);
}

static int is_url(const char *s) { return s && (!strncmp(s, "https://", 8) || !strncmp(s, "http://", 7)); }

static int check_url(const char *what, const char *url, ib_error *err)
{
    if (is_url(url)) return 0;
    return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: the %s is not an http(s) URL: '%s'", what,
                        url ? url : "(none)");
}

static int check_vars(const sweep_userdata_vars *v, ib_error *err)
{
    if (!sweep_id_valid(v->sweep_id))
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: '%s' is not a sweep id",
                            v->sweep_id ? v->sweep_id : "(none)");
    if (v->nodes < 1 || v->nodes > SWEEP_NODES_MAX)
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: %d nodes (1 to %d)", v->nodes, SWEEP_NODES_MAX);
    /* A week: the bound keeps ceil() in int range and a typo from renting a cluster for a year. */
    if (!(v->max_minutes > 0 && v->max_minutes <= 7 * 24 * 60))
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: max minutes %g (more than 0, at most 10080)",
                            v->max_minutes);
    const char *h = v->source_sha256;
    size_t n = h ? strspn(h, "0123456789abcdef") : 0;
    if (!h || n != 64 || h[n])
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: the source digest is not 64 lower-case hex digits");
    if (check_url("source URL", v->source_url, err) || check_url("result URL", v->result_url, err)) return -1;
    if (!v->log_urls) return check_url("log URL of node 0", NULL, err);
    for (int i = 0; i < v->nodes; i++) {
        char what[32];
        snprintf(what, sizeof what, "log URL of node %d", i);
        if (check_url(what, v->log_urls[i], err)) return -1;
    }
    if (v->nodes > 1 && check_url("rendezvous URL", v->rendezvous_url, err)) return -1;
    if (v->efa_devices < 0 || v->efa_devices > EFA_DEVICES_MAX)
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: %d EFA devices (0 to %d)", v->efa_devices,
                            EFA_DEVICES_MAX);
    if (v->n_measure_args && !v->measure_args)
        return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: measure arguments missing");
    for (size_t i = 0; i < v->n_measure_args; i++)
        if (!v->measure_args[i])
            return ib_error_set(err, IB_EXIT_USAGE, "sweep user data: measure argument %zu missing", i + 1);
    return 0;
}

/* The template's bytes [S, END) without its comment lines and blank lines: the first line (the
 * #! line) is kept.  The comments are for the reader of src/sweep/userdata.sh; on the instance they
 * would only take room the log URLs need (see "Room").  The template has no here-document and no
 * multi-line string, so a line whose first non-blank byte is '#' is always a comment. */
static void put_code(FILE *f, const char *s, const char *end, int first_line)
{
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *next = nl ? nl + 1 : end;
        const char *c = s;
        while (c < next && (*c == ' ' || *c == '\t')) c++;
        if (first_line || (c < next && *c != '#' && *c != '\n')) fwrite(s, 1, (size_t)(next - s), f);
        first_line = 0;
        s = next;
    }
}

/* The script with LOG_NODES of the log URLs; NULL when out of memory. */
static char *render(const sweep_userdata_vars *v, const char *mark, int log_nodes, size_t *len)
{
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    if (!f) return NULL;
    const char *t = sweep_userdata_template;
    put_code(f, t, mark, 1);
    put_var(f, "SWEEP_ID", v->sweep_id);
    put_var(f, "CANDIDATE", v->candidate_spec);
    fprintf(f, "NODES=%d\n", v->nodes);
    /* shutdown(8) takes whole minutes: rounded up (sweep_timer_minutes, the plan's bound too). */
    fprintf(f, "MAX_MINUTES=%d\n", sweep_timer_minutes(v->max_minutes));
    put_var(f, "REGION", v->region);
    put_var(f, "MARKET", v->market);
    put_var(f, "SOURCE_URL", v->source_url);
    put_var(f, "SOURCE_SHA256", v->source_sha256);
    put_var(f, "RESULT_URL", v->result_url);
    put_var(f, "RENDEZVOUS_URL", v->nodes > 1 ? v->rendezvous_url : "");
    fprintf(f, "EFA_DEVICES='%d'\n", v->efa_devices);
    put_array(f, "LOG_URLS", v->log_urls, (size_t)log_nodes);
    put_array(f, "MEASURE_ARGS", (const char *const *)v->measure_args, v->n_measure_args);
    put_code(f, mark + sizeof VALUES_MARK - 1, t + sweep_userdata_template_len, 0);
    int failed = ferror(f);
    if (fclose(f) != 0 || failed) {
        free(out);
        return NULL;
    }
    return out;
}

/* The most log URLs that fit (0 when not even node 0's does), the script in *OUT when wanted. */
static int render_fitting(const sweep_userdata_vars *v, char **out, ib_error *err)
{
    if (check_vars(v, err)) return -1;
    const char *mark = strstr(sweep_userdata_template, VALUES_MARK);
    if (!mark || strstr(mark + 1, VALUES_MARK))
        return ib_error_set(err, IB_EXIT_RUNTIME, "sweep user data: the embedded template lacks its values line");
    /* Each URL dropped shrinks the script by its own length, so the first fit is the largest. */
    size_t len = 0;
    for (int k = v->nodes; k >= 1; k--) {
        char *s = render(v, mark, k, &len);
        if (!s) return ib_error_set(err, IB_EXIT_RUNTIME, "sweep user data: out of memory");
        if (len <= SWEEP_USERDATA_MAX) {
            if (out) *out = s;
            else free(s);
            return k;
        }
        free(s);
    }
    return ib_error_set(err, IB_EXIT_USAGE,
                        "sweep user data: %zu bytes with node 0's log URL alone, EC2 takes at most %d "
                        "(shorter measure flags or S3 prefix)",
                        len, SWEEP_USERDATA_MAX);
}

int sweep_userdata_render(const sweep_userdata_vars *v, char **out, ib_error *err)
{
    *out = NULL;
    return render_fitting(v, out, err) < 0 ? -1 : 0;
}

int sweep_userdata_log_nodes(const sweep_userdata_vars *v, ib_error *err) { return render_fitting(v, NULL, err); }

static int file_sha256(const char *path, char hex[65], ib_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    unsigned char chunk[65536];
    size_t n;
    while (ok && (n = fread(chunk, 1, sizeof chunk, f)) > 0) ok = EVP_DigestUpdate(ctx, chunk, n) == 1;
    int read_error = ferror(f);
    fclose(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    ok = ok && !read_error && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: cannot read it to hash it", path);
    util_hex(md, 32, hex);
    return 0;
}

int sweep_source_archive(char *path, size_t path_len, char sha256_hex[65], ib_error *err)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: cannot find this executable (/proc/self/exe)");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    if ((size_t)snprintf(path, path_len, "%s/%s", slash ? exe : ".", SWEEP_SOURCE_ARCHIVE_NAME) >= path_len)
        return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the path of %s is too long", SWEEP_SOURCE_ARCHIVE_NAME);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "sweep: no source archive at %s (the instances build from it): build it with "
                            "`cmake --build BUILD --target instbench_source_archive`, or install instbench "
                            "with `cmake --install BUILD`",
                            path);
    return file_sha256(path, sha256_hex, err);
}
