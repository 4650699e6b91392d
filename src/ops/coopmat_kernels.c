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
/* The fused backward's dK/dV and dQ kernels (one module holds both), reading
 * f32 copies of its f16 operands or, with 16-bit storage, the f16 tensors;
 * NV2 has none (its matrices are the workgroup's). */
static const module backward[2][VKATTN_COOPMAT_FAMILIES] = {
    {MODULE(flash_backward_coopmat_nv), MODULE(flash_backward_coopmat_khr), {0},
     MODULE(flash_backward_coopmat_emu)},
    {MODULE(flash_backward_f16_coopmat_nv), MODULE(flash_backward_f16_coopmat_khr), {0},
     MODULE(flash_backward_f16_coopmat_emu)},
};

static void fill(const module *m, vka_kernel *k)
{
    k->name = m->name;
    k->code = m->code;
    k->code_size = m->size ? *m->size : 0;
}

void vka_coopmat_module(uint32_t family, vka_coopmat_kernel kernel, vka_kernel *k)
{
    fill(&(kernel == VKA_COOPMAT_MATMUL ? matmul : flash)[vka_coopmat_index(family)], k);
}

void vka_coopmat_backward_module(uint32_t family, bool f16, vka_kernel *k)
{
    fill(&backward[f16][vka_coopmat_index(family)], k);
}
