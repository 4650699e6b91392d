/* CPU reference of the head split (B, T, H*d) -> (B, H, T, d) and its inverse. */
#include "vkattn/reference.h"
#include "vkattn/reference_backward.h"

#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"

static vkattn_result check(const char *fn, const vkattn_heads_params *p, const void *in,
                           const void *out)
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

/* Copies each element between (B, T, H, d) and (B, H, T, d): from the first
 * layout to the second when split, the other way when merging. An f16 out
 * of an f32 in rounds once; the other combinations are exact. */
static void permute(const vkattn_heads_params *p, const vkattn_io_dtypes *ty, const void *src,
                    void *dst, bool split)
{
    const size_t T = p->seq, H = p->heads, d = p->head_dim;
    for (size_t b = 0; b < p->batch; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                size_t btd = ((b * T + t) * H + h) * d, bhd = ((b * H + h) * T + t) * d;
                size_t si = split ? btd : bhd, di = split ? bhd : btd;
                for (size_t c = 0; c < d; c++)
                    vka_ref_store(dst, ty->out, di + c, vka_ref_load(src, ty->in, si + c));
            }
}

static vkattn_result heads_typed(const char *fn, const vkattn_heads_params *p,
                                 const vkattn_io_dtypes *types, const void *in, void *out,
                                 bool split)
{
    const vkattn_io_dtypes ty = types ? *types : (vkattn_io_dtypes){0};
    vkattn_result r;
    if ((r = vka_ref_check_dtype(fn, "in", ty.in)) ||
        (r = vka_ref_check_dtype(fn, "out", ty.out)) || (r = check(fn, p, in, out)))
        return r;
    permute(p, &ty, in, out, split);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_heads_split(const vkattn_heads_params *p,
                                                 const vkattn_io_dtypes *types, const void *in,
                                                 void *out)
{
    return heads_typed(__func__, p, types, in, out, true);
}

vkattn_result vkattn_reference_heads_merge(const vkattn_heads_params *p,
                                                 const vkattn_io_dtypes *types, const void *in,
                                                 void *out)
{
    return heads_typed(__func__, p, types, in, out, false);
}
