/* gen_torch_mha OUT_DIR: writes torch_mha.safetensors, a PyTorch state dict
 * with two nn.MultiheadAttention layers at fixed-seed random weights
 * (encoder.layers.0.self_attn.: E 6, 2 heads, packed in_proj_weight;
 * decoder.layers.0.cross_attn.: E 4, 2 heads, kdim 3, vdim 5, so
 * q/k/v_proj_weight), and torch_mha.json, two attnbench check cases that load
 * them with params.weights_names "torch" (docs/CASES.md).
 *
 * The expected outputs come from vkattn_reference_mha on Keras-layout
 * weights converted here, index by index from PyTorch's (out, in) layout,
 * independently of the library's converter (src/weights/torch_mha.c), so
 * `attnbench check` compares the library's conversion with this one.
 * tests/cases/ holds a copy of both files; CTest regenerates and checks them. */
#include "st_writer.h"

#include <vkattn/vkattn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 20240611;
static float uniform(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0) * 0.75f;
}
static float *randoms(size_t n)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = uniform();
    return x;
}

typedef struct torch_layer {
    const char *prefix;
    uint32_t E, H, kdim, vdim;
    bool packed, causal;
    float *wq, *wk, *wv, *in_bias, *wo, *bo; /* PyTorch layout */
} torch_layer;

/* Keras kernel (din, H, hd) from PyTorch W (E, din): K[i][h][d] = W[h*hd + d][i]. */
static float *keras_kernel(const float *w, uint32_t E, uint32_t din)
{
    float *k = malloc((size_t)E * din * sizeof *k);
    for (uint32_t o = 0; o < E; o++)
        for (uint32_t i = 0; i < din; i++)
            k[(size_t)i * E + o] = w[(size_t)o * din + i];
    return k;
}

static void print_array(FILE *fp, const float *x, uint32_t rank, const uint32_t *dims)
{
    fputc('[', fp);
    size_t inner = 1;
    for (uint32_t r = 1; r < rank; r++)
        inner *= dims[r];
    for (uint32_t i = 0; i < dims[0]; i++) {
        if (i)
            fputc(',', fp);
        if (rank == 1)
            fprintf(fp, "%.9g", (double)x[i]);
        else
            print_array(fp, x + i * inner, rank - 1, dims + 1);
    }
    fputc(']', fp);
}

/* One case object: inputs, expected output from the reference. */
static int write_case(FILE *fp, const torch_layer *L, bool last)
{
    const uint32_t B = 2, Tq = 3, Tv = 4, E = L->E, hd = L->E / L->H;
    float *q = randoms((size_t)B * Tq * E), *k = randoms((size_t)B * Tv * L->kdim);
    float *v = randoms((size_t)B * Tv * L->vdim), *out = malloc((size_t)B * Tq * E * sizeof *out);
    float vmask[8] = {1, 1, 1, 0, 1, 0, 1, 1};
    vkattn_mha_weights w = {
        keras_kernel(L->wq, E, E), L->in_bias, keras_kernel(L->wk, E, L->kdim), L->in_bias + E,
        keras_kernel(L->wv, E, L->vdim), L->in_bias + 2 * E, keras_kernel(L->wo, E, E), L->bo};
    vkattn_mha_desc d = {.num_heads = L->H, .key_dim = hd, .query_width = E,
                         .key_width = L->kdim, .value_width = L->vdim};
    vkattn_layer_call call = {.batch = B, .tq = Tq, .tv = Tv,
                              .causal = L->causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE};
    vkattn_layer_host_io io = {.query = q, .key = k, .value = v, .value_mask = vmask, .output = out};
    vkattn_result r = vkattn_reference_mha(&d, &w, &call, &io);
    if (r) {
        fprintf(stderr, "gen_torch_mha: %s\n", vkattn_last_error());
        return 1;
    }
    uint32_t qd[3] = {B, Tq, E}, kd[3] = {B, Tv, L->kdim}, vd[3] = {B, Tv, L->vdim};
    uint32_t md[2] = {B, Tv};
    fprintf(fp, " {\"name\": \"torch_%s\",\n  \"layer\": \"MultiHeadAttention\",\n", L->prefix);
    fprintf(fp, "  \"params\": {\"num_heads\": %u, \"key_dim\": %u, \"weights_file\": "
            "\"torch_mha.safetensors\", \"weights_names\": \"torch\", \"weights_prefix\": \"%s\"},\n",
            L->H, hd, L->prefix);
    fprintf(fp, "  \"use_causal_mask\": %s,\n  \"query\": ", L->causal ? "true" : "false");
    print_array(fp, q, 3, qd);
    fprintf(fp, ",\n  \"key\": ");
    print_array(fp, k, 3, kd);
    fprintf(fp, ",\n  \"value\": ");
    print_array(fp, v, 3, vd);
    fprintf(fp, ",\n  \"value_mask\": ");
    print_array(fp, vmask, 2, md);
    fprintf(fp, ",\n  \"expected_output\": ");
    print_array(fp, out, 3, qd);
    fprintf(fp, "\n }%s\n", last ? "" : ",");
    free(q), free(k), free(v), free(out);
    free(w.query_kernel), free(w.key_kernel), free(w.value_kernel), free(w.output_kernel);
    return 0;
}

