/* cmd/args: the one option parser.  Each command describes its flags in a table of arg_spec;
 * args_parse reads argv against it (`--flag value`, `--flag=value`, `-o value`, `-ovalue`, `--`
 * ending the options, positional arguments where the command takes them), checks every value
 * against its kind, range or choices, and reports any problem in one wording with exit 2.  The
 * same table prints `--help` and the Markdown reference (docs/cli.md), so they cannot drift.
 * Rules between flags stay in the command (a small validate step after args_parse). */
#ifndef INSTBENCH_CMD_ARGS_H
#define INSTBENCH_CMD_ARGS_H

#include <stddef.h>
#include <stdio.h>

#include "instbench/model.h"
#include "instbench/names.h" /* the checks of region and instance-type flags */
#include "instbench/util.h"

typedef enum arg_kind {
    ARG_FLAG,   /* no value; int *dst = 1 */
    ARG_INT,    /* int *dst: a whole number in [min, max], or .word meaning .word_value */
    ARG_DOUBLE, /* double *dst: a finite number in [min, max] */
    ARG_CHOICE, /* int *dst = the index of the value in .choices (NULL-terminated) */
    ARG_STRING, /* const char **dst; not empty; .check, when set, validates it */
    ARG_LIST,   /* args_list *dst: comma-separated, none empty or twice, .check on each; given
                     again, the flag adds to the list (--regions a --regions b == --regions a,b) */
    ARG_FN,     /* .fn(dst, flag, value, err) takes the value (repeatable flags, lists, sub-parsers) */
} arg_kind;

typedef struct args_list {
    char **v;
    size_t n;
} args_list;

typedef struct arg_spec {
    const char *name; /* "--batch-size"; NULL ends a table */
    char short_name;  /* 'o' for -o, else 0 */
    arg_kind kind;
    void *dst;
    const char *metavar; /* "N", "FILE", ... (choices print themselves when NULL) */
    const char *help;    /* '\n' starts a continuation line */
    double min, max;     /* ARG_INT, ARG_DOUBLE */
    const char *want;    /* ARG_DOUBLE: what the number is, for messages ("a price in USD per node-hour") */
    const char *const *choices;
    const char *word; /* ARG_INT: a word accepted instead of a number ("auto") */
    int word_value;
    /* ARG_STRING, ARG_LIST: NULL if value is acceptable, else why not ("is not a region like us-east-1") */
    const char *(*check)(const char *value);
    /* ARG_STRING, ARG_LIST: for a value .check refuses, the nearest known one ("did you mean X?"),
     * or NULL.  Choices and flag names suggest themselves. */
    const char *(*suggest)(const char *value);
    /* ARG_FN: 0 ok, else err set (its message is printed after "instbench CMD: ") */
    int (*fn)(void *dst, const char *flag, const char *value, ib_error *err);
    int *given;        /* set to 1 when the flag appears */
    const char *group; /* --help: a heading printed before this flag */
    /* The spelling this flag had before the flag vocabulary (docs/cli.md "Flag vocabulary") made one
     * name per idea across commands: still accepted, with a note on stderr, until ARGS_OLD_UNTIL. */
    const char *old_name;
} arg_spec;

/* The release after which old flag spellings are refused (a note says so each time one is used). */
#define ARGS_OLD_UNTIL "0.2"

/* The flag vocabulary: each idea that more than one command takes, with its one name.  Checked
 * against every command's table by tests/cli/cli_vocabulary.py; printed into docs/cli.md. */
typedef struct args_word {
    const char *flag; /* "--region" */
    const char *idea; /* "the AWS region(s) to price or work in" */
} args_word;
extern const args_word args_vocabulary[];
void args_print_vocabulary(FILE *f);

/* One entry of a command's examples: a real command line, run by tests/cli/cli_examples.py so it
 * cannot rot (offline: prices from the snapshot, measure as --dry-run, rank on fixture results). */
typedef struct arg_example {
    const char *what; /* what it answers, one line */
    const char *line; /* as typed: "instbench prices --source snapshot ..." */
} arg_example;

typedef struct arg_command {
    const char *name;     /* "measure"; "" for instbench's own options */
    const char *synopsis; /* after "usage: instbench measure " */
    const char *about;    /* paragraph(s) under the usage line */
    const char *footer;   /* after the flags (environment, exit status) */
    const arg_spec *specs;
    const char *positional;      /* metavar of positional arguments, or NULL when none are taken */
    const arg_example *examples; /* ends with {0}; NULL: none.  --help and docs/cli.md show them */
    /* -h/--help makes args_parse return ARGS_HELP without printing: instbench's own options, where
     * which help to print depends on the command after them (`instbench -h rank`). */
    int help_later;
} arg_command;

/* Every command's table, for the "did you mean" of a flag that another command has and for the
 * vocabulary table of docs/cli.md: set by main.c before any parse (NULL-terminated). */
extern const arg_command *const *args_all_commands;

/* The options every command takes (-h, -q, -v), shown at the end of each help. */
extern const arg_spec args_common[];

enum { ARGS_HELP = -1 };

/* Parses argv[1..argc-1] (argv[0] is the command name).  Returns 0 with the positional arguments
 * in pos[0..*npos-1] (pos: room for argc pointers, may be NULL when none are taken), ARGS_HELP
 * after printing the help on stdout for -h/--help (with .help_later: not printed), or
 * IB_EXIT_USAGE after printing the error. */
