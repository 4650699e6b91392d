/* vka_record_dry_first (src/vk/prepare.c, compiled into this test: the
 * library hides its internal symbols): a recording runs dry before it
 * reaches the command buffer, a refusal in the dry pass leaves the command
 * buffer untouched, a dry command buffer is recorded once, and a call nested
 * inside a checked real pass on the same context runs once (its dry pass
 * already ran inside the outer one), on another context twice. No device:
 * the contexts and command buffer are stand-ins the mechanism only compares. */
#include "test_util.h"

#include <string.h>

#include "vk/prepare.h"

typedef struct trace {
    char passes[32]; /* 'D' dry, 'R' real, upper case outer, lower case inner */
    int n;
    bool fail_dry;              /* the outer recording refuses when dry */
    struct vkattn_context *inner_ctx; /* the nested call's context, NULL: none */
} trace;

static const char ctx_a, ctx_b, real_cmd;
#define CTX_A ((struct vkattn_context *)(uintptr_t)&ctx_a)
#define CTX_B ((struct vkattn_context *)(uintptr_t)&ctx_b)
#define REAL_CMD ((VkCommandBuffer)(uintptr_t)&real_cmd)

static vkattn_result inner(struct vkattn_context *ctx, VkCommandBuffer cmd, const void *op)
{
    (void)ctx;
    trace *t = (trace *)(uintptr_t)op;
    t->passes[t->n++] = vka_is_dry(cmd) ? 'd' : 'r';
    return VKATTN_SUCCESS;
}

static vkattn_result outer(struct vkattn_context *ctx, VkCommandBuffer cmd, const void *op)
{
    trace *t = (trace *)(uintptr_t)op;
    t->passes[t->n++] = vka_is_dry(cmd) ? 'D' : 'R';
    if (t->fail_dry && vka_is_dry(cmd))
        return VKATTN_ERROR_INVALID_ARGUMENT;
    if (t->inner_ctx)
        return vka_record_dry_first(t->inner_ctx, cmd, inner, t);
    (void)ctx;
    return VKATTN_SUCCESS;
}

static void run(trace *t, VkCommandBuffer cmd, vkattn_result want, const char *passes)
{
    assert_int_equal(vka_record_dry_first(CTX_A, cmd, outer, t), want);
    t->passes[t->n] = '\0';
    assert_string_equal(t->passes, passes);
    /* no state left behind: a later call on the thread is checked afresh */
    assert_false(vka_record_checked(CTX_A, REAL_CMD));
}

static void dry_then_real(void **state)
{
    (void)state;
    trace t = {0};
    run(&t, REAL_CMD, VKATTN_SUCCESS, "DR");
}

static void refused_dry_records_nothing(void **state)
{
    (void)state;
    trace t = {.fail_dry = true};
    run(&t, REAL_CMD, VKATTN_ERROR_INVALID_ARGUMENT, "D");
}

static void dry_cmd_once(void **state)
{
    (void)state;
    trace t = {.inner_ctx = CTX_A};
    run(&t, VKA_DRY_CMD, VKATTN_SUCCESS, "Dd");
}

static void nested_same_context_checked_once(void **state)
{
    (void)state;
    trace t = {.inner_ctx = CTX_A};
    run(&t, REAL_CMD, VKATTN_SUCCESS, "DdRr");
}

static void nested_other_context_checked_again(void **state)
{
    (void)state;
    trace t = {.inner_ctx = CTX_B};
    run(&t, REAL_CMD, VKATTN_SUCCESS, "DdRdr");
}

TU_MAIN(NULL, NULL,
    dry_then_real, refused_dry_records_nothing, dry_cmd_once, nested_same_context_checked_once,
    nested_other_context_checked_again)
