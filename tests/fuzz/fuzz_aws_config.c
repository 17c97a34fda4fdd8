/* libFuzzer target: the AWS shared config/credentials file parser (aws/config_file.c) reads
 * whatever a user's ~/.aws holds; no input may crash it, leak, or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aws/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int is_config = 0; is_config < 2; is_config++) {
        aws_config_file *f = aws_config_parse((const char *)data, size, is_config);
        if (!f) continue;
        static const char *const profiles[] = {"default", "dev", "x", ""};
        static const char *const keys[] = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "region"};
        for (size_t p = 0; p < 4; p++) {
            (void)aws_config_has_profile(f, profiles[p]);
            for (size_t k = 0; k < 4; k++) {
                const char *v = aws_config_get(f, profiles[p], keys[k]);
                if (v) (void)strlen(v); /* the value must be a valid C string */
            }
        }
        aws_config_free(f);
    }
    return 0;
}
