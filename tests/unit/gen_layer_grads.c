/* gen_layer_grads OUT_FILE: writes layer_grads.json, attnbench check cases
 * with grad_output and expected_grads for each layer (docs/CASES.md):
 * Attention (dot with a learned scale and the causal mask; concat), AdditiveAttention,
 * BahdanauAttention and MultiHeadAttention (key omitted: key = value).
 *
 * The expected values are computed here, independently of the library: a
 * forward of each layer written again in double from docs/SEMANTICS.md, and
 * every gradient by central finite differences of that forward, of the loss
 * sum(grad_output * output), with step 1e-4 (truncation error ~1e-9, far
 * below the cases' tolerance). tests/cases/layer_grads.json is a copy; CTest
 * regenerates it into the build tree and checks both. Fixed seed: the output
 * is the same on every run. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 20261123;
static float uniform(float a)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0) * a;
}

enum { MAX_ARRAYS = 12 };

/* A named array of the case: an input, a weight, or a scalar variable (rank 0). */
typedef struct arr {
    const char *name;
    int rank, dims[3];
    int n;
    double *x; /* float values, held in double so a step is exact */
} arr;

typedef struct problem {
    const char *name, *layer;
    int B, Tq, Tv, dout;
    bool causal;
    arr a[MAX_ARRAYS];
    int na;
    void (*forward)(const struct problem *p, double *out);
    int H, kd, vd, units; /* layer shape where used */
    bool concat;
} problem;

static double *add(problem *p, const char *name, int rank, int d0, int d1, int d2, float scale)
{
    arr *a = &p->a[p->na++];
    *a = (arr){.name = name, .rank = rank, .dims = {d0, d1, d2}, .n = 1};
    for (int i = 0; i < rank; i++)
        a->n *= a->dims[i];
    a->x = malloc(a->n * sizeof *a->x);
    for (int i = 0; i < a->n; i++)
        a->x[i] = uniform(scale);
    return a->x;
}

static const double *get(const problem *p, const char *name)
{
    for (int i = 0; i < p->na; i++)
        if (!strcmp(p->a[i].name, name))
            return p->a[i].x;
    return NULL;
}

static const arr *find(const problem *p, const char *name)
{
    for (int i = 0; i < p->na; i++)
        if (!strcmp(p->a[i].name, name))
            return &p->a[i];
    return NULL;
}

/* out[b,i,:] = softmax_j(S[b,i,j], causal: j <= i) @ v[b,j,:], v rows of width dv
 * at stride vs (offset vo). */
static void softmax_apply(const problem *p, int b, const double *S, const double *v, int dv,
                          int vs, int vo, double *out)
{
    for (int i = 0; i < p->Tq; i++) {
        const double *s = S + (size_t)i * p->Tv;
        int last = p->causal ? i : p->Tv - 1;
        double m = -INFINITY, sum = 0;
        for (int j = 0; j <= last; j++)
            m = fmax(m, s[j]);
        for (int j = 0; j <= last; j++)
            sum += exp(s[j] - m);
        for (int e = 0; e < dv; e++) {
            double acc = 0;
            for (int j = 0; j <= last; j++)
                acc += exp(s[j] - m) / sum * v[((size_t)b * p->Tv + j) * vs + vo + e];
            out[i * dv + e] = acc;
        }
    }
}

/* Attention and AdditiveAttention: scores from query and key, then softmax @ value. */
static void fwd_single(const problem *p, double *out)
{
    const arr *qa = find(p, "query"), *va = find(p, "value");
    const double *q = qa->x, *v = va->x, *k = get(p, "key");
    int D = qa->dims[2], Dv = va->dims[2];
    double *S = malloc((size_t)p->Tq * p->Tv * sizeof *S);
    bool additive = !strcmp(p->layer, "AdditiveAttention");
    const double *scale = get(p, "scale"), *csw = get(p, "concat_score_weight");
    for (int b = 0; b < p->B; b++) {
        for (int i = 0; i < p->Tq; i++)
            for (int j = 0; j < p->Tv; j++) {
                const double *qi = q + ((size_t)b * p->Tq + i) * D, *kj = k + ((size_t)b * p->Tv + j) * D;
                double s = 0;
                for (int d = 0; d < D; d++) {
                    if (additive)
                        s += scale[d] * tanh(qi[d] + kj[d]);
                    else if (p->concat)
                        s += tanh(scale[0] * (qi[d] + kj[d]));
                    else
                        s += qi[d] * kj[d];
                }
                S[i * p->Tv + j] = additive ? s : p->concat ? csw[0] * s : scale[0] * s;
            }
        softmax_apply(p, b, S, v, Dv, Dv, 0, out + (size_t)b * p->Tq * Dv);
    }
    free(S);
}

