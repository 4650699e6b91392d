/* vkattn/weights.h in a build without jansson (VKATTN_SAFETENSORS=OFF; the
 * mingw-w64 cross build, which has no jansson package): no safetensors file
 * can be opened or written, so every function that would read or write one
 * returns VKATTN_ERROR_UNSUPPORTED with a message saying why. The layer
 * mappings (keras_layers.c, torch_mha.c, llama_gqa.c) are compiled
 * unchanged; they can never be handed an open file. */
#include "weights/weights_internal.h"

#include <stdio.h>

#include "core/error.h"

#define WHY "vkattn was built without jansson (VKATTN_SAFETENSORS=OFF): no safetensors files"

/* file.c's, for the mappings' messages (unreachable here: no file opens) */
void vka_weights_shape_text(uint32_t rank, const uint64_t *dims, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "(");
    for (uint32_t i = 0; i < rank && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, i ? ", %llu" : "%llu", (unsigned long long)dims[i]);
    if (o < size)
        snprintf(buf + o, size - o, rank == 1 ? ",)" : ")");
}

vkattn_result vkattn_weights_file_open(const char *path, vkattn_weights_file **out)
{
    (void)path;
    if (out)
        *out = NULL;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "vkattn_weights_file_open: " WHY);
}

vkattn_result vkattn_weights_file_open_memory(const void *data, size_t size, const char *label,
                                              vkattn_weights_file **out)
{
    (void)data, (void)size, (void)label;
    if (out)
        *out = NULL;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "vkattn_weights_file_open_memory: " WHY);
}

void vkattn_weights_file_close(vkattn_weights_file *f) { (void)f; }

uint32_t vkattn_weights_file_count(const vkattn_weights_file *f)
{
    (void)f;
    return 0;
}

vkattn_result vkattn_weights_file_tensor(const vkattn_weights_file *f, uint32_t index,
                                         vkattn_weights_tensor_info *info)
{
    (void)f, (void)index, (void)info;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "vkattn_weights_file_tensor: " WHY);
}

const vkattn_weights_tensor_info *vka_weights_lookup(const vkattn_weights_file *f,
                                                     const char *name)
{
    (void)f, (void)name;
    return NULL;
}

vkattn_result vkattn_weights_file_find(const vkattn_weights_file *f, const char *name,
                                       vkattn_weights_tensor_info *info)
{
    (void)f, (void)name, (void)info;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "vkattn_weights_file_find: " WHY);
}

const char *vkattn_weights_file_metadata(const vkattn_weights_file *f, const char *key)
{
    (void)f, (void)key;
    return NULL;
}

vkattn_result vka_weights_read(vkattn_weights_file *f, const char *fn,
                               const vkattn_weights_tensor_info *info, float *dst)
{
    (void)f, (void)info, (void)dst;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "%s: " WHY, fn);
}

vkattn_result vkattn_weights_file_read(vkattn_weights_file *f, const char *name, float *dst,
                                       uint64_t count)
{
    (void)f, (void)name, (void)dst, (void)count;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "vkattn_weights_file_read: " WHY);
}

vkattn_result vka_weights_save(const char *fn, const char *path, const vkattn_weights_tensor *t,
                               uint32_t count, const char *const *keys,
                               const char *const *values, uint32_t n_meta)
{
    (void)path, (void)t, (void)count, (void)keys, (void)values, (void)n_meta;
    return vka_fail(NULL, VKATTN_ERROR_UNSUPPORTED, "%s: " WHY, fn);
}

vkattn_result vkattn_weights_save(const char *path, const vkattn_weights_tensor *tensors,
                                  uint32_t count, const char *const *metadata_keys,
                                  const char *const *metadata_values, uint32_t metadata_count)
{
    return vka_weights_save(__func__, path, tensors, count, metadata_keys,
                            metadata_values, metadata_count);
}
