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
    int code; /* IB_EXIT_RUNTIME or IB_EXIT_USAGE */
    char msg[1024];
} ib_error;

/* Always returns -1.  The message is terminal-safe (util_term_escape): arguments quoting untrusted
 * text (file names, AWS answers) cannot put control characters on the screen. */
int ib_error_set(ib_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ib_error_clear(ib_error *err);

/* Logging to stderr.  Level is global: 0 quiet (errors only), 1 normal, 2 verbose (-v).  Each
 * call prints one line: control characters in the formatted text are escaped (util_term_escape). */
enum { IB_LOG_ERROR = 0, IB_LOG_WARN = 1, IB_LOG_INFO = 1, IB_LOG_DEBUG = 2 };
extern int ib_log_level;
void ib_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define ib_warn(...) ib_log(IB_LOG_WARN, "warning: " __VA_ARGS__)
#define ib_info(...) ib_log(IB_LOG_INFO, __VA_ARGS__)
#define ib_debug(...) ib_log(IB_LOG_DEBUG, __VA_ARGS__)
/* The source revision this program was built from, for --version and a result's tool.revision:
 * 40 hex digits, "-dirty" after them when the tree had edits, NULL unknown.  main.c sets it from
 * the header the build generates (cmake/revision.cmake), which only it includes: other programs
 * linking the modules (the tests) leave it NULL. */
extern const char *ib_build_revision;
/* REV ("" or NULL unknown) as people are shown it: 12 hex digits, "-dirty" kept; "unknown". */
void util_revision_short(const char *rev, char *out, size_t len);
/* Colour only when stderr is a terminal and NO_COLOR is unset. */
int util_stderr_color(void);
int util_isatty_stdout(void);
int util_isatty_stderr(void);

/* Files (src/util/safewrite.c): every file the tool writes goes through these.
 * util_write_file_atomic: PATH is replaced atomically when it is a regular file or absent (a
 *   temporary with a random name in the same directory, created O_EXCL|O_NOFOLLOW mode 0600,
 *   written in full, fsync'd, given mode 0666 & ~umask, renamed over PATH, the directory
 *   fsync'd): a reader never sees half a file and an existing file survives any failure.  A
 *   symbolic link to a regular file keeps pointing at the new file.  A device, FIFO or socket is
 *   written through (open + write), every error reported; a directory is refused (code
 *   IB_EXIT_USAGE).  Creates missing parent directories.
 * util_write_file_new: the same temporary, then linked to PATH only if PATH does not exist:
 *   0 written, 1 PATH exists (nothing changed, err says so), -1 error.
 * util_append_file: DATA appended with one write(2) on an O_APPEND|O_NOFOLLOW descriptor (a
 *   symbolic link is refused), creating PATH (mode 0666 & ~umask) and its directories.  DATA
 *   ending in a newline is a line: after a file whose last byte is not one, a newline goes first.
 * util_check_writable: whether a later write (or append) to PATH can succeed, checked before
 *   anything long runs: creates and removes a temporary file in PATH's directory, or in the
 *   nearest existing one above it when it is missing (the write creates the rest; the check
 *   creates no directory), or opens an existing append target without writing.  Directories,
 *   sockets, and for appends symbolic links, are refused with code IB_EXIT_USAGE.
 * util_output_parent_check: a file the user named (-o FILE) goes into a directory that exists, as
 *   with cp and curl -o: a typo must not make a stray tree.  0 when PATH's directory exists (or
 *   PATH is "-"); a missing one is an IB_EXIT_USAGE error naming it and --create-dirs (the flag of
 *   every command that calls this), or with CREATE it is created (util_mkdir_p); something
 *   there that is not a directory is IB_EXIT_USAGE too. */
int util_write_file_atomic(const char *path, const void *data, size_t len, ib_error *err);
/* util_write_file_atomic without the fsyncs, for files a later run rebuilds and validates when it
 * reads them (the price cache): readers still never see half a file, but a crash may lose the
 * newest version or leave an empty one.  Each fsync costs milliseconds; a prices run writes 20+. */
int util_write_file_replaceable(const char *path, const void *data, size_t len, ib_error *err);
int util_write_file_new(const char *path, const void *data, size_t len, ib_error *err);
int util_append_file(const char *path, const void *data, size_t len, ib_error *err);
int util_check_writable(const char *path, int append, ib_error *err);
int util_output_parent_check(const char *path, int create, ib_error *err);
/* Whether paths A and B name one file: one device and inode when both exist, else one name once
 * their directories are resolved (symbolic links, "..", "./"). */
int util_same_file(const char *a, const char *b);
/* NCHARS random hex digits (getrandom), NUL-terminated: out holds nchars + 1 (nchars <= 128). */
void util_random_hex(char *out, size_t nchars);
/* A whole file someone named (a prices file, a verify reference, an AWS config file), into memory,
 * NUL-terminated: a regular file only (a FIFO, device, directory or socket is refused, opened
 * O_NONBLOCK so nothing blocks; a symbolic link is followed), at most CAP bytes: a longer one is
 * refused ("cannot read PATH: it is over 16 MiB"), and never more than CAP + 1 bytes are read or
 * held, whatever its size says; the buffer is the file's size, not CAP.  Every caller passes the
 * cap its kind of file needs.  On failure errno is kept from open (ENOENT: there is no such file),
 * else EINVAL. */
int util_read_file(const char *path, size_t cap, char **data, size_t *len, ib_error *err);
/* The same for a file instbench keeps for itself (a sweep's state), read as hostile: a symbolic
 * link is refused too (opened O_NOFOLLOW). */
int util_read_regular_file(const char *path, size_t cap, char **data, size_t *len, ib_error *err);
int util_mkdir_p(const char *dir, ib_error *err);

/* Time. */
double util_now_seconds(void);                 /* monotonic */
void util_utc_iso8601(time_t t, char out[32]); /* 2026-11-22T00:10:45Z */
/* The one date parser: YYYY-MM-DD[THH:MM:SS[.frac]][Z|+HH:MM|-HH:MM], every field a real calendar
 * date and clock time (2026-02-30 and 2026-11-31 are refused, never rolled over); 0 ok, -1 not. */
int util_parse_iso8601(const char *s, time_t *out);
int util_days_in_month(int year, int month); /* 0 when MONTH is not 1-12 */
/* 2026-11-22T00:10:45, UTC without the Z: the ISO 8601 form that LibreOffice Calc's default CSV
 * import, Excel and pandas read as a date-time (with the Z, or with a space for the T, Calc keeps
 * the cell as text); the column's name says UTC. */
void util_utc_spreadsheet(time_t t, char out[32]);

/* The one text of a double in JSON and CSV: the shortest of 15, 16 or 17 significant digits that
 * reads back as the same double (0.1 stays "0.1", 5.710693748478799 keeps its 16), so JSON and CSV
 * show equal strings and no bit is lost.  "" when V is not finite (callers write null or an empty
 * cell).  OUT holds at least 32 bytes. */
void util_fmt_double(char *out, size_t len, double v);

/* V rounded down to a millionth (six decimals), V read as the decimal it was written as: 1.041
 * stays 1.041, though its double lies a hair below it and floor(V x 1e6) gives 1.040999; a value
 * with more decimals is cut, never rounded up.  What EC2 takes as a spot MaxPrice. */
double util_floor_millionths(double v);

/* Strings. */
char *util_strdup(const char *s);
/* Splits "a,b,,c" into trimmed non-empty items; *items is malloc'd (free with util_free_strv). */
int util_split_csv(const char *s, char ***items, size_t *n);
void util_free_strv(char **items, size_t n);
/* The one trimming rule of every flag value: none.  1 when V has whitespace at either end, or
 * (LIST set: a comma-separated list) around one of its items ('a, b'), else 0.  Every flag's
 * parser refuses such a value, so ' 3d', '3d ' and ' 2' all get the same answer (each parser used
 * to decide for itself: strtol skipped it in front, a string kept it). */
int util_space_around(const char *v, int list);
/* Strict number parsing for flags: the whole string must be a finite number in [min, max], with no
 * whitespace anywhere.  0 ok (*out set), else one of UTIL_NUM_* (negative) saying what is wrong;
 * util_number_error turns that into a phrase ("' 4' has whitespace in it...", "'1e300' is above
 * the maximum, 1e+18") for the caller's "FLAG: <phrase>" message. */
enum {
    UTIL_NUM_EMPTY = -1,
    UTIL_NUM_SPACE = -2,
    UTIL_NUM_SYNTAX = -3,
    UTIL_NUM_FRACTION = -4,
    UTIL_NUM_NONFINITE = -5,
    UTIL_NUM_LOW = -6,
    UTIL_NUM_HIGH = -7
};
/* Numbers are plain decimals, one spelling each: an optional '-', digits with at most one '.', an
 * optional exponent (e or E, a sign, digits); no '+', no whitespace, no hex ("0x10", "0x1p4"), no
 * "inf" or "nan", which strtod alone would take.  util_decimal_prefix: how long the plain decimal
 * at the start of S is (0: none), for values with a unit after the number ("500h", "7d"). */
size_t util_decimal_prefix(const char *s);
int util_parse_int(const char *s, long min, long max, long *out);
int util_parse_double(const char *s, double min, double max, double *out);
const char *util_number_error(const char *s, int code, double min, double max, char *buf, size_t len);

/* Terminal-safe text (util/escape.c) for everything shown to people that instbench did not write
 * itself.  C0 controls (tab and newline too), DEL and invalid UTF-8 bytes become "\xNN"; C1
 * controls and bidirectional overrides "\uNNNN"; printable ASCII and other UTF-8 pass unchanged.
 * util_term_escape writes at most CAP bytes (NUL included, never half an escape) and returns the
 * length the whole escaped text needs. */
size_t util_term_escape(const char *s, char *out, size_t cap);
char *util_term_escape_dup(const char *s); /* malloc'd; NULL on out-of-memory */
void util_term_fputs(const char *s, FILE *f);
/* printf whose whole output is escaped, except a newline that ends FMT itself. */
void util_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void util_term_vprintf(FILE *f, const char *fmt, va_list ap);
/* "instbench CMD: message (try: instbench CMD --help)" on stderr, escaped; returns IB_EXIT_USAGE.
 * The one form of an error about what was typed on the command line: cmd/args.c's parser and the
 * checks below it that find a flag's value or combination wrong (measure's, in src/bench/) share it,
 * and an exit 2 about anything else (a launcher's variables, a config file) keeps the plain form,
 * since --help cannot fix it.  CMD "" is instbench's own options. */
int util_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int util_usage_verror(const char *cmd, const char *fmt, va_list ap);
/* Until called again with NULL, usage errors are another command's, whose flags they are about
 * (`sweep run -- MEASURE FLAGS` runs measure's parser): "instbench AS_CMD: LEAD message (try:
 * instbench CMD --help)", one line naming where the flags were and the help that lists them. */
void util_usage_forwarded(const char *as_cmd, const char *lead);
/* A machine's name as --price and --instance-types take it: ASCII letters, digits, '.', '-', '_',
 * and well-formed UTF-8 beyond ASCII (a hostname like "büro"), never a control character (C1
 * included) or a bidirectional override.  util_utf8_name_char: the length of the one character at
 * S, 0 when it is not such; util_utf8_name: whether the N bytes at S are such a name. */
size_t util_utf8_name_char(const char *s);
int util_utf8_name(const char *s, size_t n);

/* JSON readers disagree on a key given twice (cJSON keeps the first, jq and Python the last):
 * returns 1 with PATH set to the first such key's path ("measurement.samples_per_second",
 * "[2].region"), else 0.  util/json_keys.c. */
struct cJSON;
int util_json_duplicate_key(const struct cJSON *doc, char *path, size_t cap);
/* "\u0000" inside a string or key of the JSON TEXT: cJSON ends the C string there ("c7i.large
 * \u0000<script>" reads as "c7i.large") while Python keeps the rest, so readers refuse it as they
 * refuse a duplicate key.  Returns the escape's byte offset + 1, 0 when there is none. */
size_t util_json_escaped_nul(const char *text, size_t len);
/* How deeply the JSON TEXT nests arrays and objects (brackets in strings not counted).  cJSON
 * refuses more than UTIL_JSON_MAX_DEPTH levels as if the text were corrupt: readers check this
 * first and say "nested deeper than 1000 levels" instead. */
#define UTIL_JSON_MAX_DEPTH 1000 /* cJSON's CJSON_NESTING_LIMIT */
size_t util_json_depth(const char *text, size_t len);
/* The one layout of every JSON document instbench prints or writes: two-space indents, ": " after
 * keys, a final newline.  malloc'd (free it); NULL when out of memory. */
char *util_json_print(const struct cJSON *doc);
/* The same on one line (JSON lines).  Both print every number with util_fmt_double (cJSON's own
 * printer settles for 15 digits whenever they come within an epsilon, losing the last bits) and
 * non-finite numbers as null; to do so they rewrite DOC's numbers as raw text in place, so DOC is
 * for printing only afterwards. */
char *util_json_print_compact(const struct cJSON *doc);

/* Hex of a byte string (out must hold 2*n+1). */
void util_hex(const unsigned char *in, size_t n, char *out);

/* Another process's /proc/PID/WHAT ("cmdline", "environ") into BUF, at most CAP - 1 bytes and a
 * NUL after them: the bytes read, or -1 when it cannot be opened (gone, another user's). */
long util_proc_read(long pid, const char *what, char *buf, size_t cap);
/* The command of an instbench command line as /proc/PID/cmdline holds it (LEN bytes of NUL-ended
 * arguments, a NUL after them): the first argument after the executable and instbench's own
 * options, which come first and start with '-' (as src/main.c reads its argv); NULL when there is
 * none.  The arguments after it follow, each past the previous one's NUL. */
const char *util_cmdline_command(const char *cmd, size_t len);

#endif
