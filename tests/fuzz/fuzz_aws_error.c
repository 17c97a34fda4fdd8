/* libFuzzer target: the AWS error-body parser (aws/errors.c) reads JSON or XML from any server
 * that answers an error status; the code and message must stay NUL-terminated within bounds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aws/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char code[128], msg[512];
    /* the first line doubles as an x-amzn-ErrorType header value */
    char hdr[160];
    size_t n = 0;
    while (n < size && n < sizeof hdr - 1 && data[n] != '\n') {
        hdr[n] = data[n] ? (char)data[n] : ' ';
        n++;
    }
    hdr[n] = '\0';
    aws_error_parse((const char *)data, size, size % 2 ? hdr : NULL, code, sizeof code, msg, sizeof msg);
    if (strlen(code) >= sizeof code || strlen(msg) >= sizeof msg) __builtin_trap();
    (void)aws_error_is_throttling(code);
    (void)aws_error_is_transient(code);
    return 0;
}