static void make_layer(torch_layer *L)
{
    uint32_t E = L->E;
    L->wq = randoms((size_t)E * E);
    L->wk = randoms((size_t)E * L->kdim);
    L->wv = randoms((size_t)E * L->vdim);
    L->in_bias = randoms(3 * (size_t)E);
    L->wo = randoms((size_t)E * E);
    L->bo = randoms(E);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_torch_mha OUT_DIR\n");
        return 2;
    }
    torch_layer layers[2] = {
        {.prefix = "encoder.layers.0.self_attn.", .E = 6, .H = 2, .kdim = 6, .vdim = 6,
         .packed = true, .causal = true},
        {.prefix = "decoder.layers.0.cross_attn.", .E = 4, .H = 2, .kdim = 3, .vdim = 5},
    };
    st_tensor t[16];
    uint8_t *bytes[16];
    char names[16][96];
    size_t n = 0;
#define ADD(L, suffix, r, d0, d1, data, count)                                                   \
    (snprintf(names[n], sizeof names[n], "%s%s", (L)->prefix, suffix),                          \
     bytes[n] = st_f32_bytes(data, count),                                                      \
     t[n] = (st_tensor){names[n], "F32", r, {d0, d1}, bytes[n], 4 * (size_t)(count)}, n++)
    for (int l = 0; l < 2; l++) {
        torch_layer *L = &layers[l];
        make_layer(L);
        uint32_t E = L->E;
        if (L->packed) {
            float *in = malloc(3 * (size_t)E * E * sizeof *in);
            memcpy(in, L->wq, (size_t)E * E * sizeof *in);
            memcpy(in + (size_t)E * E, L->wk, (size_t)E * E * sizeof *in);
            memcpy(in + 2 * (size_t)E * E, L->wv, (size_t)E * E * sizeof *in);
            ADD(L, "in_proj_weight", 2, 3 * E, E, in, 3 * (size_t)E * E);
            free(in);
        } else {
            ADD(L, "q_proj_weight", 2, E, E, L->wq, (size_t)E * E);
            ADD(L, "k_proj_weight", 2, E, L->kdim, L->wk, (size_t)E * L->kdim);
            ADD(L, "v_proj_weight", 2, E, L->vdim, L->wv, (size_t)E * L->vdim);
        }
        ADD(L, "in_proj_bias", 1, 3 * E, 0, L->in_bias, 3 * (size_t)E);
        ADD(L, "out_proj.weight", 2, E, E, L->wo, (size_t)E * E);
        ADD(L, "out_proj.bias", 1, E, 0, L->bo, E);
    }
    size_t size;
    uint8_t *file = st_build(t, n, "{\"format\":\"pt\",\"source\":\"tests/unit/gen_torch_mha.c\"}",
                             &size);
    char path[4096];
    snprintf(path, sizeof path, "%s/torch_mha.safetensors", argv[1]);
    if (st_write(path, file, size) != 0) {
        fprintf(stderr, "gen_torch_mha: cannot write %s\n", path);
        return 1;
    }
    snprintf(path, sizeof path, "%s/torch_mha.json", argv[1]);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        fprintf(stderr, "gen_torch_mha: cannot write %s\n", path);
        return 1;
    }
    fprintf(fp, "[\n");
    int rc = write_case(fp, &layers[0], false) || write_case(fp, &layers[1], true);
    fprintf(fp, "]\n");
    fclose(fp);
    for (size_t i = 0; i < n; i++)
        free(bytes[i]);
    for (int l = 0; l < 2; l++) {
        torch_layer *L = &layers[l];
        free(L->wq), free(L->wk), free(L->wv), free(L->in_bias), free(L->wo), free(L->bo);
    }
    free(file);
    return rc;
}
