/* aws_body_cap: the response body buffer (src/aws/curl_util.c's aws_body_append) never holds more
 * than its limit allows, the limit's bytes and the NUL: a body exactly at its limit, delivered in
 * pieces as curl delivers them, once took twice the limit (4096 doubled past it).  Each body reads
 * back as the bytes given, NUL-terminated, and one byte past the limit is refused. */
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"
#include "check.h"

/* MAX bytes in pieces of PIECE, then one more byte: the buffer after each step. */
static void fill(size_t max, size_t piece)
{
    char *src = malloc(max + 1);
    if (!src) return;
    for (size_t i = 0; i <= max; i++) src[i] = (char)('a' + i % 26);
    aws_body b = {0};
    size_t given = 0, most = 0;
    while (given < max) {
        size_t n = max - given < piece ? max - given : piece;
        if (aws_body_append(&b, src + given, n, max) != n) break;
        given += n;
        if (b.cap > most) most = b.cap;
    }
    CHECK(given == max, "max %zu, piece %zu: refused at %zu bytes", max, piece, given);
    CHECK(most <= max + 1, "max %zu, piece %zu: %zu bytes held in %zu, more than %zu", max, piece, given, most,
          max + 1);
    CHECK(b.len == max && b.p && !memcmp(b.p, src, max) && b.p[max] == '\0' && !b.too_big,
          "max %zu, piece %zu: %zu bytes read back, too_big %d", max, piece, b.len, b.too_big);
    CHECK(aws_body_append(&b, src + max, 1, max) == 0 && b.too_big && b.len == max,
          "max %zu: a byte past the limit taken (len %zu, too_big %d)", max, b.len, b.too_big);
    free(b.p);
    free(src);
}

int main(void)
{
    /* under the first 4096, a power of two (8192 once grew to 16384), between two, 64 MiB's shape */
    static const size_t maxes[] = {100, 4096, 8192, 5000, 100000, 3u << 20};
    static const size_t pieces[] = {1000, 16384, 4096};
    for (size_t i = 0; i < sizeof maxes / sizeof maxes[0]; i++)
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) fill(maxes[i], pieces[k]);
    /* a small body under a large limit still starts small */
    aws_body b = {0};
    CHECK(aws_body_append(&b, "{}", 2, (size_t)64 << 20) == 2 && b.cap < ((size_t)1 << 20) && !strcmp(b.p, "{}"),
          "2 bytes under 64 MiB: cap %zu", b.cap);
    free(b.p);
    return failures != 0;
}