int args_parse(const arg_command *c, int argc, char **argv, char **pos, int *npos);
/* 1 when args_parse takes the argument after A as A's value ("--output" or "-o" of a flag that
 * takes one, given without it), else 0.  Says nothing, whatever A is. */
int args_value_follows(const arg_command *c, const char *a);

/* One usage error in the common wording, "instbench CMD: message (try: instbench CMD --help)";
 * returns IB_EXIT_USAGE.  For the rules a command checks after args_parse. */
int args_usage_error(const arg_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "; did you mean X?" when SUGGESTION is set, else "": the one wording every command appends. */
const char *args_did_you_mean(const char *suggestion, char *buf, size_t len);

void args_print_help(const arg_command *c, FILE *f);
/* The examples section of --help (MARKDOWN 0) or docs/cli.md (1), after a blank line; nothing
 * when C has none. */
void args_print_examples(const arg_command *c, int markdown, FILE *f);
void args_print_markdown(const arg_command *c, FILE *f);

/* The model flags (--model and the dimension overrides) of measure and models, as table rows:
 * ARGS_MODEL_SPECS(&model_cli, &given_flag, "heading"); each value goes through model_cli_parse. */
int args_model_flag(void *model_cli, const char *flag, const char *value, ib_error *err);
#define ARGS_MODEL_SPECS(m, given_flag, heading)                                                                         \
    {"--model",                                                                                                          \
     0,                                                                                                                  \
     ARG_FN,                                                                                                             \
     (m),                                                                                                                \
     "NAME",                                                                                                             \
     "preset (timm name): vit_tiny_patch16_224, vit_small_patch16_224,\n"                                                \
     "vit_base_patch16_224, vit_large_patch16_224",                                                                      \
     .fn = args_model_flag,                                                                                              \
     .given = (given_flag),                                                                                              \
     .group = (heading)},                                                                                                \
        {"--image-size",                                                                                                 \
         0,                                                                                                              \
         ARG_FN,                                                                                                         \
         (m),                                                                                                            \
         "N",                                                                                                            \
         "override the image side in pixels (preset: 224)",                                                              \
         .fn = args_model_flag,                                                                                          \
         .given = (given_flag)},                                                                                         \
        {"--patch-size",       0, ARG_FN, (m), "N", "override the patch side (preset: 16)", .fn = args_model_flag,       \
         .given = (given_flag)},                                                                                         \
        {"--embed-dim",        0, ARG_FN, (m), "N", "override the embedding width D", .fn = args_model_flag,             \
         .given = (given_flag)},                                                                                         \
        {"--depth", 0, ARG_FN, (m), "N", "override the number of blocks", .fn = args_model_flag, .given = (given_flag)}, \
        {"--heads",                                                                                                      \
         0,                                                                                                              \
         ARG_FN,                                                                                                         \
         (m),                                                                                                            \
         "N",                                                                                                            \
         "override the attention heads (D must divide by it)",                                                           \
         .fn = args_model_flag,                                                                                          \
         .given = (given_flag)},                                                                                         \
        {"--mlp-ratio",                                                                                                  \
         0,                                                                                                              \
         ARG_FN,                                                                                                         \
         (m),                                                                                                            \
         "X",                                                                                                            \
         "override the MLP ratio (hidden = int(D * X); preset: 4)",                                                      \
         .fn = args_model_flag,                                                                                          \
         .given = (given_flag)},                                                                                         \
    {                                                                                                                    \
        "--classes", 0, ARG_FN, (m), "N", "override the number of classes (preset: 1000)", .fn = args_model_flag,        \
                                                                                           .given = (given_flag)         \
    }

/* --wide and --columns of the commands that print tables: ARGS_TABLE_SPECS(&wide, &columns, "the keys"),
 * then args_table_fit after args_parse. */
#define ARGS_TABLE_SPECS(wide, cols, keys_help)                                                            \
    {"--wide",                                                                                             \
     0,                                                                                                    \
     ARG_FLAG,                                                                                             \
     (wide),                                                                                               \
     NULL,                                                                                                 \
     "every column however narrow the terminal (a table fits the terminal\n"                               \
     "by default; pipes and files get every column)",                                                      \
     .group = "table"},                                                                                    \
    {                                                                                                      \
        "--columns", 0, ARG_LIST, (cols), "KEY,...", "only these columns, in this order; keys: " keys_help \
    }
/* Checks --columns against KEYS (NULL-terminated; a usage error names them and the nearest; NULL
 * when the command has checked them itself) and fits the text tables this command writes to
 * stdout (output_fit_set).  0, or IB_EXIT_USAGE. */
int args_table_fit(const arg_command *c, int wide, const args_list *cols, const char *const *keys);
/* --columns' entry I is an old name of column KEY: a one-line note (accepted until ARGS_OLD_UNTIL)
 * and the entry replaced by KEY, which every format and the table's fitting use.  0; -1 out of
 * memory. */
int args_column_renamed(args_list *cols, size_t i, const char *key);

/* For ARG_STRING's check: a file name, not "-" (regions and instance types: instbench/names.h). */
const char *args_check_file(const char *v);

#endif
