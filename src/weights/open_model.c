/* The open-model weights of a Hugging Face attention block, read beside its
 * projections (llama_gqa.c, torch_mha.c): Qwen3's per-head RMSNorm scales
 * q_norm.weight and k_norm.weight (head_dim,), and gpt-oss's sinks
 * (num_attention_heads,), one logit per query head. Only what the desc asks
 * for is read (use_qk_norm, use_sinks), as the biases with use_bias. OLMo 2's
 * q_norm spans the whole projection (heads * head_dim,), a different
 * normalization: its shape is refused with what was expected. */
#include "weights/weights_internal.h"

#include "shape/mha_shape.h"

vkattn_result vka_weights_load_open_model(vkattn_weights_file *f, const char *fn,
                                          const vka_mha_dims *d, const char *prefix,
                                          vkattn_mha_weights *out)
{
    vkattn_result r = VKATTN_SUCCESS;
    if (d->use_qk_norm &&
        ((r = vka_weights_load_named(f, fn, prefix, "q_norm.weight", 1, d->key_dim, 0,
                                     "(head_dim,) (a per-head RMSNorm, as Qwen3's)",
                                     &out->query_norm)) ||
         (r = vka_weights_load_named(f, fn, prefix, "k_norm.weight", 1, d->key_dim, 0,
                                     "(head_dim,) (a per-head RMSNorm, as Qwen3's)",
                                     &out->key_norm))))
        return r;
    if (d->use_sinks)
        r = vka_weights_load_named(f, fn, prefix, "sinks", 1, d->heads, 0,
                                   "(num_attention_heads,) (one logit per query head, as "
                                   "gpt-oss's)",
                                   &out->sinks);
    return r;
}
