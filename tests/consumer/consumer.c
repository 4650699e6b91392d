/* A program built against an installed vkattn: it links, loads, and reports
 * its version and, where a device exists, the device name. */
#include <vkattn/vkattn.h>

#include <stdio.h>

int main(void)
{
    if (vkattn_get_version() != VKATTN_VERSION) {
        fprintf(stderr, "header and library versions differ\n");
        return 1;
    }
    printf("vkattn %s, %s\n", VKATTN_VERSION_STRING, vkattn_result_name(VKATTN_ERROR_NO_VULKAN));
    uint32_t n = 0;
    vkattn_result r = vkattn_enumerate_devices(NULL, &n);
    printf("devices: %u (%s)\n", n, vkattn_result_name(r));
    return 0;
}
