/* aws/credential_process: a profile's `credential_process`, run as botocore's ProcessProvider runs
 * it (the AWS CLI's "custom-process" source): the value split into words as Python's shlex.split
 * splits it (no shell: no variables, globs or pipes), the program run with this process's
 * environment and stdin (a helper may ask for an MFA code on the terminal), its stdout read as
 *   {"Version": 1, "AccessKeyId": ..., "SecretAccessKey": ..., "SessionToken": ..., "Expiration": ...}
 * (the last two optional; Expiration ISO 8601).  A non-zero exit is an error carrying what it
 * wrote to stderr.  This is also the way to SSO and role profiles the chain does not read itself:
 * `credential_process = aws configure export-credentials --profile NAME --format process`. */
#define _GNU_SOURCE /* pipe2 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aws/internal.h"

extern char **environ;

/* A credentials document is under 5 KiB (a session token is at most ~2 KiB); stderr is kept only to
 * quote it in a message.  More is no credentials document: the process is stopped. */
#define STDOUT_MAX ((size_t)64 << 10)
#define STDERR_KEPT 2048

int aws_shell_split(const char *s, char ***argv_out, size_t *argc_out, ib_error *err)
{
    /* One block: the pointers, then every word's bytes (never longer than S with its NULs). */
    size_t len = strlen(s), max_words = len / 2 + 2;
    char **argv = malloc(max_words * sizeof *argv + len + max_words);
    if (!argv) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    char *w = (char *)(argv + max_words);
    size_t argc = 0;
    /* shlex's states, POSIX mode with whitespace_split and no comment characters: between words,
     * in a word, inside '...' (all literal), inside "..." (a backslash escapes only " and \). */
    enum { BETWEEN, WORD, SINGLE, DOUBLE } st = BETWEEN;
    char *word = w;
    for (const char *p = s;; p++) {
        char c = *p;
        if (c == '\0') {
            if (st == SINGLE || st == DOUBLE) {
                free(argv);
                return ib_error_set(err, IB_EXIT_RUNTIME, "no closing quotation");
            }
            break;
        }
        if (st == SINGLE) {
            if (c == '\'') st = WORD;
            else *w++ = c;
            continue;
        }
        if (st == DOUBLE) {
            if (c == '"') st = WORD;
            else if (c == '\\' && (p[1] == '"' || p[1] == '\\')) *w++ = *++p;
            else if (c == '\\' && p[1] == '\0') {
                free(argv);
                return ib_error_set(err, IB_EXIT_RUNTIME, "no closing quotation");
            } else *w++ = c;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            if (st == WORD) {
                *w++ = '\0';
                argv[argc++] = word;
                st = BETWEEN;
            }
            continue;
        }
        if (st == BETWEEN) word = w;
        st = WORD;
        if (c == '\'') st = SINGLE;
        else if (c == '"') st = DOUBLE;
        else if (c == '\\') {
            if (p[1] == '\0') {
                free(argv);
                return ib_error_set(err, IB_EXIT_RUNTIME, "no escaped character after the last backslash");
            }
            *w++ = *++p;
        } else *w++ = c;
    }
    if (st == WORD) {
        *w++ = '\0';
        argv[argc++] = word;
    }
    argv[argc] = NULL;
    *argv_out = argv;
    *argc_out = argc;
    return 0;
}

/* Appends what FD has to BUF, at most CAP bytes kept: the first CAP (the rest read and counted in
 * *OVER), or with TAIL the last CAP (where a failing helper's message is).  1 at end of file, 0
 * otherwise. */
static int drain(int fd, char *buf, size_t cap, size_t *len, size_t *over, int tail)
{
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 0 : 1;
    if (n == 0) return 1;
    size_t got = (size_t)n;
    if (tail && *len + got > cap) { /* drop the oldest bytes for the newest */
        size_t keep = got >= cap ? 0 : cap - got, from = got >= cap ? got - cap : 0;
        if (keep < *len) memmove(buf, buf + *len - keep, keep), *len = keep;
        memcpy(buf + *len, tmp + from, got - from);
        *len += got - from;
        *over += got;
    } else {
        size_t room = cap - *len, take = got < room ? got : room;
        memcpy(buf + *len, tmp, take);
        *len += take;
        *over += got - take;
    }
    aws_wipe(tmp, sizeof tmp);
    return 0;
}

/* Runs ARGV with stdout and stderr to pipes: OUT (NUL-terminated) and the last STDERR_KEPT bytes
 * of stderr into ERRTEXT; *STATUS waitpid's.  -1 (ERR) when it cannot start or says too much. */
