/* vkattn/safetensors.h - safetensors files: reading, writing, and what every
 * layer's *_weights_load, *_weights_free and *_weights_save (vkattn/<layer>_host.h)
 * do.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON ({name: {"dtype", "shape", "data_offsets": [begin, end]}, ...,
 * "__metadata__": {...}}) and the raw little-endian tensor data, offsets
 * relative to its start. This is what PyTorch (safetensors.torch.save_file),
 * Keras and JAX users can write in one line.
 *
 * Call sequence:
 *   vkattn_weights_file_open(path, &file);          (or _open_memory)
 *   vkattn_mha_weights_load(file, &desc, &load, &w); (Keras layout, host arrays)
 *   vkattn_mha_set_weights(mha, &w);                 (or the CPU reference)
 *   vkattn_mha_weights_free(&w);
 *   vkattn_weights_file_close(file);
 * and vkattn_mha_weights_save(path, &desc, &w, prefix) for the other way.
 *
 * Names: VKATTN_WEIGHTS_NAMES_KERAS reads each layer's Keras variable names
 * ("query/kernel", ...) in Keras shapes; VKATTN_WEIGHTS_NAMES_TORCH reads a
 * PyTorch nn.MultiheadAttention state dict ("in_proj_weight", ...) and
 * converts its layouts. A prefix picks one layer out of a bigger model
 * ("encoder.layers.0.self_attn."). docs/LAYERS.md, "Weights from safetensors
 * files", lists every name and shape.
 *
 * Tensors are read as F32, F16 or BF16 and converted to float exactly; other
 * dtypes are listed but not read. A malformed file (truncated, a header that
 * is not a JSON object, offsets out of range or overlapping, tensors that do
 * not tile the data exactly (a gap, bytes before the first or after the
 * last), a size that is not dtype * shape, absurd dims) fails to open with
 * VKATTN_ERROR_INVALID_ARGUMENT (VKATTN_ERROR_SIZE_OVERFLOW for dims whose
 * product overflows) and a message naming the file and the tensor.
 *
 * Nothing here uses Vulkan or a device: CPU references and tools use it as
 * they are. Failures are reported through vkattn_last_error().
 *
 * Thread safety: a file object is externally synchronized (reads move its
 * file position); distinct files may be used from distinct threads.
 */
#ifndef VKATTN_SAFETENSORS_H
#define VKATTN_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "vkattn/export.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open safetensors file: its parsed header, and the bytes (a FILE or the
 * caller's memory). */
typedef struct vkattn_weights_file vkattn_weights_file;

#define VKATTN_WEIGHTS_MAX_RANK 8

typedef enum vkattn_weights_dtype {
    VKATTN_WEIGHTS_DTYPE_F32 = 0,
    VKATTN_WEIGHTS_DTYPE_F16 = 1,
    VKATTN_WEIGHTS_DTYPE_BF16 = 2,
    VKATTN_WEIGHTS_DTYPE_OTHER = 3, /* a valid safetensors dtype vkattn does not read */
} vkattn_weights_dtype;

/* One tensor of the file. Strings stay valid until the file is closed. */
typedef struct vkattn_weights_tensor_info {
    const char *name;
    const char *dtype_name;  /* as in the file: "F32", "BF16", "I64", ... */
    vkattn_weights_dtype dtype;
    uint32_t rank;           /* 0 for a scalar */
    uint64_t dims[VKATTN_WEIGHTS_MAX_RANK];
    uint64_t count;          /* product of dims (1 for a scalar) */
    uint64_t data_begin, data_end; /* byte offsets from the start of the data */
} vkattn_weights_tensor_info;

/* Opens and validates a file: reads the header, keeps the file open for
 * reads. *out must be closed with vkattn_weights_file_close. path must name
 * a regular file (a folder or a FIFO is refused before it is opened). Results:
 * VKATTN_ERROR_INVALID_ARGUMENT (NULL argument, not a regular file, unreadable
 * or malformed file),
 * VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_OUT_OF_HOST_MEMORY. */
VKATTN_API vkattn_result vkattn_weights_file_open(const char *path, vkattn_weights_file **out);

/* The same for a file already in memory; `data` is not copied and must stay
 * valid and unchanged until the file is closed. `label` names it in messages
 * (NULL = "<memory>"). */
VKATTN_API vkattn_result vkattn_weights_file_open_memory(const void *data, size_t size,
                                                         const char *label,
                                                         vkattn_weights_file **out);

/* NULL-safe. */
VKATTN_API void vkattn_weights_file_close(vkattn_weights_file *file);

/* Number of tensors (the header's entries other than __metadata__); 0 for NULL. */
VKATTN_API uint32_t vkattn_weights_file_count(const vkattn_weights_file *file);

/* Tensor `index` (0 .. count-1) in name order. VKATTN_ERROR_INVALID_ARGUMENT
 * for a NULL argument or an index out of range. */
VKATTN_API vkattn_result vkattn_weights_file_tensor(const vkattn_weights_file *file,
                                                    uint32_t index,
                                                    vkattn_weights_tensor_info *info);

