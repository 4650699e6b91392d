/* The Keras names and shapes of each layer's weights (docs/LAYERS.md,
 * "Weights from safetensors files"), read with a prefix and written back:
 * one table per layer drives both directions, so load and save cannot
 * disagree on a name or a shape. */
#include "weights/weights_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "shape/layer_shape.h"
#include "shape/mha_shape.h"

#define INVALID VKATTN_ERROR_INVALID_ARGUMENT
#define MAX_NAME 1024
/* The most weights of one layer: MultiHeadAttention's 5 dense sublayers
 * (query, key, gate, value, output), kernel and bias each. */
#define MAX_SLOTS 10

bool vka_weights_full_name(const char *fn, const char *prefix, const char *name, char *buf,
                           size_t size)
{
    int n = snprintf(buf, size, "%s%s", prefix ? prefix : "", name);
    if (n < 0 || (size_t)n >= size) {
        vka_fail(NULL, INVALID, "%s: prefix + '%s' is longer than %zu bytes", fn, name, size - 1);
        return false;
    }
    return true;
}

vkattn_result vka_weights_load_exact(vkattn_weights_file *f, const char *fn, const char *full,
                                     uint32_t rank, const uint64_t *dims, const char *axes,
                                     float **out)
{
    char want[96], got[160];
    vka_weights_shape_text(rank, dims, want, sizeof want);
    const vkattn_weights_tensor_info *t = vka_weights_lookup(f, full);
    if (!t)
        return vka_fail(NULL, INVALID, "%s: %s has no tensor '%s' (expected %s %s)", fn, f->label,
                        full, want, axes);
    bool same = t->rank == rank;
    for (uint32_t i = 0; same && i < rank; i++)
        same = t->dims[i] == dims[i];
    if (!same) {
        vka_weights_shape_text(t->rank, t->dims, got, sizeof got);
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has shape %s; expected %s %s", fn,
                        f->label, full, got, want, axes);
    }
    if (!(*out = malloc(t->count ? t->count * sizeof **out : 1)))
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    vkattn_result r = vka_weights_read(f, fn, t, *out);
    if (r) {
        free(*out);
        *out = NULL;
    }
    return r;
}

vkattn_result vka_weights_load_slot(vkattn_weights_file *f, const char *fn, const char *prefix,
                                    const vka_weight_slot *s)
{
    char full[MAX_NAME];
    if (!vka_weights_full_name(fn, prefix, s->name, full, sizeof full))
        return INVALID;
    if (!s->scalar)
        return vka_weights_load_exact(f, fn, full, s->rank, s->dims, s->axes, s->dst);
    /* a Keras scalar variable has shape (); (1,) is accepted too */
    const vkattn_weights_tensor_info *t = vka_weights_lookup(f, full);
    if (!t)
        return vka_fail(NULL, INVALID, "%s: %s has no tensor '%s' (expected a scalar, shape ())",
                        fn, f->label, full);
    if (t->count != 1) {
        char got[160];
        vka_weights_shape_text(t->rank, t->dims, got, sizeof got);
        return vka_fail(NULL, INVALID, "%s: %s: tensor '%s' has shape %s; expected a scalar, "
                        "shape () or (1,)", fn, f->label, full, got);
    }
    return vka_weights_read(f, fn, t, s->dst_value);
}

