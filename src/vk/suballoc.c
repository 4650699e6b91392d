/* First-fit ranges of a block: see suballoc.h. */
#include "vk/suballoc.h"

#include <stdlib.h>
#include <string.h>

bool vka_suballoc_init(vka_suballoc *s, uint64_t size)
{
    *s = (vka_suballoc){.size = size};
    s->free = malloc(4 * sizeof *s->free);
    if (!s->free)
        return false;
    s->cap_free = 4;
    s->free[0] = (vka_range){0, size};
    s->n_free = 1;
    return true;
}

void vka_suballoc_destroy(vka_suballoc *s)
{
    free(s->free);
    *s = (vka_suballoc){0};
}

/* Free ranges never outnumber allocations + 1 (each gap lies between two of
 * them or at an end); keeping room for that many now means a free never has
 * to grow the array and so cannot fail. */
static bool reserve(vka_suballoc *s, uint32_t allocs_after)
{
    uint32_t need = allocs_after + 2; /* + 1 spare for the split below */
    if (need <= s->cap_free)
        return true;
    uint32_t cap = s->cap_free * 2 > need ? s->cap_free * 2 : need;
    vka_range *f = realloc(s->free, cap * sizeof *f);
    if (!f)
        return false;
    s->free = f;
    s->cap_free = cap;
    return true;
}

vka_suballoc_status vka_suballoc_alloc(vka_suballoc *s, uint64_t size, uint64_t align,
                                       vka_range *out)
{
    if (align < 1)
        align = 1;
    if (size == 0)
        size = 1;
    for (uint32_t i = 0; i < s->n_free; i++) {
        vka_range f = s->free[i];
        uint64_t start = (f.offset + align - 1) & ~(align - 1);
        uint64_t pad = start - f.offset;
        if (start < f.offset || pad > f.size || f.size - pad < size)
            continue;
        if (!reserve(s, s->n_allocs + 1))
            return VKA_SUBALLOC_NO_HOST;
        uint64_t tail = f.size - pad - size;
        /* the padding stays free, in front of the range handed out */
        if (pad && tail) {
            memmove(&s->free[i + 2], &s->free[i + 1], (s->n_free - i - 1) * sizeof *s->free);
            s->free[i] = (vka_range){f.offset, pad};
            s->free[i + 1] = (vka_range){start + size, tail};
            s->n_free++;
        } else if (pad) {
            s->free[i] = (vka_range){f.offset, pad};
        } else if (tail) {
            s->free[i] = (vka_range){start + size, tail};
        } else {
            memmove(&s->free[i], &s->free[i + 1], (s->n_free - i - 1) * sizeof *s->free);
            s->n_free--;
        }
        *out = (vka_range){start, size};
        s->used += size;
        s->n_allocs++;
        return VKA_SUBALLOC_OK;
    }
    return VKA_SUBALLOC_NO_FIT;
}

void vka_suballoc_free(vka_suballoc *s, vka_range r)
{
    uint32_t i = 0; /* the first free range after r */
    while (i < s->n_free && s->free[i].offset < r.offset)
        i++;
    bool join_prev = i > 0 && s->free[i - 1].offset + s->free[i - 1].size == r.offset;
    bool join_next = i < s->n_free && r.offset + r.size == s->free[i].offset;
    if (join_prev && join_next) {
        s->free[i - 1].size += r.size + s->free[i].size;
        memmove(&s->free[i], &s->free[i + 1], (s->n_free - i - 1) * sizeof *s->free);
        s->n_free--;
    } else if (join_prev) {
        s->free[i - 1].size += r.size;
    } else if (join_next) {
        s->free[i].offset = r.offset;
        s->free[i].size += r.size;
    } else {
        /* room reserved by vka_suballoc_alloc */
        memmove(&s->free[i + 1], &s->free[i], (s->n_free - i) * sizeof *s->free);
        s->free[i] = r;
        s->n_free++;
    }
    s->used -= r.size;
    s->n_allocs--;
}
