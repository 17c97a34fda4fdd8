/* cmd/args: the one option parser, its help and its Markdown reference (see args.h). */
#include "cmd/args.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/output.h"
#include "instbench/suggest.h"

static int quiet_flag, verbose_flag, help_flag;

/* -q and -v act at once, before or after the command (main.c's global options and the command's
 * own parse share these), and contradict each other: both together are a usage error. */
static int set_quiet(void *dst, const char *flag, const char *value, ib_error *err)
{
    if (verbose_flag) return ib_error_set(err, IB_EXIT_USAGE, "-q and -v contradict each other: give one");
    quiet_flag = 1;
    ib_log_level = 0;
    return 0;
}

static int add_verbose(void *dst, const char *flag, const char *value, ib_error *err)
{
    if (quiet_flag) return ib_error_set(err, IB_EXIT_USAGE, "-q and -v contradict each other: give one");
    verbose_flag = 1;
    ib_log_level++;
    return 0;
}

const arg_spec args_common[] = {
    {"--quiet", 'q', ARG_FN, &quiet_flag, NULL, "errors only on stderr (no progress, no warnings)", .fn = set_quiet},
    {"--verbose", 'v', ARG_FN, &verbose_flag, NULL, "more detail on stderr (repeat for more)", .fn = add_verbose},
    {"--help", 'h', ARG_FLAG, &help_flag, NULL, "this help"},
    {0},
};

int args_usage_error(const arg_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_usage_verror(c->name, fmt, ap); /* escaped: the values quoted came from argv */
    va_end(ap);
    return IB_EXIT_USAGE;
}

const char *args_did_you_mean(const char *suggestion, char *buf, size_t len)
{
    return suggest_did_you_mean(suggestion, buf, len);
}

/* ARG_FN entries and -q/-v take no value: they are the flags whose fn ignores it. */
static int takes_value(const arg_spec *s)
{
    return s->kind != ARG_FLAG && !(s->kind == ARG_FN && (s->fn == set_quiet || s->fn == add_verbose));
}

const arg_command *const *args_all_commands;

/* The ideas that more than one command takes, each under one name (issue 41: `prices --regions`
 * and `rank --region`, `prices --source` and `rank --prices`, `prices --duration` (days of a
 * block) beside `measure --duration` (seconds) had split them). */
const args_word args_vocabulary[] = {
    {"--region",
     "the AWS region(s): to price in, to run in, where a bucket is (a list where the command takes several)"},
    {"--source", "where prices come from: auto, live, cache, snapshot (rank: or an instbench.prices/v1 file)"},
    {"--instance-types", "the instance types to price, rank or consider: names or patterns"},
    {"--market",
     "on-demand, spot, capacity-block, savings-plan (measure: the one this instance runs on, on-demand or spot)"},
    {"--block-duration", "a Capacity Block's length in days (3d) or hours (72h)"},
    {"--plan", "savings-plan: compute or ec2-instance (prices: or sagemaker)"},
    {"--term", "savings-plan: 1y or 3y"},
    {"--payment", "savings-plan: none, partial or all upfront"},
    {"--include-local-zones", "let Local Zones and Wavelength Zones count"},
    {"--format",
     "table, json or csv, as the command offers (default: table on a terminal, json otherwise; sweep status: table)"},
    {"--columns", "which columns, in order, keyed by the names the CSV header and JSON carry (verify: its table's; it "
                  "asks for the table, and verify --format json refuses it)"},
    {"--wide", "every column however narrow the terminal"},
    {"--output",
     "write to FILE instead of stdout (measure: instead of a new file in ./instbench-results/), whole or not at all"},
    {"--create-dirs", "create the missing directories of an output path"},
    {"--sort", "the order of the rows"},
    {"--backend", "which backend runs the ViT step: cpu or cuda"},
    {"--precision", "bf16 or fp32"},
    {"--model", "the ViT preset (timm name)"},
    {"--image-size", "override the preset's image side"},
    {"--patch-size", "override the preset's patch side"},
    {"--embed-dim", "override the preset's embedding width"},
    {"--depth", "override the preset's number of blocks"},
    {"--heads", "override the preset's attention heads"},
    {"--mlp-ratio", "override the preset's MLP ratio"},
    {"--classes", "override the preset's number of classes"},
    {0, 0},
};

