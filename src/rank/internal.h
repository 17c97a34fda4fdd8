/* rank/internal.h: helpers shared between the files of src/rank/ only. */
#ifndef INSTBENCH_RANK_INTERNAL_H
#define INSTBENCH_RANK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "instbench/rank.h"

/* seen.c: a set of RANK_KEY_BYTES-byte keys.  rank_seen_add: 1 added, 0 already there, -1 out of
 * memory.  Inode keys: KIND ('f' file, 'd' directory), device and inode. */
typedef struct rank_seen {
    unsigned char (*keys)[RANK_KEY_BYTES];
    unsigned char *used;
    size_t n, cap;
} rank_seen;
int rank_seen_add(rank_seen *s, const unsigned char key[RANK_KEY_BYTES]);
void rank_seen_inode_key(char kind, dev_t dev, ino_t ino, unsigned char key[RANK_KEY_BYTES]);
void rank_seen_free(rank_seen *s);

/* input_warnings.c: the attention paths a configuration may record (rank_config.attention), in
 * the order the stderr warning and the table's legend name them: cudnn-nondet is cuDNN's
 * non-deterministic backward (parse.c), fused the path of versions before issue 37. */
enum { RANK_ATTN_CUDNN, RANK_ATTN_CUDNN_NONDET, RANK_ATTN_UNFUSED, RANK_ATTN_FUSED, RANK_ATTENTION_PATHS };
extern const char *const rank_attention_paths[RANK_ATTENTION_PATHS];

/* revision.c: the order of revisions (rank_revision.text) wherever rank lists them: as strcmp,
 * but "" (unknown) after every known one. */
int rank_revision_cmp(const char *a, const char *b);
/* revision.c: warns when the runs of C[0..N) come from more than one build, naming them and the
 * configurations whose own runs do. */
void rank_warn_revisions(const rank_config *c, size_t n);

/* Median of V[0..N) (N > 0); reorders V.  Even N: mean of the two middle values. */
double rank_median(double *v, size_t n);

/* How many whole UNITs (blocks, plan terms, checkpoint intervals) AMOUNT needs:
 * ceil(AMOUNT / UNIT), at least 1.  An amount of exactly N units in decimal (a target of exactly
 * 24 h of work) is N, not N + 1, though the divisions that give it round a few ulps up. */
double rank_whole_units(double amount, double unit);

/* filter.c: VALUE within LIMIT (NAN: no limit), with a tolerance so that a deadline or budget equal
 * to a row's exact figure keeps the row despite rounding in the division (hours = samples / rate /
 * 3600).  What --max-hourly, --deadline and --budget judge, and the Capacity Block chosen under a
 * deadline (score.c). */
int rank_within_limit(double value, double limit);

/* filter.c: when ROW's job is done, in hours from now: its ranking hours to the target (a spot
 * row's expected hours under interruptions, shown as EXPECTED TIME), plus a Capacity Block's wait
 * until its block starts.  What --deadline judges and --sort time orders by. */
double rank_row_hours_from_now(const rank_row *row);

/* score.c: ROW is a capacity-block or savings-plan row that ranks by samples per dollar of what the
 * target costs there (target / COST: blocks paid whole, the plan's idle commitment), not by its
 * $/h: there is a target, and the row has a price and a cost to it.  Its rank_samples_per_dollar
 * is that figure, and its EFF. SAMPLES/$ shows it. */
int rank_row_ranks_by_target_cost(const rank_row *row, const rank_options *o);

/* report_columns.c: "310" or "4.5" (one decimal below 10): the H of "once every H hours" for a
 * per-node RATE, as the table's BREAK-EVEN and the sentences under it write it. */
void rank_fmt_every_hours(double rate, char *out, size_t len);
/* report_columns.c: samples/s as people read it wherever rank writes it (the table's SAMPLES/s,
 * the rows not ranked, the chart's labels): grouped, two decimals below 100 ("1.84"), one above
 * ("3,236.1"); "-" when not finite. */
void rank_fmt_samples_per_second(double sps, char *out, size_t len);

/* gzip.c: a read-only stream of the bytes gzip data from SRC decompresses to (SRC is closed with
 * it; on failure NULL and SRC is still the caller's).  At most MAX bytes come out: past that, on
 * corrupt or truncated data, a read fails (ferror) and WHY (the caller's, WHY_LEN bytes, alive
 * while the stream is) gets the one-line reason.  Memory is fixed (~100 KiB), whatever the sizes. */
#include <stdio.h>
FILE *rank_gz_open(FILE *src, size_t max, char *why, size_t why_len);

/* ask.c: the account's zone names and IDs in REGIONS, live (*LIVE malloc'd, the caller frees;
 * whatever came back even when AWS did not answer every region: -v says why). */
size_t rank_ask_zones(const char *const *regions, size_t n_regions, prices_zone **live);

#endif
