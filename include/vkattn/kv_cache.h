/* vkattn/kv_cache.h - a key/value cache for autoregressive decoding.
 *
 * A cache holds, for each of `batch` sequences, up to `capacity` keys and
 * values per K/V head: K (B, Hkv, capacity, key_dim) and V (B, Hkv, capacity,
 * value_dim), f32, f16 or bf16 tensors (desc->dtype) the cache allocates or the
 * app's own (desc->keys, desc->values). Sequence b uses rows [0, L_b). The lengths L_b live on the
 * device, in a small buffer of one uint32 per sequence (and an overflow
 * flag), so a command buffer recorded once (append, then
 * vkattn_sdpa_decode_record, vkattn/decode.h) can be submitted step after
 * step with no re-recording: every kernel reads the lengths when it runs, and
 * the append advances them on the device.
 *
 * Call sequence: vkattn_kv_cache_create; per step vkattn_kv_cache_append_record
 * (the new tokens' K and V) then vkattn_sdpa_decode_record (their queries);
 * vkattn_kv_cache_reset_record to start a sequence over; vkattn_kv_cache_destroy.
 *
 * Host mirror of the lengths. The host knows the lengths after create (all
 * 0), after vkattn_kv_cache_set_lengths and vkattn_kv_cache_lengths (which
 * download them), and after every *_record given VKATTN_RUN_NOW (which
 * submits, waits and downloads them). Any other *_record makes them unknown:
 * the host cannot know whether or how often the command buffer runs. While they are known, an append that would
 * pass the capacity is refused on the host (VKATTN_ERROR_INVALID_ARGUMENT,
 * nothing recorded, cache unchanged). On the device, whatever the host knew:
 * a sequence whose append does not fit (length + count > capacity) gets no
 * row written and keeps its length, and the cache's overflow flag is set
 * (vkattn_kv_cache_lengths' overflowed; cleared by set_lengths and reset of every
 * sequence). No write can land past the capacity.
 *
 * Recording contract: as in vkattn/matmul.h. The cache's tensors and lengths
 * buffer are tracked like every vkattn tensor, so appends, resets and decodes
 * recorded one after another get exact barriers.
 * Thread safety: a cache is externally synchronized, like the tensors it
 * holds, and its functions are externally synchronized on its context too.
 *
 * Int8 cache (desc->dtype VKATTN_DTYPE_I8, as llama.cpp's q8 caches): each
 * row (one token of one K/V head) is stored as int8 with one fp32 scale,
 * quantized symmetrically by the append kernel:
 *   scale = max_e |x_e| / 127 (fp32), q_e = clamp(rne(x_e / scale), -127, 127)
 * (rne: round to nearest even; a zero row gives scale 0 and q 0; a row with
 * a NaN or infinity is stored undefined). The rule is bit-exact on devices
 * whose division is correctly rounded (lavapipe); Vulkan allows 2.5 ulp, so
 * elsewhere a scale may differ by a few ulps and a q by 1 next to a tie.
 * Decode reads the int8 in place and dequantizes in registers, x ~ q * scale
 * (|x - q * scale| <= scale / 2 = max|x| / 254 per element; the bound on
 * the output: docs/SEMANTICS.md). fp32 scales, not fp16: a row's scale takes
 * one 32-bit word either way (rows are whole words), and fp32 has no
 * overflow above 65504 * 127 or underflow below 2^-24 * 127 to handle.
 * Memory per row: width + 4 bytes, against 2 * width for f16 (dk 64: 68
 * against 128 bytes). key_dim and value_dim must be multiples of 4
 * (VKATTN_ERROR_UNSUPPORTED naming the field). App tensors (desc->keys,
 * desc->values) are refused (VKATTN_ERROR_UNSUPPORTED): the cache allocates
 * its storage. vkattn_kv_cache_get_desc's keys and values are then that
 * storage, rank-1 "f32" tensors of raw 32-bit words, B * Hkv * capacity *
 * width / 4 words of four int8 (element e of a row in byte e % 4, rows in
 * (b, K/V head, position) order) followed by B * Hkv * capacity fp32 scales
 * in the same row order: download them with vkattn_tensor_download_raw;
 * they are not values any other op can take.
 */
#ifndef VKATTN_KV_CACHE_H
#define VKATTN_KV_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_kv_cache vkattn_kv_cache;

typedef struct vkattn_kv_cache_desc {
    uint32_t batch;     /* sequences, >= 1 */
    uint32_t kv_heads;  /* >= 1 */
    uint32_t capacity;  /* keys per sequence, >= 1 */
    uint32_t key_dim;   /* >= 1, <= 256 for vkattn_sdpa_decode */
    uint32_t value_dim; /* 0 = key_dim */
    /* optional: the app's tensors (B, Hkv, capacity, key_dim / value_dim),
     * which must outlive the cache and are not destroyed by it; NULL = the
     * cache allocates its own (contents undefined until appended). Their
     * element counts must match (rank and dims are not checked), and their
     * element type must be `dtype`. */
    vkattn_tensor *keys, *values;
    /* Element type of K and V: VKATTN_DTYPE_F32 (0, the default),
     * VKATTN_DTYPE_F16 or VKATTN_DTYPE_BF16, which halve the cache's memory
     * and the bytes each decode step reads, or VKATTN_DTYPE_I8 (int8 and a
     * scale per row, about a quarter; the header comment). A 16-bit cache
     * needs even key_dim and value_dim, an int8 cache multiples of 4
     * (VKATTN_ERROR_UNSUPPORTED otherwise). Appends take f32, f16 or bf16 new
     * rows and convert them to the cache's type (into f16 as the device's
     * packHalf2x16 rounds: to nearest on most devices; into bf16 by vkattn's
     * own rounding to nearest even on every device, bit for bit the host's,
     * |x - x^| <= 2^-8 |x|; int8: the rule above). */
    vkattn_dtype dtype;
} vkattn_kv_cache_desc;

