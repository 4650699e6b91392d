/* The Keras names and shapes of each layer's weights (docs/LAYERS.md,
 * "Weights from safetensors files"), read with a prefix and written back:
 * one table per layer drives both directions, so load and save cannot
 * disagree on a name or a shape. */
#include "weights/weights_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "shape/layer_shape.h"
#include "shape/layer_weights.h"
#include "shape/mha_shape.h"
#include "vkattn/additive_attention_host.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"

#define INVALID VKATTN_ERROR_INVALID_ARGUMENT
#define MAX_NAME 1024

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

/* A Keras scalar variable has shape (); (1,) is accepted too. */
static vkattn_result load_scalar(vkattn_weights_file *f, const char *fn, const char *full,
                                 float *dst)
{
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
    return vka_weights_read(f, fn, t, dst);
}

/* A layer's weights as one file holds them: the table, the options and
 * axis widths of the desc; for the MultiHeadAttention family also its
 * resolved dims, which its PyTorch and Llama readers take. */
typedef struct file_weights {
    const vka_weight_table *table;
    uint32_t options;
    uint64_t axes[VKA_AXIS_COUNT];
    vka_mha_dims mha;
} file_weights;

/* The order of the tensors in a file, as vkattn has always written them:
 * the table's weights without a bias first, then the biases (each in the
 * table's order); order[] gets the indexes of the weights the desc has. */
static uint32_t file_order(const file_weights *fw, uint32_t order[VKA_WEIGHTS_MAX])
{
    uint32_t n = 0;
    for (int biases = 0; biases < 2; biases++)
        for (uint32_t i = 0; i < fw->table->count; i++) {
            const vka_weight_info *w = &fw->table->w[i];
            if (vka_weight_exists(w, fw->options) && !(w->needs & VKA_WEIGHT_IF_BIAS) == !biases)
                order[n++] = i;
        }
    return n;
}

