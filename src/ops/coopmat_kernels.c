/* The cooperative-matrix kernels' modules per family (ops/coopmat_kernels.h). */
#include "ops/coopmat_kernels.h"

#include "vka_shaders.h"

typedef struct module {
    const char *name;
    const uint32_t *code;
    const size_t *size;
} module;

#define MODULE(x) {#x, vka_spv_##x, &vka_spv_##x##_size}

/* By family index (vka_coopmat_index): NV, KHR, NV2, emulated. */
static const module matmul[VKATTN_COOPMAT_FAMILIES] = {
    MODULE(matmul_coopmat_nv),
    MODULE(matmul_coopmat_khr),
    MODULE(matmul_coopmat2_nv),
    MODULE(matmul_coopmat_emu),
};
static const module flash[VKATTN_COOPMAT_FAMILIES] = {
    MODULE(flash_coopmat_nv),
    MODULE(flash_coopmat_khr),
    MODULE(flash_coopmat2_nv),
    MODULE(flash_coopmat_emu),
};

void vka_coopmat_module(uint32_t family, vka_coopmat_kernel kernel, vka_kernel *k)
{
    const module *m = &(kernel == VKA_COOPMAT_MATMUL ? matmul : flash)[vka_coopmat_index(family)];
    k->name = m->name;
    k->code = m->code;
    k->code_size = m->size ? *m->size : 0;
}
