/* keras.layers.Attention in a few steps: Luong dot-product attention with a
 * learned scale, a padding mask on the keys, a causal mask, the weights
 * returned, and the result checked against the CPU reference.
 *
 * Keras:  att = keras.layers.Attention(use_scale=True)
 *         out, w = att([query, value, key], mask=[None, value_mask],
 *                      use_causal_mask=True, return_attention_scores=True)
 *
 * Exit status: 0 success, 77 no Vulkan device, 1 anything else. */
#include <math.h>
#include <stdio.h>

#include <vkattn/vkattn.h>

enum { B = 2, TQ = 3, TV = 4, D = 6, DV = 5 }; /* batch, lengths, query/key and value widths */

static void fill(float *x, int n, float phase)
{
    for (int i = 0; i < n; i++)
        x[i] = sinf(0.9f * (float)i + phase);
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
    vkattn_context *ctx;
    vkattn_result r = vkattn_context_create(&(vkattn_context_desc){0}, &ctx);
    if (r == VKATTN_ERROR_NO_VULKAN || r == VKATTN_ERROR_NO_DEVICE) {
        printf("no Vulkan device: %s\n", vkattn_last_error());
        return 77;
    }
    if (r != VKATTN_SUCCESS) {
        printf("vkattn_context_create: %s\n", vkattn_last_error());
        return 1;
    }

    float q[B * TQ * D], k[B * TV * D], v[B * TV * DV];
    float vmask[B * TV] = {1, 1, 1, 0, /* batch 1: the last key is padding */ 1, 1, 1, 1};
    float out[B * TQ * DV], w[B * TQ * TV], ref[B * TQ * DV], ref_w[B * TQ * TV];
    fill(q, B * TQ * D, 0.0f), fill(k, B * TV * D, 1.0f), fill(v, B * TV * DV, 2.0f);

    vkattn_attention_desc desc = {.query_width = D, .key_width = D, .value_width = DV,
                                  .use_scale = true};
    vkattn_attention_weights weights = {.scale = 0.5f, .concat_score_weight = 1.0f};
    vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV,
                              .causal = VKATTN_CAUSAL_TOP_LEFT, /* use_causal_mask=True */
                              .return_attention_scores = true};
    vkattn_tensor *tq = tensor(ctx, B * TQ * D, q), *tk = tensor(ctx, B * TV * D, k);
    vkattn_tensor *tv = tensor(ctx, B * TV * DV, v), *tm = tensor(ctx, B * TV, vmask);
    vkattn_tensor *tout = tensor(ctx, B * TQ * DV, NULL), *tw = tensor(ctx, B * TQ * TV, NULL);
    vkattn_layer_io io = {.query = tq, .key = tk, .value = tv, .value_mask = tm,
                          .output = tout, .scores = tw};
    vkattn_attention *att = NULL;
    int status = 1;
    if (!tq || !tk || !tv || !tm || !tout || !tw || vkattn_attention_create(ctx, &desc, &att) ||
        vkattn_attention_set_weights(att, &weights) || vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io) ||
        vkattn_tensor_download(tout, out, 0, B * TQ * DV) ||
        vkattn_tensor_download(tw, w, 0, B * TQ * TV)) {
        printf("failed: %s\n", vkattn_last_error());
        goto done;
    }

    /* the same call on the CPU reference */
    vkattn_layer_host_io host = {.query = q, .key = k, .value = v, .value_mask = vmask,
                                 .output = ref, .scores = ref_w};
    if (vkattn_reference_attention(&desc, &weights, &call, &host)) {
        printf("reference failed: %s\n", vkattn_last_error());
        goto done;
    }
    double err = 0.0;
    for (int i = 0; i < B * TQ * DV; i++)
        err = fmax(err, fabs((double)out[i] - ref[i]));
    for (int i = 0; i < B * TQ * TV; i++)
        err = fmax(err, fabs((double)w[i] - ref_w[i]));
    printf("weights of query 2, batch 0: %.4f %.4f %.4f %.4f\n", w[8], w[9], w[10], w[11]);
    printf("max |GPU - reference| = %.3g\n", err);
    status = err < 1e-5 ? 0 : 1;
done:
    vkattn_attention_destroy(att);
    vkattn_tensor *all[] = {tq, tk, tv, tm, tout, tw};
    for (int i = 0; i < 6; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_context_destroy(ctx);
    return status;
}
