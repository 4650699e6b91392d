/* Training a MultiHeadAttention on the GPU: a student layer (d_model 64,
 * 4 heads, key_dim 16) learns to match a fixed teacher layer with other
 * random weights, on one fixed batch of random inputs, with the MSE loss and
 * Adam. Each step never leaves the device: forward (keeping what the backward
 * needs), loss and its gradient, the layer backward, one Adam step per weight
 * tensor, updating the layer's own weight tensors in place.
 *
 * The first steps are repeated on the CPU references (forward, MSE, layer
 * backward, optimizer step, all in double) from the same weights, inputs and
 * targets: their losses must agree with the GPU's within 1e-4 relative, and
 * the GPU's loss must fall at least 100x over the run.
 *
 * `train_mha --gated` trains a layer with Keras 3's use_gate (the context
 * times sigmoid(query @ gate_kernel + gate_bias) before the output
 * projection), whose gate weights are two more tensors to learn; the teacher
 * is gated too. Both runs are tests (example.train_mha, _gated).
 *
 * Each step is recorded into the context's one-shot command buffer. An app
 * that owns its command buffers (an imported device, vkattn/context.h) can
 * record the step once and submit it again and again: the optimizer's step
 * counter lives on the device, and the recording is the same every step.
 *
 * Exit status: 0 success, 77 no Vulkan device, 1 anything else. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkattn/vkattn.h>

enum {
    B = 2, T = 8, D = 64, H = 4, KD = 16, /* batch, length, d_model, heads, key_dim */
    STEPS = 200,                         /* training steps on the GPU */
    CPU_STEPS = 20,                      /* of which repeated on the CPU references */
    PRINT_EVERY = 20,
    NW_PLAIN = 8, /* weight tensors: q, k, v, output kernels and their biases */
    NW = 10,      /* with use_gate, the gate's kernel and bias too */
};
#define LR 0.01f
#define AGREE_REL 1e-4 /* GPU vs CPU loss over the first CPU_STEPS */
#define MIN_FALL 100.0 /* first loss / last loss */

/* Weight sizes in vkattn_mha_weights order (Keras layout); the value_dim
 * is key_dim, so the gate's are the query kernel's and bias's. */
static const uint32_t wsize[NW] = {D * H * KD, H * KD, D * H * KD, H * KD, D * H * KD,
                                   H * KD,     H * KD * D, D,      D * H * KD, H * KD};
static int nw = NW_PLAIN; /* weight tensors in this run: NW with --gated */

/* A fixed-seed uniform stream (xorshift64), the same on every platform. */
static float uniform(uint64_t *s, float a)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return a * (2.0f * (float)((*s >> 40) * 0x1p-24) - 1.0f);
}

/* Host weights: kernels uniform in +-sqrt(3 / fan_in), biases in +-0.1. */
static void init_weights(float *w[NW], uint64_t seed)
{
    const float fan[NW] = {D, 0, D, 0, D, 0, H * KD, 0, D, 0};
    for (int i = 0; i < nw; i++)
        for (uint32_t j = 0; j < wsize[i]; j++)
            w[i][j] = uniform(&seed, fan[i] ? sqrtf(3.0f / fan[i]) : 0.1f);
}

static vkattn_mha_weights as_mha_weights(float *w[NW])
{
    return (vkattn_mha_weights){w[0], w[1], w[2], w[3], w[4],
                                w[5], w[6], w[7], w[8], w[9]}; /* w[8], w[9] NULL ungated */
}

static vkattn_tensor *tensor(vkattn_context *ctx, uint32_t n, const float *data)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {n}};
    vkattn_tensor *t = NULL;
    if (vkattn_tensor_create(ctx, &desc, &t) != VKATTN_SUCCESS)
        return NULL;
    if ((data ? vkattn_tensor_upload(t, data, 0, n) : vkattn_tensor_fill(t, 0.0f)) !=
        VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return NULL;
    }
    return t;
}

/* The device side: the student, its gradients and Adam's state per weight. */
typedef struct gpu_side {
    vkattn_context *ctx;
    vkattn_mha *student;
    vkattn_tensor *x, *y, *target, *loss, *dy;
    vkattn_tensor *grad[NW], *state[NW], *step[NW];
    vkattn_mha_weight_tensors w, gw;
} gpu_side;

static vkattn_tensor **slot(vkattn_mha_weight_tensors *t, int i)
{
    vkattn_tensor **s[NW] = {&t->query_kernel, &t->query_bias,   &t->key_kernel,
                             &t->key_bias,     &t->value_kernel, &t->value_bias,
                             &t->output_kernel, &t->output_bias, &t->gate_kernel,
                             &t->gate_bias};
    return s[i];
}

