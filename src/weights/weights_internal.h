/* The safetensors reader and writer behind vkattn/safetensors.h, shared by the
 * per-layer name mappings. Pure C and jansson, no Vulkan header: the CPU
 * reference and the tools use it without a device. */
#ifndef VKA_WEIGHTS_INTERNAL_H
#define VKA_WEIGHTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* jansson's value type; only file.c and save.c include <jansson.h>, so that a
 * build without jansson (VKATTN_SAFETENSORS=OFF, weights/no_json.c) compiles
 * the layer mappings unchanged. */
struct json_t;

#include "vkattn/mha_host.h"
#include "vkattn/safetensors.h"

/* safetensors caps its header at 100 MB; a larger length is a broken file,
 * and reading it would allocate whatever a corrupt length says. */
#define VKA_WEIGHTS_MAX_HEADER (100u * 1000u * 1000u)

struct vkattn_weights_file {
    char *label;          /* the path, or the memory label, for messages */
    FILE *fp;             /* NULL for a file in memory */
    const uint8_t *mem;   /* the caller's bytes (memory files) */
    uint64_t data_start;  /* 8 + header length */
    uint64_t data_size;   /* bytes after the header */
    struct json_t *header; /* owns the strings the infos point at */
    uint32_t count;
    vkattn_weights_tensor_info *tensors; /* sorted by name */
};

/* ---------------------------------------------------------------- dtype.c */

/* Element size of a safetensors dtype name, 0 if it is not one. */
uint32_t vka_weights_dtype_size(const char *name, vkattn_weights_dtype *dtype);
/* n little-endian elements of dtype (F32/F16/BF16) from bytes to floats. */
void vka_weights_decode(vkattn_weights_dtype dtype, const uint8_t *bytes, size_t n, float *out);

/* ---------------------------------------------------------------- file.c */

/* The tensor called name, or NULL (no message: for probing). */
const vkattn_weights_tensor_info *vka_weights_lookup(const vkattn_weights_file *f,
                                                     const char *name);
/* Reads info's tensor as floats into dst (info->count of them). fn names
 * the public function in messages. */
vkattn_result vka_weights_read(vkattn_weights_file *f, const char *fn,
                               const vkattn_weights_tensor_info *info, float *dst);
/* "(2, 3)" or "()" into buf. */
void vka_weights_shape_text(uint32_t rank, const uint64_t *dims, char *buf, size_t size);

/* ---------------------------------------------------------------- save.c */

vkattn_result vka_weights_save(const char *fn, const char *path, const vkattn_weights_tensor *t,
                               uint32_t count, const char *const *keys,
                               const char *const *values, uint32_t n_meta);

/* ---------------------------------------------------------------- layers */

/* prefix + name into buf; false (with a message) if it does not fit. */
bool vka_weights_full_name(const char *fn, const char *prefix, const char *name, char *buf,
                           size_t size);
/* A tensor of the file with an exact (F32/F16/BF16) dtype and this shape,
 * read into a new array; the message names `full` and `axes`. */
vkattn_result vka_weights_load_exact(vkattn_weights_file *f, const char *fn, const char *full,
                                     uint32_t rank, const uint64_t *dims, const char *axes,
                                     float **out);

/* torch_mha.c: dst (cols, rows) = src (rows, cols) transposed, src starting
 * at row r0, in a new array (NULL when out of memory). */
float *vka_weights_transposed(const float *src, uint64_t r0, uint64_t rows, uint64_t cols);
/* The tensor prefix + name with shape (d0[, d1]) (rank 1 or 2) into a new array. */
vkattn_result vka_weights_load_named(vkattn_weights_file *f, const char *fn, const char *prefix,
                                     const char *name, uint32_t rank, uint64_t d0, uint64_t d1,
                                     const char *axes, float **out);
/* Whether the file holds prefix + name. */
bool vka_weights_has(const vkattn_weights_file *f, const char *prefix, const char *name);

/* torch_mha.c: the PyTorch nn.MultiheadAttention state dict into Keras layout. */
vkattn_result vka_weights_load_torch_mha(vkattn_weights_file *f, const char *fn,
                                         const vkattn_mha_desc *desc, const char *prefix,
                                         vkattn_mha_weights *out);

/* llama_gqa.c: a Llama-style attention block (q_proj, k_proj, v_proj,
 * o_proj Linear weights) into GroupedQueryAttention's Keras layout; d from
 * vka_gqa_resolve_desc. */
struct vka_mha_dims;
vkattn_result vka_weights_load_llama_gqa(vkattn_weights_file *f, const char *fn,
                                         const struct vka_mha_dims *d, const char *prefix,
                                         vkattn_mha_weights *out);

/* open_model.c: with d->use_qk_norm q_norm.weight and k_norm.weight
 * (key_dim,) into out->query_norm and key_norm; with d->use_sinks sinks (heads,)
 * into out->sinks (Hugging Face's names, after prefix). Read by both the
 * PyTorch and the Llama names; on failure the caller frees what was read. */
vkattn_result vka_weights_load_open_model(vkattn_weights_file *f, const char *fn,
                                          const struct vka_mha_dims *d, const char *prefix,
                                          vkattn_mha_weights *out);

#endif /* VKA_WEIGHTS_INTERNAL_H */
