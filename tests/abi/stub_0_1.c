/* A stand-in for the vkattn 0.1.0 shared library (soname libvkattn.so.0): the
 * four entry points tests/abi/app_0_1.c uses, with 0.1's layouts. The app is
 * linked against it as it once was against the real 0.1; no Vulkan needed. */
#include <string.h>

#include "vkattn_0_1.h"

static int the_context;

uint32_t vkattn_get_version(void) { return (0u << 22) | (1u << 12) | 0u; }

int vkattn_context_create(const vkattn_context_desc *desc, vkattn_context **out)
{
    (void)desc;
    *out = (vkattn_context *)&the_context;
    return 0;
}

int vkattn_context_get_info(const vkattn_context *ctx, vkattn_context_info *info)
{
    (void)ctx;
    memset(info, 0, sizeof *info); /* exactly the 0.1 struct */
    strcpy(info->device_name, "vkattn 0.1 stand-in");
    return 0;
}

void vkattn_context_destroy(vkattn_context *ctx) { (void)ctx; }
