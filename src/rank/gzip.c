/* rank/gzip.c: gzip-compressed result inputs (*.json.gz, *.jsonl.gz), local files and S3 objects
 * alike, as a stdio stream of the decompressed bytes, so the loader reads them with the code that
 * reads plain files (a document bounded, JSON lines streamed line by line).
 *
 * The stream yields at most MAX decompressed bytes: a small file can inflate to gigabytes (a "gzip
 * bomb"), so the cap applies to what comes out, not to the file; memory is one 64 KiB input block
 * and zlib's 32 KiB window whatever the sizes.  Past the cap, on corrupt data, or when the input
 * ends inside a compressed stream (truncated), a read fails (ferror) and WHY says which: the
 * loader skips the input with that reason.  Members one after another (`cat a.gz b.gz`) are one
 * stream, and zero bytes after a member are padding, as gzip(1) and Python's gzip module read them. */
#define _GNU_SOURCE /* fopencookie */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rank/internal.h"

typedef struct gz_stream {
    FILE *src;
    z_stream z;
    unsigned char in[1 << 16];
    size_t max, out; /* the cap and the bytes yielded so far */
    int src_eof, in_member, failed;
    char *why;
    size_t why_len;
} gz_stream;

static ssize_t gz_fail(gz_stream *g, const char *why)
{
    if (!g->failed) snprintf(g->why, g->why_len, "%s", why);
    g->failed = 1;
    return -1;
}

/* 1 when input is waiting in g->in (refilled from the source if needed), 0 at its end, -1 on a read error. */
static int gz_have_input(gz_stream *g)
{
    if (g->z.avail_in) return 1;
    if (g->src_eof) return 0;
    size_t n = fread(g->in, 1, sizeof g->in, g->src);
    if (n == 0) {
        g->src_eof = 1;
        return ferror(g->src) ? -1 : 0;
    }
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)n;
    return 1;
}

static ssize_t gz_read(void *cookie, char *buf, size_t size)
{
    gz_stream *g = cookie;
    if (g->failed) return -1;
    /* one byte past the cap is asked for, so "exactly MAX" and "more than MAX" differ */
    size_t room = g->max + 1 - g->out;
    if (size > room) size = room;
    if (size > (1u << 30)) size = 1u << 30;
    g->z.next_out = (unsigned char *)buf;
    g->z.avail_out = (uInt)size;
    while (g->z.avail_out == size) { /* until something came out, or the end */
        int in = gz_have_input(g);
        if (in < 0) return gz_fail(g, "read error");
        if (in == 0) {
            if (g->in_member) return gz_fail(g, "truncated gzip data (it ends inside the compressed stream)");
            break; /* end of the last member (or an empty file) */
        }
        if (!g->in_member) { /* a member starts: a fresh header, a fresh window */
            while (g->z.avail_in && !*g->z.next_in)
                g->z.next_in++, g->z.avail_in--; /* zero padding, as gzip(1) allows */
            if (!g->z.avail_in) continue;
            if (g->z.next_in[0] != 0x1f || (g->z.avail_in > 1 && g->z.next_in[1] != 0x8b))
                return gz_fail(g, "not gzip data (no gzip header where a member starts)");
            if (inflateReset(&g->z) != Z_OK) return gz_fail(g, "corrupt gzip data");
            g->in_member = 1;
        }
        int rc = inflate(&g->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            g->in_member = 0;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            char why[160];
            snprintf(why, sizeof why, "corrupt gzip data (%s)", g->z.msg ? g->z.msg : "zlib error");
            return gz_fail(g, why);
        }
    }
    size_t got = size - g->z.avail_out;
    g->out += got;
    if (g->out > g->max) {
        char why[160];
        snprintf(why, sizeof why,
                 "decompresses to more than %zu MiB: too large to be a result file "
                 "(a gzip bomb?)",
                 g->max >> 20);
        return gz_fail(g, why);
    }
    return (ssize_t)got;
}

static int gz_close(void *cookie)
{
    gz_stream *g = cookie;
    inflateEnd(&g->z);
    int rc = fclose(g->src);
    free(g);
    return rc;
}

FILE *rank_gz_open(FILE *src, size_t max, char *why, size_t why_len)
{
    gz_stream *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->src = src;
    g->max = max;
    g->why = why;
    g->why_len = why_len;
    why[0] = '\0';
    if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) { /* 16+: gzip framing only, not zlib's */
        free(g);
        return NULL;
    }
    FILE *f = fopencookie(g, "rb", (cookie_io_functions_t){.read = gz_read, .close = gz_close});
    if (!f) {
        inflateEnd(&g->z);
        free(g);
    }
    return f;
}
