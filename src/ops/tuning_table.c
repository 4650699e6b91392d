/* The tuning table's rows (see tuning_table.h). A GPU run of
 * `scripts/gpu-check.sh --sweep` adds a row above the catch-all per device
 * class it measured (sweep.json's "winners" give the key and the variants);
 * until then the catch-all keeps the library's own choices everywhere. */
#include "ops/tuning_table.h"

#include <stddef.h>

static const vka_tuning_row rows[] = {
    /* any device: the library's choosers (gpu_tiles.c, flash_backward_gpu_tiles.c) */
    {0, 0, 0, 0, {0, 0, 0, 0, 0}},
};

const vka_tuning_row *vka_tuning_lookup(uint32_t vendor_id, uint32_t subgroup_size,
                                        uint32_t shared_memory, uint32_t running)
{
    const size_t n = sizeof rows / sizeof rows[0];
    for (size_t i = 0; i < n; i++) {
        const vka_tuning_row *r = &rows[i];
        if ((!r->vendor_id || r->vendor_id == vendor_id) &&
            (!r->subgroup_size || r->subgroup_size == subgroup_size) &&
            shared_memory >= r->min_shared_memory && (running & r->families) == r->families)
            return r;
    }
    return &rows[n - 1];
}
