/* What a layer kind's params reader (ab_layer_kind_info.parse_params) uses
 * to read a case's "params" object (docs/CASES.md): numbers, flags and
 * weight arrays with a message naming the field, and params.weights_file. */
#ifndef ATTNBENCH_CASE_PARAMS_H
#define ATTNBENCH_CASE_PARAMS_H

#include "case.h"
#include "case_keys.h"

/* params may hold only the layer's own keys (case_keys.h) */
#define AB_WEIGHTS_FILE_KEYS "weights_file", "weights_names", "weights_prefix"
#define AB_KNOWN(obj, where, what, ...)                                                       \
    ab_case_keys_known(obj, where, what, (const char *const[]){__VA_ARGS__},                   \
                       sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), err, \
                       err_size)

bool ab_case_bool(json_t *obj, const char *key, bool def, bool *out, char *err, size_t err_size);
/* A number, or a one-element array of one (Keras variables print that way). */
bool ab_case_number(json_t *obj, const char *key, double def, double *out, const char *field,
                    char *err, size_t err_size);
/* An integer >= min; absent/null gives def, or an error when required. */
bool ab_case_uint(json_t *obj, const char *key, bool required, uint32_t def, uint32_t min,
                  uint32_t *out, const char *field, char *err, size_t err_size);
/* obj.key, one of the strings names[0..n-1]: *out its index (0 when absent
 * or null); false with err = message for anything else. */
bool ab_case_choice(json_t *obj, const char *key, const char *const *names, uint32_t n,
                    uint32_t *out, const char *message, char *err, size_t err_size);
/* params.dropout (0 when absent). */
bool ab_case_dropout(json_t *params, float *out, char *err, size_t err_size);
/* params.weights.<key> with exactly the given shape, kept in c->warr[slot];
 * NULL with err set when absent or misshapen. */
float *ab_case_weight(ab_case *c, json_t *weights, const char *key, int slot, uint32_t rank,
                      const uint32_t *dims, const char *axes, bool squeeze_ok, char *err,
                      size_t err_size);

typedef enum ab_weights_source {
    AB_WEIGHTS_ERROR,   /* err says why */
    AB_WEIGHTS_INLINE,  /* no params.weights_file: the reader goes on to params.weights */
    AB_WEIGHTS_FROM_FILE, /* c->w and the dropout rate read: the reader is done */
} ab_weights_source;

/* params.weights_file, weights_names and weights_prefix: with a file, no
 * inline `inline_key` (nor `second_key`, if given), the dropout rate into
 * *dropout, then the kind's weights loaded into c->w. */
ab_weights_source ab_case_weights_file(ab_case *c, json_t *params, const char *inline_key,
                                       const char *second_key, float *dropout, char *err,
                                       size_t err_size);
/* The same for a kind whose inline weights are the object params.weights:
 * *w = that object when AB_WEIGHTS_INLINE; `what` says what it holds. */
ab_weights_source ab_case_weights_object(ab_case *c, json_t *params, const char *what,
                                         float *dropout, json_t **w, char *err, size_t err_size);

#endif
