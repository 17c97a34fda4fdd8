/* aws/credentials_set: what every credential source (credentials.c: environment, profile files,
 * container; imds.c: the instance role) checks before its parts are used, in a file of its own so
 * that neither of those two depends on the other both ways. */
#include <stdio.h>
#include <string.h>

#include "aws/internal.h"

void aws_wipe(void *p, size_t n)
{
    volatile unsigned char *v = p; /* volatile: the compiler may not drop stores to memory about to be freed */
    while (n--) *v++ = 0;
}

int aws_has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 1;
    return 0;
}

static const char *control_char_in(const char *ak, const char *sk, const char *tok)
{
    const char *const fields[] = {ak, sk, tok}, *const names[] = {"access key id", "secret access key",
                                                                  "session token"};
    for (int i = 0; i < 3; i++)
        if (fields[i] && aws_has_control(fields[i], strlen(fields[i]))) return names[i];
    return NULL;
}

int aws_credentials_set(aws_credentials *out, const char *ak, const char *sk, const char *tok, const char *source,
                        ib_error *err)
{
    if (strlen(ak) >= sizeof out->access_key_id || strlen(sk) >= sizeof out->secret_access_key ||
        (tok && strlen(tok) >= sizeof out->session_token))
        return ib_error_set(err, IB_EXIT_RUNTIME, "credentials from %s are too long to be AWS credentials", source);
    const char *bad = control_char_in(ak, sk, tok);
    if (bad)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "credentials from %s: the %s holds a control character (a line break?), which no "
                            "request can carry",
                            source, bad);
    memset(out, 0, sizeof *out);
    snprintf(out->access_key_id, sizeof out->access_key_id, "%s", ak);
    snprintf(out->secret_access_key, sizeof out->secret_access_key, "%s", sk);
    snprintf(out->session_token, sizeof out->session_token, "%s", tok ? tok : "");
    snprintf(out->source, sizeof out->source, "%s", source);
    return 0;
}