static const vkattn_optim_params adam = {
    .algorithm = VKATTN_OPTIM_ADAM, .lr = LR, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
static const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T, .keep_for_backward = true};

/* Records one training step into cmd. */
static vkattn_result record_step(gpu_side *g, VkCommandBuffer cmd)
{
    /* self-attention: value = query, key omitted (= value) */
    vkattn_layer_io io = {.query = g->x, .value = g->x, .output = g->y};
    vkattn_layer_grads grads = {.grad_output = g->dy}; /* weight gradients only */
    vkattn_mse_params mse = {.count = B * T * D};
    vkattn_result r;
    if ((r = vkattn_mha_record(g->student, cmd, &call, &io)) ||
        (r = vkattn_mse_record(g->ctx, cmd, &mse,
                               &(vkattn_mse_io){.pred = g->y, .target = g->target,
                                                .loss = g->loss, .grad = g->dy})) ||
        (r = vkattn_mha_backward_record(g->student, cmd, &call, &io, &grads, &g->gw)))
        return r;
    for (int i = 0; i < nw; i++) {
        vkattn_optim_io o = {.count = wsize[i], .param = *slot(&g->w, i),
                             .grad = *slot(&g->gw, i), .state = g->state[i],
                             .step = g->step[i]};
        if ((r = vkattn_optim_step_record(g->ctx, cmd, &adam, &o)))
            return r;
    }
    return VKATTN_SUCCESS;
}

static vkattn_result gpu_step(gpu_side *g, float *loss)
{
    VkCommandBuffer cmd;
    vkattn_result r = vkattn_context_begin_commands(g->ctx, &cmd);
    if (r)
        return r;
    if ((r = record_step(g, cmd))) {
        vkattn_context_submit_and_wait(g->ctx, cmd); /* closes the one-shot buffer */
        return r;
    }
    if ((r = vkattn_context_submit_and_wait(g->ctx, cmd)))
        return r;
    return vkattn_tensor_download(g->loss, loss, 0, 1);
}

/* The CPU side: the same step on the references. */
typedef struct cpu_side {
    vkattn_mha_desc desc;
    float *w[NW], *grad[NW], *state[NW], step[NW][VKATTN_OPTIM_STEP_COUNT];
    const float *x, *target;
    float y[B * T * D], dy[B * T * D];
} cpu_side;

static vkattn_result cpu_step(cpu_side *c, float *loss)
{
    vkattn_mha_weights w = as_mha_weights(c->w), gw = as_mha_weights(c->grad);
    vkattn_layer_host_io io = {.query = c->x, .value = c->x, .output = c->y};
    vkattn_mse_params mse = {.count = B * T * D};
    vkattn_result r;
    if ((r = vkattn_reference_mha(&c->desc, &w, &call, &io)) ||
        (r = vkattn_reference_mse(&mse, c->y, c->target, loss, c->dy)) ||
        (r = vkattn_reference_mha_backward(&c->desc, &w, &call, &io, c->dy, NULL, &gw)))
        return r;
    for (int i = 0; i < nw; i++)
        if ((r = vkattn_reference_optim_step(&adam, wsize[i], c->w[i], c->grad[i], c->state[i],
                                             c->step[i])))
            return r;
    return VKATTN_SUCCESS;
}

/* STEPS Adam steps on the device, the first CPU_STEPS also on the CPU; 0
 * when the loss fell MIN_FALL times and the two sides agreed. */
static int train(gpu_side *g, cpu_side *c)
{
    vkattn_result r;
    double first = 0, last = 0, worst = 0;
    for (int s = 0; s < STEPS; s++) {
        float gl, cl = 0;
        if ((r = gpu_step(g, &gl))) {
            printf("GPU step %d: %s: %s\n", s + 1, vkattn_result_name(r), vkattn_last_error());
            return 1;
        }
        if (s < CPU_STEPS) {
            if ((r = cpu_step(c, &cl))) {
                printf("CPU step %d: %s: %s\n", s + 1, vkattn_result_name(r), vkattn_last_error());
                return 1;
            }
            double rel = fabs((double)gl - cl) / fabs((double)cl);
            worst = isnan(rel) || rel > worst ? rel : worst; /* NaN must not pass */
        }
        if (s == 0)
            first = gl;
        last = gl;
        if (s == 0 || (s + 1) % PRINT_EVERY == 0) {
            printf("step %3d  loss %.6e", s + 1, gl);
            if (s < CPU_STEPS)
                printf("  (CPU reference %.6e)", cl);
            printf("\n");
        }
    }
    printf("loss fell %.0fx (%.3e -> %.3e; need %.0fx)\n", first / last, first, last, MIN_FALL);
    printf("first %d losses: max relative GPU vs CPU difference %.2e (bound %.0e)\n", CPU_STEPS,
           worst, AGREE_REL);
    return worst <= AGREE_REL && first / last >= MIN_FALL ? 0 : 1; /* false on NaN */
}

