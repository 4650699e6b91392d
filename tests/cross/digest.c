/* The same outputs on every platform: runs a few layers on exact inputs and
 * prints, per output, a 64-bit FNV-1a hash of its float bits, for the device
 * (when there is one) and for the CPU reference. scripts/cross-test.sh runs
 * it on Linux x86-64 and under wine64 (Windows x64, the same lavapipe) and
 * requires identical device lines: same SPIR-V, same driver, same inputs
 * must give the same bits whatever compiled the host side. The reference
 * lines are compared too, but only reported: they go through each C
 * library's exp(), which need not round alike everywhere.
 * Inputs are small integers over 64 (exact in float), no libm in sight.
 * Exit status: 0, or 1 if a layer failed. Public API only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkattn/vkattn.h>

enum { B = 2, T = 19, TV = 23, D = 16, DV = 12, H = 2, KD = 8 };

/* exact values in [-1, 1]: k/64 for k in -64..64, from an integer hash */
static void fill(float *x, size_t n, uint32_t salt)
{
    uint32_t s = 2166136261u ^ salt;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)((int)((s >> 16) % 129u) - 64) / 64.0f;
    }
}

static unsigned long long fnv(const float *x, size_t n)
{
    unsigned long long h = 14695981039346656037ull;
    const unsigned char *b = (const unsigned char *)x;
    for (size_t i = 0; i < n * sizeof *x; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static vkattn_tensor *tensor(vkattn_context *ctx, size_t n, const float *data)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {(uint32_t)n}};
    vkattn_tensor *t = NULL;
    if (vkattn_tensor_create(ctx, &desc, &t) != VKATTN_SUCCESS)
        return NULL;
    if (data && vkattn_tensor_upload(t, data, 0, n) != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return NULL;
    }
    return t;
}

static void print(const char *who, const char *name, const float *out, size_t n_out,
                  const float *scores, size_t n_scores)
{
    printf("%-9s %-24s output %016llx scores %016llx\n", who, name, fnv(out, n_out),
           fnv(scores, n_scores));
}

/* keras.layers.Attention: scale, causal, value mask, scores */
static int attention(vkattn_context *ctx)
{
    static float q[B * T * D], k[B * TV * D], v[B * TV * DV], vmask[B * TV];
    static float out[B * T * DV], w[B * T * TV];
    fill(q, B * T * D, 1), fill(k, B * TV * D, 2), fill(v, B * TV * DV, 3);
    for (int i = 0; i < B * TV; i++)
        vmask[i] = i % TV < TV - 1 - i / TV * 3 ? 1.0f : 0.0f;
    vkattn_attention_desc desc = {.query_width = D, .key_width = D, .value_width = DV,
                                  .use_scale = true};
    vkattn_attention_weights weights = {.scale = 0.375f, .concat_score_weight = 1.0f};
    vkattn_layer_call call = {.batch = B, .tq = T, .tv = TV, .causal = VKATTN_CAUSAL_TOP_LEFT,
                              .return_attention_scores = true};
    vkattn_layer_host_io host = {.query = q, .key = k, .value = v, .value_mask = vmask,
                                 .output = out, .scores = w};
    if (vkattn_reference_attention(&desc, &weights, &call, &host))
        return 1;
    print("reference", "attention_causal_vmask", out, B * T * DV, w, B * T * TV);
    if (!ctx)
        return 0;
    memset(out, 0, sizeof out), memset(w, 0, sizeof w);
    vkattn_tensor *tq = tensor(ctx, B * T * D, q), *tk = tensor(ctx, B * TV * D, k);
    vkattn_tensor *tv = tensor(ctx, B * TV * DV, v), *tm = tensor(ctx, B * TV, vmask);
    vkattn_tensor *tout = tensor(ctx, B * T * DV, NULL), *tw = tensor(ctx, B * T * TV, NULL);
    vkattn_layer_io io = {.query = tq, .key = tk, .value = tv, .value_mask = tm, .output = tout,
                          .scores = tw};
    vkattn_attention *att = NULL;
    int status = 1;
    if (tq && tk && tv && tm && tout && tw && !vkattn_attention_create(ctx, &desc, &att) &&
        !vkattn_attention_set_weights(att, &weights) && !vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io) &&
        !vkattn_tensor_download(tout, out, 0, B * T * DV) &&
        !vkattn_tensor_download(tw, w, 0, B * T * TV)) {
        print("device", "attention_causal_vmask", out, B * T * DV, w, B * T * TV);
        status = 0;
    }
    vkattn_attention_destroy(att);
    vkattn_tensor *all[] = {tq, tk, tv, tm, tout, tw};
    for (int i = 0; i < 6; i++)
        vkattn_tensor_destroy(all[i]);
    return status;
}