static vkattn_result load_slots(vkattn_weights_file *f, const char *fn,
                                const vkattn_weights_load_desc *load, const vka_weight_slot *s,
                                size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vkattn_result r = vka_weights_load_slot(f, fn, load ? load->prefix : NULL, &s[i]);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

static vkattn_result save_slots(const char *fn, const char *path, const char *prefix,
                                const char *layer, const vka_weight_slot *s, size_t n)
{
    vkattn_weights_tensor t[MAX_SLOTS];
    char names[MAX_SLOTS][MAX_NAME];
    if (n > MAX_SLOTS) /* a programming error of this file's tables */
        return vka_fail(NULL, INVALID, "%s: %zu weights; at most %d", fn, n, MAX_SLOTS);
    for (size_t i = 0; i < n; i++) {
        if (!vka_weights_full_name(fn, prefix, s[i].name, names[i], sizeof names[i]))
            return INVALID;
        const float *data = s[i].scalar ? s[i].dst_value : *s[i].dst;
        if (!data)
            return vka_fail(NULL, INVALID, "%s: the weight for '%s' is NULL", fn, s[i].name);
        t[i] = (vkattn_weights_tensor){.name = names[i], .rank = s[i].scalar ? 0 : s[i].rank,
                                       .data = data};
        memcpy(t[i].dims, s[i].dims, sizeof s[i].dims);
    }
    const char *keys[] = {"format", "layer"}, *values[] = {"vkattn", layer};
    return vka_weights_save(fn, path, t, (uint32_t)n, keys, values, 2);
}

/* ---------------------------------------------------------------- MultiHeadAttention */

/* The axis words of the messages: MultiHeadAttention's or GroupedQueryAttention's. */
typedef struct mha_axes {
    const char *query, *key, *value, *output, *query_bias, *key_bias, *value_bias, *output_bias;
    const char *gate, *gate_bias;
} mha_axes;

static const mha_axes mha_words = {
    "(query_width, num_heads, key_dim)", "(key_width, num_heads, key_dim)",
    "(value_width, num_heads, value_dim)", "(num_heads, value_dim, output_dim)",
    "(num_heads, key_dim)", "(num_heads, key_dim)", "(num_heads, value_dim)", "(output_dim,)",
    "(query_width, num_heads, value_dim)", "(num_heads, value_dim)",
};
static const mha_axes gqa_words = {
    "(query_width, num_query_heads, head_dim)", "(key_width, num_key_value_heads, head_dim)",
    "(value_width, num_key_value_heads, head_dim)", "(num_query_heads, head_dim, query_width)",
    "(num_query_heads, head_dim)", "(num_key_value_heads, head_dim)",
    "(num_key_value_heads, head_dim)", "(query_width,)",
    "(query_width, num_query_heads, head_dim)", "(num_query_heads, head_dim)",
};

/* Keras MultiHeadAttention's EinsumDense sublayers: query, key, [gate,]
 * value, attention_output (Keras's order), each with kernel and bias;
 * GroupedQueryAttention's have the same names, key and value with its
 * kv_heads heads. */
static size_t mha_slots(const vka_mha_dims *d, const mha_axes *a, vkattn_mha_weights *w,
                        vka_weight_slot *s)
{
    size_t n = 0;
    s[n++] = (vka_weight_slot){"query/kernel", 3, {d->query_dim, d->heads, d->key_dim}, a->query,
                               false, &w->query_kernel, NULL};
    s[n++] = (vka_weight_slot){"key/kernel", 3, {d->key_width, d->kv_heads, d->key_dim}, a->key,
                               false, &w->key_kernel, NULL};
    if (d->use_gate)
        s[n++] = (vka_weight_slot){"gate/kernel", 3, {d->query_dim, d->heads, d->value_dim},
                                   a->gate, false, &w->gate_kernel, NULL};
    s[n++] = (vka_weight_slot){"value/kernel", 3, {d->value_width, d->kv_heads, d->value_dim},
                               a->value, false, &w->value_kernel, NULL};
    s[n++] = (vka_weight_slot){"attention_output/kernel", 3,
                               {d->heads, d->value_dim, d->output_dim}, a->output, false,
                               &w->output_kernel, NULL};
    if (!d->use_bias)
        return n;
    s[n++] = (vka_weight_slot){"query/bias", 2, {d->heads, d->key_dim}, a->query_bias, false,
                               &w->query_bias, NULL};
    s[n++] = (vka_weight_slot){"key/bias", 2, {d->kv_heads, d->key_dim}, a->key_bias, false,
                               &w->key_bias, NULL};
    if (d->use_gate)
        s[n++] = (vka_weight_slot){"gate/bias", 2, {d->heads, d->value_dim}, a->gate_bias, false,
                                   &w->gate_bias, NULL};
    s[n++] = (vka_weight_slot){"value/bias", 2, {d->kv_heads, d->value_dim}, a->value_bias,
                               false, &w->value_bias, NULL};
    s[n++] = (vka_weight_slot){"attention_output/bias", 1, {d->output_dim}, a->output_bias,
                               false, &w->output_bias, NULL};
    return n;
}

/* PyTorch's nn.MultiheadAttention and the Llama family have no separate gate
 * projection (Qwen3-Next packs its gate into q_proj, interleaved per head: a
 * different layout, not Keras's gate sublayer), so there is no name to read
 * Keras's gate from: refused rather than guessed. */
static vkattn_result no_gate_names(const char *fn, vkattn_weights_names names)
{
    return vka_fail(NULL, INVALID,
                    "%s: desc->use_gate is set but load->names is %s, which has no gate "
                    "projection; load a gated layer with VKATTN_WEIGHTS_NAMES_KERAS "
                    "(gate/kernel, gate/bias)",
                    fn,
                    names == VKATTN_WEIGHTS_NAMES_TORCH   ? "VKATTN_WEIGHTS_NAMES_TORCH"
                    : names == VKATTN_WEIGHTS_NAMES_LLAMA ? "VKATTN_WEIGHTS_NAMES_LLAMA"
                                                          : "not KERAS");
}

void vkattn_mha_weights_free(vkattn_mha_weights *w)
{
    if (!w)
        return;
    float *all[] = {w->query_kernel, w->query_bias, w->key_kernel,    w->key_bias,
                    w->value_kernel, w->value_bias, w->output_kernel, w->output_bias,
                    w->gate_kernel,  w->gate_bias};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    memset(w, 0, sizeof *w);
}

vkattn_result vkattn_mha_weights_load(vkattn_weights_file *f, const vkattn_mha_desc *desc,
                                      const vkattn_weights_load_desc *load,
                                      vkattn_mha_weights *out)
{
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "out" : "file");
    memset(out, 0, sizeof *out);
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(NULL, __func__, desc, &d);
    if (r)
        return r;
    vkattn_weights_names names = load ? load->names : VKATTN_WEIGHTS_NAMES_KERAS;
    if (names != VKATTN_WEIGHTS_NAMES_KERAS && d.use_gate) {
        r = no_gate_names(__func__, names);
    } else if (names == VKATTN_WEIGHTS_NAMES_TORCH) {
        r = vka_weights_load_torch_mha(f, __func__, desc, load->prefix, out);
    } else if (names == VKATTN_WEIGHTS_NAMES_KERAS) {
        vka_weight_slot s[MAX_SLOTS];
        r = load_slots(f, __func__, load, s, mha_slots(&d, &mha_words, out, s));
    } else {
        r = vka_fail(NULL, INVALID, "%s: load->names is %d; must be VKATTN_WEIGHTS_NAMES_KERAS "
                     "or VKATTN_WEIGHTS_NAMES_TORCH", __func__, (int)names);
    }
    if (r)
        vkattn_mha_weights_free(out);
    return r;
}

