/* Ranges of one memory block: first fit with alignment, coalescing on free.
 *
 * Pure bookkeeping over [0, size) (no Vulkan calls), so memory.c decides what
 * a block is. The free list is an array sorted by offset; a block holds few
 * free ranges because neighbours merge, so linear scans are cheap next to a
 * vkAllocateMemory. Freeing never allocates: vka_suballoc_alloc reserves the
 * entry a later free may need. */
#ifndef VKA_SUBALLOC_H
#define VKA_SUBALLOC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct vka_range {
    uint64_t offset, size;
} vka_range;

typedef struct vka_suballoc {
    uint64_t size; /* of the whole block */
    uint64_t used; /* bytes handed out, alignment padding included */
    uint32_t n_allocs;
    vka_range *free; /* sorted by offset, never adjacent (merged) */
    uint32_t n_free, cap_free;
} vka_suballoc;

typedef enum vka_suballoc_status {
    VKA_SUBALLOC_OK = 0,
    VKA_SUBALLOC_NO_FIT = 1,   /* no free range is large enough */
    VKA_SUBALLOC_NO_HOST = 2,  /* out of host memory for the free list */
} vka_suballoc_status;

/* A block of `size` bytes, all free. false: out of host memory. */
bool vka_suballoc_init(vka_suballoc *s, uint64_t size);
void vka_suballoc_destroy(vka_suballoc *s);

/* The first free range that holds `size` bytes at a multiple of `align`
 * (a power of two, or 0/1 for none). *out receives the range handed out:
 * its offset is aligned and it is exactly what vka_suballoc_free takes back
 * (padding before an aligned offset stays free). */
vka_suballoc_status vka_suballoc_alloc(vka_suballoc *s, uint64_t size, uint64_t align,
                                       vka_range *out);

/* Returns a range from vka_suballoc_alloc, merging it with free neighbours. */
void vka_suballoc_free(vka_suballoc *s, vka_range r);

#endif /* VKA_SUBALLOC_H */