static void fwd_bahdanau(const problem *p, double *out)
{
    const arr *qa = find(p, "query"), *ka = find(p, "key"), *va = find(p, "value");
    const double *q = qa->x, *k = ka->x, *v = va->x;
    const double *wq = get(p, "query_kernel"), *wk = get(p, "key_kernel");
    const double *sk = get(p, "score_kernel"), *sb = get(p, "score_bias");
    int Dq = qa->dims[2], Dk = ka->dims[2], Dv = va->dims[2], U = p->units;
    double *S = malloc((size_t)p->Tq * p->Tv * sizeof *S);
    for (int b = 0; b < p->B; b++) {
        for (int i = 0; i < p->Tq; i++)
            for (int j = 0; j < p->Tv; j++) {
                double s = sb[0];
                for (int u = 0; u < U; u++) {
                    double x = 0;
                    for (int d = 0; d < Dq; d++)
                        x += q[((size_t)b * p->Tq + i) * Dq + d] * wq[d * U + u];
                    for (int d = 0; d < Dk; d++)
                        x += k[((size_t)b * p->Tv + j) * Dk + d] * wk[d * U + u];
                    s += sk[u] * tanh(x);
                }
                S[i * p->Tv + j] = s;
            }
        softmax_apply(p, b, S, v, Dv, Dv, 0, out + (size_t)b * p->Tq * Dv);
    }
    free(S);
}

/* x (rows, D) @ W (D, H*w) + bias (H*w) */
static double *project(const double *x, int rows, int D, const double *W, const double *bias, int n)
{
    double *y = malloc((size_t)rows * n * sizeof *y);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < n; c++) {
            double acc = bias[c];
            for (int d = 0; d < D; d++)
                acc += x[(size_t)r * D + d] * W[(size_t)d * n + c];
            y[(size_t)r * n + c] = acc;
        }
    return y;
}

static void fwd_mha(const problem *p, double *out)
{
    const arr *qa = find(p, "query"), *va = find(p, "value");
    int Dq = qa->dims[2], Dv = va->dims[2], H = p->H, kd = p->kd, vd = p->vd, Do = p->dout;
    int rq = p->B * p->Tq, rv = p->B * p->Tv;
    /* key omitted: the key is the value */
    double *Q = project(qa->x, rq, Dq, get(p, "query_kernel"), get(p, "query_bias"), H * kd);
    double *K = project(va->x, rv, Dv, get(p, "key_kernel"), get(p, "key_bias"), H * kd);
    double *V = project(va->x, rv, Dv, get(p, "value_kernel"), get(p, "value_bias"), H * vd);
    double *C = malloc((size_t)rq * H * vd * sizeof *C), *S = malloc((size_t)p->Tq * p->Tv * sizeof *S);
    double *Ch = malloc((size_t)p->Tq * vd * sizeof *Ch);
    for (int b = 0; b < p->B; b++)
        for (int h = 0; h < H; h++) {
            for (int i = 0; i < p->Tq; i++)
                for (int j = 0; j < p->Tv; j++) {
                    double s = 0;
                    for (int d = 0; d < kd; d++)
                        s += Q[((size_t)b * p->Tq + i) * H * kd + h * kd + d] *
                             K[((size_t)b * p->Tv + j) * H * kd + h * kd + d];
                    S[i * p->Tv + j] = s / sqrt((double)kd);
                }
            softmax_apply(p, b, S, V, vd, H * vd, h * vd, Ch);
            for (int i = 0; i < p->Tq; i++)
                for (int e = 0; e < vd; e++)
                    C[((size_t)b * p->Tq + i) * H * vd + h * vd + e] = Ch[i * vd + e];
        }
    double *y = project(C, rq, H * vd, get(p, "output_kernel"), get(p, "output_bias"), Do);
    memcpy(out, y, (size_t)rq * Do * sizeof *out);
    free(Q), free(K), free(V), free(C), free(S), free(Ch), free(y);
}

