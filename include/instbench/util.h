/* util: errors, logging, files, time and small string helpers shared by every module. */
#ifndef INSTBENCH_UTIL_H
#define INSTBENCH_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Exit codes of the CLI (docs/design.md): 0 ok, 1 runtime error, 2 usage error. */
enum { IB_EXIT_OK = 0, IB_EXIT_RUNTIME = 1, IB_EXIT_USAGE = 2 };

/* Errors travel up as a return code (0 ok, -1 failure) plus this message; only cmd/ exits. */
typedef struct ib_error {
    int code;        /* IB_EXIT_RUNTIME or IB_EXIT_USAGE */
    char msg[1024];
} ib_error;

/* Always returns -1.  The message is terminal-safe (util_term_escape): arguments quoting untrusted
 * text (file names, AWS answers) cannot put control characters on the screen. */
int ib_error_set(ib_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ib_error_clear(ib_error *err);

/* Logging to stderr.  Level is global: 0 quiet (errors only), 1 normal, 2 verbose (-v).  Each
 * call prints one line: control characters in the formatted text are escaped (util_term_escape). */
enum { IB_LOG_ERROR = 0, IB_LOG_WARN = 1, IB_LOG_INFO = 1, IB_LOG_DEBUG = 2 };
extern int ib_log_level;
void ib_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define ib_warn(...)  ib_log(IB_LOG_WARN, "warning: " __VA_ARGS__)
#define ib_info(...)  ib_log(IB_LOG_INFO, __VA_ARGS__)
#define ib_debug(...) ib_log(IB_LOG_DEBUG, __VA_ARGS__)
/* Colour only when stderr is a terminal and NO_COLOR is unset. */
int util_stderr_color(void);
int util_isatty_stdout(void);
int util_isatty_stderr(void);

/* Files.  util_write_file_atomic writes PATH.tmp.<pid> then renames it over PATH, so a reader never
 * sees a half-written file and an existing file survives any failure.  Creates parent dirs. */
int util_write_file_atomic(const char *path, const void *data, size_t len, ib_error *err);
int util_read_file(const char *path, char **data, size_t *len, ib_error *err); /* NUL-terminated */
int util_mkdir_p(const char *dir, ib_error *err);

/* Time. */
double util_now_seconds(void);                 /* monotonic */
void util_utc_iso8601(time_t t, char out[32]);  /* 2026-11-22T00:10:45Z */
int util_parse_iso8601(const char *s, time_t *out); /* accepts ...Z, fractional seconds, +00:00 */

/* Strings. */
char *util_strdup(const char *s);
/* Splits "a,b,,c" into trimmed non-empty items; *items is malloc'd (free with util_free_strv). */
int util_split_csv(const char *s, char ***items, size_t *n);
void util_free_strv(char **items, size_t n);
/* Strict number parsing for flags: whole string must be a finite number in range. */
int util_parse_int(const char *s, long min, long max, long *out);
int util_parse_double(const char *s, double min, double max, double *out);

/* Terminal-safe text (util/escape.c) for everything shown to people that instbench did not write
 * itself.  C0 controls (tab and newline too), DEL and invalid UTF-8 bytes become "\xNN"; C1
 * controls and bidirectional overrides "\uNNNN"; printable ASCII and other UTF-8 pass unchanged.
 * util_term_escape writes at most CAP bytes (NUL included, never half an escape) and returns the
 * length the whole escaped text needs. */
size_t util_term_escape(const char *s, char *out, size_t cap);
char *util_term_escape_dup(const char *s);   /* malloc'd; NULL on out-of-memory */
void util_term_fputs(const char *s, FILE *f);
/* printf whose whole output is escaped, except a newline that ends FMT itself. */
void util_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void util_term_vprintf(FILE *f, const char *fmt, va_list ap);

/* JSON readers disagree on a key given twice (cJSON keeps the first, jq and Python the last):
 * returns 1 with PATH set to the first such key's path ("measurement.samples_per_second",
 * "[2].region"), else 0.  util/json_keys.c. */
struct cJSON;
int util_json_duplicate_key(const struct cJSON *doc, char *path, size_t cap);

/* Hex of a byte string (out must hold 2*n+1). */
void util_hex(const unsigned char *in, size_t n, char *out);

#endif
