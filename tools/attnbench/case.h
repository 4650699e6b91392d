/* Case files (docs/CASES.md): reading one case object into plain arrays and the
 * layer's desc and weights, with a message naming the field when the case is
 * malformed. Running it is check.c's job. */
#ifndef ATTNBENCH_CASE_H
#define ATTNBENCH_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <vkattn/vkattn.h>

#include "layer_kind.h" /* ab_layer_kind, the desc and weights unions */

/* A dense array read from nested JSON arrays. */
typedef struct ab_nd {
    float *data; /* NULL = absent */
    uint32_t rank;
    uint32_t dims[4];
    size_t n;
} ab_nd;

void ab_nd_free(ab_nd *a);
/* Nested arrays of `data` in the given shape. */
json_t *ab_nd_json(const float *data, uint32_t rank, const uint32_t *dims);

#define AB_CASE_ERR 512
#define AB_CASE_GRADS 16 /* query, value, key and up to AB_LAYER_WEIGHTS (13) weights */

typedef struct ab_case {
    char name[256];
    ab_layer_kind kind;
    /* inputs as given; key.data NULL = key is value */
    ab_nd query, value, key, query_mask, value_mask, attention_mask;
    bool attention_mask_per_head;
    /* with params.rope only: (B, Tq) and (B, Tv) non-negative integers; NULL =
     * query t at t, key s at s */
    ab_nd query_positions, key_positions;
    bool rank2_query; /* a (B, Dq) query (the kind's rank2_query): tq = 1, output (B, Dv) */
    uint32_t batch, tq, tv, dq, dk, dv, heads, dout;
    vkattn_layer_call call;
    ab_nd expected_output, expected_scores;
    double atol, rtol;
    /* "dtype": "float16" / "bfloat16": check runs a layer of that type on
     * data rounded to it (VKATTN_DTYPE_F32 for "float32") */
    vkattn_dtype dtype;

    /* the layer */
    ab_layer_desc desc;
    ab_layer_weights w;
    ab_nd warr[AB_LAYER_WEIGHTS]; /* weight arrays the weights struct points into */
    bool weights_from_file; /* w's arrays came from *_weights_load: *_weights_free them */
    const char *case_path;  /* while parsing: the case file, for params.weights_file */

    /* output shapes (what the JSON report uses) */
    uint32_t out_rank, out_dims[4], scores_rank, scores_dims[4];
    size_t out_n, scores_n;

    /* gradients (case_grads.h): grad_output.data NULL = no backward asked;
     * expected_grads by index: query, value, key, then the layer's weights
     * in the order of layer_any.h's slots; data NULL = not given */
    ab_nd grad_output;
    ab_nd expected_grads[AB_CASE_GRADS];
} ab_case;

/* Reads case `index` of a file (name defaults to "case <index>"). Returns
 * false with *err = "field: what is wrong" for a malformed case; the case is
 * then still safe to ab_case_free. */
bool ab_case_parse(json_t *obj, size_t index, ab_case *c, char *err, size_t err_size);
/* The same for a case read from the file at case_path: params.weights_file
 * is relative to its folder (ab_case_parse: to the working directory). */
bool ab_case_parse_at(json_t *obj, size_t index, const char *case_path, ab_case *c, char *err,
                      size_t err_size);
void ab_case_free(ab_case *c);

/* For case_grads.c: nested arrays as the case fields read them (rank 1..4;
 * absent or null leaves *a empty), and the shape check of expected values
 * (size-1 axes ignored when squeeze_ok). */
/* Writes the printf-style message into err[size] and returns false: how every
 * parser here reports a malformed field. */
bool ab_case_fail(char *err, size_t size, const char *fmt, ...);
bool ab_nd_parse(json_t *j, const char *field, ab_nd *a, char *err, size_t err_size);
bool ab_nd_expect_shape(const ab_nd *a, const char *field, uint32_t rank, const uint32_t *dims,
                        const char *what, bool squeeze_ok, char *err, size_t err_size);
/* Reads grad_output and expected_grads (case_grads.c); called last by
 * ab_case_parse_at. */
bool ab_case_parse_grads(json_t *obj, ab_case *c, char *err, size_t err_size);

#endif