vkattn_result vkattn_mha_weights_save(const char *path, const vkattn_mha_desc *desc,
                                      const vkattn_mha_weights *w, const char *prefix)
{
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", __func__);
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(NULL, __func__, desc, &d);
    if (r)
        return r;
    vkattn_mha_weights copy = *w; /* the slots point at its members; nothing is written */
    vka_weight_slot s[MAX_SLOTS];
    return save_slots(__func__, path, prefix, "MultiHeadAttention", s,
                      mha_slots(&d, &mha_words, &copy, s));
}

/* ---------------------------------------------------------------- GroupedQueryAttention */

void vkattn_gqa_weights_free(vkattn_gqa_weights *w)
{
    vkattn_mha_weights_free(w);
}

vkattn_result vkattn_gqa_weights_load(vkattn_weights_file *f, const vkattn_gqa_desc *desc,
                                      const vkattn_weights_load_desc *load,
                                      vkattn_gqa_weights *out)
{
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "out" : "file");
    memset(out, 0, sizeof *out);
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(NULL, __func__, desc, &d);
    if (r)
        return r;
    vkattn_weights_names names = load ? load->names : VKATTN_WEIGHTS_NAMES_KERAS;
    if (names != VKATTN_WEIGHTS_NAMES_KERAS && d.use_gate) {
        r = no_gate_names(__func__, names);
    } else if (names == VKATTN_WEIGHTS_NAMES_LLAMA) {
        r = vka_weights_load_llama_gqa(f, __func__, &d, load->prefix, out);
    } else if (names == VKATTN_WEIGHTS_NAMES_KERAS) {
        vka_weight_slot s[MAX_SLOTS];
        r = load_slots(f, __func__, load, s, mha_slots(&d, &gqa_words, out, s));
    } else {
        r = vka_fail(NULL, INVALID, "%s: load->names is %d; must be VKATTN_WEIGHTS_NAMES_KERAS "
                     "or VKATTN_WEIGHTS_NAMES_LLAMA (PyTorch nn.MultiheadAttention names are "
                     "for MultiHeadAttention)", __func__, (int)names);
    }
    if (r)
        vkattn_gqa_weights_free(out);
    return r;
}

