/* A Llama-style attention block (Hugging Face LlamaAttention, Mistral, Qwen2:
 * q_proj, k_proj, v_proj, o_proj nn.Linear) into GroupedQueryAttention's
 * Keras layout. A Linear weight is (out_features, in_features) and its
 * output features split into heads by consecutive blocks of head_dim, so the
 * Keras kernel (in, heads, head_dim) is the transpose read row-major, as for
 * nn.MultiheadAttention (torch_mha.c); o_proj (Dq, Nq*h) transposes into
 * (Nq, h, Dq). Biases (heads*h) already are Keras's (heads, h); Qwen3's
 * q_norm/k_norm and gpt-oss's sinks come with them (open_model.c). */
#include "weights/weights_internal.h"

#include <stdlib.h>

#include "core/error.h"
#include "shape/mha_shape.h"
#include "vkattn/gqa_host.h"

vkattn_result vka_weights_load_llama_gqa(vkattn_weights_file *f, const char *fn,
                                         const vka_mha_dims *d, const char *prefix,
                                         vkattn_mha_weights *out)
{
    const uint64_t q = d->qk, kv = d->kv_qk, Dq = d->query_dim;
    float *wq = NULL, *wk = NULL, *wv = NULL, *wo = NULL;
    vkattn_result r;
    if ((r = vka_weights_load_named(f, fn, prefix, "q_proj.weight", 2, q, Dq,
                                    "(num_query_heads * head_dim, query_width)", &wq)) ||
        (r = vka_weights_load_named(f, fn, prefix, "k_proj.weight", 2, kv, d->key_width,
                                    "(num_key_value_heads * head_dim, key_width)", &wk)) ||
        (r = vka_weights_load_named(f, fn, prefix, "v_proj.weight", 2, kv, d->value_width,
                                    "(num_key_value_heads * head_dim, value_width)", &wv)) ||
        (r = vka_weights_load_named(f, fn, prefix, "o_proj.weight", 2, Dq, q,
                                    "(query_width, num_query_heads * head_dim)", &wo)))
        goto done;
    if (d->use_bias) {
        if ((r = vka_weights_load_named(f, fn, prefix, "q_proj.bias", 1, q, 0,
                                        "(num_query_heads * head_dim,)", &out->query_bias)) ||
            (r = vka_weights_load_named(f, fn, prefix, "k_proj.bias", 1, kv, 0,
                                        "(num_key_value_heads * head_dim,)", &out->key_bias)) ||
            (r = vka_weights_load_named(f, fn, prefix, "v_proj.bias", 1, kv, 0,
                                        "(num_key_value_heads * head_dim,)", &out->value_bias)))
            goto done;
        /* Qwen2 has q/k/v biases but none on o_proj: that is a zero bias */
        if (vka_weights_has(f, prefix, "o_proj.bias"))
            r = vka_weights_load_named(f, fn, prefix, "o_proj.bias", 1, Dq, 0, "(query_width,)",
                                       &out->output_bias);
        else if (!(out->output_bias = calloc(Dq, sizeof(float))))
            r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
        if (r)
            goto done;
    }
    if ((r = vka_weights_load_open_model(f, fn, d, prefix, out)))
        goto done;
    out->query_kernel = vka_weights_transposed(wq, 0, q, Dq);
    out->key_kernel = vka_weights_transposed(wk, 0, kv, d->key_width);
    out->value_kernel = vka_weights_transposed(wv, 0, kv, d->value_width);
    out->output_kernel = vka_weights_transposed(wo, 0, Dq, q);
    if (!out->query_kernel || !out->key_kernel || !out->value_kernel || !out->output_kernel)
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
done:
    free(wq), free(wk), free(wv), free(wo);
    return r;
}
