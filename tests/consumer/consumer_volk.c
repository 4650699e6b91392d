/* An app that loads Vulkan itself with volk and uses vkattn beside it, built
 * against an installed vkattn. Compiled twice:
 *   VOLK_FIRST      volk.h, then vkattn.h; nothing else needed.
 *   (not defined)   vkattn.h, then volk.h; VK_NO_PROTOTYPES is defined for
 *                   the whole program (the rule in vkattn/vkattn.h).
 * It links volk.c itself: a static vkattn that leaked volk's globals would
 * collide with this program's at link time. */
#ifdef VOLK_FIRST
#include <volk.h>
#include <vkattn/vkattn.h>
#else
#ifndef VK_NO_PROTOTYPES
#error "this variant is built with VK_NO_PROTOTYPES defined project-wide"
#endif
#include <vkattn/vkattn.h>
#include <volk.h>
#endif

#include <stdio.h>

int main(void)
{
    if (vkattn_get_version() != VKATTN_VERSION) {
        fprintf(stderr, "header and library versions differ\n");
        return 1;
    }
    /* The app's own volk, loaded or not, and vkattn's loader are independent. */
    VkResult vr = volkInitialize();
    if (vr == VK_SUCCESS && !vkCreateInstance) {
        fprintf(stderr, "volk loaded but the app's vkCreateInstance is NULL\n");
        return 1;
    }
    uint32_t n = 0;
    vkattn_result r = vkattn_enumerate_devices(NULL, &n);
    printf("volk %s, vkattn devices: %u (%s)\n", vr == VK_SUCCESS ? "loaded" : "no loader", n,
           vkattn_result_name(r));
    return r == VKATTN_SUCCESS || r == VKATTN_ERROR_NO_VULKAN ? 0 : 1;
}