/* An old spelling used: one note naming the new one (stderr, not with -q). */
static void note_old_name(const arg_spec *s)
{
    ib_warn("%s is now spelled %s (the flag vocabulary, docs/cli.md); the old spelling is accepted until "
            "instbench " ARGS_OLD_UNTIL,
            s->old_name, s->name);
}

int args_column_renamed(args_list *cols, size_t i, const char *key)
{
    ib_warn("--columns: '%s' is now spelled %s (the name the CSV and JSON carry); the old key is accepted until "
            "instbench " ARGS_OLD_UNTIL,
            cols->v[i], key);
    char *k = util_strdup(key);
    if (!k) return -1;
    free(cols->v[i]);
    cols->v[i] = k;
    return 0;
}

/* Whether FLAG (may be NULL) is NAME's first LEN characters: "--regions" of "--regions=x". */
static int flag_is(const char *flag, const char *name, size_t len)
{
    return flag && strlen(flag) == len && !strncmp(flag, name, len);
}

/* QUIET: an old spelling found says nothing (a lookup, not a parse). */
static const arg_spec *find_in(const arg_spec *t, const char *name, size_t len, char short_name, int quiet)
{
    for (; t->name; t++) {
        if (short_name ? t->short_name == short_name : flag_is(t->name, name, len)) return t;
        if (!short_name && flag_is(t->old_name, name, len)) {
            if (!quiet) note_old_name(t);
            return t;
        }
    }
    return NULL;
}

static const arg_spec *find_as(const arg_command *c, const char *name, size_t len, char short_name, int quiet)
{
    const arg_spec *s = find_in(c->specs, name, len, short_name, quiet);
    return s ? s : find_in(args_common, name, len, short_name, quiet);
}

/* The flag nearest to an unknown NAME (LEN characters) among the command's and the common ones. */
static const char *nearest_flag(const arg_command *c, const char *name, size_t len)
{
    char typed[64];
    const char *names[128];
    size_t n = 0;
    if (len >= sizeof typed) return NULL;
    memcpy(typed, name, len);
    typed[len] = '\0';
    for (const arg_spec *t = c->specs; t->name && n < 128; t++) names[n++] = t->name;
    for (const arg_spec *t = args_common; t->name && n < 128; t++) names[n++] = t->name;
    return suggest_closest(typed, names, n);
}

static int has_flag(const arg_command *c, const char *name, size_t len)
{
    for (const arg_spec *t = c->specs; t->name; t++)
        if (flag_is(t->name, name, len) || flag_is(t->old_name, name, len)) return 1;
    return 0;
}

/* An unknown flag that other commands take: "; it is a flag of instbench prices, sweep run" (so
 * `rank --accelerator` says where it belongs instead of a far-fetched nearest name), else "". */
static const char *other_commands_with(const arg_command *c, const char *name, size_t len, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; args_all_commands && args_all_commands[i] && used < n; i++) {
        const arg_command *o = args_all_commands[i];
        if (o == c || !has_flag(o, name, len)) continue;
        used += (size_t)snprintf(buf + used, n - used, "%sinstbench %s", used ? ", " : "; it is a flag of ", o->name);
    }
    return buf;
}

static size_t count_choices(const char *const *ch)
{
    size_t n = 0;
    while (ch[n]) n++;
    return n;
}

/* A refused value of S: the spec's own suggestion, if it has one. */
static const char *nearest_value(const arg_spec *s, const char *v) { return s->suggest ? s->suggest(v) : NULL; }

/* Appends the items of V (comma-separated) to the list L: each checked, none twice in the whole
 * list, whichever flag occurrence brought it. */
