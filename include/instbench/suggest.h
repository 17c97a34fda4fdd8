/* suggest: "did you mean X?" for names people type (instance types, regions, zones, flags,
 * choices).  The callers own the catalogue of known names; this module only measures how far a
 * typed word is from each of them. */
#ifndef INSTBENCH_SUGGEST_H
#define INSTBENCH_SUGGEST_H

#include <stddef.h>

/* Edits between A and B, ignoring case: insertions, deletions, substitutions and swaps of two
 * neighbours (the optimal-string-alignment distance), so "us-esat-1" is one edit from
 * "us-east-1".  Words longer than SUGGEST_MAX_LEN are as far as their length difference plus
 * SUGGEST_MAX_LEN (never a suggestion). */
#define SUGGEST_MAX_LEN 96
size_t suggest_distance(const char *a, const char *b);

/* How many edits still read as a typo of a word of LEN characters: none for 1-3 (too short to
 * tell), 1 up to 7, 2 beyond. */
size_t suggest_max_distance(size_t len);

/* The candidate nearest to WORD within suggest_max_distance, the first of equals in the order
 * given (callers pass their catalogue sorted); NULL when none is that close or WORD is one of
 * them exactly. */
const char *suggest_closest(const char *word, const char *const *candidates, size_t n);

/* "; did you mean SUGGESTION?" in BUF, or "" when SUGGESTION is NULL: the one wording of every
 * suggestion in a message.  Returns what to print. */
const char *suggest_did_you_mean(const char *suggestion, char *buf, size_t len);

#endif
