/* safetensors reader/writer: round trip, a file written by an independent writer (the Python one
 * in scripts/data/make_reference.py), element conversions against hand-computed values, and a catalogue
 * of hostile files that must be rejected with an error (run under ASan in CI: never a crash). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_writer.h"

#include "check.h"

/* A file from a header string and DATA_LEN data bytes (0x11 each); header length field as given
 * (or the real length when hlen_override is ~0). */
static unsigned char *make_file(const char *header, size_t data_len, uint64_t hlen_override, size_t *len)
{
    size_t h = strlen(header);
    *len = 8 + h + data_len;
    unsigned char *b = malloc(*len);
    uint64_t hl = hlen_override == ~0ull ? h : hlen_override;
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(hl >> (8 * i));
    memcpy(b + 8, header, h);
    memset(b + 8 + h, 0x11, data_len);
    return b;
}

static int parses(const char *header, size_t data_len, uint64_t hlen, ib_error *err)
{
    size_t len;
    unsigned char *b = make_file(header, data_len, hlen, &len);
    st_file f;
    int rc = safetensors_parse_buffer(b, len, &f, err);
    if (!rc) safetensors_free(&f);
    free(b);
    return rc;
}

static void test_hostile(void)
{
    static const struct {
        const char *why, *header;
        size_t data_len;
    } bad[] = {
        {"not json", "hello", 0},
        {"truncated json", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]", 4},
        {"array root", "[1,2,3]", 0},
        {"string root", "\"abc\"", 0},
        {"junk after object", "{} x", 0},
        {"two objects", "{}{}", 0},
        {"unknown dtype", "{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"dtype not string", "{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"negative dim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4},
        {"fractional dim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4},
        {"string dim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4},
        {"huge dim", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1e300],\"data_offsets\":[0,4]}}", 4},
        {"9 dims", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1},
        {"shape not array", "{\"a\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,4]}}", 4},
        {"overflowing shape",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 4},
        {"overflow hidden by a zero dim later",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[9007199254740992,9007199254740992,0],\"data_offsets\":[0,4]}}", 4},
        {"size != shape x dtype", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8},
        {"offsets reversed", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4},
        {"offsets past end", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 4},
        {"offset huge", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[1e300,4]}}", 4},
        {"offset negative", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4},
        {"three offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8},
        {"missing offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4},
        {"unknown field", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4},
        {"repeated field", "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"entry not object", "{\"a\":[1,2]}", 0},
        {"overlap",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         8},
        {"same range twice",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         4},
        {"hole",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
         12},
        {"trailing bytes", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 5},
        {"duplicate name",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         8},
        {"empty name", "{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4},
        {"metadata not object", "{\"__metadata__\":\"x\"}", 0},
        {"metadata non-string value", "{\"__metadata__\":{\"a\":1}}", 0},
        {"metadata nested", "{\"__metadata__\":{\"a\":{\"b\":\"c\"}}}", 0},
        {"metadata twice", "{\"__metadata__\":{\"a\":\"1\"},\"__metadata__\":{\"b\":\"2\"}}", 0},
        {"metadata duplicate key", "{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0},
        {"deep nesting", "{\"a\":{\"dtype\":\"F32\",\"shape\":[[[[[1]]]]],\"data_offsets\":[0,4]}}", 4},
    };
    ib_error err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ib_error_clear(&err);
        int rc = parses(bad[i].header, bad[i].data_len, ~0ull, &err);
        CHECK(rc == -1, "hostile '%s' was accepted", bad[i].why);
        CHECK(rc == 0 || err.msg[0], "hostile '%s' rejected without a message", bad[i].why);
        if (getenv("VERIFY_VERBOSE")) printf("%-36s -> %s\n", bad[i].why, err.msg);
    }
    /* the valid counterpart of the above, so the catalogue is not rejecting everything */
    CHECK(parses("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, ~0ull, &err) == 0,
          "valid one-tensor file rejected: %s", err.msg);
    CHECK(parses("{}", 0, ~0ull, &err) == 0, "empty header rejected: %s", err.msg);
    CHECK(parses("{\"a\":{\"dtype\":\"F32\",\"shape\":[1000000,0],\"data_offsets\":[0,0]}}", 0, ~0ull, &err) == 0,
          "zero-size tensor with a large dim rejected: %s", err.msg);
    CHECK(parses("{\"a\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[0,0]}}   ", 0, ~0ull, &err) == 0,
          "zero-size tensor with padding rejected: %s", err.msg);

    /* header length field lies */
    CHECK(parses("{}", 0, 0, &err) == -1, "header length 0 accepted");
    CHECK(parses("{}", 0, 3, &err) == -1, "header length past the end accepted");
    CHECK(parses("{}", 0, 1ull << 63, &err) == -1, "header length 2^63 accepted");
    CHECK(parses("{}", 0, ~0ull - 1, &err) == -1, "header length 2^64-2 accepted");
    /* NUL inside the header (cJSON would stop reading the name there) */
    {
        size_t len;
        unsigned char *b =
            make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, ~0ull, &len);
        b[10] = 0;
        st_file f;
        CHECK(safetensors_parse_buffer(b, len, &f, &err) == -1, "NUL in header accepted");
        free(b);
    }
    /* nesting far deeper than any parser stack should take */
    {
        size_t depth = 100000;
        char *h = malloc(2 * depth + 16);
        size_t k = 0;
        k += (size_t)sprintf(h, "{\"a\":");
        for (size_t i = 0; i < depth; i++) h[k++] = '[';
        for (size_t i = 0; i < depth; i++) h[k++] = ']';
        h[k++] = '}';
        h[k] = 0;
        CHECK(parses(h, 0, ~0ull, &err) == -1, "100000-deep nesting accepted");
        free(h);
    }
    /* files shorter than 8 bytes */
    for (size_t n = 0; n < 8; n++) {
        unsigned char z[8] = {2, 0, 0, 0, 0, 0, 0, 0};
        st_file f;
        CHECK(safetensors_parse_buffer(z, n, &f, &err) == -1, "%zu-byte file accepted", n);
    }
}

/* The message names the tensors at fault: a key given twice as a duplicate (not as overlapping
 * itself), an extra tensor over others by its name and the one it overlaps, a gap by the tensors
 * around it.  The header strings are what the message must contain, in any order. */
static void test_messages(void)
{
    static const struct {
        const char *why, *header;
        size_t data_len;
        const char *want[3];
    } cases[] = {
        {"duplicate key, the same bytes",
         "{\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         4,
         {"duplicate key", "'cls_token'", NULL}},
        {"duplicate key, other bytes",
         "{\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"pos_embed\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
         "\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
         12,
         {"duplicate key", "'cls_token'", NULL}},
        {"an extra tensor over two others",
         "{\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"pos_embed\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]},"
         "\"extra\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}",
         12,
         {"overlap", "'extra'", "'cls_token'"}},
        {"an extra tensor inside another",
         "{\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"pos_embed\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]},"
         "\"extra\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
         12,
         {"overlap", "'extra'", "'pos_embed'"}},
        {"a gap between two",
         "{\"cls_token\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"pos_embed\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
         12,
         {"bytes 4 to 8", "'cls_token'", "'pos_embed'"}},
        {"a gap before the first",
         "{\"pos_embed\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         8,
         {"first 4 data bytes", "'pos_embed'", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ib_error err;
        ib_error_clear(&err);
        int rc = parses(cases[i].header, cases[i].data_len, ~0ull, &err);
        CHECK(rc == -1, "%s: accepted", cases[i].why);
        for (int k = 0; k < 3 && cases[i].want[k]; k++)
            CHECK(strstr(err.msg, cases[i].want[k]) != NULL, "%s: the message lacks %s: %s", cases[i].why,
                  cases[i].want[k], err.msg);
        CHECK(strstr(err.msg, "the previous tensor") == NULL, "%s: names no tensor: %s", cases[i].why, err.msg);
    }
}

static uint16_t bf16_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)(u >> 16);
}

static void test_roundtrip_and_truncation(void)
{
    float f32[6] = {1.0f, -2.5f, 3.25f, 0.0f, 1e-20f, -65504.0f};
    uint16_t bf[3] = {bf16_of(1.0f), bf16_of(-0.5f), bf16_of(384.0f)};
    int64_t i64[3] = {0, -7, 9000000000ll};
    int32_t i32[2] = {-1, 2147483647};
    /* IEEE half: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal), -0 */
    uint16_t f16[5] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000};
    float scalar = 42.0f;
    int64_t s6[2] = {2, 3}, s3[1] = {3}, s2[1] = {2}, s5[1] = {5}, s0[2] = {0, 4};

    st_writer w;
    ib_error err;
    safetensors_writer_init(&w);
    CHECK(!safetensors_writer_add_meta(&w, "img_size", "32", &err), "add_meta");
    CHECK(!safetensors_writer_add_meta(&w, "note", "quotes \" and \\ survive", &err), "add_meta");
    CHECK(!safetensors_writer_add_tensor(&w, "w", ST_F32, 2, s6, f32, &err), "add f32");
    CHECK(!safetensors_writer_add_tensor(&w, "b", ST_BF16, 1, s3, bf, &err), "add bf16");
    CHECK(!safetensors_writer_add_tensor(&w, "labels", ST_I64, 1, s3, i64, &err), "add i64");
    CHECK(!safetensors_writer_add_tensor(&w, "i", ST_I32, 1, s2, i32, &err), "add i32");
    CHECK(!safetensors_writer_add_tensor(&w, "h", ST_F16, 1, s5, f16, &err), "add f16");
    CHECK(!safetensors_writer_add_tensor(&w, "empty", ST_F32, 2, s0, NULL, &err), "add empty");
    CHECK(!safetensors_writer_add_tensor(&w, "loss", ST_F32, 0, NULL, &scalar, &err), "add scalar");
    CHECK(safetensors_writer_add_tensor(&w, "w", ST_F32, 1, s3, f32, &err) == -1, "duplicate name accepted");
    CHECK(safetensors_writer_add_tensor(&w, "__metadata__", ST_F32, 1, s3, f32, &err) == -1,
          "__metadata__ as tensor name accepted");

    unsigned char *buf;
    size_t len;
    CHECK(!safetensors_writer_serialize(&w, &buf, &len, &err), "serialize: %s", err.msg);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    CHECK(hlen % 8 == 0, "header length %llu not padded to 8", (unsigned long long)hlen);

    st_file f;
    CHECK(!safetensors_parse_buffer(buf, len, &f, &err), "parse own output: %s", err.msg);
    CHECK(f.count == 7, "count %zu", f.count);
    const st_tensor *t = safetensors_find_tensor(&f, "w");
    float out[8];
    int64_t iout[4];
    CHECK(t && t->dtype == ST_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3, "w header");
    if (t) {
        CHECK(!safetensors_tensor_to_f32(t, out, &err), "w to f32");
        CHECK(!memcmp(out, f32, sizeof f32), "w values differ");
    }
    t = safetensors_find_tensor(&f, "b");
    CHECK(t, "b missing");
    if (t) {
        CHECK(!safetensors_tensor_to_f32(t, out, &err), "b to f32");
        CHECK(out[0] == 1.0f && out[1] == -0.5f && out[2] == 384.0f, "bf16 values %g %g %g", out[0], out[1], out[2]);
        CHECK(safetensors_tensor_to_i64(t, iout, &err) == -1, "bf16 converted to integers");
    }
    t = safetensors_find_tensor(&f, "h");
    CHECK(t, "h missing");
    if (t) {
        CHECK(!safetensors_tensor_to_f32(t, out, &err), "h to f32");
        CHECK(out[0] == 1.0f && out[1] == -2.0f && out[2] == 65504.0f && out[3] == ldexpf(1.0f, -24) &&
                  out[4] == 0.0f && signbit(out[4]),
              "f16 values %g %g %g %g %g", out[0], out[1], out[2], out[3], out[4]);
    }
    t = safetensors_find_tensor(&f, "labels");
    CHECK(t, "labels missing");
    if (t) {
        CHECK(!safetensors_tensor_to_i64(t, iout, &err), "labels to i64");
        CHECK(iout[0] == 0 && iout[1] == -7 && iout[2] == 9000000000ll, "i64 values");
        CHECK(safetensors_tensor_to_f32(t, out, &err) == -1, "i64 converted to float");
    }
    t = safetensors_find_tensor(&f, "i");
    CHECK(t, "i missing");
    if (t) {
        CHECK(!safetensors_tensor_to_i64(t, iout, &err), "i to i64");
        CHECK(iout[0] == -1 && iout[1] == 2147483647, "i32 sign extension: %lld %lld", (long long)iout[0],
              (long long)iout[1]);
    }
    t = safetensors_find_tensor(&f, "empty");
    CHECK(t && t->numel == 0 && t->nbytes == 0, "zero-size tensor");
    t = safetensors_find_tensor(&f, "loss");
    CHECK(t && t->ndim == 0 && t->numel == 1 && !safetensors_tensor_to_f32(t, out, &err) && out[0] == 42.0f, "scalar");
    CHECK(!safetensors_find_tensor(&f, "nope"), "found a tensor that is not there");
    CHECK(safetensors_get_meta(&f, "img_size") && !strcmp(safetensors_get_meta(&f, "img_size"), "32"), "meta");
    CHECK(safetensors_get_meta(&f, "note") && !strcmp(safetensors_get_meta(&f, "note"), "quotes \" and \\ survive"),
          "meta escaping");
    CHECK(!safetensors_get_meta(&f, "nope"), "meta that is not there");
    safetensors_free(&f);

    /* every truncation of a valid file must be rejected (the data must tile the buffer exactly) */
    size_t accepted = 0;
    for (size_t n = 0; n < len; n++) {
        if (!safetensors_parse_buffer(buf, n, &f, &err)) {
            accepted++;
            safetensors_free(&f);
        }
    }
    CHECK(accepted == 0, "%zu truncated copies accepted", accepted);

    /* byte flips in the header: whatever parses must still describe data inside the buffer */
    for (size_t pos = 8; pos < 8 + hlen; pos++) {
        static const unsigned char vals[] = {0, '"', '9', '-', '{', ']', 0xff, ','};
        for (size_t v = 0; v < sizeof vals; v++) {
            unsigned char keep = buf[pos];
            buf[pos] = vals[v];
            if (!safetensors_parse_buffer(buf, len, &f, &err)) {
                size_t total = 0;
                for (size_t i = 0; i < f.count; i++) total += f.tensors[i].nbytes;
                CHECK(total == len - 8 - hlen, "mutated header accepted with %zu data bytes", total);
                safetensors_free(&f);
            }
            buf[pos] = keep;
        }
    }
    free(buf);
    safetensors_writer_free(&w);
}

/* A fixture written by the Python writer in scripts/data/make_reference.py: an independent writer. */
static void test_python_fixture(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ref_a_adam_fp32.safetensors", dir);
    st_file f;
    ib_error err;
    if (safetensors_read_file(path, 1 << 20, &f, &err)) {
        CHECK(0, "read %s: %s", path, err.msg);
        return;
    }
    /* 2 + 2 + depth 2 x 12 + 4 = 32 parameters, each with grad.*, plus 5 I/O tensors */
    CHECK(f.count == 32 * 2 + 5, "fixture has %zu tensors", f.count);
    const char *m = safetensors_get_meta(&f, "embed_dim");
    CHECK(m && !strcmp(m, "32"), "embed_dim meta");
    const st_tensor *qkv = safetensors_find_tensor(&f, "blocks.1.attn.qkv.weight");
    CHECK(qkv && qkv->dtype == ST_F32 && qkv->ndim == 2 && qkv->shape[0] == 96 && qkv->shape[1] == 32, "qkv shape");
    const st_tensor *loss = safetensors_find_tensor(&f, "loss"), *losses = safetensors_find_tensor(&f, "losses");
    const st_tensor *labels = safetensors_find_tensor(&f, "labels");
    CHECK(loss && losses && labels && labels->dtype == ST_I64 && losses->numel == 3, "io tensors");
    if (loss && losses) {
        float l, ls[3];
        CHECK(!safetensors_tensor_to_f32(loss, &l, &err) && !safetensors_tensor_to_f32(losses, ls, &err), "convert");
        /* losses[0] is the loss at the initial weights; a 10-class problem starts near ln(10) */
        CHECK(l == ls[0], "loss %g != losses[0] %g", l, ls[0]);
        CHECK(fabsf(l - logf(10.0f)) < 0.5f, "initial loss %g far from ln 10", l);
    }
    safetensors_free(&f);
}

int main(int argc, char **argv)
{
    test_hostile();
    test_messages();
    test_roundtrip_and_truncation();
    test_python_fixture(argc > 1 ? argv[1] : "data" /* ctest runs unit tests in tests/ */);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("verify_safetensors: all checks passed\n");
    return failures ? 1 : 0;
}