static int add_to_list(const arg_command *c, const arg_spec *s, args_list *l, const char *v)
{
    char **items = NULL, dym[128];
    size_t n = 0;
    const char *p;
    if (util_split_csv(v, &items, &n) != 0) return args_usage_error(c, "%s: out of memory", s->name);
    if (!n) {
        free(items);
        return args_usage_error(c, "%s needs a non-empty value", s->name);
    }
    if (util_space_around(v, 1)) { /* the one trimming rule (take_value), item by item */
        util_free_strv(items, n);
        return args_usage_error(c, "%s: '%s' has whitespace around it or an item: give the values alone", s->name, v);
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (s->check && (p = s->check(items[i])) != NULL)
            rc = args_usage_error(c, "%s: '%s' %s%s", s->name, items[i], p,
                                  args_did_you_mean(nearest_value(s, items[i]), dym, sizeof dym));
        for (size_t k = 0; k < l->n + i && !rc; k++) { /* a name twice would only repeat rows: a typo */
            const char *other = k < l->n ? l->v[k] : items[k - l->n];
            if (!strcmp(items[i], other)) rc = args_usage_error(c, "%s: '%s' is listed twice", s->name, items[i]);
        }
    }
    char **grown = rc ? NULL : realloc(l->v, (l->n + n) * sizeof *grown);
    if (!rc && !grown) rc = args_usage_error(c, "%s: out of memory", s->name);
    if (rc) {
        util_free_strv(items, n);
        return rc;
    }
    memcpy(grown + l->n, items, n * sizeof *items);
    free(items);
    l->v = grown;
    l->n += n;
    return 0;
}

static void join_choices(const char *const *ch, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; ch[i] && used < n; i++) {
        const char *sep = !i ? "" : ch[i + 1] ? ", " : " or ";
        used += (size_t)snprintf(out + used, n - used, "%s%s", sep, ch[i]);
    }
}

static int take_value(const arg_command *c, const arg_spec *s, const char *v)
{
    char why[256], dym[128];
    const char *p;
    int rc;
    if (s->kind != ARG_FLAG && s->kind != ARG_LIST && v && util_space_around(v, 0))
        return args_usage_error(c, "%s: '%s' has whitespace around it: give the value alone", s->name, v);
    switch (s->kind) {
    case ARG_FLAG: *(int *)s->dst = 1; return 0;
    case ARG_INT: {
        long x;
        if (s->word && !strcmp(v, s->word)) {
            *(int *)s->dst = s->word_value;
            return 0;
        }
        if ((rc = util_parse_int(v, (long)s->min, (long)s->max, &x)) != 0)
            return args_usage_error(c, "%s: %s (want a whole number in [%.0f, %.0f]%s%s)", s->name,
                                    util_number_error(v, rc, s->min, s->max, why, sizeof why), s->min, s->max,
                                    s->word ? " or " : "", s->word ? s->word : "");
        *(int *)s->dst = (int)x;
        return 0;
    }
    case ARG_DOUBLE:
        if ((rc = util_parse_double(v, s->min, s->max, (double *)s->dst)) != 0)
            return args_usage_error(c, "%s: %s (want %s in [%g, %g])", s->name,
                                    util_number_error(v, rc, s->min, s->max, why, sizeof why),
                                    s->want ? s->want : "a number", s->min, s->max);
        return 0;
    case ARG_CHOICE: /* any case: --format CSV is csv (choices are lower case and differ by more) */
        for (int i = 0; s->choices[i]; i++)
            if (!strcasecmp(v, s->choices[i])) {
                *(int *)s->dst = i;
                return 0;
            }
        if (count_choices(s->choices) == 1) /* "'yes' is not ok" reads as a verdict, not as the one word taken */
            return args_usage_error(c, "%s: '%s' is not accepted: the one value %s takes is '%s'", s->name, v, s->name,
                                    s->choices[0]);
        join_choices(s->choices, why, sizeof why);
        return args_usage_error(
            c, "%s: '%s' is not %s%s", s->name, v, why,
            args_did_you_mean(suggest_closest(v, (const char *const *)s->choices, count_choices(s->choices)), dym,
                              sizeof dym));
    case ARG_STRING:
        if (!v[0]) return args_usage_error(c, "%s needs a non-empty value", s->name);
        if (s->check && (p = s->check(v)) != NULL)
            return args_usage_error(c, "%s: '%s' %s%s", s->name, v, p,
                                    args_did_you_mean(nearest_value(s, v), dym, sizeof dym));
        *(const char **)s->dst = v;
        return 0;
    case ARG_LIST: /* given again, it adds to the list (spotinfo's --region a --region b) */
        return add_to_list(c, s, s->dst, v);
    case ARG_FN: {
        ib_error err = {0};
        if (s->fn(s->dst, s->name, v, &err) != 0) {
            /* a usage code here is about the value typed, so it reads as every other flag's error;
             * anything else (out of memory) is not the user's to fix with --help */
            if (!err.code || err.code == IB_EXIT_USAGE) return args_usage_error(c, "%s", err.msg);
            fprintf(stderr, "instbench%s%s: %s\n", c->name[0] ? " " : "", c->name, err.msg);
            return err.code;
        }
        return 0;
    }
    }
    return 0;
}

