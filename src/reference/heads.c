/* CPU reference of the head split (B, T, H*d) -> (B, H, T, d) and its inverse. */
#include "vkattn/reference.h"
#include "vkattn/reference_backward.h"

#include <string.h>

#include "core/error.h"
#include "reference/ref_internal.h"

static vkattn_result check(const char *fn, const vkattn_heads_params *p, const float *in,
                           const float *out)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "p", p)))
        return r;
    if ((r = vka_ref_require_dim(fn, "batch", p->batch)) ||
        (r = vka_ref_require_dim(fn, "seq", p->seq)) ||
        (r = vka_ref_require_dim(fn, "heads", p->heads)) ||
        (r = vka_ref_require_dim(fn, "head_dim", p->head_dim)) ||
        (r = vka_ref_require_ptr(fn, "in", in)) || (r = vka_ref_require_ptr(fn, "out", out)))
        return r;
    /* A permutation cannot run in place; partial overlap is the caller's to avoid. */
    if ((const void *)in == (const void *)out)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: in and out are the same array; the permutation cannot run in place",
                        fn);
    const uint64_t dims[4] = {p->batch, p->seq, p->heads, p->head_dim};
    return vka_ref_count(fn, "the tensor (B, T, H, d)", dims, 4, NULL);
}

/* Copies each d-long row between (B, T, H, d) and (B, H, T, d): from the first
 * layout to the second when split, the other way when merging. */
static void permute(const vkattn_heads_params *p, const float *src, float *dst, bool split)
{
    const size_t T = p->seq, H = p->heads, d = p->head_dim;
    for (size_t b = 0; b < p->batch; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                size_t btd = ((b * T + t) * H + h) * d, bhd = ((b * H + h) * T + t) * d;
                memcpy(dst + (split ? bhd : btd), src + (split ? btd : bhd), d * sizeof(float));
            }
}

vkattn_result vkattn_reference_heads_split(const vkattn_heads_params *p, const float *in,
                                           float *out)
{
    vkattn_result r = check("vkattn_reference_heads_split", p, in, out);
    if (r)
        return r;
    permute(p, in, out, true);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_heads_merge(const vkattn_heads_params *p, const float *in,
                                           float *out)
{
    vkattn_result r = check("vkattn_reference_heads_merge", p, in, out);
    if (r)
        return r;
    permute(p, in, out, false);
    return VKATTN_SUCCESS;
}

/* The backward of each permutation is the other one on the gradient. */
vkattn_result vkattn_reference_heads_split_backward(const vkattn_heads_params *p,
                                                    const float *grad_out, float *grad_in)
{
    vkattn_result r = check("vkattn_reference_heads_split_backward", p, grad_out, grad_in);
    if (r)
        return r;
    permute(p, grad_out, grad_in, false);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_heads_merge_backward(const vkattn_heads_params *p,
                                                    const float *grad_out, float *grad_in)
{
    vkattn_result r = check("vkattn_reference_heads_merge_backward", p, grad_out, grad_in);
    if (r)
        return r;
    permute(p, grad_out, grad_in, true);
    return VKATTN_SUCCESS;
}