vkattn_result vkattn_gqa_weights_save(const char *path, const vkattn_gqa_desc *desc,
                                      const vkattn_gqa_weights *w, const char *prefix)
{
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", __func__);
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(NULL, __func__, desc, &d);
    if (r)
        return r;
    vkattn_gqa_weights copy = *w; /* the slots point at its members; nothing is written */
    vka_weight_slot s[MAX_SLOTS];
    return save_slots(__func__, path, prefix, "GroupedQueryAttention", s,
                      mha_slots(&d, &gqa_words, &copy, s));
}

/* ---------------------------------------------------------------- the single-head layers */

/* keras.layers.Attention: `scale` with use_scale, `concat_score_weight` in
 * concat mode, both shape (). */
static size_t attention_slots(const vkattn_attention_desc *d, vkattn_attention_weights *w,
                              vka_weight_slot *s)
{
    size_t n = 0;
    if (d->use_scale)
        s[n++] = (vka_weight_slot){.name = "scale", .scalar = true, .dst_value = &w->scale};
    if (d->score_mode == VKATTN_SCORE_CONCAT)
        s[n++] = (vka_weight_slot){.name = "concat_score_weight", .scalar = true,
                                   .dst_value = &w->concat_score_weight};
    return n;
}

vkattn_result vkattn_attention_weights_load(vkattn_weights_file *f,
                                            const vkattn_attention_desc *desc,
                                            const vkattn_weights_load_desc *load,
                                            vkattn_attention_weights *out)
{
    vka_layer_widths lw;
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "out" : "file");
    vkattn_attention_weights w = {1.0f, 1.0f};
    vka_weight_slot s[2];
    vkattn_result r = vka_attention_check_desc(NULL, __func__, desc, &lw);
    if (!r && load && load->names != VKATTN_WEIGHTS_NAMES_KERAS)
        r = vka_fail(NULL, INVALID, "%s: load->names must be VKATTN_WEIGHTS_NAMES_KERAS: "
                     "PyTorch names exist for MultiHeadAttention only", __func__);
    if (!r)
        r = load_slots(f, __func__, load, s, attention_slots(desc, &w, s));
    *out = r ? (vkattn_attention_weights){1.0f, 1.0f} : w;
    return r;
}

vkattn_result vkattn_attention_weights_save(const char *path, const vkattn_attention_desc *desc,
                                            const vkattn_attention_weights *w, const char *prefix)
{
    vka_layer_widths lw;
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", __func__);
    vkattn_result r = vka_attention_check_desc(NULL, __func__, desc, &lw);
    if (r)
        return r;
    vkattn_attention_weights copy = *w;
    vka_weight_slot s[2];
    return save_slots(__func__, path, prefix, "Attention", s, attention_slots(desc, &copy, s));
}

/* keras.layers.AdditiveAttention: `scale` (query_width,) with use_scale. */
static size_t additive_slots(const vkattn_additive_attention_desc *d, const vka_layer_widths *lw,
                             vkattn_additive_attention_weights *w, vka_weight_slot *s)
{
    if (d->no_scale)
        return 0;
    s[0] = (vka_weight_slot){"scale", 1, {lw->dq}, "(query_width,)", false, &w->scale, NULL};
    return 1;
}

void vkattn_additive_attention_weights_free(vkattn_additive_attention_weights *w)
{
    if (!w)
        return;
    free(w->scale);
    w->scale = NULL;
}