/* One option argument A ("--name", "--name=value", "-o", "-ovalue", "-vq", never "--" or "-"):
 * *S the flag it names or ends with, *V the value written into it (NULL: none; the next argument
 * is then *S's value when it takes one).  Flags run together before the last (-vq's -v) take no
 * value and are applied as they come.  QUIET (a look, not a parse): nothing applied, printed or
 * noted, an unknown flag or a value for one that takes none is -1.  0, or the parse's exit code. */
static int read_option(const arg_command *c, const char *a, int quiet, const arg_spec **s, const char **v)
{
    int rc;
    *v = NULL;
    if (a[1] == '-') { /* --name or --name=value */
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (!(*s = find_as(c, a, len, 0, quiet))) {
            if (quiet) return -1;
            /* a near miss of this command's own flag first (--instance-type for --instance-types),
             * else the commands that take it (rank --accelerator is a flag of prices) */
            char dym[128], elsewhere[256];
            const char *near = nearest_flag(c, a, len);
            other_commands_with(c, a, len, elsewhere, sizeof elsewhere);
            return args_usage_error(c, "unknown option '%.*s'%s", (int)len, a,
                                    near || !elsewhere[0] ? args_did_you_mean(near, dym, sizeof dym) : elsewhere);
        }
        if (eq && !takes_value(*s)) return quiet ? -1 : args_usage_error(c, "%s takes no value", (*s)->name);
        if (eq) *v = eq + 1;
        return 0;
    }
    /* -o value, -ovalue, or flags that take no value run together: -vv, -qv */
    for (;; a++) {
        if (!(*s = find_as(c, NULL, 0, a[1], quiet)))
            return quiet ? -1 : args_usage_error(c, "unknown option '-%c'", a[1]);
        if (!a[2] || takes_value(*s)) break;
        if (quiet) continue;
        if ((*s)->given) *(*s)->given = 1;
        if ((rc = take_value(c, *s, NULL)) != 0) return rc;
    }
    if (a[2]) *v = a + 2;
    return 0;
}

int args_value_follows(const arg_command *c, const char *a)
{
    const arg_spec *s;
    const char *v;
    if (a[0] != '-' || !a[1] || !strcmp(a, "--")) return 0;
    return read_option(c, a, 1, &s, &v) == 0 && !v && takes_value(s);
}

/* The flag of C whose value the word W is, when exactly one flag takes it: a choice (any case) or
 * a preset of --model; NULL otherwise (two flags: which was meant is not ours to guess).  *VALUE:
 * the value as the flag spells it.  A stray word is most often a value whose flag was left out
 * (`models --layout vit_tiny_patch16_224`). */
