/* One table per layer of its weights, declared once and read by the layers
 * (create, destroy, set/get weights, weight tensors, the backward's gradient
 * checks), the safetensors reader and writer (src/weights/) and the CPU
 * reference's weight checks: each weight's member of the public structs,
 * its Keras name, whether this desc has it (use_bias, use_gate, use_scale,
 * ...), its shape as a function of the resolved desc, and how the layer's
 * device tensor of it starts, in Keras's weight order. Pure C, no Vulkan
 * header.
 *
 * Each list is an X-macro, X(member, keras_name, needs, rank, axis0, axis1,
 * axis2, device, fans), so that a consumer which sees a struct the shape folder
 * may not include (the weight-tensor structs of vkattn/<layer>.h pull
 * in Vulkan) expands offsetof(that struct, member) from the same list; the
 * expansion here gives the host weights struct's offsets. An axis names one
 * of the vka_weight_axis values its family resolves from the desc. */
#ifndef VKA_SHAPE_LAYER_WEIGHTS_H
#define VKA_SHAPE_LAYER_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/layer_shape.h"
#include "shape/mha_shape.h"

/* The desc options a weight exists under (all of those it names). */
enum {
    VKA_WEIGHT_ALWAYS = 0,
    VKA_WEIGHT_IF_BIAS = 1u << 0,   /* MultiHeadAttention/GQA use_bias (not no_bias) */
    VKA_WEIGHT_IF_GATE = 1u << 1,   /* MultiHeadAttention/GQA use_gate */
    VKA_WEIGHT_IF_SCALE = 1u << 2,  /* Attention use_scale, AdditiveAttention !no_scale */
    VKA_WEIGHT_IF_CONCAT = 1u << 3, /* Attention score_mode VKATTN_SCORE_CONCAT */
    VKA_WEIGHT_IF_QK_NORM = 1u << 4, /* MultiHeadAttention/GQA use_qk_norm */
    VKA_WEIGHT_IF_SINKS = 1u << 5,   /* MultiHeadAttention/GQA use_sinks */
};

/* How a layer's device tensor of a weight starts (vka_weight_info.device):
 * by the desc's bias initializer (zeros by default), its kernel initializer
 * (glorot_uniform by default; AdditiveAttention's scale_initializer), or
 * ones whatever the desc (Attention's scalars: Keras gives them no choice). */
enum {
    VKA_DEVICE_BIAS = 0,         /* the bias initializer, of the layer's type */
    VKA_DEVICE_ONES = 1u << 0,   /* ones */
    VKA_DEVICE_F32 = 1u << 1,    /* f32 even in an f16 layer */
    VKA_DEVICE_KERNEL = 1u << 2, /* the kernel initializer */
    VKA_DEVICE_ZEROS = 1u << 3,  /* zeros whatever the desc */
};

/* How Keras 3.15 counts a weight's fans (vka_weight_fans): from its shape
 * alone (compute_fans: rank 0 1 and 1, rank 1 n and n, rank 2 in and out),
 * or as an EinsumDense kernel, whose first one or two axes are contracted
 * with the input (fan_in) and the rest are the output's (fan_out). */
enum { VKA_FANS_SHAPE = 0, VKA_FANS_IN1 = 1, VKA_FANS_IN2 = 2 };

/* The widths a weight's axes are made of, resolved from the desc. */
typedef enum vka_weight_axis {
    VKA_AXIS_NONE,
    VKA_AXIS_QUERY_WIDTH, /* the query input's width */
    VKA_AXIS_KEY_WIDTH,
    VKA_AXIS_VALUE_WIDTH,
    VKA_AXIS_OUTPUT_DIM, /* MultiHeadAttention's output width (GQA: the query's) */
    VKA_AXIS_HEADS,      /* the query heads */
    VKA_AXIS_KV_HEADS,   /* the key/value heads (= HEADS but in GQA) */
    VKA_AXIS_KEY_DIM,
    VKA_AXIS_VALUE_DIM,
    VKA_AXIS_UNITS, /* BahdanauAttention's units */
    VKA_AXIS_COUNT
} vka_weight_axis;

/* MultiHeadAttention and GroupedQueryAttention, in Keras's weight order:
 * the EinsumDense sublayers query, key, [gate,] value, attention_output,
 * kernel then bias of each; then vkattn's open-model weights (Keras's
 * layers have none): the QK-norm scales (ones in a new layer, as Keras's
 * RMSNormalization) and the sinks (zeros; they stay f32 in an f16 layer,
 * as the softmax statistics they join). */