static int run_captured(char *const argv[], char *out, size_t *out_len, char errtext[STDERR_KEPT + 1], int *status,
                        ib_error *err)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "pipe: %s", strerror(errno));
    if (pipe2(pe, O_CLOEXEC) != 0) {
        int e = errno;
        close(po[0]);
        close(po[1]);
        return ib_error_set(err, IB_EXIT_RUNTIME, "pipe: %s", strerror(e));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    /* the child starts with the default SIGPIPE action whatever this process set (a helper that
     * writes too much is stopped by its closed pipe, not left spinning on EPIPE) */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&at, &def);
    sigset_t none; /* and no signal blocked, whatever this thread blocks: Ctrl-C reaches it */
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    close(pe[1]);
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot run '%.200s': %s", argv[0], strerror(rc));
    }
    size_t elen = 0, over_out = 0, over_err = 0;
    *out_len = 0;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            int eof = i == 0 ? drain(fds[i].fd, out, STDOUT_MAX, out_len, &over_out, 0)
                             : drain(fds[i].fd, errtext, STDERR_KEPT, &elen, &over_err, 1);
            if (i == 0 && over_out) eof = 1; /* too much: close it, the writer stops on SIGPIPE */
            if (eof) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    out[*out_len] = '\0';
    errtext[elen] = '\0';
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            *status = -1;
            break;
        }
    if (over_out)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "'%.200s' wrote over %zu KiB to stdout, which is no credentials "
                            "document",
                            argv[0], STDOUT_MAX >> 10);
    return 0;
}

/* stderr as a message quotes it: its last non-empty line (its last 300 bytes at most), control
 * characters as spaces. */
static void quote_stderr(const char *text, char *out, size_t len)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) n--;
    size_t start = n;
    while (start && text[start - 1] != '\n' && n - start < 300) start--;
    size_t k = 0;
    for (size_t i = start; i < n && k + 1 < len; i++)
        out[k++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? ' ' : text[i];
    out[k] = '\0';
}

int aws_credential_process(const char *command, const char *profile, const char *where, aws_credentials *out,
                           ib_error *err)
{
    char **argv = NULL;
    size_t argc = 0;
    ib_error serr;
    if (aws_shell_split(command, &argv, &argc, &serr) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "profile '%s' in %s: credential_process: %s (it is split into "
                            "words as a POSIX shell would, without running one)",
                            profile, where, serr.msg);
    if (argc == 0) {
        free(argv);
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s: credential_process is empty", profile, where);
    }
    char *stdout_buf = malloc(STDOUT_MAX + 1), errtext[STDERR_KEPT + 1] = "";
    if (!stdout_buf) {
        free(argv);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    size_t n = 0;
    int status = 0;
    ib_error rerr;
    int rc = run_captured(argv, stdout_buf, &n, errtext, &status, &rerr);
    char prog[256];
    snprintf(prog, sizeof prog, "%s", argv[0]); /* the program only: its arguments may hold secrets */
    free(argv);
    char said[320];
    quote_stderr(errtext, said, sizeof said);
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        char how[64];
        if (WIFEXITED(status)) snprintf(how, sizeof how, "exited with %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status)) snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
        else snprintf(how, sizeof how, "ended abnormally");
        rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' %s%s%s", prog, how, said[0] ? ": " : " (nothing on stderr)",
                          said);
    } else if (rc == 0) {
        if (said[0]) ib_debug("aws: credential_process '%s' said on stderr: %s", prog, said);
        cJSON *j = cJSON_ParseWithLength(stdout_buf, n);
        cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "Version");
        const char *ak = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "AccessKeyId"));
        const char *sk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "SecretAccessKey"));
        cJSON *tokj = cJSON_GetObjectItemCaseSensitive(j, "SessionToken");
        cJSON *exj = cJSON_GetObjectItemCaseSensitive(j, "Expiration");
        const char *tok = cJSON_GetStringValue(tokj), *ex = cJSON_GetStringValue(exj);
        char src[32];
        snprintf(src, sizeof src, "process:%.23s", profile);
        if (!cJSON_IsObject(j)) {
            rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote no JSON object to stdout", prog);
        } else if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
            char got[48] = "no \"Version\"";
            if (cJSON_IsNumber(v)) snprintf(got, sizeof got, "\"Version\": %.6g", v->valuedouble);
            else if (v) snprintf(got, sizeof got, "a \"Version\" that is no number");
            rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote %s; the format has version 1 only", prog, got);
        } else if (!ak || !sk || !ak[0] || !sk[0]) {
            rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote no %s", prog,
                              !ak || !ak[0] ? "\"AccessKeyId\"" : "\"SecretAccessKey\"");
        } else if ((tokj && !cJSON_IsNull(tokj) && !tok) || (exj && !cJSON_IsNull(exj) && !ex)) {
            rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote a \"%s\" that is no string", prog,
                              tokj && !cJSON_IsNull(tokj) && !tok ? "SessionToken" : "Expiration");
        } else {
            time_t exp = 0;
            if (ex && util_parse_iso8601(ex, &exp) != 0) {
                rc =
                    ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote an \"Expiration\" that is no ISO 8601 time", prog);
            } else if (ex && exp <= time(NULL)) {
                rc = ib_error_set(&rerr, IB_EXIT_RUNTIME, "'%s' wrote credentials that expired at %.40s", prog, ex);
            } else {
                rc = aws_credentials_set(out, ak, sk, tok, src, &rerr);
                if (rc == 0) out->expiration = exp;
            }
        }
        cJSON_Delete(j);
    }
    aws_wipe(stdout_buf, n);
    free(stdout_buf);
    aws_wipe(errtext, sizeof errtext);
    if (rc != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s: credential_process: %s", profile, where,
                            rerr.msg);
    return 0;
}