static const arg_spec *flag_for_word(const arg_command *c, const char *w, const char **value)
{
    const arg_spec *found = NULL;
    for (const arg_spec *s = c->specs; s && s->name; s++) {
        const char *v = NULL;
        for (size_t i = 0; s->kind == ARG_CHOICE && s->choices && s->choices[i] && !v; i++)
            if (!strcasecmp(w, s->choices[i])) v = s->choices[i];
        const int presets = s->kind == ARG_FN && s->fn == args_model_flag && !strcmp(s->name, "--model");
        for (size_t i = 0; presets && i < model_preset_count() && !v; i++)
            if (!strcmp(w, model_preset_at(i)->name)) v = model_preset_at(i)->name;
        if (!v) continue;
        if (found) return NULL;
        found = s, *value = v;
    }
    return found;
}

/* "unexpected argument 'W'" for a command that takes none, pointing at the flag W is a value of. */
static int unexpected_argument(const arg_command *c, const char *w)
{
    const char *value = NULL;
    const arg_spec *s = flag_for_word(c, w, &value);
    char fix[160], dym[192];
    if (s) snprintf(fix, sizeof fix, "%s %s", s->name, value);
    return args_usage_error(c, "unexpected argument '%s'%s", w, args_did_you_mean(s ? fix : NULL, dym, sizeof dym));
}

int args_parse(const arg_command *c, int argc, char **argv, char **pos, int *npos)
{
    int n = 0, options_done = 0, rc;
    help_flag = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || !a[1]) { /* "-" alone is a positional (stdin) */
            if (!c->positional) return unexpected_argument(c, a);
            pos[n++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--")) {
            options_done = 1;
            continue;
        }
        const arg_spec *s;
        const char *v;
        if ((rc = read_option(c, a, 0, &s, &v)) != 0) return rc;
        if (!v && takes_value(s)) {
            if (i + 1 >= argc) return args_usage_error(c, "%s needs a value", s->name);
            v = argv[++i];
        }
        if (s->given) *s->given = 1;
        if ((rc = take_value(c, s, v)) != 0) return rc;
        if (help_flag && !c->help_later) {
            args_print_help(c, stdout);
            return ARGS_HELP;
        }
    }
    if (npos) *npos = n;
    return help_flag ? ARGS_HELP : 0;
}

/* "-o, --output FILE" / "--precision bf16|fp32" */
static void flag_label(const arg_spec *s, char *out, size_t n)
{
    char meta[128] = "";
    if (takes_value(s)) {
        if (s->metavar) snprintf(meta, sizeof meta, " %s", s->metavar);
        else if (s->choices) {
            size_t used = 1;
            meta[0] = ' ';
            for (int i = 0; s->choices[i] && used < sizeof meta; i++)
                used += (size_t)snprintf(meta + used, sizeof meta - used, "%s%s", i ? "|" : "", s->choices[i]);
        } else snprintf(meta, sizeof meta, " VALUE");
    }
    if (s->short_name) snprintf(out, n, "-%c, %s%s", s->short_name, s->name, meta);
    else snprintf(out, n, "%s%s", s->name, meta);
}

/* The width help wraps to: the terminal's, or 80 for a pipe or file (help text is read, and 80
 * columns is what a pager or an editor shows whole); never under 40. */
static size_t help_width(FILE *f)
{
    size_t w = output_terminal_width(f);
    if (!w) w = 80;
    return w < 40 ? 40 : w;
}

/* The end of the word at W: the next space, or just after a '|' (a long list of choices,
 * on-demand|spot|..., may break after any of its bars). */
static const char *word_end(const char *w, const char *end)
{
    while (w < end && *w != ' ')
        if (*w++ == '|') break;
    return w;
}

/* Writes the words of TEXT[0..LEN) from column COL, breaking before a word that would pass
 * WIDTH and going on at column HANG; returns the column reached.  A word longer than a line stays
 * whole. */
