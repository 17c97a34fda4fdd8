/* aws/curl_util: the libcurl pieces the signed transport (http.c) and the plain requests
 * (plain_http.c) share, in a file of their own so neither depends on the other. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }
void aws_curl_global_init(void) { pthread_once(&curl_once, curl_init_once); }

size_t aws_body_append(aws_body *b, const char *data, size_t n, size_t max)
{
    if (b->len + n > max) {
        b->too_big = 1;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return 0;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}
