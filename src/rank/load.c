/* rank/load.c: command-line inputs -> rank_results.
 *
 * An input is a file, a directory (walked recursively for *.json and *.jsonl, plain or .gz, hidden
 * entries skipped, names sorted so output never depends on readdir order), a glob pattern the
 * shell left unexpanded, or "-" for stdin.  A .jsonl file holds one result per line; any other
 * file holds one result or an array of them.  Stdin may be either.  A .gz file (or S3 object) is
 * read through rank/gzip.c's stream, the caps applying to the decompressed bytes.  Every rejected
 * file or line is reported once through on_skip with a one-line reason and counted; nothing here
 * aborts on bad input.
 *
 * Each result counts once.  Files and directories are remembered by (device, inode), so one
 * reached again (given twice, inside a directory also given, through a symbolic or hard link) is
 * not read again; runs are remembered by run_key, so a copy of a result is not counted again.
 * Both count as duplicates.  A walk does not follow symbolic links to directories unless asked
 * (a tree of links fans out exponentially); with --follow, each directory is still read once.
 * An s3:// input goes to the caller's remote reader, which hands each object back as bytes in
 * memory (rank_sink_object): an object is never written to a local path named after its key. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "instbench/rank.h"
#include "rank/internal.h"

/* Anything bigger than this is not a result file (results are a few KiB; a .jsonl of 100,000
 * results is ~300 MiB). */
#define MAX_DOC_BYTES (64u << 20)
#define MAX_JSONL_BYTES (1024u << 20)

typedef struct loader {
    rank_results *out;
    rank_skip_fn on_skip;
    void *ctx;
    ib_error *err;
    int oom; /* set too when an input is a file the command will write, or was read only in part
              * (rank_sink_fail): err says which */
    int follow;
    const rank_written *writes;
    size_t n_writes;
    rank_seen seen; /* files and directories by (device, inode), runs by run_key */
    /* Directories being walked (the current path from the root): a link back to one of them is a
     * loop, reported as such. */
    dev_t dev[RANK_MAX_DEPTH + 1];
    ino_t ino[RANK_MAX_DEPTH + 1];
    int depth;
} loader;

static void skip(loader *L, const char *where, const char *reason)
{
    L->out->skipped++;
    if (L->on_skip) L->on_skip(L->ctx, where, reason);
}

static void out_of_memory(loader *L)
{
    L->oom = 1;
    ib_error_set(L->err, IB_EXIT_RUNTIME, "out of memory loading results");
}

/* 1 the first time KEY is met, 0 when it was met before (counted as a duplicate). */
static int first_time(loader *L, const unsigned char key[RANK_KEY_BYTES])
{
    int r = rank_seen_add(&L->seen, key);
    if (r < 0) out_of_memory(L);
    if (r == 0) L->out->duplicates++;
    return r > 0;
}

/* 0, or -1 with the load failed when ST is a file the command will write: read as an input and
 * then replaced by the ranking, a result would be lost. */
static int written_later(loader *L, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < L->n_writes; i++)
        if (L->writes[i].dev == (unsigned long long)st->st_dev && L->writes[i].ino == (unsigned long long)st->st_ino) {
            L->oom = 1;
            ib_error_set(L->err, IB_EXIT_USAGE,
                         "%s names %s, an input: the ranking would replace it; name another file", L->writes[i].what,
                         path);
            return -1;
        }
    return 0;
}

static int first_inode(loader *L, char kind, const struct stat *st)
{
    unsigned char key[RANK_KEY_BYTES];
    rank_seen_inode_key(kind, st->st_dev, st->st_ino, key);
    return first_time(L, key);
}

/* A parsed result in the slot after the last: kept unless its run was read before. */
static void keep(loader *L, const rank_result *r)
{
    if (first_time(L, r->run_key)) L->out->n++;
}

static rank_result *push(loader *L)
{
    rank_results *r = L->out;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        rank_result *items = realloc(r->items, cap * sizeof *items);
        if (!items) {
            out_of_memory(L);
            return NULL;
        }
        r->items = items;
        r->cap = cap;
    }
    return &r->items[r->n];
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int is_gz(const char *name) { return has_suffix(name, ".gz"); }

/* JSON lines (one result per line) rather than one document. */
static int is_lines(const char *name) { return has_suffix(name, ".jsonl") || has_suffix(name, ".jsonl.gz"); }