static size_t wrap_words(FILE *f, const char *text, size_t len, size_t col, size_t hang, size_t width)
{
    size_t start_col = col;
    const char *end = text + len, *w = text;
    while (w < end && *w == ' ') w++;
    while (w < end) {
        const char *we = word_end(w, end);
        size_t wl = (size_t)(we - w);
        fwrite(w, 1, wl, f);
        col += wl;
        const char *next = we;
        while (next < end && *next == ' ') next++;
        if (next >= end) break;
        const char *ne = word_end(next, end);
        size_t gap = (size_t)(next - we), nl = (size_t)(ne - next);
        if (col + gap + nl > width && col > start_col) {
            fprintf(f, "\n%*s", (int)hang, "");
            col = start_col = hang;
        } else { /* the text's own spacing ("measure  run ...") is kept within a line */
            fprintf(f, "%*s", (int)gap, "");
            col += gap;
        }
        w = next;
    }
    return col;
}

/* Writes help TEXT from column COL, its continuation lines at column INDENT, wrapped to WIDTH.
 * The texts are written hand-broken near 100 columns, so a '\n' is read as a space unless it
 * ends a paragraph: before an empty line, after a short first line ending in ':' (a list
 * follows: "commands:"), or before
 * an indented line that is not deeper than the paragraph's first (an item of a list, which
 * keeps its own indentation); a deeper indented line continues its paragraph as a hanging
 * indent.  ALL_SOFT: every '\n' is a space (a flag's help, as docs/cli.md's cells read it). */
static void wrap_text(FILE *f, const char *text, size_t col, size_t indent, size_t width, int all_soft)
{
    char *buf = malloc(strlen(text) + 1);
    if (!buf) {
        fputs(text, f);
        return;
    }
    const char *p = text;
    int first = 1;
    while (*p) {
        /* one paragraph: lines joined into BUF */
        size_t n = 0, para_lead = strspn(p, " "), hang = indent + para_lead;
        for (;;) {
            const char *e = strchr(p, '\n');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            size_t skip = strspn(p, " ");
            if (skip > l) skip = l;
            if (n) buf[n++] = ' ';
            memcpy(buf + n, p + skip, l - skip);
            n += l - skip;
            p += l;
            if (!*p) break;
            p++; /* the '\n' */
            size_t next_lead = strspn(p, " ");
            int empty = p[next_lead] == '\n' || !p[next_lead];
            /* "commands:", "environment:": a short first line ending in ':' heads a list */
            int heading = l > 0 && p[-2] == ':' && n == l - skip && l < 40;
            if (!all_soft && (empty || heading || (next_lead > 0 && next_lead <= para_lead))) break;
            if (!all_soft && next_lead > para_lead) hang = indent + next_lead;
        }
        if (!all_soft && para_lead) { /* "  measure  run the ...": continue under "run" */
            const char *two = strstr(buf, "  ");
            if (two && (size_t)(two - buf) < n) hang = indent + para_lead + (size_t)(two - buf) + strspn(two, " ");
        }
        if (!first) fprintf(f, "\n%*s", (int)(indent + para_lead), "");
        else if (para_lead) fprintf(f, "%*s", (int)para_lead, "");
        wrap_words(f, buf, n, col + para_lead, hang, width);
        first = 0;
        col = indent;
        for (;;) { /* empty lines stay */
            size_t sp = strspn(p, " ");
            if (p[sp] != '\n') break;
            fputc('\n', f);
            p += sp + 1;
        }
    }
    if (text[0] && text[strlen(text) - 1] == '\n') fputc('\n', f);
    free(buf);
}

static void print_table(const arg_spec *t, FILE *f)
{
    size_t width = help_width(f);
    for (; t->name; t++) {
        if (t->group) {
            fputc('\n', f);
            wrap_words(f, t->group, strlen(t->group), 0, 2, width - 1);
            fputs(":\n", f);
        }
        char label[192];
        flag_label(t, label, sizeof label);
        const char *h = t->help ? t->help : "";
        if (strlen(label) > 20) {
            fputs("  ", f);
            wrap_words(f, label, strlen(label), 2, 6, width);
            fprintf(f, "\n%24s", "");
        } else fprintf(f, "  %-22s", label);
        wrap_text(f, h, 24, 24, width, 1);
        if (t->old_name) {
            fprintf(f, "\n%24s", "");
            char was[128];
            snprintf(was, sizeof was, "(was %s: accepted until %s)", t->old_name, ARGS_OLD_UNTIL);
            wrap_text(f, was, 24, 24, width, 1);
        }
        fputc('\n', f);
    }
}