int main(int argc, char **argv)
{
    const bool gated = argc == 2 && strcmp(argv[1], "--gated") == 0;
    if (argc > 2 || (argc == 2 && !gated)) {
        printf("usage: %s [--gated]\n", argv[0]);
        return 1;
    }
    nw = gated ? NW : NW_PLAIN;
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

    int status = 1;
    gpu_side g = {.ctx = ctx};
    cpu_side c = {.desc = {.num_heads = H, .key_dim = KD, .query_width = D, .value_width = D,
                           .use_gate = gated}};
    vkattn_mha *teacher = NULL;
    float *teacher_w[NW] = {0};
    static float x[B * T * D], target[B * T * D];
    uint64_t seed = 0x5eed;
    for (int i = 0; i < B * T * D; i++)
        x[i] = uniform(&seed, 1.0f);
    c.x = x, c.target = target;

    for (int i = 0; i < nw; i++) {
        teacher_w[i] = malloc(wsize[i] * sizeof(float));
        c.w[i] = malloc(wsize[i] * sizeof(float));
        c.grad[i] = malloc(wsize[i] * sizeof(float));
        c.state[i] = calloc(2 * (size_t)wsize[i], sizeof(float)); /* Adam's m and v: zero */
        if (!teacher_w[i] || !c.w[i] || !c.grad[i] || !c.state[i]) {
            printf("out of host memory\n");
            goto done;
        }
    }
    init_weights(teacher_w, 1);
    init_weights(c.w, 2); /* the student starts elsewhere */
    vkattn_mha_weights tw = as_mha_weights(teacher_w), sw = as_mha_weights(c.w);

    /* The target: the teacher's output on the batch, computed on the device
     * and shared with the CPU side, so both fit the same numbers. */
    g.x = tensor(ctx, B * T * D, x), g.y = tensor(ctx, B * T * D, NULL);
    g.target = tensor(ctx, B * T * D, NULL), g.dy = tensor(ctx, B * T * D, NULL);
    g.loss = tensor(ctx, 1, NULL);
    bool made = g.x && g.y && g.target && g.dy && g.loss;
    for (int i = 0; i < nw && made; i++) {
        *slot(&g.gw, i) = g.grad[i] = tensor(ctx, wsize[i], NULL);
        g.state[i] = tensor(ctx, 2 * wsize[i], NULL); /* zero: a fresh Adam */
        g.step[i] = tensor(ctx, VKATTN_OPTIM_STEP_COUNT, NULL);
        made = g.grad[i] && g.state[i] && g.step[i];
    }
    vkattn_layer_io tio = {.query = g.x, .value = g.x, .output = g.target};
    vkattn_layer_call tcall = call;
    tcall.keep_for_backward = false;
    if (!made || vkattn_mha_create(ctx, &c.desc, &teacher) ||
        vkattn_mha_set_weights(teacher, &tw) ||
        vkattn_mha_record(teacher, VKATTN_RUN_NOW, &tcall, &tio) ||
        vkattn_tensor_download(g.target, target, 0, B * T * D) ||
        vkattn_mha_create(ctx, &c.desc, &g.student) || vkattn_mha_set_weights(g.student, &sw) ||
        vkattn_mha_get_weight_tensors(g.student, &g.w)) {
        printf("setup failed: %s\n", vkattn_last_error());
        goto done;
    }

    status = train(&g, &c);

done:
    vkattn_mha_destroy(teacher);
    vkattn_mha_destroy(g.student);
    vkattn_tensor *own[] = {g.x, g.y, g.target, g.loss, g.dy};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        vkattn_tensor_destroy(own[i]);
    for (int i = 0; i < NW; i++) {
        vkattn_tensor_destroy(g.grad[i]), vkattn_tensor_destroy(g.state[i]);
        vkattn_tensor_destroy(g.step[i]);
        free(teacher_w[i]), free(c.w[i]), free(c.grad[i]), free(c.state[i]);
    }
    vkattn_context_destroy(ctx);
    return status;
}