/* keras.layers.MultiHeadAttention: causal self-attention with scores, then
 * cross-attention in training mode (Philox dropout 0.25) */
static int mha(vkattn_context *ctx, bool training)
{
    const char *name = training ? "mha_cross_dropout" : "mha_self_causal";
    static float wq[D * H * KD], wk[D * H * KD], wv[D * H * KD], wo[H * KD * D];
    static float bq[H * KD], bk[H * KD], bv[H * KD], bo[D];
    static float x[B * T * D], y[B * TV * D], out[B * T * D], s[B * H * T * TV];
    fill(wq, D * H * KD, 11), fill(wk, D * H * KD, 12), fill(wv, D * H * KD, 13);
    fill(wo, H * KD * D, 14), fill(bq, H * KD, 15), fill(bk, H * KD, 16), fill(bv, H * KD, 17);
    fill(bo, D, 18), fill(x, B * T * D, 19), fill(y, B * TV * D, 20);
    vkattn_mha_desc desc = {.num_heads = H, .key_dim = KD, .query_width = D, .value_width = D,
                            .dropout = training ? 0.25f : 0.0f};
    vkattn_mha_weights weights = {wq, bq, wk, bk, wv, bv, wo, bo};
    const uint32_t tv = training ? TV : T;
    const float *value = training ? y : x;
    vkattn_layer_call call = {.batch = B, .tq = T, .tv = tv, .return_attention_scores = true,
                              .causal = training ? VKATTN_CAUSAL_NONE : VKATTN_CAUSAL_TOP_LEFT,
                              .training = training, .seed = 1234, .offset = 5};
    const size_t n_out = (size_t)B * T * D, n_s = (size_t)B * H * T * tv;
    vkattn_layer_host_io host = {.query = x, .value = value, .output = out, .scores = s};
    if (vkattn_reference_mha(&desc, &weights, &call, &host))
        return 1;
    print("reference", name, out, n_out, s, n_s);
    if (!ctx)
        return 0;
    memset(out, 0, sizeof out), memset(s, 0, sizeof s);
    vkattn_tensor *tx = tensor(ctx, n_out, x), *ty = tensor(ctx, (size_t)B * tv * D, value);
    vkattn_tensor *tout = tensor(ctx, n_out, NULL), *ts = tensor(ctx, n_s, NULL);
    vkattn_layer_io io = {.query = tx, .value = ty, .output = tout, .scores = ts};
    vkattn_mha *m = NULL;
    int status = 1;
    if (tx && ty && tout && ts && !vkattn_mha_create(ctx, &desc, &m) &&
        !vkattn_mha_set_weights(m, &weights) && !vkattn_mha_record(m, VKATTN_RUN_NOW, &call, &io) &&
        !vkattn_tensor_download(tout, out, 0, n_out) && !vkattn_tensor_download(ts, s, 0, n_s)) {
        print("device", name, out, n_out, s, n_s);
        status = 0;
    }
    vkattn_mha_destroy(m);
    vkattn_tensor *all[] = {tx, ty, tout, ts};
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(all[i]);
    return status;
}

int main(void)
{
    vkattn_context *ctx = NULL;
    vkattn_result r = vkattn_context_create(&(vkattn_context_desc){0}, &ctx);
    if (r != VKATTN_SUCCESS && r != VKATTN_ERROR_NO_VULKAN && r != VKATTN_ERROR_NO_DEVICE) {
        fprintf(stderr, "vkattn_context_create: %s\n", vkattn_last_error());
        return 1;
    }
    if (r != VKATTN_SUCCESS)
        ctx = NULL;
    int failed = attention(ctx) + mha(ctx, false) + mha(ctx, true);
    if (failed)
        fprintf(stderr, "digest: %d layer(s) failed: %s\n", failed, vkattn_last_error());
    vkattn_context_destroy(ctx);
    return failed ? 1 : 0;
}