/* A command line wider than WIDTH: broken between arguments with the shell's " \\", so that what
 * is printed still runs when pasted. */
static void wrap_example(FILE *f, const char *line, size_t width)
{
    size_t col = 4;
    for (const char *w = line; *w;) {
        /* one group: a flag with its value ("--batch-size 16"), or a word alone */
        const char *we = w;
        for (int words = 0; *we && words < 2; words++) {
            if (words && (*we == '-' || w[0] != '-')) break;
            if (words) we++; /* the space between flag and value */
            char quote = 0;
            for (; *we && (quote || *we != ' '); we++)
                if (*we == '\'' || *we == '"') quote = quote == *we ? 0 : quote ? quote : *we;
            if (*we != ' ') break;
        }
        size_t wl = (size_t)(we - w);
        if (col > 4 && col + 1 + wl + 2 > width) {
            fputs(" \\\n      ", f);
            col = 6;
        } else if (col > 4) {
            fputc(' ', f);
            col++;
        }
        fwrite(w, 1, wl, f);
        col += wl;
        w = we;
        while (*w == ' ') w++;
    }
}

/* An example's "# what", wrapped with every line a comment: a continuation without its '#' would
 * read as a command to whoever pastes the block into a shell. */
static void print_comment(FILE *f, const char *what, size_t width)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
        wrap_text(m, what, 4, 4, width, 1); /* continuations at column 4, under the "  # " put there */
        if (fclose(m) != 0) free(text), text = NULL;
    }
    fputs("  # ", f);
    for (const char *p = text ? text : what; *p; p++) {
        fputc(*p, f);
        if (*p == '\n') {
            p += strspn(p + 1, " ");
            fputs("  # ", f);
        }
    }
    free(text);
}

void args_print_examples(const arg_command *c, int markdown, FILE *f)
{
    if (!c->examples) return;
    fputs(markdown ? "\nExamples:\n\n```sh\n" : "\nexamples:\n", f);
    for (const arg_example *e = c->examples; e->line; e++) {
        if (markdown) {
            fprintf(f, "# %s\n%s\n", e->what, e->line);
            continue;
        }
        print_comment(f, e->what, help_width(f));
        fputs("\n  $ ", f);
        wrap_example(f, e->line, help_width(f));
        fputc('\n', f);
    }
    if (markdown) fputs("```\n", f);
}

void args_print_help(const arg_command *c, FILE *f)
{
    char usage[512];
    int ul = snprintf(usage, sizeof usage, "usage: instbench%s%s ", c->name[0] ? " " : "", c->name);
    fputs(usage, f);
    wrap_words(f, c->synopsis, strlen(c->synopsis), (size_t)ul, (size_t)ul, help_width(f));
    fputs("\n\n", f);
    wrap_text(f, c->about, 0, 0, help_width(f), 0);
    fputc('\n', f);
    if (c->specs[0].name && !c->specs[0].group) fprintf(f, "\noptions:\n");
    print_table(c->specs, f);
    fprintf(f, "\ncommon:\n");
    print_table(args_common, f);
    args_print_examples(c, 0, f);
    if (c->footer) {
        fputc('\n', f);
        wrap_text(f, c->footer, 0, 0, help_width(f), 0);
    }
    /* a command whose footer spells out its own exit statuses says it once, not twice */
    if (!c->footer || !strstr(c->footer, "exit status:"))
        fprintf(f, "\nexit status: 0 ok, 1 runtime error, 2 usage error\n");
}

