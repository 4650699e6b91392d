/* What every attnbench subcommand shares: opening a context (with optional
 * validation that fails the run), reporting vkattn failures, seeded random
 * inputs, tensors from host arrays, and the relative-error measure. */
#ifndef ATTNBENCH_COMMON_H
#define ATTNBENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vkattn/advanced.h>
#include <vkattn/vkattn.h>

#include "args.h"

/* Creates the context the flags ask for (--device, --validation). Returns an
 * exit status: 0, ATTNBENCH_EXIT_USAGE for a device index that does not
 * exist, ATTNBENCH_EXIT_CHECK for other failures (message printed). */
int ab_open_context(const ab_args *a, vkattn_context **ctx);
/* --coopmat's choices past vkattn_coopmat_mode's three: the emulation, and
 * one hardware family forced (ON with coopmat_families that family). */
enum { AB_COOPMAT_EMULATE = 3, AB_COOPMAT_NV = 4, AB_COOPMAT_KHR = 5, AB_COOPMAT_NV2 = 6 };
/* Sets adv's cooperative-matrix fields for a --coopmat choice. */
void ab_coopmat_settings(int choice, vkattn_context_advanced *adv);
/* The same, with the context's pipeline cache seeded from cache_data
 * (vkattn_context_desc.pipeline_cache_data; NULL/0 = empty). */
int ab_open_context_seeded(const ab_args *a, const void *cache_data, size_t cache_size,
                           vkattn_context **ctx);

/* Validation-layer warnings and errors seen so far (printed as they come). */
unsigned ab_validation_messages(void);
/* Why the last context ignored the pipeline cache data it was seeded with
 * (the library's words), or NULL if it took them. */
const char *ab_pipeline_cache_ignored(void);
/* The library's warning that a --variant did not fit the device or the call
 * (so the family's kernel did not run), or NULL. */
const char *ab_variant_unfit(void);
/* Whether an sdpa call ran on the split-K decode kernel (AUTO's few-row
 * route, the library's debug log) since the last call; clears it. */
bool ab_sdpa_decode_taken(void);
/* The driver's version as its vendor writes it (devices.c). */
void ab_driver_text(uint32_t vendor, uint32_t v, char *buf, size_t size);

/* Prints "attnbench: <what>: <code name>: <specific message>" on stderr and
 * returns ATTNBENCH_EXIT_CHECK. */
int ab_report(vkattn_context *ctx, vkattn_result r, const char *what);

/* Progress line on stderr (never stdout); rate-limited, and only for runs
 * that have already taken a while, so short runs stay quiet. */
void ab_progress(const char *fmt, ...);
double ab_now_s(void);

/* ------------------------------------------------------------ random data */
typedef struct ab_rng {
    uint64_t s;
} ab_rng;
uint64_t ab_rng_next(ab_rng *r);
/* uniform in [lo, hi) */
float ab_rng_float(ab_rng *r, float lo, float hi);
void ab_fill_uniform(ab_rng *r, float *x, size_t n, float lo, float hi);
/* 0/1 values, each 0 with probability `ratio` (a random mask) */
void ab_fill_mask(ab_rng *r, float *x, size_t n, double ratio);

/* malloc of n floats; prints and returns NULL on failure, and for an n whose
 * bytes overflow size_t */
float *ab_floats(size_t n);

/* ------------------------------------------------------------ tensors */
/* Creates a tensor of the given shape, uploading `data` when non-NULL. */
vkattn_result ab_tensor(vkattn_context *ctx, uint32_t rank, const uint32_t *dims, const float *data,
                        vkattn_tensor **out);
/* The same with an element type: an f16 tensor rounds `data` to nearest even. */
vkattn_result ab_tensor_typed(vkattn_context *ctx, uint32_t rank, const uint32_t *dims,
                              vkattn_dtype dtype, const float *data, vkattn_tensor **out);
/* Shorthands for rank 1..4 */
vkattn_result ab_tensor4(vkattn_context *ctx, uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3,
                         const float *data, vkattn_tensor **out);

/* ------------------------------------------------------------ errors */
/* max|got - ref| / max|ref| (max|got - ref| when ref is all zero). A NaN or
 * inf in got where ref is finite gives INFINITY; NaN in both counts as equal. */
double ab_max_rel_err(const float *got, const float *ref, size_t n);
/* max|got - ref| with the same NaN rules */
double ab_max_abs_err(const float *got, const float *ref, size_t n);
/* A case file's tolerance: |got - want| <= atol + rtol * |want| everywhere
 * (NaN never passes). */
bool ab_within_tolerance(const float *got, const float *want, size_t n, double atol, double rtol);
/* The larger of two errors, NaN winning (a NaN error must not be hidden). */
double ab_worse_err(double a, double b);

/* ------------------------------------------------------------ buffers */
/* A tensor with its host twin: the inputs ops are set up with and the
 * outputs they are checked on. */
typedef struct ab_buf {
    float *host;
    size_t n;
    vkattn_tensor *t;
} ab_buf;

