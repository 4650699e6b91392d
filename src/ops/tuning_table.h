/* The tuning table: which prepared variant (ops/variants.h) each kernel
 * family runs on a class of devices, keyed on what a device reports of
 * itself (vendor id, subgroup size, shared memory, the cooperative-matrix
 * families that passed their self-test), never on a device or PCI id, so a
 * new device of a known class gets its class's tiles. The rows come from
 * scripts/gpu-check.sh --sweep's winners (its sweep.json, "winners");
 * variant 0 is the library's own choice (gpu_tiles.c and the choosers). A
 * row's variant serves every call of its family on a matching device (the
 * choosers' smaller tiles for small problems do not apply: a row must be
 * measured at small shapes too before it lands), and where it does not fit
 * a call the library's choice does (ops/variant_select.c). */
#ifndef VKA_OPS_TUNING_TABLE_H
#define VKA_OPS_TUNING_TABLE_H

#include <stdint.h>

#include "vkattn/advanced.h"

typedef struct vka_tuning_row {
    uint32_t vendor_id;         /* PCI vendor (0x10de NVIDIA, ...); 0 = any */
    uint32_t subgroup_size;     /* 0 = any */
    uint32_t min_shared_memory; /* bytes the device has at least; 0 = any */
    uint32_t families;          /* VKATTN_COOPMAT_* bits that must run; 0 = none needed */
    uint8_t variants[VKATTN_VARIANT_FAMILIES]; /* per vkattn_variant_family; 0 = library's */
} vka_tuning_row;

/* The first row matching a device: its vendor, subgroup size and shared
 * memory, and `running` (vkattn_context_info.coopmat_running) holding the
 * row's families. Never NULL: the last row matches any device. */
const vka_tuning_row *vka_tuning_lookup(uint32_t vendor_id, uint32_t subgroup_size,
                                        uint32_t shared_memory, uint32_t running);

#endif /* VKA_OPS_TUNING_TABLE_H */
