/* vkattn_context_create: the context (vk/context.c), then the
 * cooperative-matrix self-test that decides its tensor-core families
 * (ops/coopmat_selftest.h). The self-test runs ops, which vk/ may not call,
 * so the public entry point sits here, above both. */
#include "ops/coopmat_selftest.h"
#include "vk/context.h"

vkattn_result vkattn_context_create(const vkattn_context_desc *desc, vkattn_context **out)
{
    vkattn_result r = vka_context_create(desc, out);
    if (r == VKATTN_SUCCESS)
        vka_coopmat_decide(*out);
    return r;
}
