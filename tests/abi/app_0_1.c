/* An app built against vkattn 0.1's header (tests/abi/vkattn_0_1.h) and linked
 * against a 0.1 library (soname libvkattn.so.0). It creates a context and asks
 * for its info into a 0.1-sized struct followed by guard bytes, and reports any
 * guard byte the library wrote. tests/abi/loader_refuses.sh runs it against
 * today's library, where the loader must refuse it before any call.
 * Exit status: 0 the library kept to the 0.1 layout; 1 it wrote past it;
 * 2 no context (no device, say). */
#include <stdio.h>
#include <string.h>

#include "vkattn_0_1.h"

enum { GUARD = 0xA5, GUARD_BYTES = 512 };

int main(void)
{
    /* zero after the desc: a library that reads past it reads defaults, so
     * what this app can see (writes) is not hidden behind a crash */
    static struct {
        vkattn_context_desc desc;
        unsigned char after[GUARD_BYTES];
    } in;
    static struct {
        vkattn_context_info info;
        unsigned char guard[GUARD_BYTES];
    } out;
    memset(out.guard, GUARD, sizeof out.guard);

    uint32_t v = vkattn_get_version();
    printf("library version %u.%u.%u\n", v >> 22, (v >> 12) & 0x3FFu, v & 0xFFFu);
    vkattn_context *ctx = NULL;
    if (vkattn_context_create(&in.desc, &ctx) != 0) {
        printf("no context\n");
        return 2;
    }
    int r = vkattn_context_get_info(ctx, &out.info);
    vkattn_context_destroy(ctx);
    size_t past = 0;
    for (size_t i = 0; i < sizeof out.guard; i++)
        past = out.guard[i] != GUARD ? i + 1 : past;
    if (past) {
        printf("vkattn_context_get_info wrote %zu bytes past the 0.1 vkattn_context_info "
               "(%zu bytes)\n", past, sizeof out.info);
        return 1;
    }
    printf("ok: get_info (%d) kept within the 0.1 vkattn_context_info (%zu bytes): %s\n", r,
           sizeof out.info, out.info.device_name);
    return 0;
}