static double loss(const problem *p, const double *g, double *out)
{
    int n = p->B * p->Tq * p->dout;
    p->forward(p, out);
    double l = 0;
    for (int i = 0; i < n; i++)
        l += g[i] * out[i];
    return l;
}

/* ------------------------------------------------------------ JSON */

static void put_values(FILE *f, const double *x, int rank, const int *dims)
{
    if (rank == 0) {
        fprintf(f, "%.9g", x[0]);
        return;
    }
    int stride = 1;
    for (int i = 1; i < rank; i++)
        stride *= dims[i];
    fputc('[', f);
    for (int i = 0; i < dims[0]; i++) {
        if (i)
            fputs(", ", f);
        put_values(f, x + (size_t)i * stride, rank - 1, dims + 1);
    }
    fputc(']', f);
}

static void put(FILE *f, const char *indent, const char *name, const double *x, int rank,
                const int *dims, bool comma)
{
    fprintf(f, "%s\"%s\": ", indent, name);
    put_values(f, x, rank, dims);
    fprintf(f, "%s\n", comma ? "," : "");
}

static bool is_input(const char *name)
{
    return !strcmp(name, "query") || !strcmp(name, "value") || !strcmp(name, "key");
}

static bool is_param_scalar(const problem *p, const arr *a)
{
    return !is_input(a->name) && strcmp(p->layer, "MultiHeadAttention") &&
           strcmp(p->layer, "BahdanauAttention");
}

