/* Bahdanau attention with learned projections, as in the seed tutorial: one
 * decoder state per batch (a rank-2 query) attends over 12 encoder steps with
 * 20% padding; units 32, query width 50, key width 60, value width 70. The
 * tutorial's mask uses 1 = padded; vkattn (like Keras) uses 1 = may attend, so
 * it is inverted. Checked against the CPU reference.
 *
 * Exit status: 0 success, 77 no Vulkan device, 1 anything else. */
#include <math.h>
#include <stdio.h>

#include <vkattn/vkattn.h>

enum { B = 4, TV = 12, DQ = 50, DK = 60, DV = 70, U = 32 };

static void fill(float *x, int n, float phase, float amp)
{
    for (int i = 0; i < n; i++)
        x[i] = amp * sinf(0.7f * (float)i + phase);
}

static vkattn_tensor *tensor(vkattn_context *ctx, uint32_t rank, uint32_t d0, uint32_t d1,
                             uint32_t d2, const float *data)
{
    vkattn_tensor_desc desc = {.rank = rank, .dims = {d0, d1, d2}};
    vkattn_tensor *t = NULL;
    if (vkattn_tensor_create(ctx, &desc, &t) == VKATTN_SUCCESS && data)
        vkattn_tensor_upload(t, data, 0, vkattn_tensor_get_info(t).count);
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

    static float q[B * DQ], k[B * TV * DK], v[B * TV * DV], padded[B * TV], vmask[B * TV];
    static float wq[DQ * U], wk[DK * U], sv[U], out[B * DV], ref[B * DV];
    fill(q, B * DQ, 0.0f, 1.0f), fill(k, B * TV * DK, 1.0f, 1.0f), fill(v, B * TV * DV, 2.0f, 1.0f);
    fill(wq, DQ * U, 3.0f, 0.15f), fill(wk, DK * U, 4.0f, 0.15f), fill(sv, U, 5.0f, 1.0f);
    for (int i = 0; i < B * TV; i++) {
        padded[i] = i % TV >= TV - 1 - i / TV; /* tutorial polarity: 1 = padding */
        vmask[i] = 1.0f - padded[i];           /* vkattn polarity: 1 = may attend */
    }

    vkattn_bahdanau_desc desc = {.query_width = DQ, .key_width = DK, .value_width = DV,
                                 .units = U};
    vkattn_bahdanau_weights weights = {.query_kernel = wq, .key_kernel = wk, .score_kernel = sv,
                                       .score_bias = 0.1f};
    vkattn_layer_call call = {.batch = B, .tq = 1, .tv = TV}; /* rank-2 query: tq = 1 */
    vkattn_tensor *tq = tensor(ctx, 2, B, DQ, 0, q), *tk = tensor(ctx, 3, B, TV, DK, k);
    vkattn_tensor *tv = tensor(ctx, 3, B, TV, DV, v), *tm = tensor(ctx, 2, B, TV, 0, vmask);
    vkattn_tensor *tout = tensor(ctx, 2, B, DV, 0, NULL); /* the (B, Dv) context vectors */
    vkattn_layer_io io = {.query = tq, .key = tk, .value = tv, .value_mask = tm, .output = tout};
    vkattn_bahdanau *att = NULL;
    int status = 1;
    if (!tq || !tk || !tv || !tm || !tout || vkattn_bahdanau_create(ctx, &desc, &att) ||
        vkattn_bahdanau_set_weights(att, &weights) || vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io) ||
        vkattn_tensor_download(tout, out, 0, B * DV)) {
        printf("failed: %s\n", vkattn_last_error());
        goto done;
    }

    vkattn_layer_host_io host = {.query = q, .key = k, .value = v, .value_mask = vmask,
                                 .output = ref};
    if (vkattn_reference_bahdanau(&desc, &weights, &call, &host)) {
        printf("reference failed: %s\n", vkattn_last_error());
        goto done;
    }
    double err = 0.0;
    for (int i = 0; i < B * DV; i++)
        err = fmax(err, fabs((double)out[i] - ref[i]));
    printf("context vector of batch 0: %.4f %.4f %.4f ...\n", out[0], out[1], out[2]);
    printf("max |GPU - reference| = %.3g\n", err);
    status = err < 1e-5 ? 0 : 1;
done:
    vkattn_bahdanau_destroy(att);
    vkattn_tensor *all[] = {tq, tk, tv, tm, tout};
    for (int i = 0; i < 5; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_context_destroy(ctx);
    return status;
}