#define VKA_MHA_WEIGHTS(X)                                                                        \
    X(query_kernel, "query/kernel", VKA_WEIGHT_ALWAYS, 3, VKA_AXIS_QUERY_WIDTH, VKA_AXIS_HEADS,   \
      VKA_AXIS_KEY_DIM, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                          \
    X(query_bias, "query/bias", VKA_WEIGHT_IF_BIAS, 2, VKA_AXIS_HEADS, VKA_AXIS_KEY_DIM,          \
      VKA_AXIS_NONE, VKA_DEVICE_BIAS, VKA_FANS_SHAPE)                                             \
    X(key_kernel, "key/kernel", VKA_WEIGHT_ALWAYS, 3, VKA_AXIS_KEY_WIDTH, VKA_AXIS_KV_HEADS,      \
      VKA_AXIS_KEY_DIM, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                          \
    X(key_bias, "key/bias", VKA_WEIGHT_IF_BIAS, 2, VKA_AXIS_KV_HEADS, VKA_AXIS_KEY_DIM,           \
      VKA_AXIS_NONE, VKA_DEVICE_BIAS, VKA_FANS_SHAPE)                                             \
    X(gate_kernel, "gate/kernel", VKA_WEIGHT_IF_GATE, 3, VKA_AXIS_QUERY_WIDTH, VKA_AXIS_HEADS,    \
      VKA_AXIS_VALUE_DIM, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                        \
    X(gate_bias, "gate/bias", VKA_WEIGHT_IF_GATE | VKA_WEIGHT_IF_BIAS, 2, VKA_AXIS_HEADS,         \
      VKA_AXIS_VALUE_DIM, VKA_AXIS_NONE, VKA_DEVICE_BIAS, VKA_FANS_SHAPE)                         \
    X(value_kernel, "value/kernel", VKA_WEIGHT_ALWAYS, 3, VKA_AXIS_VALUE_WIDTH,                   \
      VKA_AXIS_KV_HEADS, VKA_AXIS_VALUE_DIM, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                     \
    X(value_bias, "value/bias", VKA_WEIGHT_IF_BIAS, 2, VKA_AXIS_KV_HEADS, VKA_AXIS_VALUE_DIM,     \
      VKA_AXIS_NONE, VKA_DEVICE_BIAS, VKA_FANS_SHAPE)                                             \
    X(output_kernel, "attention_output/kernel", VKA_WEIGHT_ALWAYS, 3, VKA_AXIS_HEADS,             \
      VKA_AXIS_VALUE_DIM, VKA_AXIS_OUTPUT_DIM, VKA_DEVICE_KERNEL, VKA_FANS_IN2)                   \
    X(output_bias, "attention_output/bias", VKA_WEIGHT_IF_BIAS, 1, VKA_AXIS_OUTPUT_DIM,           \
      VKA_AXIS_NONE, VKA_AXIS_NONE, VKA_DEVICE_BIAS, VKA_FANS_SHAPE)                              \
    X(query_norm, "query_norm", VKA_WEIGHT_IF_QK_NORM, 1, VKA_AXIS_KEY_DIM, VKA_AXIS_NONE,        \
      VKA_AXIS_NONE, VKA_DEVICE_ONES, VKA_FANS_SHAPE)                                             \
    X(key_norm, "key_norm", VKA_WEIGHT_IF_QK_NORM, 1, VKA_AXIS_KEY_DIM, VKA_AXIS_NONE,            \
      VKA_AXIS_NONE, VKA_DEVICE_ONES, VKA_FANS_SHAPE)                                             \
    X(sinks, "sinks", VKA_WEIGHT_IF_SINKS, 1, VKA_AXIS_HEADS, VKA_AXIS_NONE, VKA_AXIS_NONE,       \
      VKA_DEVICE_ZEROS | VKA_DEVICE_F32, VKA_FANS_SHAPE)

/* keras.layers.Attention: two scalars (rank 0), both 1 in a new layer. */
#define VKA_ATTENTION_WEIGHTS(X)                                                                  \
    X(scale, "scale", VKA_WEIGHT_IF_SCALE, 0, VKA_AXIS_NONE, VKA_AXIS_NONE, VKA_AXIS_NONE,        \
      VKA_DEVICE_ONES, VKA_FANS_SHAPE)                                                            \
    X(concat_score_weight, "concat_score_weight", VKA_WEIGHT_IF_CONCAT, 0, VKA_AXIS_NONE,         \
      VKA_AXIS_NONE, VKA_AXIS_NONE, VKA_DEVICE_ONES, VKA_FANS_SHAPE)

/* keras.layers.AdditiveAttention: the scale vector, glorot_uniform in a new
 * layer (Keras 3's add_weight: fans from the shape (n,), n and n). */
#define VKA_ADDITIVE_WEIGHTS(X)                                                                   \
    X(scale, "scale", VKA_WEIGHT_IF_SCALE, 1, VKA_AXIS_QUERY_WIDTH, VKA_AXIS_NONE,                \
      VKA_AXIS_NONE, VKA_DEVICE_KERNEL, VKA_FANS_SHAPE)

/* BahdanauAttention (vkattn's; Keras has no such class, so the names are
 * those of its vkattn_bahdanau_weights fields). Its kernels start as Keras
 * Dense kernels: score_kernel is the (units, 1) kernel of a Dense(1), so its
 * fans are units and 1; score_bias stays f32 in an f16 layer: the forward
 * never reads it (softmax is shift-invariant), so the device keeps it
 * exactly as given. */
#define VKA_BAHDANAU_WEIGHTS(X)                                                                   \
    X(query_kernel, "query_kernel", VKA_WEIGHT_ALWAYS, 2, VKA_AXIS_QUERY_WIDTH, VKA_AXIS_UNITS,   \
      VKA_AXIS_NONE, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                             \
    X(key_kernel, "key_kernel", VKA_WEIGHT_ALWAYS, 2, VKA_AXIS_KEY_WIDTH, VKA_AXIS_UNITS,         \
      VKA_AXIS_NONE, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                             \
    X(score_kernel, "score_kernel", VKA_WEIGHT_ALWAYS, 1, VKA_AXIS_UNITS, VKA_AXIS_NONE,          \
      VKA_AXIS_NONE, VKA_DEVICE_KERNEL, VKA_FANS_IN1)                                             \
    X(score_bias, "score_bias", VKA_WEIGHT_ALWAYS, 0, VKA_AXIS_NONE, VKA_AXIS_NONE,               \
      VKA_AXIS_NONE, VKA_DEVICE_BIAS | VKA_DEVICE_F32, VKA_FANS_SHAPE)

/* One weight of a layer, as its list declares it. */
typedef struct vka_weight_info {
    const char *member; /* "query_kernel": of the public structs, for messages */
    const char *keras;  /* "query/kernel": its name in a Keras safetensors file */
    uint32_t needs;     /* VKA_WEIGHT_IF_* it exists under */
    uint32_t rank;      /* 0: a scalar (a float in the host struct, one element) */
    uint8_t axis[3];    /* vka_weight_axis of each of its rank dims */
    uint8_t device;     /* VKA_DEVICE_*: how the layer's tensor starts */
    uint8_t fans;       /* VKA_FANS_*: how Keras counts its fans */
    size_t host;        /* offsetof in the host weights struct: float * (float if rank 0) */
} vka_weight_info;

/* A layer's weights: its Keras class name (the "layer" metadata of a saved
 * file), the list, and the axis words of its messages. */
typedef struct vka_weight_table {
    const char *layer;
    const vka_weight_info *w;
    uint32_t count;
    const char *const *words; /* [VKA_AXIS_COUNT]: "num_heads", "key_dim", ... */
} vka_weight_table;

enum { VKA_WEIGHTS_MAX = 13 }; /* the most weights of one layer (MultiHeadAttention's) */

extern const vka_weight_table vka_mha_weight_table;  /* MultiHeadAttention's words */
extern const vka_weight_table vka_gqa_weight_table;  /* the same list, GQA's words */
extern const vka_weight_table vka_attention_weight_table;
extern const vka_weight_table vka_additive_weight_table;
extern const vka_weight_table vka_bahdanau_weight_table;

/* The GPU backward's words for its gradient shape messages: "H", "key_dim"
 * ...; `grouped` (kv_heads != heads) names the key/value heads "Hkv". */
const char *const *vka_weight_grad_words(bool grouped);

/* The desc options (VKA_WEIGHT_IF_*) and axis widths of each family. */
uint32_t vka_mha_weight_options(const vka_mha_dims *d);
void vka_mha_weight_axes(const vka_mha_dims *d, uint64_t axes[VKA_AXIS_COUNT]);
uint32_t vka_attention_weight_options(const vkattn_attention_desc *desc);
uint32_t vka_additive_weight_options(const vkattn_additive_attention_desc *desc);
void vka_layer_weight_axes(const vka_layer_widths *lw, uint64_t axes[VKA_AXIS_COUNT]);

/* Whether a layer with these options has weight w. */
static inline bool vka_weight_exists(const vka_weight_info *w, uint32_t options)
{
    return (w->needs & ~options) == 0;
}

/* w's dims (rank of them) into dims; returns its element count (1 for a
 * scalar). The widths are 32-bit and rank <= 3: no overflow. */
uint64_t vka_weight_shape(const vka_weight_info *w, const uint64_t axes[VKA_AXIS_COUNT],
                          uint64_t dims[3]);

/* w's fans as Keras 3.15 counts them for its shape (VKA_FANS_*). */
void vka_weight_fans(const vka_weight_info *w, const uint64_t axes[VKA_AXIS_COUNT],
                     uint64_t *fan_in, uint64_t *fan_out);

/* w's axes in words into buf: "(query_width, num_heads, key_dim)"; a rank-1
 * weight as a Python tuple "(units,)" when `tuple`, else "(units)". */
void vka_weight_axes_text(const vka_weight_info *w, const char *const *words, bool tuple,
                          char *buf, size_t size);

/* The host array (float **) or scalar (float *) of w in a host weights struct. */
static inline void *vka_weight_host(const void *weights, const vka_weight_info *w)
{
    return (char *)(uintptr_t)weights + w->host;
}

#endif /* VKA_SHAPE_LAYER_WEIGHTS_H */