int rank_is_result_name(const char *name)
{
    return is_lines(name) || has_suffix(name, ".json") || has_suffix(name, ".json.gz");
}

/* ---- JSON structure without a tree ------------------------------------------------------------
 * An array's cJSON tree costs about 40 times its text, so arrays are never parsed whole: this
 * finds where each value ends (strings and nesting only; cJSON validates each piece). */

static const char *skip_ws(const char *p, const char *end)
{
    /* Eight spaces at a time while they last: a .jsonl of blank lines is read to its 1 GiB cap,
     * and byte by byte that took 1.5 s (12 under AddressSanitizer, which checks every load). */
    uint64_t w;
    while (end - p >= 8 && (memcpy(&w, p, 8), w == 0x2020202020202020u)) p += 8;
    while (p < end && isspace((unsigned char)*p)) p++;
    return p;
}

/* End of the JSON value starting at P (not whitespace), or NULL when the text ends first. */
static const char *value_end(const char *p, const char *end)
{
    if (*p != '{' && *p != '[' && *p != '"') { /* number, literal: up to a delimiter */
        while (p < end && !strchr(",]}", *p) && !isspace((unsigned char)*p)) p++;
        return p;
    }
    size_t depth = 0;
    for (int in_str = 0; p < end; p++) {
        if (in_str) {
            if (*p == '\\') p++;
            else if (*p == '"') {
                in_str = 0;
                if (depth == 0) return p + 1;
            }
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

static void add_one(loader *L, const char *where, const char *text, size_t len)
{
    char reason[256];
    rank_result *slot = push(L);
    if (!slot) return;
    if (rank_parse_result(text, len, slot, reason, sizeof reason) == 0) keep(L, slot);
    else skip(L, where, reason);
}

/* A document: one result, or an array of them read element by element (each parsed alone, so the
 * memory is the text plus one element's tree). */
static void add_doc(loader *L, const char *where, const char *text, size_t len)
{
    const char *end = text + len, *p = skip_ws(text, end);
    if (p == end || *p != '[' || memchr(text, '\0', len)) {
        add_one(L, where, text, len);
        return;
    }
    char w[4200], reason[96];
    size_t i = 0;
    for (p = skip_ws(p + 1, end); p < end && *p != ']'; i++) {
        const char *e = value_end(p, end);
        if (!e) break;
        snprintf(w, sizeof w, "%s[%zu]", where, i);
        add_one(L, w, p, (size_t)(e - p));
        if (L->oom) return;
        p = skip_ws(e, end);
        if (p < end && *p == ',') p = skip_ws(p + 1, end);
        else if (p < end && *p != ']') break;
    }
    if (p >= end || *p != ']' || *skip_ws(p + 1, end)) {
        snprintf(reason, sizeof reason, "invalid JSON (truncated or corrupt near byte %zu)", (size_t)(p - text));
        skip(L, where, reason);
    } else if (i == 0) {
        skip(L, where, "empty array: no results");
    }
}

/* ---- bounded reading --------------------------------------------------------------------------- */

/* Lines of a stream through one 64 KiB block: memory is the longest line, never the input. */
typedef struct line_reader {
    FILE *f;
    char blk[1 << 16];
    size_t pos, end;
    char *line;
    size_t len, cap;
    size_t total;    /* bytes consumed */
    const char *why; /* a gzip stream's reason for a failed read ("" or NULL: none) */
} line_reader;

/* Next line into r->line (NUL-terminated, without '\n').  1 a line, 0 end of input, -1 a line
 * longer than MAX or holding a NUL byte (binary: the rest is not read), -2 read error. */
static int next_line(line_reader *r, size_t max)
{
    r->len = 0;
    for (;;) {
        if (r->pos == r->end) {
            r->pos = 0;
            r->end = fread(r->blk, 1, sizeof r->blk, r->f);
            if (r->end == 0) {
                if (ferror(r->f)) return -2;
                return r->len > 0; /* a last line without '\n' */
            }
        }
        const char *s = r->blk + r->pos;
        const size_t avail = r->end - r->pos;
        const char *nl = memchr(s, '\n', avail);
        const size_t take = nl ? (size_t)(nl - s) : avail;
        if (memchr(s, '\0', take) || r->len + take > max) return -1;
        if (r->len + take + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < r->len + take + 1) cap *= 2;
            char *nb = realloc(r->line, cap);
            if (!nb) return -2;
            r->line = nb, r->cap = cap;
        }
        memcpy(r->line + r->len, s, take);
        r->len += take;
        r->line[r->len] = '\0';
        r->pos += take + (nl != NULL);
        r->total += take + (nl != NULL);
        if (nl) return 1;
    }
}

static const char *reader_failure(const line_reader *r, int rc)
{
    if (rc == -2 && r->why && r->why[0]) return r->why;
    return rc == -1 ? "binary data or a line longer than a result could be: not JSON results; the rest "
                      "was not read"
                    : "read error";
}

/* JSON Lines from R (first line already in r->line when HAVE_FIRST): each line alone, streamed. */
static void add_lines(loader *L, const char *where, line_reader *r, int have_first)
{
    char w[4200];
    size_t line = 0, found = 0;
    int rc = have_first ? 1 : next_line(r, MAX_DOC_BYTES);
    for (; rc == 1 && !L->oom; rc = next_line(r, MAX_DOC_BYTES)) {
        line++;
        if (r->total > MAX_JSONL_BYTES) {
            skip(L, where, "more than 1 GiB of JSON lines: the rest was not read");
            return;
        }
        const char *a = skip_ws(r->line, r->line + r->len);
        if (a == r->line + r->len) continue;
        found++;
        snprintf(w, sizeof w, "%s:%zu", where, line);
        add_doc(L, w, a, (size_t)(r->line + r->len - a));
    }
    if (rc < 0) {
        snprintf(w, sizeof w, "%s:%zu", where, line + 1);
        skip(L, w, reader_failure(r, rc));
    } else if (!found) {
        skip(L, where, "empty: no results");
    }
}

/* Reads at most MAX bytes of F: pipes, /dev/zero or an endless stdin must not eat the memory.
 * 0 ok; -1 with REASON (unreadable, binary, or more than MAX bytes; WHY, when set, is a gzip
 * stream's own reason for a failed read). */
static int read_bounded(FILE *f, size_t max, const char *why, char **data, size_t *len, char *reason, size_t rlen)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int binary = 0;
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        if (memchr(buf + n, '\0', got)) binary = 1;
        n += got;
        if (n > max || got == 0 || binary) break;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    if (!buf || bad || n > max || binary) {
        snprintf(reason, rlen, "%s",
                 !buf     ? "out of memory"
                 : bad    ? (why && why[0] ? why : "read error")
                 : binary ? "binary data (NUL bytes): not a result file"
                          : "too large to be a result file");
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* A result file's bytes from F (plain, or a gzip stream whose failed reads WHY explains): JSON
 * lines streamed (memory: the longest line), or one document read whole, at most MAX_DOC_BYTES.
 * EMPTY: the reason for no bytes at all. */
static void load_stream(loader *L, const char *where, FILE *f, int lines, const char *why, const char *empty)
{
    if (lines) {
        line_reader *r = calloc(1, sizeof *r);
        if (!r) {
            out_of_memory(L);
            return;
        }
        r->f = f;
        r->why = why;
        L->out->files_read++;
        add_lines(L, where, r, 0);
        free(r->line);
        free(r);
        return;
    }
    char *data = NULL, reason[256];
    size_t len = 0;
    if (read_bounded(f, MAX_DOC_BYTES, why, &data, &len, reason, sizeof reason) != 0) {
        skip(L, where, reason);
        return;
    }
    L->out->files_read++;
    if (len == 0) skip(L, where, empty);
    else add_doc(L, where, data, len);
    free(data);
}

/* F through gzip when NAME says so, the decompressed bytes capped at MAX; NULL (F closed) when
 * out of memory.  WHY: the stream's reason buffer (see rank_gz_open). */
static FILE *maybe_gunzip(loader *L, FILE *f, const char *name, size_t max, char *why, size_t why_len)
{
    why[0] = '\0';
    if (!is_gz(name)) return f;
    FILE *g = rank_gz_open(f, max, why, why_len);
    if (!g) {
        fclose(f);
        out_of_memory(L);
    }
    return g;
}

/* ST: the file's stat, NULL for a pipe or device given by name (read, never deduplicated).  The
 * size caps are checked on the file here and on the decompressed bytes by the gzip stream. */
static void load_file(loader *L, const char *path, const struct stat *st)
{
    off_t size = st ? st->st_size : -1;
    if (st && (written_later(L, path, st) != 0 || !first_inode(L, 'f', st))) return;
    const int lines = is_lines(path); /* streamed: no whole-file buffer */
    const size_t max = lines ? MAX_JSONL_BYTES : MAX_DOC_BYTES;
    if (size >= 0 && (unsigned long long)size > max) {
        skip(L, path, lines ? "too large to be a result file (more than 1 GiB)" : "too large to be a result file");
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        char reason[256];
        snprintf(reason, sizeof reason, "cannot open: %s", strerror(errno));
        skip(L, path, reason);
        return;
    }
    char why[192];
    if (!(f = maybe_gunzip(L, f, path, max, why, sizeof why))) return;
    load_stream(L, path, f, lines, why, "empty file");
    fclose(f);
}

/* Stdin holds one document (possibly pretty-printed over many lines) or JSON lines: JSON lines
 * when its first non-blank line is a whole JSON value, streamed; otherwise one document, read up
 * to the size a result file may have. */
static void load_stdin(loader *L)
{
    const char *where = "<stdin>";
    struct stat st; /* stdin redirected from a file also given by name counts once */
    if (fstat(0, &st) == 0 && S_ISREG(st.st_mode) && (written_later(L, where, &st) != 0 || !first_inode(L, 'f', &st)))
        return;
    line_reader *r = calloc(1, sizeof *r);
    if (!r) {
        out_of_memory(L);
        return;
    }
    r->f = stdin;
    L->out->files_read++;
    int rc;
    const char *a = NULL;
    while ((rc = next_line(r, MAX_DOC_BYTES)) == 1 && *(a = skip_ws(r->line, r->line + r->len)) == '\0') {}
    if (rc < 0) {
        skip(L, where, reader_failure(r, rc));
    } else if (rc == 0) {
        skip(L, where, "empty input");
    } else {
        const char *e = value_end(a, r->line + r->len);
        if (e && *skip_ws(e, r->line + r->len) == '\0') {
            add_lines(L, where, r, 1);
        } else { /* a document over many lines: gather it, bounded */
            size_t cap = r->len + 2, n = 0;
            char *doc = malloc(cap);
            for (; doc && rc == 1; rc = next_line(r, MAX_DOC_BYTES)) {
                if (n + r->len + 2 > MAX_DOC_BYTES) {
                    rc = -1;
                    break;
                }
                if (n + r->len + 2 > cap) {
                    while (cap < n + r->len + 2) cap *= 2;
                    char *nd = realloc(doc, cap);
                    if (!nd) break;
                    doc = nd;
                }
                memcpy(doc + n, r->line, r->len);
                n += r->len;
                doc[n++] = '\n';
            }
            if (!doc || rc != 0) skip(L, where, !doc ? "out of memory" : reader_failure(r, rc));
            else add_doc(L, where, doc, n);
            free(doc);
        }
    }
    free(r->line);
    free(r);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void load_path(loader *L, const char *path, int named);

static void load_dir(loader *L, const char *dir, const struct stat *st)
{
    for (int i = 0; i < L->depth; i++)
        if (L->dev[i] == st->st_dev && L->ino[i] == st->st_ino) {
            skip(L, dir, "symlink loop: this directory is already being read");
            return;
        }
    if (L->depth > RANK_MAX_DEPTH) {
        skip(L, dir, "directory nesting too deep");
        return;
    }
    if (!first_inode(L, 'd', st)) return; /* read already, by another name */
    DIR *d = opendir(dir);
    if (!d) {
        char reason[256];
        snprintf(reason, sizeof reason, "cannot open directory: %s", strerror(errno));
        skip(L, dir, reason);
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        int is_dir = de->d_type == DT_DIR;
        int unknown = de->d_type == DT_UNKNOWN || de->d_type == DT_LNK;
        if (!is_dir && !unknown && !rank_is_result_name(de->d_name)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        if (!(names[n] = malloc(len))) break;
        snprintf(names[n], len, "%s%s%s", dir, has_suffix(dir, "/") ? "" : "/", de->d_name);
        n++;
    }
    closedir(d);
    if (names) qsort(names, n, sizeof *names, cmp_str);
    L->dev[L->depth] = st->st_dev;
    L->ino[L->depth] = st->st_ino;
    L->depth++;
    for (size_t i = 0; i < n; i++) {
        if (!L->oom) load_path(L, names[i], 0);
        free(names[i]);
    }
    L->depth--;
    free(names);
}

/* NAMED: given on the command line (read whatever its name, links followed); otherwise found in
 * a directory (only result names, rank_is_result_name, silently ignoring other files there; links
 * to directories followed only with --follow). */
static void load_path(loader *L, const char *path, int named)
{
    struct stat st;
    int link = 0;
    if (!named && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) link = 1;
    if (stat(path, &st) != 0) {
        char reason[256];
        snprintf(reason, sizeof reason, "%s", strerror(errno));
        skip(L, path, reason);
        return;
    }
    if (S_ISDIR(st.st_mode) && link && !L->follow)
        skip(L, path, "a symbolic link to a directory: not followed (--follow follows them)");
    else if (S_ISDIR(st.st_mode)) load_dir(L, path, &st);
    else if (!S_ISREG(st.st_mode)) {
        if (named) load_file(L, path, NULL); /* a pipe or /dev/stdin given on purpose */
    } else if (named || rank_is_result_name(path)) load_file(L, path, &st);
}

/* ---- objects read by the caller (s3://) ---------------------------------------------------------- */

struct rank_sink {
    loader *L;
};

void rank_sink_skip(rank_sink *s, const char *where, const char *reason) { skip(s->L, where, reason); }

void rank_sink_fail(rank_sink *s, const char *where, const char *reason)
{
    s->L->oom = 1; /* the load stops and fails with err */
    ib_error_set(s->L->err, IB_EXIT_RUNTIME, "%s: %s", where, reason);
}

void rank_sink_object(rank_sink *s, const char *where, const char *name, const char *data, size_t len)
{
    loader *L = s->L;
    if (L->oom) return;
    if (len == 0) { /* fmemopen refuses a zero-length buffer */
        L->out->files_read++;
        skip(L, where, "empty object");
        return;
    }
    FILE *f = fmemopen((void *)data, len, "rb");
    char why[192];
    if (!f) {
        out_of_memory(L);
        return;
    }
    /* an object is at most 64 MiB (the caller's cap), and so is what it decompresses to */
    if (!(f = maybe_gunzip(L, f, name, MAX_DOC_BYTES, why, sizeof why))) return;
    load_stream(L, where, f, is_lines(name), why, "empty object");
    fclose(f);
}

int rank_load(char *const *paths, size_t n_paths, const rank_load_options *opt, rank_results *out, rank_skip_fn on_skip,
              void *ctx, ib_error *err)
{
    loader L = {.out = out,
                .on_skip = on_skip,
                .ctx = ctx,
                .err = err,
                .follow = opt && opt->follow,
                .writes = opt ? opt->writes : NULL,
                .n_writes = opt ? opt->n_writes : 0};
    rank_sink sink = {&L};
    for (size_t i = 0; i < n_paths && !L.oom; i++) {
        const char *p = paths[i];
        struct stat st;
        if (!strncmp(p, "s3://", 5)) {
            if (opt && opt->remote) opt->remote(opt->remote_ctx, p, &sink);
            else skip(&L, p, "S3 inputs cannot be read here");
        } else if (!strcmp(p, "-")) {
            load_stdin(&L);
        } else if (stat(p, &st) != 0 && strpbrk(p, "*?[")) {
            glob_t g;
            int rc = glob(p, 0, NULL, &g);
            if (rc == GLOB_NOMATCH) skip(&L, p, "no files match this pattern");
            else if (rc != 0) skip(&L, p, "cannot expand this pattern");
            else
                for (size_t k = 0; k < g.gl_pathc && !L.oom; k++) load_path(&L, g.gl_pathv[k], 1);
            if (rc == 0 || rc == GLOB_NOMATCH) globfree(&g);
        } else {
            load_path(&L, p, 1);
        }
    }
    rank_seen_free(&L.seen);
    return L.oom ? -1 : 0;
}

void rank_results_free(rank_results *r)
{
    if (!r) return;
    free(r->items);
    memset(r, 0, sizeof *r);
}
