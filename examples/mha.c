/* MultiHeadAttention in a few steps: causal self-attention over one sequence,
 * d_model 8 with 2 heads (key_dim 4), weights in Keras layout, per-head
 * scores returned, and the result checked against the CPU reference.
 *
 * Exit status: 0 success, 77 no Vulkan device, 1 anything else. */
#include <math.h>
#include <stdio.h>

#include <vkattn/vkattn.h>

enum { B = 1, T = 4, D = 8, H = 2, KD = 4 }; /* batch, length, d_model, heads, key_dim */

/* Deterministic stand-ins for trained weights. */
static void fill(float *x, int n, float phase)
{
    for (int i = 0; i < n; i++)
        x[i] = 0.5f * sinf(0.7f * (float)i + phase);
}

static vkattn_tensor *tensor(vkattn_context *ctx, uint32_t n, const float *data)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {n}};
    vkattn_tensor *t = NULL;
    if (vkattn_tensor_create(ctx, &desc, &t) == VKATTN_SUCCESS && data)
        vkattn_tensor_upload(t, data, 0, n);
    return t;
}

int main(void)
{
    vkattn_context_desc cdesc = {0};
    vkattn_context *ctx;
    vkattn_result r = vkattn_context_create(&cdesc, &ctx);
    if (r == VKATTN_ERROR_NO_VULKAN || r == VKATTN_ERROR_NO_DEVICE) {
        printf("no Vulkan device: %s\n", vkattn_last_error());
        return 77;
    }
    if (r != VKATTN_SUCCESS) {
        printf("vkattn_context_create: %s\n", vkattn_last_error());
        return 1;
    }

    /* keras.layers.MultiHeadAttention(num_heads=2, key_dim=4) on (B, T, 8) inputs */
    vkattn_mha_desc desc = {.num_heads = H, .key_dim = KD, .query_width = D, .value_width = D};
    static float wq[D * H * KD], wk[D * H * KD], wv[D * H * KD], wo[H * KD * D];
    static float bq[H * KD], bk[H * KD], bv[H * KD], bo[D];
    fill(wq, D * H * KD, 0.0f), fill(wk, D * H * KD, 1.0f), fill(wv, D * H * KD, 2.0f);
    fill(wo, H * KD * D, 3.0f), fill(bq, H * KD, 4.0f), fill(bk, H * KD, 5.0f);
    fill(bv, H * KD, 6.0f), fill(bo, D, 7.0f);
    vkattn_mha_weights weights = {wq, bq, wk, bk, wv, bv, wo, bo};

    float x[B * T * D], out[B * T * D], scores[B * H * T * T];
    fill(x, B * T * D, 0.3f);

    vkattn_mha *mha = NULL;
    vkattn_tensor *tx = tensor(ctx, B * T * D, x), *tout = tensor(ctx, B * T * D, NULL);
    vkattn_tensor *tscores = tensor(ctx, B * H * T * T, NULL);
    vkattn_layer_call call = {.batch = B, .tq = T, .tv = T, .causal = VKATTN_CAUSAL_TOP_LEFT,
                              .return_attention_scores = true};
    /* self-attention: value = query, key omitted (= value) */
    vkattn_layer_io io = {.query = tx, .value = tx, .output = tout, .scores = tscores};
    int status = 1;
    if (!tx || !tout || !tscores || vkattn_mha_create(ctx, &desc, &mha) ||
        vkattn_mha_set_weights(mha, &weights) || vkattn_mha_record(mha, VKATTN_RUN_NOW, &call, &io) ||
        vkattn_tensor_download(tout, out, 0, B * T * D) ||
        vkattn_tensor_download(tscores, scores, 0, B * H * T * T)) {
        printf("failed: %s\n", vkattn_last_error());
        goto done;
    }

    /* the same call on the CPU reference */
    float ref[B * T * D], ref_scores[B * H * T * T];
    vkattn_layer_host_io host = {.query = x, .value = x, .output = ref, .scores = ref_scores};
    if (vkattn_reference_mha(&desc, &weights, &call, &host)) {
        printf("reference failed: %s\n", vkattn_last_error());
        goto done;
    }
    double err = 0.0;
    for (int i = 0; i < B * T * D; i++)
        err = fmax(err, fabs((double)out[i] - ref[i]));
    for (int i = 0; i < B * H * T * T; i++)
        err = fmax(err, fabs((double)scores[i] - ref_scores[i]));

    printf("head 0 attention weights (causal: row i sees keys 0..i):\n");
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < T; j++)
            printf(" %.3f", scores[i * T + j]);
        printf("\n");
    }
    printf("output[0] =");
    for (int e = 0; e < D; e++)
        printf(" %.4f", out[e]);
    printf("\nmax |GPU - reference| = %.2g\n", err);
    status = err <= 1e-5 ? 0 : 1;

done:
    vkattn_mha_destroy(mha);
    vkattn_tensor_destroy(tx), vkattn_tensor_destroy(tout), vkattn_tensor_destroy(tscores);
    vkattn_context_destroy(ctx);
    return status;
}
