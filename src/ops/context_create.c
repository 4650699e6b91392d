/* vkattn_context_create: the kernel variants asked for checked against the
 * families ops hold (ops/variants.h), the context (vk/context.c), then the
 * cooperative-matrix self-test that decides its tensor-core families
 * (ops/coopmat_selftest.h). The self-test runs ops and the variants are
 * ops', which vk/ may not reach, so the public entry point sits here, above
 * both. */
#include "core/error.h"
#include "ops/coopmat_selftest.h"
#include "ops/variants.h"
#include "vk/view.h"

#include "vkattn/advanced.h"

static vkattn_result check_variants(const vkattn_context_desc *desc)
{
    for (uint32_t f = 0; desc && desc->advanced && f < VKATTN_VARIANT_FAMILIES; f++)
        if (desc->advanced->variants[f] > vka_variant_count(f))
            /* not __func__: that is the versioned symbol (VKATTN_ABI_NAME) */
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "vkattn_context_create: advanced->variants[%u] (%s) is %u; the "
                            "family has variants 1 .. %u (0 = the library's choice)",
                            (unsigned)f, vka_variant_family_name(f),
                            (unsigned)desc->advanced->variants[f], (unsigned)vka_variant_count(f));
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_create(const vkattn_context_desc *desc, vkattn_context **out)
{
    vkattn_result r = check_variants(desc);
    if (r) {
        if (out)
            *out = NULL;
        return r;
    }
    r = vka_context_create(desc, out);
    if (r == VKATTN_SUCCESS)
        vka_coopmat_decide(*out);
    return r;
}