/* The tensor called `name`. VKATTN_ERROR_INVALID_ARGUMENT if there is none
 * (the message names it) or an argument is NULL. */
VKATTN_API vkattn_result vkattn_weights_file_find(const vkattn_weights_file *file,
                                                  const char *name,
                                                  vkattn_weights_tensor_info *info);

/* The string value of __metadata__[key], or NULL (absent, not a string, or a
 * NULL argument). Valid until the file is closed. */
VKATTN_API const char *vkattn_weights_file_metadata(const vkattn_weights_file *file,
                                                    const char *key);

/* Reads tensor `name` into dst as float (F16 and BF16 convert exactly).
 * `count` must be the tensor's element count. VKATTN_ERROR_INVALID_ARGUMENT:
 * no such tensor, another dtype, a count mismatch, a short read. */
VKATTN_API vkattn_result vkattn_weights_file_read(vkattn_weights_file *file, const char *name,
                                                  float *dst, uint64_t count);

/* ------------------------------------------------------------ writing */

/* One tensor to write: row-major floats. */
typedef struct vkattn_weights_tensor {
    const char *name; /* required, unique in the file */
    uint32_t rank;    /* 0 (a scalar) .. VKATTN_WEIGHTS_MAX_RANK */
    uint64_t dims[VKATTN_WEIGHTS_MAX_RANK];
    const float *data; /* required */
} vkattn_weights_tensor;

/* Writes the tensors as an F32 safetensors file (replacing `path`).
 * metadata_keys/values: `metadata_count` string pairs for __metadata__ (may
 * be 0 and NULL). VKATTN_ERROR_INVALID_ARGUMENT for a bad argument or a write
 * that fails (the message says which). */
VKATTN_API vkattn_result vkattn_weights_save(const char *path, const vkattn_weights_tensor *tensors,
                                             uint32_t count, const char *const *metadata_keys,
                                             const char *const *metadata_values,
                                             uint32_t metadata_count);

/* ------------------------------------------------ layers (vkattn/<layer>_host.h) */

typedef enum vkattn_weights_names {
    VKATTN_WEIGHTS_NAMES_KERAS = 0, /* Keras variable names and shapes (every layer) */
    VKATTN_WEIGHTS_NAMES_TORCH = 1, /* nn.MultiheadAttention's state dict (MHA only) */
    /* A Llama-style attention block (GroupedQueryAttention only; Hugging Face
     * Llama, Mistral, Qwen2): q_proj.weight (Nq*h, Dq), k_proj.weight
     * (Nkv*h, Dk), v_proj.weight (Nkv*h, Dv), o_proj.weight (Dq, Nq*h), Linear
     * (out_features, in_features) layouts; with use_bias also q_proj.bias,
     * k_proj.bias, v_proj.bias, and o_proj.bias if present (Qwen2 has none:
     * then the output bias is 0). The prefix names the block
     * ("model.layers.0.self_attn."). With desc->use_qk_norm also
     * q_norm.weight and k_norm.weight (h,) (Qwen3), with desc->use_sinks
     * sinks (Nq,) (gpt-oss), under the same prefix (the PyTorch names read
     * them too). The rotary embedding has no weights: set desc->use_rope
     * and desc->rope from the model's config (rope_theta = max_wavelength). */
    VKATTN_WEIGHTS_NAMES_LLAMA = 2,
} vkattn_weights_names;

/* How a layer's tensors are named in the file. Zero = Keras names, no prefix. */
typedef struct vkattn_weights_load_desc {
    vkattn_weights_names names;
    const char *prefix; /* put before every name; NULL = "" */
} vkattn_weights_load_desc;

/* Each *_weights_load validates desc as *_create does, finds every tensor the
 * layer needs (a weight the desc does not use, such as a bias with no_bias,
 * is neither read nor required), checks its shape and dtype, and fills *out
 * with newly allocated Keras-layout arrays (vkattn/<layer>_host.h) for
 * *_set_weights or the CPU reference. Free them with the matching
 * *_weights_free. `load` NULL = Keras names, no prefix. On failure *out is
 * zeroed (Attention's: both scalars 1.0, as a load leaves an unused one) and
 * nothing is left allocated. Results: VKATTN_ERROR_INVALID_ARGUMENT
 * (a bad desc; a missing tensor, wrong shape or dtype: the message names the
 * tensor and what was expected), VKATTN_ERROR_OUT_OF_HOST_MEMORY. */

/* Free what *_weights_load allocated and zero *w (NULL-safe; only for a
 * struct filled by *_weights_load). */

/* Each *_weights_save writes the weights desc uses under their Keras names
 * (prefix NULL = none) in Keras shapes as an F32 file, which
 * *_weights_load with Keras names reads back bit for bit. __metadata__ gets
 * {"format": "vkattn", "layer": "<Keras class name>"}. Results as
 * vkattn_weights_save, and VKATTN_ERROR_INVALID_ARGUMENT for a bad desc or a
 * NULL array the desc needs. */

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SAFETENSORS_H */
