/* Attention-mask shapes for the layer GPU tests: each form broadcasts to
 * (B, Tq, Tv), or (B, H, Tq, Tv) for MultiHeadAttention, as
 * vkattn_layer_io.attention_mask allows. A form is written one letter per
 * axis: B, H, Q (= Tq), V (= Tv) or 1; "QV" is one (Tq, Tv) mask for every
 * batch row and head, "Q1" a key axis of 1. Header-only. */
#ifndef VKATTN_TEST_MASK_FORMS_H
#define VKATTN_TEST_MASK_FORMS_H

#include "harness.h"

#include <string.h>

/* Every form a single-head layer takes (rank <= 3); the last is the full mask. */
static const char *const lt_mask_forms_single[] = {"QV", "1V", "B1V", "Q1", "V",
                                                   "BQ1", "1QV", "B11", "1", "BQV"};
/* The forms only MultiHeadAttention takes (rank 4), besides the ones above. */
static const char *const lt_mask_forms_multi[] = {"B1QV", "1HQV", "BH1V", "1HQ1", "BHQV", "111V"};

typedef struct lt_mask_shape {
    uint32_t rank;
    uint32_t dims[4];
} lt_mask_shape;

static inline lt_mask_shape lt_mask_form(const char *form, uint32_t B, uint32_t H, uint32_t tq,
                                         uint32_t tv)
{
    lt_mask_shape s = {.rank = (uint32_t)strlen(form)};
    for (uint32_t a = 0; a < s.rank; a++)
        s.dims[a] = form[a] == 'B' ? B : form[a] == 'H' ? H : form[a] == 'Q' ? tq
                  : form[a] == 'V' ? tv : 1;
    return s;
}

static inline size_t lt_mask_count(const lt_mask_shape *s)
{
    size_t n = 1;
    for (uint32_t a = 0; a < s->rank; a++)
        n *= s->dims[a];
    return n;
}

/* A device tensor of the mask's own rank and dims, holding `data`. */
static inline vkattn_tensor *lt_mask_tensor(vkattn_context *ctx, const lt_mask_shape *s,
                                            const float *data)
{
    vkattn_tensor_desc desc = {.rank = s->rank};
    memcpy(desc.dims, s->dims, sizeof s->dims);
    vkattn_tensor *t = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &t));
    TH_OK(ctx, vkattn_tensor_upload(t, data, 0, lt_mask_count(s)));
    return t;
}

/* A random 0/1 mask of shape s; its last stored row (a whole query row, or
 * for a key axis of 1 the last query) is 0 half the time, so fully masked rows
 * come up. */
static inline float *lt_mask_random(const lt_mask_shape *s)
{
    const size_t n = lt_mask_count(s), cols = s->dims[s->rank - 1];
    float *m = tu_floats(n);
    tu_fill_mask(m, n, 0.7f);
    if (tu_rand_range(0, 1) == 0)
        memset(m + (n - cols), 0, cols * sizeof(float));
    return m;
}

#endif /* VKATTN_TEST_MASK_FORMS_H */
