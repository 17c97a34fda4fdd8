/* aws/mfa: the MFA code a profile's mfa_serial asks for before its role is assumed, read from the
 * terminal as botocore's AssumeRoleProvider reads it ("Enter MFA code for SERIAL: ").
 *
 * The terminal is /dev/tty, not stdin: stdin may be a pipe of data (rank reads result files from
 * it), and a program with no controlling terminal (cron, nohup, a CI job) is refused with the way
 * round it instead of waiting for a line no one will type.  The code is echoed: it is valid for
 * one use within about 30 seconds, and a terminal left without echo by a Ctrl-C at the prompt
 * would cost the user more than the code is worth to anyone looking over a shoulder.  The prompt
 * waits MFA_WAIT_S at most: a sweep that refreshes a role's credentials asks again, and one left
 * waiting on a terminal no one watches would never reach its own deadlines (--max-minutes, the
 * instances it must terminate); an error there fails the request that needed the refresh, as any
 * failed refresh does. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws/internal.h"

#define MFA_WAIT_S 120 /* tests shorten it (INSTBENCH_MFA_WAIT_S, 1 to 600) */

int aws_mfa_code(const char *profile, const char *where, const char *serial, char code[AWS_MFA_CODE_LEN + 1],
                 ib_error *err)
{
    code[0] = '\0';
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "profile '%s' in %s assumes its role with an MFA code (mfa_serial), and there is no "
                            "terminal to ask for it on (%s): run instbench from a terminal, or give it a profile "
                            "whose `credential_process = aws configure export-credentials --profile %s --format "
                            "process` asks once for the AWS CLI's cached session",
                            profile, where, strerror(errno), profile);
    char shown[256], prompt[320]; /* the serial is the config file's text: shown terminal-safe */
    util_term_escape(serial, shown, sizeof shown);
    int n = snprintf(prompt, sizeof prompt, "Enter MFA code for %s: ", shown);
    if (n > 0 && write(fd, prompt, (size_t)n) < 0) { /* a terminal that takes no output takes no code either */
        int e = errno;
        close(fd);
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': the MFA prompt: %s", profile, strerror(e));
    }
    long wait_s = MFA_WAIT_S;
    const char *ws = getenv("INSTBENCH_MFA_WAIT_S");
    if (ws && ws[0] && util_parse_int(ws, 1, 600, &wait_s) != 0) wait_s = MFA_WAIT_S;
    /* one line, read a byte at a time so nothing after it is taken from the terminal */
    char line[64];
    size_t len = 0;
    int too_long = 0, got_eol = 0, timed_out = 0;
    const double until = util_now_seconds() + (double)wait_s;
    for (;;) {
        const long left_ms = (long)((until - util_now_seconds()) * 1000);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = left_ms > 0 ? poll(&pfd, 1, (int)left_ms) : 0;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            timed_out = 1;
            break;
        }
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (ch == '\n' || ch == '\r') {
            got_eol = 1;
            break;
        }
        if (len + 1 < sizeof line) line[len++] = ch;
        else too_long = 1;
    }
    close(fd);
    line[len] = '\0';
    /* the surrounding blanks a paste brings are no part of the code */
    size_t a = 0, b = len;
    while (a < b && (line[a] == ' ' || line[a] == '\t')) a++;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t')) b--;
    int digits = !too_long && b - a == AWS_MFA_CODE_LEN;
    for (size_t i = a; digits && i < b; i++) digits = line[i] >= '0' && line[i] <= '9';
    if (digits && !timed_out) {
        memcpy(code, line + a, AWS_MFA_CODE_LEN);
        code[AWS_MFA_CODE_LEN] = '\0';
    }
    aws_wipe(line, sizeof line); /* a code, or a mistyped one: kept nowhere */
    if (timed_out)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': no MFA code was entered within %ld s", profile,
                            wait_s);
    if (!got_eol && len == 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': no MFA code was entered (end of input)", profile);
    if (!digits)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "profile '%s': an MFA code is %d digits (what the device for %s shows)", profile,
                            AWS_MFA_CODE_LEN, serial);
    return 0;
}
