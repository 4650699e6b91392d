/* Unknown keys in case files (see case_keys.h). */
#include "case_keys.h"

#include "case.h" /* ab_case_fail */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps:
 * use_casual_mask is 1 from use_causal_mask), capped: keys longer than
 * KEY_MAX are never near anything. */
#define KEY_MAX 64
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > KEY_MAX || lb > KEY_MAX)
        return SIZE_MAX;
    size_t d[KEY_MAX + 1][KEY_MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

bool ab_case_keys_known(json_t *obj, const char *where, const char *what,
                        const char *const *known, size_t n_known, char *err, size_t err_size)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        (void)val;
        size_t i = 0;
        while (i < n_known && !(known[i] && !strcmp(known[i], key)))
            i++;
        if (i < n_known)
            continue;
        /* a near miss: within 2 edits, and fewer than a third of the key's length */
        const char *near = NULL;
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < n_known; k++) {
            size_t dist = known[k] ? edit_distance(key, known[k]) : SIZE_MAX;
            if (dist < best && dist <= 2 && dist * 3 < strlen(key)) {
                best = dist;
                near = known[k];
            }
        }
        if (near)
            return ab_case_fail(err, err_size, "%s%.64s: unknown key; did you mean '%s'?", where,
                                key, near);
        char list[512] = "";
        for (size_t k = 0; k < n_known; k++)
            if (known[k] && strlen(list) + strlen(known[k]) + 3 < sizeof list)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         list[0] ? ", " : "", known[k]);
        return ab_case_fail(err, err_size, "%s%.64s: unknown key; %s are %s", where, key, what,
                            list);
    }
    return true;
}

bool ab_case_keys_top(json_t *obj, char *err, size_t err_size)
{
    static const char *const top[] = {
        "name", "layer", "params", "query", "value", "key", "query_mask", "value_mask",
        "attention_mask", "use_causal_mask", "training", "return_attention_scores", "seed",
        "offset", "dtype", "expected_output", "expected_scores", "tolerance", "grad_output",
        "expected_grads", "comment", "query_positions", "key_positions",
    };
    return ab_case_keys_known(obj, "", "a case's keys (free text goes under \"comment\")", top,
                              sizeof top / sizeof top[0], err, err_size);
}
