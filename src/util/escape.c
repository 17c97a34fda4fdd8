/* util/escape.c: untrusted text made safe for a terminal.
 *
 * Availability zones, device names, host names, file names and AWS messages come from files and
 * services instbench does not control.  Printed raw, "\x1b]52;c;...\x07" would write the user's
 * clipboard and "\x1b[2J" clear the screen.  Every table and log line passes such text through
 * here: C0 controls (tab and newline included), DEL and bytes that are not valid UTF-8 become
 * "\xNN"; C1 controls (U+0080..U+009F, which some terminals obey) and the bidirectional overrides
 * that reorder what is shown (U+202A..U+202E, U+2066..U+2069) become "\uNNNN".  Printable ASCII
 * and other well-formed UTF-8 pass unchanged, and so does the backslash: escaping is idempotent,
 * so text escaped once (an error message quoted in another) is never mangled twice. */
#include "instbench/util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at P (RFC 3629: no overlong forms, no surrogates, at
 * most U+10FFFF) and its code point; 0 when P does not start one. */
static size_t utf8_decode(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80, c &= 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800, c &= 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000, c &= 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
        c = (c << 6) | (p[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return n;
}

static int shown_escaped(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t util_utf8_name_char(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned cp;
    if (p[0] < 0x80) return p[0] && (isalnum(p[0]) || strchr(".-_", p[0])) ? 1 : 0;
    size_t n = utf8_decode(p, &cp);
    return n && !shown_escaped(cp) ? n : 0;
}

int util_utf8_name(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = util_utf8_name_char(s + i);
        if (!k || k > n - i) return 0;
        i += k;
    }
    return 1;
}

/* The next display unit of *P: up to 7 bytes into UNIT (NUL-terminated); advances *P. */
static size_t next_unit(const unsigned char **p, char unit[8])
{
    static const char hex[] = "0123456789abcdef";
    unsigned c = **p, cp = 0;
    if (c >= 0x20 && c < 0x7F) {
        unit[0] = (char)c, unit[1] = '\0';
        (*p)++;
        return 1;
    }
    size_t n = c >= 0x80 ? utf8_decode(*p, &cp) : 0;
    if (n && !shown_escaped(cp)) {
        memcpy(unit, *p, n);
        unit[n] = '\0';
        *p += n;
        return n;
    }
    if (n) { /* "\u009b" */
        unit[0] = '\\', unit[1] = 'u';
        for (int i = 0; i < 4; i++) unit[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
        unit[6] = '\0';
        *p += n;
        return 6;
    }
    unit[0] = '\\', unit[1] = 'x', unit[2] = hex[c >> 4], unit[3] = hex[c & 15], unit[4] = '\0';
    (*p)++;
    return 4;
}

size_t util_term_escape(const char *s, char *out, size_t cap)
{
    size_t need = 0, used = 0;
    int full = 0;
    char unit[8];
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = next_unit(&p, unit);
        need += n;
        /* A unit is written whole or not at all: never half an escape or half a character. */
        if (!full && out && used + n < cap) {
            memcpy(out + used, unit, n);
            used += n;
        } else {
            full = 1;
        }
    }
    if (out && cap) out[used] = '\0';
    return need;
}

char *util_term_escape_dup(const char *s)
{
    size_t n = util_term_escape(s, NULL, 0);
    char *d = malloc(n + 1);
    if (d) util_term_escape(s, d, n + 1);
    return d;
}

void util_term_fputs(const char *s, FILE *f)
{
    char unit[8];
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        next_unit(&p, unit);
        fputs(unit, f);
    }
}

void util_term_vprintf(FILE *f, const char *fmt, va_list ap)
{
    char stack[1024], *msg = stack;
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(stack, sizeof stack, fmt, copy);
    va_end(copy);
    if (n < 0) return;
    if ((size_t)n >= sizeof stack) {
        msg = malloc((size_t)n + 1);
        if (!msg) return;
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    }
    /* FMT's own trailing newline is layout; any other control character came from an argument. */
    int nl = n > 0 && msg[n - 1] == '\n' && fmt[0] && fmt[strlen(fmt) - 1] == '\n';
    if (nl) msg[n - 1] = '\0';
    util_term_fputs(msg, f);
    if (nl) fputc('\n', f);
    if (msg != stack) free(msg);
}

void util_term_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_term_vprintf(f, fmt, ap);
    va_end(ap);
}

static const char *forward_as, *forward_lead; /* util_usage_forwarded's */

void util_usage_forwarded(const char *as_cmd, const char *lead)
{
    forward_as = as_cmd;
    forward_lead = lead;
}

int util_usage_verror(const char *cmd, const char *fmt, va_list ap)
{
    const char *sp = cmd[0] ? " " : "";
    if (forward_as) fprintf(stderr, "instbench %s: %s", forward_as, forward_lead ? forward_lead : "");
    else fprintf(stderr, "instbench%s%s: ", sp, cmd);
    util_term_vprintf(stderr, fmt, ap);
    fprintf(stderr, " (try: instbench%s%s --help)\n", sp, cmd);
    return IB_EXIT_USAGE;
}

int util_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_usage_verror(cmd, fmt, ap);
    va_end(ap);
    return IB_EXIT_USAGE;
}
