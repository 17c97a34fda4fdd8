/* rank/seen.c: a set of 32-byte keys (open addressing, linear probing), for counting each input
 * once: (device, inode) of files and directories, and the run key of each result. */
#include <stdlib.h>
#include <string.h>

#include "rank/internal.h"

static size_t hash(const unsigned char k[RANK_KEY_BYTES])
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: inode keys are mostly zero bytes */
    for (int i = 0; i < RANK_KEY_BYTES; i++) h = (h ^ k[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static int grow(rank_seen *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    unsigned char(*keys)[RANK_KEY_BYTES] = calloc(cap, sizeof *keys);
    unsigned char *used = calloc(cap, 1);
    if (!keys || !used) {
        free(keys), free(used);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->used[i]) continue;
        size_t j = hash(s->keys[i]) & (cap - 1);
        while (used[j]) j = (j + 1) & (cap - 1);
        memcpy(keys[j], s->keys[i], RANK_KEY_BYTES);
        used[j] = 1;
    }
    free(s->keys);
    free(s->used);
    s->keys = keys;
    s->used = used;
    s->cap = cap;
    return 0;
}

int rank_seen_add(rank_seen *s, const unsigned char key[RANK_KEY_BYTES])
{
    if ((s->n + 1) * 2 > s->cap && grow(s) != 0) return -1; /* at most half full */
    size_t j = hash(key) & (s->cap - 1);
    for (; s->used[j]; j = (j + 1) & (s->cap - 1))
        if (!memcmp(s->keys[j], key, RANK_KEY_BYTES)) return 0;
    memcpy(s->keys[j], key, RANK_KEY_BYTES);
    s->used[j] = 1;
    s->n++;
    return 1;
}

void rank_seen_inode_key(char kind, dev_t dev, ino_t ino, unsigned char key[RANK_KEY_BYTES])
{
    uint64_t d = (uint64_t)dev, i = (uint64_t)ino;
    memset(key, 0, RANK_KEY_BYTES);
    key[0] = (unsigned char)kind;
    memcpy(key + 8, &d, sizeof d);
    memcpy(key + 16, &i, sizeof i);
}

void rank_seen_free(rank_seen *s)
{
    free(s->keys);
    free(s->used);
    memset(s, 0, sizeof *s);
}
