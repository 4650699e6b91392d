/* keras.layers.AdditiveAttention in a few steps: Bahdanau-style scores with
 * the learned per-feature scale, a query mask (its rows of the output become
 * 0, the weights do not), key omitted (key = value), checked against the CPU
 * reference.
 *
 * Keras:  att = keras.layers.AdditiveAttention()      # use_scale=True
 *         att.scale.assign(scale)
 *         out = att([query, value], mask=[query_mask, None])
 *
 * Exit status: 0 success, 77 no Vulkan device, 1 anything else. */
#include <math.h>
#include <stdio.h>

#include <vkattn/vkattn.h>

enum { B = 1, TQ = 4, TV = 5, D = 8 }; /* batch, lengths, width (query = key = value) */

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

    float q[B * TQ * D], v[B * TV * D], scale[D], qmask[B * TQ] = {1, 1, 0, 1};
    float out[B * TQ * D], ref[B * TQ * D];
    fill(q, B * TQ * D, 0.0f), fill(v, B * TV * D, 1.0f), fill(scale, D, 2.0f);

    vkattn_additive_attention_desc desc = {.query_width = D, .value_width = D};
    vkattn_additive_attention_weights weights = {.scale = scale};
    vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV};
    vkattn_tensor *tq = tensor(ctx, B * TQ * D, q), *tv = tensor(ctx, B * TV * D, v);
    vkattn_tensor *tm = tensor(ctx, B * TQ, qmask), *tout = tensor(ctx, B * TQ * D, NULL);
    vkattn_layer_io io = {.query = tq, .value = tv, .query_mask = tm, .output = tout};
    vkattn_additive_attention *att = NULL;
    int status = 1;
    if (!tq || !tv || !tm || !tout || vkattn_additive_attention_create(ctx, &desc, &att) ||
        vkattn_additive_attention_set_weights(att, &weights) ||
        vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io) ||
        vkattn_tensor_download(tout, out, 0, B * TQ * D)) {
        printf("failed: %s\n", vkattn_last_error());
        goto done;
    }

    vkattn_layer_host_io host = {.query = q, .value = v, .query_mask = qmask, .output = ref};
    if (vkattn_reference_additive_attention(&desc, &weights, &call, &host)) {
        printf("reference failed: %s\n", vkattn_last_error());
        goto done;
    }
    double err = 0.0;
    for (int i = 0; i < B * TQ * D; i++)
        err = fmax(err, fabs((double)out[i] - ref[i]));
    printf("output row 2 (query masked): %g ... %g\n", out[2 * D], out[3 * D - 1]);
    printf("max |GPU - reference| = %.3g\n", err);
    status = err < 1e-5 && out[2 * D] == 0.0f ? 0 : 1;
done:
    vkattn_additive_attention_destroy(att);
    vkattn_tensor *all[] = {tq, tv, tm, tout};
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_context_destroy(ctx);
    return status;
}
