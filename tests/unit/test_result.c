/* Result codes: every code in the X-macro list has a distinct value, its own
 * name and a message; unknown codes are named as such. Functions that need no
 * device report argument errors through vkattn_last_error(). */
#include "test_util.h"

#include <vkattn/vkattn.h>

#include <stdint.h>
#include <string.h>

static const vkattn_result all[] = {
#define X(name, value, msg) name,
    VKATTN_RESULT_LIST(X)
#undef X
};
#define N_RESULTS (sizeof all / sizeof all[0])

static void test_names_and_messages(void **state)
{
    (void)state;
    assert_int_equal(VKATTN_SUCCESS, 0);
    for (size_t i = 0; i < N_RESULTS; i++) {
        if (i > 0)
            assert_true(all[i] < 0);
        assert_non_null(strstr(vkattn_result_name(all[i]), "VKATTN_"));
        assert_true(strlen(vkattn_result_message(all[i])) > 0);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(all[i], all[j]);
            assert_string_not_equal(vkattn_result_name(all[i]), vkattn_result_name(all[j]));
        }
    }
    assert_string_equal(vkattn_result_name(VKATTN_ERROR_NO_VULKAN), "VKATTN_ERROR_NO_VULKAN");
    assert_string_equal(vkattn_result_name((vkattn_result)-999), "VKATTN_UNKNOWN_RESULT");
    assert_true(strlen(vkattn_result_message((vkattn_result)12345)) > 0);
}