/* Creates a cache with every length 0. Codes: _INVALID_ARGUMENT (NULL ctx,
 * desc or out; a zero batch, kv_heads, capacity or key_dim; a dtype not f32,
 * f16, bf16 or i8; app tensors of the wrong size or type, or another context),
 * _UNSUPPORTED (a 16-bit cache with an odd key_dim or value_dim; an int8 cache
 * with one not a multiple of 4, or with app tensors), _SIZE_OVERFLOW, _DEVICE_LIMIT (a tensor
 * beyond maxStorageBufferRange or 2^32 elements), _OUT_OF_DEVICE_MEMORY,
 * Vulkan failures. */
VKATTN_API vkattn_result vkattn_kv_cache_create(vkattn_context *ctx,
                                                const vkattn_kv_cache_desc *desc,
                                                vkattn_kv_cache **out);
/* NULL-safe; the GPU must be done with it. App tensors are left alone. */
VKATTN_API void vkattn_kv_cache_destroy(vkattn_kv_cache *cache);

/* The desc the cache was created with, defaults resolved; its keys and values
 * are the cache's K and V tensors (owned by the cache or the app's), for
 * reading them or binding them to other ops, never NULL for a valid cache
 * (for an int8 cache: its raw storage, the header comment). */
VKATTN_API vkattn_kv_cache_desc vkattn_kv_cache_get_desc(const vkattn_kv_cache *cache);

/* Downloads the lengths (out[batch]; may be NULL) and the overflow flag
 * (*overflowed = true once a device-side append did not fit since the flag was
 * last cleared; may be NULL, not both) and refreshes the host mirror. Waits
 * for vkattn work on the context's queue; command buffers the app submitted
 * must have completed (as for vkattn_tensor_download). Codes:
 * _INVALID_ARGUMENT, Vulkan failures. */
VKATTN_API vkattn_result vkattn_kv_cache_lengths(vkattn_kv_cache *cache, uint32_t *out,
                                                 bool *overflowed);
/* Uploads lengths (lengths[batch], each <= capacity; for a cache whose
 * tensors the app filled itself) and clears the overflow flag. Same waiting
 * rules. Codes: _INVALID_ARGUMENT (a length above the capacity: nothing
 * changed), Vulkan failures. */
VKATTN_API vkattn_result vkattn_kv_cache_set_lengths(vkattn_kv_cache *cache,
                                                     const uint32_t *lengths);

/* New rows to append: k (B, Hkv, Tnew, key_dim) and v (B, Hkv, Tnew,
 * value_dim), rank-4 f32, f16 or bf16 tensors (converted to the cache's type)
 * whose B, Hkv and widths are the cache's, with the same Tnew >= 1. counts: optional (B) f32 tensor, the rows sequence b
 * takes (the first counts[b] of its Tnew; clamped to [0, Tnew], NaN as 0) for
 * ragged batches; NULL = Tnew for every sequence. */
typedef struct vkattn_kv_append_io {
    vkattn_tensor *k, *v;
    vkattn_tensor *counts;
} vkattn_kv_append_io;

/* Records: copy of sequence b's new rows to rows [L_b, L_b + n_b) of K and V,
 * then L_b += n_b, all read and written on the device (three dispatches).
 * Entry: reads k, v, counts and the lengths as a compute shader; exit: K, V
 * and the lengths written by a compute shader (vkattn orders its own later
 * use). Codes: _INVALID_ARGUMENT (NULL argument; k or v not rank 4, or
 * whose batch, heads or width differ from the cache's, or Tnew that differ;
 * counts too small; no counts, the host knows the lengths and an append past the
 * capacity), _DEVICE_LIMIT, Vulkan failures. On failure nothing is recorded
 * and the cache is unchanged. Makes the host mirror unknown. */
VKATTN_API vkattn_result vkattn_kv_cache_append_record(vkattn_kv_cache *cache,
                                                       VkCommandBuffer cmd,
                                                       const vkattn_kv_append_io *io);

/* Every sequence (VKATTN_KV_CACHE_ALL; also clears the overflow flag) or
 * sequence `seq` back to length 0; the rows are not cleared. Codes:
 * _INVALID_ARGUMENT (NULL, seq >= batch and not ALL). reset_record makes the
 * host mirror unknown (the host cannot know when it runs); with
 * VKATTN_RUN_NOW it leaves it known. */
#define VKATTN_KV_CACHE_ALL UINT32_MAX
VKATTN_API vkattn_result vkattn_kv_cache_reset_record(vkattn_kv_cache *cache, VkCommandBuffer cmd,
                                                      uint32_t seq);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_KV_CACHE_H */