static void write_case(FILE *f, problem *p, bool last)
{
    int n = p->B * p->Tq * p->dout, odims[3] = {p->B, p->Tq, p->dout};
    double *g = malloc(n * sizeof *g), *out = malloc(n * sizeof *out);
    for (int i = 0; i < n; i++)
        g[i] = uniform(1.0f);
    fprintf(f, "  {\n    \"name\": \"%s\",\n    \"layer\": \"%s\",\n", p->name, p->layer);
    fputs("    \"comment\": \"tests/unit/gen_layer_grads.c: expected_output from a double forward "
          "written independently of the library; expected_grads by central finite differences "
          "(step 1e-4) of that forward, of the loss sum(grad_output * output)\",\n", f);
    fputs("    \"params\": {", f);
    if (!strcmp(p->layer, "Attention"))
        fprintf(f, "\"use_scale\": true, \"score_mode\": \"%s\", ", p->concat ? "concat" : "dot");
    if (!strcmp(p->layer, "BahdanauAttention"))
        fprintf(f, "\"units\": %d, ", p->units);
    if (!strcmp(p->layer, "MultiHeadAttention"))
        fprintf(f, "\"num_heads\": %d, \"key_dim\": %d, \"value_dim\": %d, ", p->H, p->kd, p->vd);
    fputs("\"dropout\": 0.0", f);
    for (int i = 0; i < p->na; i++)
        if (is_param_scalar(p, &p->a[i])) {
            fprintf(f, ", \"%s\": ", p->a[i].name);
            put_values(f, p->a[i].x, p->a[i].rank, p->a[i].dims);
        }
    bool weights = false;
    for (int i = 0; i < p->na; i++)
        if (!is_input(p->a[i].name) && !is_param_scalar(p, &p->a[i])) {
            fprintf(f, "%s\n      \"%s\": ", weights ? "," : ", \"weights\": {", p->a[i].name);
            put_values(f, p->a[i].x, p->a[i].rank, p->a[i].dims);
            weights = true;
        }
    fprintf(f, "%s},\n", weights ? "}" : "");
    for (int i = 0; i < p->na; i++)
        if (is_input(p->a[i].name))
            put(f, "    ", p->a[i].name, p->a[i].x, p->a[i].rank, p->a[i].dims, true);
    fprintf(f, "    \"use_causal_mask\": %s,\n", p->causal ? "true" : "false");
    loss(p, g, out);
    put(f, "    ", "expected_output", out, 3, odims, true);
    put(f, "    ", "grad_output", g, 3, odims, true);
    fputs("    \"expected_grads\": {\n", f);
    const double h = 1e-4;
    for (int i = 0; i < p->na; i++) {
        arr *a = &p->a[i];
        double *d = malloc(a->n * sizeof *d);
        for (int e = 0; e < a->n; e++) {
            double x0 = a->x[e];
            a->x[e] = x0 + h;
            double lp = loss(p, g, out);
            a->x[e] = x0 - h;
            double lm = loss(p, g, out);
            a->x[e] = x0;
            d[e] = (lp - lm) / (2 * h);
        }
        put(f, "      ", a->name, d, a->rank, a->dims, i + 1 < p->na);
        free(d);
    }
    fprintf(f, "    }\n  }%s\n", last ? "" : ",");
    free(g), free(out);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_layer_grads OUT_FILE.json\n");
        return 2;
    }
    enum { B = 2, TQ = 3, TV = 4 };
    problem ps[5] = {
        {.name = "grads_attention_dot_causal", .layer = "Attention", .causal = true,
         .forward = fwd_single},
        {.name = "grads_attention_concat", .layer = "Attention", .concat = true,
         .forward = fwd_single},
        {.name = "grads_additive_attention", .layer = "AdditiveAttention", .forward = fwd_single},
        {.name = "grads_bahdanau", .layer = "BahdanauAttention", .units = 3,
         .forward = fwd_bahdanau},
        {.name = "grads_mha_key_is_value", .layer = "MultiHeadAttention", .H = 2, .kd = 2, .vd = 3,
         .forward = fwd_mha},
    };
    for (int c = 0; c < 5; c++) {
        problem *p = &ps[c];
        p->B = B, p->Tq = TQ, p->Tv = TV;
        bool mha = p->forward == fwd_mha, bah = p->forward == fwd_bahdanau;
        int Dq = mha ? 4 : 3, Dk = bah ? 2 : 3, Dv = mha ? 3 : 2;
        p->dout = mha ? Dq : Dv;
        add(p, "query", 3, B, TQ, Dq, 1.0f);
        add(p, "value", 3, B, TV, Dv, 1.0f);
        if (!mha)
            add(p, "key", 3, B, TV, Dk, 1.0f);
        if (!strcmp(p->layer, "Attention")) {
            add(p, "scale", 0, 0, 0, 0, 1.0f)[0] = p->concat ? 0.7f : 0.8f;
            add(p, "concat_score_weight", 0, 0, 0, 0, 1.0f)[0] = p->concat ? 1.3f : 1.0f;
        } else if (!strcmp(p->layer, "AdditiveAttention")) {
            add(p, "scale", 1, Dq, 0, 0, 1.0f);
        } else if (bah) {
            add(p, "query_kernel", 2, Dq, p->units, 0, 0.8f);
            add(p, "key_kernel", 2, Dk, p->units, 0, 0.8f);
            add(p, "score_kernel", 1, p->units, 0, 0, 1.0f);
            add(p, "score_bias", 0, 0, 0, 0, 1.0f)[0] = 0.25f;
        } else {
            add(p, "query_kernel", 3, Dq, p->H, p->kd, 0.7f);
            add(p, "query_bias", 2, p->H, p->kd, 0, 0.3f);
            add(p, "key_kernel", 3, Dv, p->H, p->kd, 0.7f);
            add(p, "key_bias", 2, p->H, p->kd, 0, 0.3f);
            add(p, "value_kernel", 3, Dv, p->H, p->vd, 0.7f);
            add(p, "value_bias", 2, p->H, p->vd, 0, 0.3f);
            add(p, "output_kernel", 3, p->H, p->vd, p->dout, 0.7f);
            add(p, "output_bias", 1, p->dout, 0, 0, 0.3f);
        }
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fputs("[\n", f);
    for (int c = 0; c < 5; c++)
        write_case(f, &ps[c], c == 4);
    fputs("]\n", f);
    for (int c = 0; c < 5; c++)
        for (int i = 0; i < ps[c].na; i++)
            free(ps[c].a[i].x);
    return fclose(f) == 0 ? 0 : 1;
}
