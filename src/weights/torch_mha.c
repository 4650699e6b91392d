/* PyTorch nn.MultiheadAttention's state dict into Keras layout. PyTorch keeps
 * Linear weights (out, in) and splits E = H * head_dim into heads by
 * consecutive blocks of the output features, so Keras's (in, H, head_dim)
 * kernel is the transpose read row-major: kernel[i][h][d] = W[h*hd + d][i].
 * The output projection (E, E) transposes the same way into (H, hd, E). */
#include "weights/weights_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "shape/mha_shape.h"
#include "vkattn/mha_host.h"

#define INVALID VKATTN_ERROR_INVALID_ARGUMENT

float *vka_weights_transposed(const float *src, uint64_t r0, uint64_t rows, uint64_t cols)
{
    float *dst = malloc(rows * cols * sizeof *dst);
    if (!dst)
        return NULL;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++)
            dst[c * rows + r] = src[(r0 + r) * cols + c];
    return dst;
}

static float *copy_of(const float *src, uint64_t n)
{
    float *dst = malloc(n * sizeof *dst);
    if (dst)
        memcpy(dst, src, n * sizeof *dst);
    return dst;
}

vkattn_result vka_weights_load_named(vkattn_weights_file *f, const char *fn, const char *prefix,
                                     const char *name, uint32_t rank, uint64_t d0, uint64_t d1,
                                     const char *axes, float **out)
{
    char full[1024];
    uint64_t dims[2] = {d0, d1};
    if (!vka_weights_full_name(fn, prefix, name, full, sizeof full))
        return INVALID;
    return vka_weights_load_exact(f, fn, full, rank, dims, axes, out);
}

bool vka_weights_has(const vkattn_weights_file *f, const char *prefix, const char *name)
{
    char full[1024];
    int n = snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", name);
    return n > 0 && (size_t)n < sizeof full && vka_weights_lookup(f, full) != NULL;
}

/* The desc must be one nn.MultiheadAttention can be. */
static vkattn_result check_dims(const char *fn, const vka_mha_dims *d)
{
    uint32_t E = d->query_dim;
    if ((uint64_t)d->heads * d->key_dim != E || d->value_dim != d->key_dim || d->output_dim != E)
        return vka_fail(NULL, INVALID,
                        "%s: PyTorch names need an nn.MultiheadAttention shape: num_heads * "
                        "key_dim = query_width = output_dim = E and value_dim = key_dim; got "
                        "num_heads %u, key_dim %u, value_dim %u, query_width %u, output_dim %u",
                        fn, d->heads, d->key_dim, d->value_dim, E, d->output_dim);
    return VKATTN_SUCCESS;
}

vkattn_result vka_weights_load_torch_mha(vkattn_weights_file *f, const char *fn,
                                         const vkattn_mha_desc *desc, const char *prefix,
                                         vkattn_mha_weights *out)
{
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(NULL, fn, desc, &d);
    if (r || (r = check_dims(fn, &d)))
        return r;
    if (vka_weights_has(f, prefix, "bias_k") || vka_weights_has(f, prefix, "bias_v"))
        return vka_fail(NULL, INVALID, "%s: %s: bias_k / bias_v (add_bias_kv=True) have no "
                        "Keras equivalent", fn, f->label);
    const uint64_t E = d.query_dim, kd = d.key_width, vd = d.value_width;
    float *in = NULL, *wq = NULL, *wk = NULL, *wv = NULL, *wo = NULL, *bin = NULL, *bo = NULL;
    if (vka_weights_has(f, prefix, "in_proj_weight")) {
        if (kd != E || vd != E) {
            r = vka_fail(NULL, INVALID, "%s: %s: in_proj_weight packs query, key and value of "
                         "width E = %llu, but key_width is %llu and value_width %llu (PyTorch "
                         "writes q/k/v_proj_weight when kdim or vdim differ)", fn, f->label,
                         (unsigned long long)E, (unsigned long long)kd, (unsigned long long)vd);
            goto done;
        }
        if ((r = vka_weights_load_named(f, fn, prefix, "in_proj_weight", 2, 3 * E, E, "(3E, E)",
                                        &in)))
            goto done;
    } else if ((r = vka_weights_load_named(f, fn, prefix, "q_proj_weight", 2, E, E,
                                           "(E, E) (or in_proj_weight (3E, E))", &wq)) ||
               (r = vka_weights_load_named(f, fn, prefix, "k_proj_weight", 2, E, kd, "(E, kdim)",
                                           &wk)) ||
               (r = vka_weights_load_named(f, fn, prefix, "v_proj_weight", 2, E, vd, "(E, vdim)",
                                           &wv))) {
        goto done;
    }
    if ((r = vka_weights_load_named(f, fn, prefix, "out_proj.weight", 2, E, E, "(E, E)", &wo)))
        goto done;
    if (d.use_bias &&
        ((r = vka_weights_load_named(f, fn, prefix, "in_proj_bias", 1, 3 * E, 0, "(3E,)", &bin)) ||
         (r = vka_weights_load_named(f, fn, prefix, "out_proj.bias", 1, E, 0, "(E,)", &bo))))
        goto done;
    /* a module that adds QK-norm or sinks to nn.MultiheadAttention names them
     * as Hugging Face does */
    if ((r = vka_weights_load_open_model(f, fn, &d, prefix, out)))
        goto done;
    /* (out, in) -> (in, H, hd) */
    out->query_kernel =
        in ? vka_weights_transposed(in, 0, E, E) : vka_weights_transposed(wq, 0, E, E);
    out->key_kernel =
        in ? vka_weights_transposed(in, E, E, E) : vka_weights_transposed(wk, 0, E, kd);
    out->value_kernel =
        in ? vka_weights_transposed(in, 2 * E, E, E) : vka_weights_transposed(wv, 0, E, vd);
    out->output_kernel = vka_weights_transposed(wo, 0, E, E);
    bool ok = out->query_kernel && out->key_kernel && out->value_kernel && out->output_kernel;
    if (d.use_bias) {
        out->query_bias = copy_of(bin, E);
        out->key_bias = copy_of(bin + E, E);
        out->value_bias = copy_of(bin + 2 * E, E);
        out->output_bias = bo;
        bo = NULL;
        ok = ok && out->query_bias && out->key_bias && out->value_bias;
    }
    if (!ok)
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
done:
    free(in), free(wq), free(wk), free(wv), free(wo), free(bin), free(bo);
    return r;
}
