/* A context-owned scratch buffer that only grows. A replaced buffer is
 * retired, not freed: command buffers recorded earlier may still use it;
 * vka_growable_destroy (at vkattn_context_destroy) frees them all. Growth is
 * geometric, capped at the binding limit, so the retired buffers add up to
 * less than the current one. */
#ifndef VKA_SCRATCH_H
#define VKA_SCRATCH_H

#include "vkattn/result.h"

#include <stdint.h>

struct vkattn_context;
struct vkattn_tensor;

typedef struct vka_growable {
    struct vkattn_tensor *current;
    struct vkattn_tensor **retired;
    uint32_t n_retired;
} vka_growable;

/* The buffer, grown to at least `count` floats first if needed. */
vkattn_result vka_growable_get(struct vkattn_context *ctx, vka_growable *g, uint64_t count,
                               const char *caller, struct vkattn_tensor **out);
void vka_growable_destroy(vka_growable *g);

#endif /* VKA_SCRATCH_H */