static void test_context_free_errors(void **state)
{
    (void)state;
    assert_int_equal(vkattn_context_create(NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_context_create: out is NULL"));
    assert_int_equal(vkattn_enumerate_devices(NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "count is NULL"));
    assert_int_equal(vkattn_tensor_upload(NULL, NULL, 0, 1), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_matmul_record(NULL, VKATTN_RUN_NOW, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_timer_create(NULL, 1, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_string_equal(vkattn_context_last_error(NULL), "vkattn_context_last_error: ctx is NULL");
    vkattn_context_destroy(NULL);
    vkattn_tensor_destroy(NULL);
    vkattn_timer_destroy(NULL);
    uint32_t n = 99;
    assert_non_null(vkattn_required_device_extensions(&n));
    assert_int_equal(n, 0); /* nothing beyond Vulkan 1.1 since 0.2 */
    const vkattn_optional_extension *opt = vkattn_optional_device_extensions(&n);
    assert_true(n >= 1);
    assert_string_equal(opt[0].name, "VK_KHR_push_descriptor");
    assert_true(strlen(opt[0].benefit) > 10);
    const char *const *profiles = vkattn_profile_names(&n);
    assert_int_equal(n, 4);
    assert_string_equal(profiles[0], "desktop");
    assert_string_equal(profiles[1], "mobile-min");
    vkattn_context *ctx = (vkattn_context *)&n;
    vkattn_context_desc bad = {.profile = "phone"};
    assert_int_equal(vkattn_context_create(&bad, &ctx), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(vkattn_last_error(), "profile \"phone\" is unknown"));
}

/* The call fails with INVALID_ARGUMENT and exactly "fn: what is NULL". */
#define EXPECT_NULL(call, fn, what)                                                \
    do {                                                                           \
        assert_int_equal((call), VKATTN_ERROR_INVALID_ARGUMENT);                   \
        assert_string_equal(vkattn_last_error(), fn ": " what " is NULL");         \
    } while (0)

/* Every public *_record, given a real (here: made-up, never used) command
 * buffer and a NULL first argument, fails naming that argument before it
 * touches anything (vk/record_mode.h's VKA_RECORD_MODES checks it). */
static void test_record_null_first_argument(void **state)
{
    (void)state;
    VkCommandBuffer cmd = (VkCommandBuffer)(uintptr_t)0x1000;
    EXPECT_NULL(vkattn_matmul_record(NULL, cmd, NULL, NULL), "vkattn_matmul_record", "ctx");
    EXPECT_NULL(vkattn_matmul_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_matmul_backward_record", "ctx");
    EXPECT_NULL(vkattn_softmax_record(NULL, cmd, NULL, NULL), "vkattn_softmax_record", "ctx");
    EXPECT_NULL(vkattn_softmax_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_softmax_backward_record", "ctx");
    EXPECT_NULL(vkattn_additive_record(NULL, cmd, NULL, NULL), "vkattn_additive_record", "ctx");
    EXPECT_NULL(vkattn_additive_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_additive_backward_record", "ctx");
    EXPECT_NULL(vkattn_heads_split_record(NULL, cmd, NULL, NULL), "vkattn_heads_split_record",
                "ctx");
    EXPECT_NULL(vkattn_heads_merge_record(NULL, cmd, NULL, NULL), "vkattn_heads_merge_record",
                "ctx");
    EXPECT_NULL(vkattn_heads_split_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_heads_split_backward_record", "ctx");
    EXPECT_NULL(vkattn_heads_merge_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_heads_merge_backward_record", "ctx");
    EXPECT_NULL(vkattn_dropout_record(NULL, cmd, NULL, NULL), "vkattn_dropout_record", "ctx");
    EXPECT_NULL(vkattn_dropout_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_dropout_backward_record", "ctx");
    EXPECT_NULL(vkattn_sdpa_record(NULL, cmd, NULL, NULL), "vkattn_sdpa_record", "ctx");
    EXPECT_NULL(vkattn_sdpa_backward_record(NULL, cmd, NULL, NULL),
                "vkattn_sdpa_backward_record", "ctx");
    EXPECT_NULL(vkattn_sdpa_decode_record(NULL, cmd, NULL, NULL), "vkattn_sdpa_decode_record",
                "ctx");
    EXPECT_NULL(vkattn_mse_record(NULL, cmd, NULL, NULL), "vkattn_mse_record", "ctx");
    EXPECT_NULL(vkattn_optim_step_record(NULL, cmd, NULL, NULL), "vkattn_optim_step_record",
                "ctx");
    EXPECT_NULL(vkattn_kv_cache_append_record(NULL, cmd, NULL), "vkattn_kv_cache_append_record",
                "cache");
    EXPECT_NULL(vkattn_kv_cache_reset_record(NULL, cmd, 0), "vkattn_kv_cache_reset_record",
                "cache");
    EXPECT_NULL(vkattn_attention_record(NULL, cmd, NULL, NULL), "vkattn_attention_record",
                "layer");
    EXPECT_NULL(vkattn_additive_attention_record(NULL, cmd, NULL, NULL),
                "vkattn_additive_attention_record", "layer");
    EXPECT_NULL(vkattn_bahdanau_record(NULL, cmd, NULL, NULL), "vkattn_bahdanau_record", "layer");
    EXPECT_NULL(vkattn_mha_record(NULL, cmd, NULL, NULL), "vkattn_mha_record", "layer");
    EXPECT_NULL(vkattn_mha_record_cached(NULL, cmd, NULL, NULL, NULL), "vkattn_mha_record_cached",
                "layer");
    EXPECT_NULL(vkattn_gqa_record(NULL, cmd, NULL, NULL), "vkattn_gqa_record", "layer");
    EXPECT_NULL(vkattn_gqa_record_cached(NULL, cmd, NULL, NULL, NULL), "vkattn_gqa_record_cached",
                "layer");
    EXPECT_NULL(vkattn_attention_backward_record(NULL, cmd, NULL, NULL, NULL, NULL),
                "vkattn_attention_backward_record", "layer");
    EXPECT_NULL(vkattn_additive_attention_backward_record(NULL, cmd, NULL, NULL, NULL, NULL),
                "vkattn_additive_attention_backward_record", "layer");
    EXPECT_NULL(vkattn_bahdanau_backward_record(NULL, cmd, NULL, NULL, NULL, NULL),
                "vkattn_bahdanau_backward_record", "layer");
    EXPECT_NULL(vkattn_mha_backward_record(NULL, cmd, NULL, NULL, NULL, NULL),
                "vkattn_mha_backward_record", "layer");
    EXPECT_NULL(vkattn_gqa_backward_record(NULL, cmd, NULL, NULL, NULL, NULL),
                "vkattn_gqa_backward_record", "layer");
}

/* The layers' and tensors' functions that need no device, given NULL: each
 * create names out, then ctx (and clears *out first); each function of a
 * layer names the layer (core/error.h's VKA_CREATE_ARGS and
 * VKA_REQUIRE_OWNER_AND write these messages). */
static void test_object_null_arguments(void **state)
{
    (void)state;
    int junk;
    void *const poison = &junk;
#define EXPECT_CREATE(create, desc_type, fn)                                            \
    do {                                                                                \
        desc_type desc = {0};                                                           \
        EXPECT_NULL(create(NULL, &desc, NULL), fn, "out");                              \
        void *made = poison;                                                            \
        EXPECT_NULL(create(NULL, &desc, (void *)&made), fn, "ctx");                     \
        assert_null(made);                                                              \
    } while (0)
    EXPECT_CREATE(vkattn_tensor_create, vkattn_tensor_desc, "vkattn_tensor_create");
    EXPECT_CREATE(vkattn_attention_create, vkattn_attention_desc, "vkattn_attention_create");
    EXPECT_CREATE(vkattn_additive_attention_create, vkattn_additive_attention_desc,
                  "vkattn_additive_attention_create");
    EXPECT_CREATE(vkattn_bahdanau_create, vkattn_bahdanau_desc, "vkattn_bahdanau_create");
    EXPECT_CREATE(vkattn_mha_create, vkattn_mha_desc, "vkattn_mha_create");
    EXPECT_CREATE(vkattn_gqa_create, vkattn_gqa_desc, "vkattn_gqa_create");
#undef EXPECT_CREATE
    vkattn_attention_weights aw = {0};
    vkattn_additive_attention_weights dw = {0};
    vkattn_bahdanau_weights bw = {0};
    vkattn_mha_weights mw = {0};
    vkattn_attention_weight_tensors at = {0};
    vkattn_additive_attention_weight_tensors dt = {0};
    vkattn_bahdanau_weight_tensors bt = {0};
    vkattn_mha_weight_tensors mt = {0};
    EXPECT_NULL(vkattn_attention_set_weights(NULL, &aw), "vkattn_attention_set_weights", "layer");
    EXPECT_NULL(vkattn_attention_get_weights(NULL, &aw), "vkattn_attention_get_weights", "layer");
    EXPECT_NULL(vkattn_attention_get_weight_tensors(NULL, &at),
                "vkattn_attention_get_weight_tensors", "layer");
    EXPECT_NULL(vkattn_additive_attention_set_weights(NULL, &dw),
                "vkattn_additive_attention_set_weights", "layer");
    EXPECT_NULL(vkattn_additive_attention_get_weights(NULL, &dw),
                "vkattn_additive_attention_get_weights", "layer");
    EXPECT_NULL(vkattn_additive_attention_get_weight_tensors(NULL, &dt),
                "vkattn_additive_attention_get_weight_tensors", "layer");
    EXPECT_NULL(vkattn_bahdanau_set_weights(NULL, &bw), "vkattn_bahdanau_set_weights", "layer");
    EXPECT_NULL(vkattn_bahdanau_get_weights(NULL, &bw), "vkattn_bahdanau_get_weights", "layer");
    EXPECT_NULL(vkattn_bahdanau_get_weight_tensors(NULL, &bt),
                "vkattn_bahdanau_get_weight_tensors", "layer");
    EXPECT_NULL(vkattn_mha_set_weights(NULL, &mw), "vkattn_mha_set_weights", "layer");
    EXPECT_NULL(vkattn_mha_get_weights(NULL, &mw), "vkattn_mha_get_weights", "layer");
    EXPECT_NULL(vkattn_mha_get_weight_tensors(NULL, &mt), "vkattn_mha_get_weight_tensors",
                "layer");
    EXPECT_NULL(vkattn_gqa_set_weights(NULL, &mw), "vkattn_gqa_set_weights", "layer");
    EXPECT_NULL(vkattn_gqa_get_weights(NULL, &mw), "vkattn_gqa_get_weights", "layer");
    EXPECT_NULL(vkattn_gqa_get_weight_tensors(NULL, &mt), "vkattn_gqa_get_weight_tensors",
                "layer");
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(vkattn_get_version(), VKATTN_VERSION);
    assert_int_equal(VKATTN_VERSION >> 22, VKATTN_VERSION_MAJOR);
}

TU_MAIN(NULL, NULL,
    test_names_and_messages, test_context_free_errors, test_record_null_first_argument,
    test_object_null_arguments, test_version)