/* Creates b's tensor of that shape and its host array; with rng, fills it
 * uniformly in [lo, hi) and uploads it (an input), else leaves both
 * undefined (an output). */
vkattn_result ab_buf_make(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                          ab_rng *rng, float lo, float hi);
/* As ab_buf_make, of a tensor of dtype: the host twin then holds the values
 * the tensor holds (inputs drawn, uploaded, rounded by the library, and read
 * back). */
vkattn_result ab_buf_make_as(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                             ab_rng *rng, float lo, float hi, vkattn_dtype dtype);
/* An input 0/1 mask with a fraction `ratio` of zeros. */
vkattn_result ab_buf_mask(vkattn_context *ctx, ab_buf *b, uint32_t rank, const uint32_t *dims,
                          ab_rng *rng, double ratio);

/* Several buffers of an op made together (ab_bufs_make). */
typedef enum ab_fill {
    AB_FILL_NONE,    /* an output: the host array is left undefined */
    AB_FILL_UNIFORM, /* an input uniform in [lo, hi), then the values of its dtype */
    AB_FILL_MASK,    /* an input 0/1 mask with a fraction `ratio` of zeros */
} ab_fill;
typedef struct ab_buf_spec {
    ab_buf *b;
    uint32_t rank;
    uint32_t dims[VKATTN_MAX_RANK];
    vkattn_dtype dtype; /* the tensor's (0: f32) */
    ab_fill fill;
    float lo, hi;
    double ratio;
    bool absent; /* not made: an optional input or output the flags leave out */
} ab_buf_spec;
/* Spec shorthands: AB_INPUT(&buf, lo, hi, dtype, dims...) drawn uniform in
 * [lo, hi), AB_OUTPUT(&buf, dtype, dims...); designated fields may follow
 * (.absent = !flag). */
#define AB_SPEC_DIMS(...) .rank = sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), .dims = {__VA_ARGS__}
#define AB_INPUT(buf, lo_, hi_, dt, ...)                                                       \
    .b = (buf), .dtype = (dt), .fill = AB_FILL_UNIFORM, .lo = (lo_), .hi = (hi_),             \
    AB_SPEC_DIMS(__VA_ARGS__)
#define AB_OUTPUT(buf, dt, ...) .b = (buf), .dtype = (dt), AB_SPEC_DIMS(__VA_ARGS__)
#define AB_MASK(buf, ratio_, ...)                                                              \
    .b = (buf), .fill = AB_FILL_MASK, .ratio = (ratio_), AB_SPEC_DIMS(__VA_ARGS__)
/* Creates every spec's tensor first, so that the library checks each size
 * against the device before any host array is allocated, then the host
 * arrays, drawn from rng and uploaded in the order given (the same values as
 * ab_buf_make_as / ab_buf_mask one after another). On failure the buffers
 * made so far stay for ab_buf_free. */
vkattn_result ab_bufs_make(vkattn_context *ctx, ab_rng *rng, const ab_buf_spec *specs, size_t n);
/* ab_bufs_make's two halves, for an op that draws more (a layer's weights)
 * between them: the tensors, then the host arrays. */
vkattn_result ab_bufs_create(vkattn_context *ctx, const ab_buf_spec *specs, size_t n);
vkattn_result ab_bufs_fill(ab_rng *rng, const ab_buf_spec *specs, size_t n);
void ab_buf_free(ab_buf *b);

/* The common --check: poisons every output tensor with NaN, runs
 * record(state) once, downloads them, and compares outs[i] with refs[i]
 * (host arrays of outs[i]->n floats); *err = the largest max_rel_err.
 * Returns an exit status for runtime failures. */
int ab_check_outputs(vkattn_context *ctx, vkattn_result (*record)(void *, VkCommandBuffer),
                     void *state, ab_buf *const *outs, float *const *refs, size_t n_outs,
                     double *err);

/* Runs record(state, cmd) once on the context's one-shot command buffer. */
/* One value to and from f16 bits (vkattn/half.h's array forms). */
uint16_t ab_f16_bits(float x);
float ab_f16_to_f32(uint16_t bits);
/* The value of a 16-bit element of dtype (f16, or bf16: the bits are the
 * high half of an f32), exactly. */
float ab_half_value(vkattn_dtype dtype, uint16_t bits);
/* "f32", "f16", "bf16" (as --dtype takes them). */
const char *ab_dtype_name(vkattn_dtype dtype);

/* Host values made the ones a tensor of `dtype` holds, by the library's own
 * rounding (a scratch tensor written and read back), so a reference computes
 * on exactly what the device reads; f32 leaves them. The first failure stays
 * in `result` and later calls do nothing, so a caller checks once. */
typedef struct ab_rounder {
    vkattn_context *ctx;
    vkattn_dtype dtype;
    vkattn_result result;
} ab_rounder;
void ab_round_values(ab_rounder *r, float *x, size_t n);

vkattn_result ab_run_once(vkattn_context *ctx, vkattn_result (*record)(void *, VkCommandBuffer),
                          void *state);

#endif