/* Reads every weight the desc has into `host`, allocating its arrays. */
static vkattn_result load_table(vkattn_weights_file *f, const char *fn,
                                const vkattn_weights_load_desc *load, const file_weights *fw,
                                void *host)
{
    uint32_t order[VKA_WEIGHTS_MAX];
    const uint32_t n = file_order(fw, order);
    for (uint32_t k = 0; k < n; k++) {
        const vka_weight_info *w = &fw->table->w[order[k]];
        char full[MAX_NAME], axes[96];
        if (!vka_weights_full_name(fn, load ? load->prefix : NULL, w->keras, full, sizeof full))
            return INVALID;
        vkattn_result r;
        if (w->rank == 0) {
            r = load_scalar(f, fn, full, vka_weight_host(host, w));
        } else {
            uint64_t dims[3];
            vka_weight_shape(w, fw->axes, dims);
            vka_weight_axes_text(w, fw->table->words, true, axes, sizeof axes);
            r = vka_weights_load_exact(f, fn, full, w->rank, dims, axes,
                                       vka_weight_host(host, w));
        }
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

/* Writes every weight the desc has from `host`, the layer's class name as
 * metadata. */
static vkattn_result save_table(const char *fn, const char *path, const char *prefix,
                                const file_weights *fw, const void *host)
{
    vkattn_weights_tensor t[VKA_WEIGHTS_MAX];
    char names[VKA_WEIGHTS_MAX][MAX_NAME];
    uint32_t order[VKA_WEIGHTS_MAX];
    const uint32_t n = file_order(fw, order);
    for (uint32_t k = 0; k < n; k++) {
        const vka_weight_info *w = &fw->table->w[order[k]];
        if (!vka_weights_full_name(fn, prefix, w->keras, names[k], sizeof names[k]))
            return INVALID;
        const void *at = vka_weight_host(host, w);
        const float *data = w->rank == 0 ? (const float *)at : *(float *const *)at;
        if (!data)
            return vka_fail(NULL, INVALID, "%s: the weight for '%s' is NULL", fn, w->keras);
        t[k] = (vkattn_weights_tensor){.name = names[k], .rank = w->rank, .data = data};
        vka_weight_shape(w, fw->axes, t[k].dims);
    }
    const char *keys[] = {"format", "layer"}, *values[] = {"vkattn", fw->table->layer};
    return vka_weights_save(fn, path, t, n, keys, values, 2);
}

/* Frees every array of a host weights struct and zeroes its scalars: the
 * struct is all zero afterwards. */
static void free_table(const vka_weight_table *table, void *host)
{
    for (uint32_t i = 0; i < table->count; i++) {
        void *at = vka_weight_host(host, &table->w[i]);
        if (table->w[i].rank == 0) {
            *(float *)at = 0.0f;
            continue;
        }
        free(*(float **)at);
        *(float **)at = NULL;
    }
}

/* ---------------------------------------------------------------- each layer's desc */

/* Each layer's desc check, as its *_create does, giving the file's view of
 * its weights (and, for the MultiHeadAttention family, the resolved dims
 * its PyTorch and Llama readers need). `desc` is the layer's desc type: the
 * load and save paths below are shared by every layer. */
typedef vkattn_result (*file_of_desc)(const char *fn, const void *desc, file_weights *fw);

static void mha_family_file(const vka_weight_table *table, file_weights *fw)
{
    fw->table = table;
    fw->options = vka_mha_weight_options(&fw->mha);
    vka_mha_weight_axes(&fw->mha, fw->axes);
}

static void single_file(const vka_weight_table *table, uint32_t options,
                        const vka_layer_widths *lw, file_weights *fw)
{
    *fw = (file_weights){.table = table, .options = options};
    vka_layer_weight_axes(lw, fw->axes);
}

static vkattn_result mha_file(const char *fn, const void *desc, file_weights *fw)
{
    vkattn_result r = vka_mha_resolve_desc(NULL, fn, desc, &fw->mha);
    if (!r)
        mha_family_file(&vka_mha_weight_table, fw);
    return r;
}

static vkattn_result gqa_file(const char *fn, const void *desc, file_weights *fw)
{
    vkattn_result r = vka_gqa_resolve_desc(NULL, fn, desc, &fw->mha);
    if (!r)
        mha_family_file(&vka_gqa_weight_table, fw);
    return r;
}

static vkattn_result attention_file(const char *fn, const void *desc, file_weights *fw)
{
    vka_layer_widths lw;
    vkattn_result r = vka_attention_check_desc(NULL, fn, desc, &lw);
    if (!r)
        single_file(&vka_attention_weight_table, vka_attention_weight_options(desc), &lw, fw);
    return r;
}

static vkattn_result additive_file(const char *fn, const void *desc, file_weights *fw)
{
    vka_layer_widths lw;
    vkattn_result r = vka_additive_attention_check_desc(NULL, fn, desc, &lw);
    if (!r)
        single_file(&vka_additive_weight_table, vka_additive_weight_options(desc), &lw, fw);
    return r;
}

static vkattn_result bahdanau_file(const char *fn, const void *desc, file_weights *fw)
{
    vka_layer_widths lw;
    vkattn_result r = vka_bahdanau_check_desc(NULL, fn, desc, &lw);
    if (!r)
        single_file(&vka_bahdanau_weight_table, VKA_WEIGHT_ALWAYS, &lw, fw);
    return r;
}

/* ---------------------------------------------------------------- load, save */

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

/* The other names a layer's weights may be read under besides Keras's:
 * PyTorch's for MultiHeadAttention (read with its desc), Llama's for
 * GroupedQueryAttention, none for the single-head layers; `must_be` lists
 * the names the layer takes. */
typedef struct other_names {
    vkattn_weights_names names; /* VKATTN_WEIGHTS_NAMES_KERAS: none */
    const char *must_be;
} other_names;

static const other_names keras_only = {
    VKATTN_WEIGHTS_NAMES_KERAS,
    "VKATTN_WEIGHTS_NAMES_KERAS: PyTorch names exist for MultiHeadAttention only"};

/* Reads the weights desc has into `out` (a host weights struct of `size`
 * bytes, set to `empty` first and again on failure, its arrays freed). */
static vkattn_result load_layer(vkattn_weights_file *f, const char *fn, const void *desc,
                                file_of_desc file_of, const vkattn_weights_load_desc *load,
                                other_names other, void *out, const void *empty, size_t size)
{
    if (!f || !out)
        return vka_fail(NULL, INVALID, "%s: %s is NULL", fn, f ? "out" : "file");
    memcpy(out, empty, size);
    file_weights fw = {.table = NULL};
    vkattn_result r = file_of(fn, desc, &fw);
    if (r)
        return r;
    const vkattn_weights_names names = load ? load->names : VKATTN_WEIGHTS_NAMES_KERAS;
    if (names == VKATTN_WEIGHTS_NAMES_KERAS)
        r = load_table(f, fn, load, &fw, out);
    else if (other.names == VKATTN_WEIGHTS_NAMES_KERAS)
        return vka_fail(NULL, INVALID, "%s: load->names must be %s", fn, other.must_be);
    else if (fw.mha.use_gate)
        r = no_gate_names(fn, names);
    else if (names == other.names && names == VKATTN_WEIGHTS_NAMES_TORCH)
        r = vka_weights_load_torch_mha(f, fn, desc, load->prefix, out);
    else if (names == other.names)
        r = vka_weights_load_llama_gqa(f, fn, &fw.mha, load->prefix, out);
    else
        r = vka_fail(NULL, INVALID, "%s: load->names is %d; must be %s", fn, (int)names,
                     other.must_be);
    if (r) {
        free_table(fw.table, out);
        memcpy(out, empty, size);
    }
    return r;
}

/* Writes the weights desc has from `w` (a host weights struct). */
static vkattn_result save_layer(const char *fn, const char *path, const void *desc,
                                file_of_desc file_of, const void *w, const char *prefix)
{
    if (!w)
        return vka_fail(NULL, INVALID, "%s: w is NULL", fn);
    file_weights fw;
    vkattn_result r = file_of(fn, desc, &fw);
    return r ? r : save_table(fn, path, prefix, &fw, w);
}

/* ---------------------------------------------------------------- the public functions */

void vkattn_mha_weights_free(vkattn_mha_weights *w)
{
    if (w)
        free_table(&vka_mha_weight_table, w);
}


void vkattn_additive_attention_weights_free(vkattn_additive_attention_weights *w)
{
    if (w)
        free_table(&vka_additive_weight_table, w);
}

void vkattn_bahdanau_weights_free(vkattn_bahdanau_weights *w)
{
    if (w)
        free_table(&vka_bahdanau_weight_table, w);
}

vkattn_result vkattn_mha_weights_load(vkattn_weights_file *f, const vkattn_mha_desc *desc,
                                      const vkattn_weights_load_desc *load,
                                      vkattn_mha_weights *out)
{
    const other_names torch = {VKATTN_WEIGHTS_NAMES_TORCH,
                               "VKATTN_WEIGHTS_NAMES_KERAS or VKATTN_WEIGHTS_NAMES_TORCH"};
    return load_layer(f, __func__, desc, mha_file, load, torch, out, &(vkattn_mha_weights){0},
                      sizeof *out);
}

vkattn_result vkattn_gqa_weights_load(vkattn_weights_file *f, const vkattn_gqa_desc *desc,
                                      const vkattn_weights_load_desc *load,
                                      vkattn_gqa_weights *out)
{
    const other_names llama = {VKATTN_WEIGHTS_NAMES_LLAMA,
                               "VKATTN_WEIGHTS_NAMES_KERAS or VKATTN_WEIGHTS_NAMES_LLAMA (PyTorch "
                               "nn.MultiheadAttention names are for MultiHeadAttention)"};
    return load_layer(f, __func__, desc, gqa_file, load, llama, out, &(vkattn_gqa_weights){0},
                      sizeof *out);
}

/* Attention's weights are two scalars: one its desc does not use stays 1. */
vkattn_result vkattn_attention_weights_load(vkattn_weights_file *f,
                                            const vkattn_attention_desc *desc,
                                            const vkattn_weights_load_desc *load,
                                            vkattn_attention_weights *out)
{
    return load_layer(f, __func__, desc, attention_file, load, keras_only, out,
                      &(vkattn_attention_weights){1.0f, 1.0f}, sizeof *out);
}

vkattn_result vkattn_additive_attention_weights_load(vkattn_weights_file *f,
                                                     const vkattn_additive_attention_desc *desc,
                                                     const vkattn_weights_load_desc *load,
                                                     vkattn_additive_attention_weights *out)
{
    return load_layer(f, __func__, desc, additive_file, load, keras_only, out,
                      &(vkattn_additive_attention_weights){0}, sizeof *out);
}

vkattn_result vkattn_bahdanau_weights_load(vkattn_weights_file *f, const vkattn_bahdanau_desc *desc,
                                           const vkattn_weights_load_desc *load,
                                           vkattn_bahdanau_weights *out)
{
    return load_layer(f, __func__, desc, bahdanau_file, load, keras_only, out,
                      &(vkattn_bahdanau_weights){0}, sizeof *out);
}

vkattn_result vkattn_mha_weights_save(const char *path, const vkattn_mha_desc *desc,
                                      const vkattn_mha_weights *w, const char *prefix)
{
    return save_layer(__func__, path, desc, mha_file, w, prefix);
}

vkattn_result vkattn_gqa_weights_save(const char *path, const vkattn_gqa_desc *desc,
                                      const vkattn_gqa_weights *w, const char *prefix)
{
    return save_layer(__func__, path, desc, gqa_file, w, prefix);
}

vkattn_result vkattn_attention_weights_save(const char *path, const vkattn_attention_desc *desc,
                                            const vkattn_attention_weights *w, const char *prefix)
{
    return save_layer(__func__, path, desc, attention_file, w, prefix);
}

vkattn_result vkattn_additive_attention_weights_save(const char *path,
                                                     const vkattn_additive_attention_desc *desc,
                                                     const vkattn_additive_attention_weights *w,
                                                     const char *prefix)
{
    return save_layer(__func__, path, desc, additive_file, w, prefix);
}

vkattn_result vkattn_bahdanau_weights_save(const char *path, const vkattn_bahdanau_desc *desc,
                                           const vkattn_bahdanau_weights *w, const char *prefix)
{
    return save_layer(__func__, path, desc, bahdanau_file, w, prefix);
}
