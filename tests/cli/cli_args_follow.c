/* args_value_follows (src/cmd/args.c): whether the option parser takes the argument after A as
 * A's value, for every form args.h documents ("--name value", "--name=value", "-o value",
 * "-ovalue", flags without a value run together: "-vo value"), old spellings, unknown flags and
 * what is no option.  The expectations are written out by hand from that syntax, not asked of
 * args_parse; bench reads other `measure` processes' command lines with it (job_procs.c), where a
 * wrong answer misreads a value spelled like a flag.  It says nothing on stderr, whatever A is. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"
#include "cmd/args.h"
#include "scratch.h"

static const char *output;
static int count, dry_run, given;
static int take_any(void *dst, const char *flag, const char *value, ib_error *err)
{
    (void)dst, (void)flag, (void)value, (void)err;
    return 0;
}

static const arg_spec specs[] = {
    {"--output", 'o', ARG_STRING, &output, "FILE", "where", .old_name = "--out-file"},
    {"--count", 'n', ARG_INT, &count, "N", "how many", 1, 10},
    {"--dry-run", 'd', ARG_FLAG, &dry_run, NULL, "nothing done"},
    {"--each", 0, ARG_FN, &given, "X", "a repeatable flag", .fn = take_any},
    {0},
};
static const arg_command cmd = {"follow", "[options]", "a table for the test", NULL, specs, "ARG"};

int main(void)
{
    static const struct {
        const char *arg;
        int follows;
    } cases[] = {
        {"--output", 1},  {"--output=x", 0},  {"--output=", 0}, {"--count", 1}, {"--each", 1},    {"--out-file", 1},
        {"--dry-run", 0}, {"--dry-run=1", 0}, {"--help", 0},    {"--quiet", 0}, {"--verbose", 0}, {"--nothing", 0},
        {"--outpu", 0},   {"--", 0},          {"-", 0},         {"value", 0},   {"", 0},          {"-o", 1},
        {"-ofile", 0},    {"-n", 1},          {"-n3", 0},       {"-d", 0},      {"-h", 0},        {"-q", 0},
        {"-v", 0},        {"-do", 1},         {"-dofile", 0},   {"-vdo", 1},    {"-vvn", 1},      {"-vd", 0},
        {"-dx", 0},       {"-x", 0},          {"-xo", 0},       {"-od", 0},     {"-o-", 0},
    };
    /* stderr into a scratch file for the calls: nothing is to be said there */
    char path[512];
    int fd = scratch_template(path, sizeof path, "cli-args-follow") ? mkstemp(path) : -1;
    CHECK(fd >= 0, "a scratch file for stderr: %s", path);
    if (fd < 0) return 1;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    int wrong[sizeof cases / sizeof cases[0]] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        wrong[i] = args_value_follows(&cmd, cases[i].arg) != cases[i].follows;
    fflush(stderr);
    off_t said = lseek(fd, 0, SEEK_END);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    unlink(path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK(!wrong[i], "'%s': a value follows it: want %d", cases[i].arg, cases[i].follows);
    CHECK(said == 0, "args_value_follows wrote %ld bytes on stderr", (long)said);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
