/* The readers of case_multihead.h. */
#include "case_multihead.h"

#include <stdio.h>

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

/* The weight keys of MultiHeadAttention and GroupedQueryAttention: the biases
 * only with use_bias, the gate's only with use_gate (Keras builds no others),
 * the norms with qk_norm, the sinks with use_sinks. */
static bool weights_known(json_t *w, const char *layer, bool use_bias, bool use_gate,
                          bool qk_norm, bool sinks, char *err, size_t err_size)
{
    char what[160];
    snprintf(what, sizeof what,
             "the weights of this %s (biases with use_bias, gate_* with use_gate, "
             "query_norm/key_norm with qk_norm, sinks with use_sinks)",
             layer);
    return AB_KNOWN(w, "params.weights.", what, "query_kernel", "key_kernel", "value_kernel",
                    "output_kernel", use_bias ? "query_bias" : NULL, use_bias ? "key_bias" : NULL,
                    use_bias ? "value_bias" : NULL, use_bias ? "output_bias" : NULL,
                    use_gate ? "gate_kernel" : NULL, use_gate && use_bias ? "gate_bias" : NULL,
                    qk_norm ? "query_norm" : NULL, qk_norm ? "key_norm" : NULL,
                    sinks ? "sinks" : NULL);
}

/* params.rope.<key> (def when absent), a number above `above`. */
static bool rope_number(json_t *rope, const char *key, double def, double above, float *out,
                        char *err, size_t err_size)
{
    char field[64];
    snprintf(field, sizeof field, "params.rope.%s", key);
    double v = 0.0;
    if (!ab_case_number(rope, key, def, &v, field, err, err_size))
        return false;
    if (!(v > above))
        return FAIL("%s: %g; must be > %g", field, v, above);
    *out = (float)v;
    return true;
}

bool ab_open_model_parse(json_t *params, const char *head_name, uint32_t head_width,
                         ab_open_model *o, char *err, size_t err_size)
{
    *o = (ab_open_model){0};
    double v;
    json_t *norm = json_object_get(params, "qk_norm");
    if (norm && !json_is_null(norm)) {
        if (!json_is_object(norm))
            return FAIL("params.qk_norm: must be an object {\"epsilon\": e} or null");
        if (!AB_KNOWN(norm, "params.qk_norm.", "qk_norm's keys", "epsilon") ||
            !ab_case_number(norm, "epsilon", 1e-6, &v, "params.qk_norm.epsilon", err, err_size))
            return false;
        if (!(v > 0.0 && v <= 1.0))
            return FAIL("params.qk_norm.epsilon: %g; must be in (0, 1]", v);
        o->use_qk_norm = true;
        o->qk_norm_epsilon = (float)v;
    }
    json_t *rope = json_object_get(params, "rope");
    if (rope && !json_is_null(rope)) {
        if (!json_is_object(rope))
            return FAIL("params.rope: must be an object (max_wavelength, scaling_factor, "
                        "rotary_dim, layout) or null");
        if (!AB_KNOWN(rope, "params.rope.", "rope's keys", "max_wavelength", "scaling_factor",
                      "rotary_dim", "layout"))
            return false;
        o->use_rope = true;
        if (!rope_number(rope, "max_wavelength", 10000.0, 1.0, &o->rope.max_wavelength, err,
                         err_size) ||
            !rope_number(rope, "scaling_factor", 1.0, 0.0, &o->rope.scaling_factor, err,
                         err_size))
            return false;
        if (!ab_case_uint(rope, "rotary_dim", false, head_width, 2, &o->rope.rotary_dim,
                          "params.rope.rotary_dim", err, err_size))
            return false;
        if (o->rope.rotary_dim % 2 || o->rope.rotary_dim > head_width)
            return FAIL("params.rope.rotary_dim: %u; must be even and <= params.%s (%u)",
                        o->rope.rotary_dim, head_name, head_width);
        static const char *const layouts[] = {"half", "interleaved"}; /* as vkattn_rope_layout */
        uint32_t layout = 0;
        if (!ab_case_choice(rope, "layout", layouts, 2, &layout,
                            "params.rope.layout: must be \"half\" or \"interleaved\"", err,
                            err_size))
            return false;
        o->rope.layout = (vkattn_rope_layout)layout;
    }
    if (!ab_case_number(params, "softcap", 0.0, &v, "params.softcap", err, err_size))
        return false;
    json_t *cap = json_object_get(params, "softcap");
    if (cap && !json_is_null(cap) && !(v > 0.0)) /* null or absent = off */
        return FAIL("params.softcap: %g; must be > 0 (null = off)", v);
    o->softcap = (float)v;
    return ab_case_bool(params, "use_sinks", false, &o->use_sinks, err, err_size);
}

/* params.weights' query_norm, key_norm (head width,) and sinks (heads,) into
 * slots 10..12, as the desc asks. */
static bool open_model_weights(ab_case *c, json_t *w, const ab_open_model *o, uint32_t head,
                               uint32_t heads, vkattn_mha_weights *m, char *err,
                               size_t err_size)
{
    /* required, as every weight of a case: a forgotten one would run as a new layer's */
    static const char *const keys[3] = {"query_norm", "key_norm", "sinks"};
    for (int i = 0; i < 3; i++)
        if ((i < 2 ? o->use_qk_norm : o->use_sinks) && !json_object_get(w, keys[i]))
            return FAIL("params.weights.%s: required with %s (a new layer's is all %s)", keys[i],
                        i < 2 ? "qk_norm" : "use_sinks", i < 2 ? "ones" : "zeros");
    if (o->use_qk_norm &&
        (!(m->query_norm = ab_case_weight(c, w, "query_norm", 10, 1, &head, "(head width,)", false,
                                          err, err_size)) ||
         !(m->key_norm = ab_case_weight(c, w, "key_norm", 11, 1, &head, "(head width,)", false, err,
                                        err_size))))
        return false;
    return !o->use_sinks || (m->sinks = ab_case_weight(c, w, "sinks", 12, 1, &heads, "(heads,)",
                                                       false, err, err_size)) != NULL;
}

ab_weights_source ab_multihead_weights(ab_case *c, json_t *params, const char *layer,
                                       bool use_bias, bool use_gate, const ab_open_model *o,
                                       uint32_t head, uint32_t heads, vkattn_mha_weights *m,
                                       float *dropout, json_t **w, char *err, size_t err_size)
{
    ab_weights_source src = ab_case_weights_object(
        c, params, use_bias ? "the kernels and biases" : "the kernels", dropout, w, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src;
    if (!weights_known(*w, layer, use_bias, use_gate, o->use_qk_norm, o->use_sinks, err,
                       err_size) ||
        !open_model_weights(c, *w, o, head, heads, m, err, err_size))
        return AB_WEIGHTS_ERROR;
    return AB_WEIGHTS_INLINE;
}
