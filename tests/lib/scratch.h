/* scratch.h: where the C tests make their scratch files and folders.  Under $TMPDIR when it is set,
 * else /tmp, as Python's tempfile picks for the Python tests (and instbench its own fallback file):
 * a run given its own TMPDIR (a CI job's, a machine whose /tmp is small or read-only) leaves nothing
 * in /tmp.  Its own header, not check.h, as some tests keep a CHECK of their own. */
#ifndef INSTBENCH_TESTS_SCRATCH_H
#define INSTBENCH_TESTS_SCRATCH_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The template "$TMPDIR/NAME-XXXXXX" (or "/tmp/NAME-XXXXXX") in BUF[CAP], for mkdtemp or mkstemp:
 * BUF, or NULL when it does not fit (BUF then holds as much as fitted, to name in a message). */
static inline char *scratch_template(char *buf, size_t cap, const char *name)
{
    const char *t = getenv("TMPDIR");
    int n = snprintf(buf, cap, "%s/%s-XXXXXX", t && t[0] ? t : "/tmp", name);
    return n > 0 && (size_t)n < cap ? buf : NULL;
}

#endif