/* A Markdown table cell: one line, pipes escaped. */
static void md_cell(const char *s, FILE *f)
{
    for (; *s; s++) {
        if (*s == '\n') {
            fputc(' ', f);
            while (s[1] == ' ') s++;
        } else if (*s == '|') {
            fputs("\\|", f);
        } else {
            fputc(*s, f);
        }
    }
}

static void md_table(const arg_spec *t, FILE *f)
{
    fprintf(f, "| flag | description |\n|---|---|\n");
    for (; t->name; t++) {
        char label[192];
        flag_label(t, label, sizeof label);
        fputs("| `", f);
        md_cell(label, f);
        fputs("` | ", f);
        if (t->group) {
            fputs("*", f);
            md_cell(t->group, f);
            fputs(":* ", f);
        }
        md_cell(t->help ? t->help : "", f);
        if (t->old_name) fprintf(f, " (was `%s`: accepted until %s)", t->old_name, ARGS_OLD_UNTIL);
        fputs(" |\n", f);
    }
}

void args_print_markdown(const arg_command *c, FILE *f)
{
    fprintf(f, "## instbench %s\n\n```\ninstbench %s %s\n```\n\n%s\n", c->name, c->name, c->synopsis, c->about);
    if (c->specs[0].name) { /* no flags of its own (sweep: subcommands only): no table, not an empty one */
        fputc('\n', f);
        md_table(c->specs, f);
    }
    args_print_examples(c, 1, f);
    if (c->footer) fprintf(f, "\n%s", c->footer);
    fputc('\n', f);
}

void args_print_vocabulary(FILE *f)
{
    fprintf(f,
            "## Flag vocabulary\n\nOne name for one idea in every command that takes it (an old spelling is "
            "accepted, with a note, until instbench %s).\n\n| flag | idea | commands | old spellings "
            "|\n|---|---|---|---|\n",
            ARGS_OLD_UNTIL);
    for (const args_word *w = args_vocabulary; w->flag; w++) {
        fprintf(f, "| `%s` | ", w->flag);
        md_cell(w->idea, f);
        fputs(" | ", f);
        int any = 0;
        for (size_t i = 0; args_all_commands && args_all_commands[i]; i++)
            for (const arg_spec *t = args_all_commands[i]->specs; t->name; t++)
                if (!strcmp(t->name, w->flag)) fprintf(f, "%s%s", any++ ? ", " : "", args_all_commands[i]->name);
        fputs(" | ", f);
        any = 0;
        for (size_t i = 0; args_all_commands && args_all_commands[i]; i++)
            for (const arg_spec *t = args_all_commands[i]->specs; t->name; t++)
                if (!strcmp(t->name, w->flag) && t->old_name)
                    fprintf(f, "%s`%s` (%s)", any++ ? ", " : "", t->old_name, args_all_commands[i]->name);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

int args_model_flag(void *m, const char *flag, const char *value, ib_error *err)
{
    return model_cli_parse(m, flag, value, err) < 0 ? -1 : 0;
}

const char *args_check_file(const char *v) { return strcmp(v, "-") ? NULL : "needs a file name"; }

int args_table_fit(const arg_command *c, int wide, const args_list *cols, const char *const *keys)
{
    for (size_t i = 0; keys && i < cols->n; i++) {
        size_t k = 0;
        while (keys[k] && strcmp(keys[k], cols->v[i])) k++;
        if (keys[k]) continue;
        char all[1024], dym[128];
        size_t n = 0;
        for (k = 0; keys[k] && n < sizeof all; k++)
            n += (size_t)snprintf(all + n, sizeof all - n, "%s%s", k ? ", " : "", keys[k]);
        return args_usage_error(c, "--columns: '%s' is not a column%s (columns: %s)", cols->v[i],
                                args_did_you_mean(suggest_closest(cols->v[i], keys, k), dym, sizeof dym), all);
    }
    output_fit_set(wide ? 0 : output_terminal_width(stdout), cols->v, cols->n);
    return 0;
}
