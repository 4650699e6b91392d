/* The dry-recording marker and the result of a prepare (vk/prepare.h). */
#include "vk/prepare.h"

#include "core/error.h"
#include "vkattn/context.h"

const char vka_dry_marker = 0;

vkattn_result vka_prepare_result(struct vkattn_context *ctx, const char *fn, vkattn_result r)
{
    if (r == VKATTN_SUCCESS)
        return r;
    return vka_fail(ctx, r, "%s: %s", fn, vkattn_context_last_error(ctx));
}
