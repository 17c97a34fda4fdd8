/* instbench: which instance type, how many, on which market gives the most samples per dollar. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "instbench/util.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} commands[] = {
    {"measure", cmd_measure, "run the ViT training benchmark here and write a result JSON"},
    {"prices", cmd_prices, "on-demand and spot prices (live AWS, cache, or the shipped snapshot)"},
    {"rank", cmd_rank, "results x prices -> samples per dollar, time and cost to train"},
    {"verify", cmd_verify, "check this build's backends against a timm reference file"},
    {"models", cmd_models, "list model presets with parameters and training GFLOPs per sample"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: instbench [-v] [--version] [--help] <command> [options]\n\n"
            "Which instance type, how many, on which market gives the most training samples per dollar?\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s  %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\nglobal options:\n"
            "  -v, --verbose   more detail on stderr (repeat for more)\n"
            "  -q, --quiet     errors only on stderr\n"
            "  --version       print the version and exit\n"
            "  -h, --help      this help; `instbench <command> --help` for a command's options\n"
            "\nexit status: 0 ok, 1 runtime error, 2 usage error\n");
}

/* Everything a command printed must reach stdout: a full disk or a closed descriptor is an error
 * (exit 1 with a message), not a silent success.  A closed pipe ends the process by SIGPIPE first. */
static int finish(int rc)
{
    int bad = ferror(stdout);
    errno = 0;
    if (fflush(stdout) != 0) bad = 1;
    int e = errno;
    if (fclose(stdout) != 0 && !bad) bad = 1, e = errno;
    if (bad) {
        if (e) fprintf(stderr, "instbench: cannot write to stdout: %s\n", strerror(e));
        else fprintf(stderr, "instbench: cannot write to stdout\n");
        return rc != IB_EXIT_OK ? rc : IB_EXIT_RUNTIME;
    }
    return rc;
}

static int run(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version")) {
            printf("instbench %s\n", INSTBENCH_VERSION);
            return IB_EXIT_OK;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return IB_EXIT_OK;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            ib_log_level++;
        } else if (!strcmp(a, "-vv")) {
            ib_log_level += 2;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            ib_log_level = 0;
        } else {
            fprintf(stderr, "instbench: unknown option '%s'\n", a);
            usage(stderr);
            return IB_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return IB_EXIT_USAGE;
    }
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (!strcmp(argv[i], commands[c].name)) return commands[c].run(argc - i, argv + i);
    fprintf(stderr, "instbench: unknown command '%s' (try: instbench --help)\n", argv[i]);
    return IB_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    return finish(run(argc, argv));
}
