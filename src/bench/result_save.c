/* result_save: where a measured result goes.  `--output FILE` is replaced atomically (or written
 * through a device); without it the result gets a new name under instbench-results/ that carries
 * milliseconds and a random part and is created without ever replacing a file, so runs finishing
 * together each keep their own.  When the requested write fails the measurement is not lost: it
 * goes to a fallback file in the current directory, else $TMPDIR or /tmp.  instbench-results/ is
 * made only when a result is written into it: an interrupted or failed run leaves none behind. */
#include "instbench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESULT_DIR "instbench-results"

static void file_name(const char *prefix, const char *instance_type, const char *host, const struct timespec *when,
                      char *out, size_t len)
{
    char name[300];
    snprintf(name, sizeof name, "%s",
             instance_type && instance_type[0] ? instance_type : (host && host[0] ? host : "unknown-host"));
    /* A host name is not a file name: anything but letters, digits, '.', '-' and '_' becomes '_'. */
    for (char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '-' || *p == '_'))
            *p = '_';
    if (name[0] == '.') name[0] = '_';
    struct tm tm;
    time_t s = when->tv_sec;
    gmtime_r(&s, &tm);
    char ts[32], rnd[7];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%S", &tm);
    util_random_hex(rnd, 6);
    snprintf(out, len, "%s%s-%s-%s.%03ldZ.json", prefix, name, rnd, ts, (long)(when->tv_nsec / 1000000));
}

void result_default_path(const char *instance_type, const char *host, const struct timespec *when, char *out,
                         size_t len)
{
    file_name(RESULT_DIR "/", instance_type, host, when, out, len);
}

int result_check_output(const char *output, const char *append, int create_dirs, ib_error *err)
{
    /* the result document replaced, then a line appended to it: neither JSON nor JSON Lines */
    if (output && append && strcmp(output, "-") && !result_output_is_remote(output) && util_same_file(output, append))
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--output and --append name one file (%s): the result would be a JSON document "
                            "followed by a JSON Lines line, which no reader takes; name two files",
                            append);
    if (result_output_is_remote(output)) {
        if (result_check_remote(output, err) != 0) return -1;
        output = "-"; /* nothing local to check for it */
    }
    /* the directories the user named exist (the default one is the tool's own: made when written) */
    if (!create_dirs &&
        (util_output_parent_check(output, 0, err) != 0 || util_output_parent_check(append, 0, err) != 0))
        return -1;
    if (output && strcmp(output, "-") && util_check_writable(output, 0, err) != 0) return -1;
    if (!output && util_check_writable(RESULT_DIR "/result.json", 0, err) != 0) return -1;
    if (append && util_check_writable(append, 1, err) != 0) return -1;
    return 0;
}

/* A new file named by PREFIX (directory and leading name part) and NAME when given (the name an
 * upload that failed used, so that uploading the file again gives the intended key), else a
 * generated name: retried with new random parts when taken. */
static int write_new(const char *prefix, const char *name, const char *type, const char *host,
                     const struct timespec *when, const char *json, char *path, size_t plen, ib_error *err)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        if (attempt == 0 && name) snprintf(path, plen, "%s%s", prefix, name);
        else file_name(prefix, type, host, when, path, plen);
        int r = util_write_file_new(path, json, strlen(json), err);
        if (r != 1) return r;
    }
    return -1; /* err says the last name was taken */
}

int result_save(const char *output, const char *instance_type, const char *host, const struct timespec *when,
                const char *json, char *saved, size_t saved_len, ib_error *err)
{
    int rc, upload_failed = 0;
    ib_error local_err;
    char name[320], *same = NULL; /* the generated name an upload used, kept for the local copy */
    if (result_output_is_remote(output)) {
        file_name("", instance_type, host, when, name, sizeof name);
        same = name;
        if (result_upload(output, name, json, saved, saved_len, err) == 0) return 0;
        /* the measurement stays: saved locally as without --output; err keeps the upload's reason */
        upload_failed = 1;
        output = NULL;
        err = &local_err;
    }
    if (output) {
        snprintf(saved, saved_len, "%s", output);
        rc = util_write_file_atomic(output, json, strlen(json), err);
    } else {
        struct stat st;
        const int had_dir = stat(RESULT_DIR, &st) == 0;
        rc = write_new(RESULT_DIR "/", same, instance_type, host, when, json, saved, saved_len, err);
        if (rc != 0 && !had_dir) rmdir(RESULT_DIR); /* made for this result and left empty */
    }
    if (rc == 0) return upload_failed;

    /* Keep the measurement: the current directory, else $TMPDIR, else /tmp. */
    const char *tmpdir = getenv("TMPDIR");
    const char *dirs[] = {".", tmpdir && tmpdir[0] ? tmpdir : "/tmp", "/tmp"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char prefix[4200];
        ib_error ferr = {0};
        snprintf(prefix, sizeof prefix, "%s/instbench-result-", dirs[i]);
        if (write_new(prefix, same, instance_type, host, when, json, saved, saved_len, &ferr) == 0) return 1;
    }
    saved[0] = '\0';
    return -1;
}