vkattn_result vkattn_additive_attention_weights_load(vkattn_weights_file *f,
                                                     const vkattn_additive_attention_desc *desc,
                                                     const vkattn_weights_load_desc *load,
                                                     vkattn_additive_attention_weights *out)
{
    vka_layer_widths lw;
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "out" : "file");
    memset(out, 0, sizeof *out);
    vka_weight_slot s[1];
    vkattn_result r = vka_additive_attention_check_desc(NULL, __func__, desc, &lw);
    if (!r && load && load->names != VKATTN_WEIGHTS_NAMES_KERAS)
        r = vka_fail(NULL, INVALID, "%s: load->names must be VKATTN_WEIGHTS_NAMES_KERAS: "
                     "PyTorch names exist for MultiHeadAttention only", __func__);
    if (!r)
        r = load_slots(f, __func__, load, s, additive_slots(desc, &lw, out, s));
    if (r)
        vkattn_additive_attention_weights_free(out);
    return r;
}

vkattn_result vkattn_additive_attention_weights_save(const char *path,
                                                     const vkattn_additive_attention_desc *desc,
                                                     const vkattn_additive_attention_weights *w,
                                                     const char *prefix)
{
    vka_layer_widths lw;
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", __func__);
    vkattn_result r = vka_additive_attention_check_desc(NULL, __func__, desc, &lw);
    if (r)
        return r;
    vkattn_additive_attention_weights copy = *w;
    vka_weight_slot s[1];
    return save_slots(__func__, path, prefix, "AdditiveAttention", s,
                      additive_slots(desc, &lw, &copy, s));
}

/* BahdanauAttention (vkattn's learned-projection layer; Keras has no such
 * class, so these are the names of its vkattn_bahdanau_weights fields). */
static size_t bahdanau_slots(const vka_layer_widths *lw, vkattn_bahdanau_weights *w,
                             vka_weight_slot *s)
{
    s[0] = (vka_weight_slot){"query_kernel", 2, {lw->dq, lw->units}, "(query_width, units)",
                             false, &w->query_kernel, NULL};
    s[1] = (vka_weight_slot){"key_kernel", 2, {lw->dk, lw->units}, "(key_width, units)", false,
                             &w->key_kernel, NULL};
    s[2] = (vka_weight_slot){"score_kernel", 1, {lw->units}, "(units,)", false, &w->score_kernel,
                             NULL};
    s[3] = (vka_weight_slot){.name = "score_bias", .scalar = true, .dst_value = &w->score_bias};
    return 4;
}

void vkattn_bahdanau_weights_free(vkattn_bahdanau_weights *w)
{
    if (!w)
        return;
    free(w->query_kernel);
    free(w->key_kernel);
    free(w->score_kernel);
    memset(w, 0, sizeof *w);
}

vkattn_result vkattn_bahdanau_weights_load(vkattn_weights_file *f, const vkattn_bahdanau_desc *desc,
                                           const vkattn_weights_load_desc *load,
                                           vkattn_bahdanau_weights *out)
{
    vka_layer_widths lw;
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", __func__, f ? "out" : "file");
    memset(out, 0, sizeof *out);
    vka_weight_slot s[4];
    vkattn_result r = vka_bahdanau_check_desc(NULL, __func__, desc, &lw);
    if (!r && load && load->names != VKATTN_WEIGHTS_NAMES_KERAS)
        r = vka_fail(NULL, INVALID, "%s: load->names must be VKATTN_WEIGHTS_NAMES_KERAS: "
                     "PyTorch names exist for MultiHeadAttention only", __func__);
    if (!r)
        r = load_slots(f, __func__, load, s, bahdanau_slots(&lw, out, s));
    if (r)
        vkattn_bahdanau_weights_free(out);
    return r;
}

vkattn_result vkattn_bahdanau_weights_save(const char *path, const vkattn_bahdanau_desc *desc,
                                           const vkattn_bahdanau_weights *w, const char *prefix)
{
    vka_layer_widths lw;
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", __func__);
    vkattn_result r = vka_bahdanau_check_desc(NULL, __func__, desc, &lw);
    if (r)
        return r;
    vkattn_bahdanau_weights copy = *w;
    vka_weight_slot s[4];
    return save_slots(__func__, path, prefix, "BahdanauAttention", s, bahdanau_slots(&lw, &copy, s));
}
