/* The weight tables of shape/layer_weights.h: each list expanded once with
 * the host weights struct's offsets. */
#include "shape/layer_weights.h"

#include <stdio.h>

#define ENTRY(type, m, keras, needs, rank, a0, a1, a2, device, fans)                            \
    {#m, keras, (needs), (rank), {(a0), (a1), (a2)}, (device), (fans), offsetof(type, m)},
#define MHA_ENTRY(...) ENTRY(vkattn_mha_weights, __VA_ARGS__)
#define ATTENTION_ENTRY(...) ENTRY(vkattn_attention_weights, __VA_ARGS__)
#define ADDITIVE_ENTRY(...) ENTRY(vkattn_additive_attention_weights, __VA_ARGS__)
#define BAHDANAU_ENTRY(...) ENTRY(vkattn_bahdanau_weights, __VA_ARGS__)

static const vka_weight_info mha_list[] = {VKA_MHA_WEIGHTS(MHA_ENTRY)};
static const vka_weight_info attention_list[] = {VKA_ATTENTION_WEIGHTS(ATTENTION_ENTRY)};
static const vka_weight_info additive_list[] = {VKA_ADDITIVE_WEIGHTS(ADDITIVE_ENTRY)};
static const vka_weight_info bahdanau_list[] = {VKA_BAHDANAU_WEIGHTS(BAHDANAU_ENTRY)};

#define COUNT(a) (uint32_t)(sizeof a / sizeof a[0])
_Static_assert(COUNT(mha_list) <= VKA_WEIGHTS_MAX, "VKA_WEIGHTS_MAX is the largest table's size");

/* The axis words of each family's load messages (Keras's argument names). */
static const char *const mha_words[VKA_AXIS_COUNT] = {
    [VKA_AXIS_QUERY_WIDTH] = "query_width", [VKA_AXIS_KEY_WIDTH] = "key_width",
    [VKA_AXIS_VALUE_WIDTH] = "value_width", [VKA_AXIS_OUTPUT_DIM] = "output_dim",
    [VKA_AXIS_HEADS] = "num_heads",         [VKA_AXIS_KV_HEADS] = "num_heads",
    [VKA_AXIS_KEY_DIM] = "key_dim",         [VKA_AXIS_VALUE_DIM] = "value_dim",
};
static const char *const gqa_words[VKA_AXIS_COUNT] = {
    [VKA_AXIS_QUERY_WIDTH] = "query_width",  [VKA_AXIS_KEY_WIDTH] = "key_width",
    [VKA_AXIS_VALUE_WIDTH] = "value_width",  [VKA_AXIS_OUTPUT_DIM] = "query_width",
    [VKA_AXIS_HEADS] = "num_query_heads",    [VKA_AXIS_KV_HEADS] = "num_key_value_heads",
    [VKA_AXIS_KEY_DIM] = "head_dim",         [VKA_AXIS_VALUE_DIM] = "head_dim",
};
static const char *const single_words[VKA_AXIS_COUNT] = {
    [VKA_AXIS_QUERY_WIDTH] = "query_width", [VKA_AXIS_KEY_WIDTH] = "key_width",
    [VKA_AXIS_VALUE_WIDTH] = "value_width", [VKA_AXIS_UNITS] = "units",
};
/* The GPU backward's gradient messages ("(query_width, H, key_dim)"), the
 * key/value heads "H", or "Hkv" when grouped. */
#define GRAD_WORDS(kv_heads)                                                                      \
    {                                                                                             \
        [VKA_AXIS_QUERY_WIDTH] = "query_width", [VKA_AXIS_KEY_WIDTH] = "key_width",              \
        [VKA_AXIS_VALUE_WIDTH] = "value_width", [VKA_AXIS_OUTPUT_DIM] = "output_dim",            \
        [VKA_AXIS_HEADS] = "H", [VKA_AXIS_KV_HEADS] = kv_heads, [VKA_AXIS_KEY_DIM] = "key_dim",  \
        [VKA_AXIS_VALUE_DIM] = "value_dim", [VKA_AXIS_UNITS] = "units",                          \
    }
static const char *const grad_words[2][VKA_AXIS_COUNT] = {GRAD_WORDS("H"), GRAD_WORDS("Hkv")};

const vka_weight_table vka_mha_weight_table = {"MultiHeadAttention", mha_list, COUNT(mha_list),
                                               mha_words};
const vka_weight_table vka_gqa_weight_table = {"GroupedQueryAttention", mha_list,
                                               COUNT(mha_list), gqa_words};
const vka_weight_table vka_attention_weight_table = {"Attention", attention_list,
                                                     COUNT(attention_list), single_words};
const vka_weight_table vka_additive_weight_table = {"AdditiveAttention", additive_list,
                                                    COUNT(additive_list), single_words};
const vka_weight_table vka_bahdanau_weight_table = {"BahdanauAttention", bahdanau_list,
                                                    COUNT(bahdanau_list), single_words};

const char *const *vka_weight_grad_words(bool grouped)
{
    return grad_words[grouped];
}

uint32_t vka_mha_weight_options(const vka_mha_dims *d)
{
    return (d->use_bias ? VKA_WEIGHT_IF_BIAS : 0u) | (d->use_gate ? VKA_WEIGHT_IF_GATE : 0u) |
           (d->use_qk_norm ? VKA_WEIGHT_IF_QK_NORM : 0u) |
           (d->use_sinks ? VKA_WEIGHT_IF_SINKS : 0u);
}

void vka_mha_weight_axes(const vka_mha_dims *d, uint64_t axes[VKA_AXIS_COUNT])
{
    for (int i = 0; i < VKA_AXIS_COUNT; i++)
        axes[i] = 0;
    axes[VKA_AXIS_QUERY_WIDTH] = d->query_dim;
    axes[VKA_AXIS_KEY_WIDTH] = d->key_width;
    axes[VKA_AXIS_VALUE_WIDTH] = d->value_width;
    axes[VKA_AXIS_OUTPUT_DIM] = d->output_dim;
    axes[VKA_AXIS_HEADS] = d->heads;
    axes[VKA_AXIS_KV_HEADS] = d->kv_heads;
    axes[VKA_AXIS_KEY_DIM] = d->key_dim;
    axes[VKA_AXIS_VALUE_DIM] = d->value_dim;
}

uint32_t vka_attention_weight_options(const vkattn_attention_desc *desc)
{
    return (desc->use_scale ? VKA_WEIGHT_IF_SCALE : 0u) |
           (desc->score_mode == VKATTN_SCORE_CONCAT ? VKA_WEIGHT_IF_CONCAT : 0u);
}

uint32_t vka_additive_weight_options(const vkattn_additive_attention_desc *desc)
{
    return desc->no_scale ? 0u : VKA_WEIGHT_IF_SCALE;
}

void vka_layer_weight_axes(const vka_layer_widths *lw, uint64_t axes[VKA_AXIS_COUNT])
{
    for (int i = 0; i < VKA_AXIS_COUNT; i++)
        axes[i] = 0;
    axes[VKA_AXIS_QUERY_WIDTH] = lw->dq;
    axes[VKA_AXIS_KEY_WIDTH] = lw->dk;
    axes[VKA_AXIS_VALUE_WIDTH] = lw->dv;
    axes[VKA_AXIS_UNITS] = lw->units;
}

uint64_t vka_weight_shape(const vka_weight_info *w, const uint64_t axes[VKA_AXIS_COUNT],
                          uint64_t dims[3])
{
    uint64_t count = 1;
    for (uint32_t i = 0; i < 3; i++) {
        dims[i] = i < w->rank ? axes[w->axis[i]] : 0;
        if (i < w->rank)
            count *= dims[i];
    }
    return count;
}

void vka_weight_fans(const vka_weight_info *w, const uint64_t axes[VKA_AXIS_COUNT],
                     uint64_t *fan_in, uint64_t *fan_out)
{
    uint64_t d[3];
    vka_weight_shape(w, axes, d);
    uint64_t in = 1, out = 1;
    if (w->fans == VKA_FANS_SHAPE && w->rank <= 2) {
        in = w->rank ? d[0] : 1;
        out = w->rank == 2 ? d[1] : in;
    } else if (w->fans == VKA_FANS_SHAPE) { /* rank 3: receptive field d[0] */
        in = d[0] * d[1];
        out = d[0] * d[2];
    } else { /* an EinsumDense kernel: the first `fans` axes are contracted */
        for (uint32_t i = 0; i < w->rank; i++)
            *(i < w->fans ? &in : &out) *= d[i];
    }
    *fan_in = in;
    *fan_out = out;
}

void vka_weight_axes_text(const vka_weight_info *w, const char *const *words, bool tuple,
                          char *buf, size_t size)
{
    size_t n = 0;
    int k = snprintf(buf, size, "(");
    for (uint32_t i = 0; k >= 0 && i < w->rank && (n += (size_t)k) < size; i++) {
        const char *word = words[w->axis[i]] ? words[w->axis[i]] : "?";
        k = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", word);
    }
    if (k >= 0 && (n += (size_t)k) < size)
        snprintf(buf + n, size - n, "%s)", tuple && w->rank == 1 ? "," : "");
}
