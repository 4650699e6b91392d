/* Case files name every key they use: an unknown key (a typo such as
 * use_casual_mask, or an argument the layer does not have, such as
 * sliding_window on Attention) is refused, naming it and the nearest known
 * key, instead of running as if it were absent (docs/CASES.md). */
#ifndef ATTNBENCH_CASE_KEYS_H
#define ATTNBENCH_CASE_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Every key of the object obj must be one of known[0..n_known-1] (NULLs in
 * it are skipped, so a caller can leave out keys a configuration lacks).
 * `where` prefixes the key in the message ("params." gives "params.x");
 * `what` says whose keys they are ("Attention's params"). False with err set
 * on the first unknown key. */
bool ab_case_keys_known(json_t *obj, const char *where, const char *what,
                        const char *const *known, size_t n_known, char *err, size_t err_size);

/* The top-level keys of a case (docs/CASES.md, "Top-level fields"); free-form
 * text goes under "comment". */
bool ab_case_keys_top(json_t *obj, char *err, size_t err_size);

#endif
