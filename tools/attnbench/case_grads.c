/* Case-file gradients (docs/CASES.md): reading grad_output and
 * expected_grads, then running the layer backward on the device (after a
 * forward with keep_for_backward, the case's call unchanged otherwise, so
 * dropout keeps the same elements) and the CPU reference backward, and
 * comparing them elementwise with the case's tolerance. */
#include "case_grads.h"

#include "common.h"
#include "layer_any.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

enum { G_QUERY, G_VALUE, G_KEY, G_WEIGHTS }; /* expected_grads indices; weights follow */
_Static_assert(AB_CASE_GRADS == G_WEIGHTS + AB_LAYER_WEIGHTS, "a slot per gradient");

/* One gradient of a case: its name and the shape of what it is the gradient of. */
typedef struct grad_info {
    const char *name;
    uint32_t rank; /* 0 = a scalar */
    uint32_t dims[4];
    size_t n; /* 0 = the case has no such gradient */
} grad_info;

/* The case's kind, desc and weights as the tagged form of layer_any.h. */
static void layer_of_case(const ab_case *c, ab_layer_any *l)
{
    *l = (ab_layer_any){.kind = c->kind, .desc = c->desc, .w = c->w};
}

static grad_info input_info(const char *name, const ab_nd *a)
{
    grad_info g = {.name = name, .rank = a->rank, .n = a->data ? a->n : 0};
    memcpy(g.dims, a->dims, sizeof g.dims);
    return g;
}

/* Fills g[0..AB_CASE_GRADS-1]; returns how many are listed. */
static uint32_t grad_infos(const ab_case *c, grad_info g[AB_CASE_GRADS])
{
    memset(g, 0, AB_CASE_GRADS * sizeof *g);
    g[G_QUERY] = input_info("query", &c->query);
    g[G_VALUE] = input_info("value", &c->value);
    g[G_KEY] = input_info("key", &c->key);
    g[G_KEY].name = "key";
    ab_layer_any l;
    layer_of_case(c, &l);
    ab_weight_slot s[AB_LAYER_WEIGHTS];
    uint32_t ns = ab_layer_any_weight_slots(&l, s);
    for (uint32_t i = 0; i < ns; i++) {
        grad_info *w = &g[G_WEIGHTS + i];
        *w = (grad_info){.name = s[i].name, .rank = s[i].rank, .n = s[i].n};
        memcpy(w->dims, s[i].dims, sizeof s[i].dims);
    }
    return G_WEIGHTS + ns;
}

static bool parse_one(json_t *j, const char *field, const grad_info *g, ab_nd *a, char *err,
                      size_t err_size)
{
    if (json_is_number(j)) { /* a scalar's gradient may be a plain number */
        if (g->n != 1)
            return FAIL("%s: a number, but the gradient has %zu elements", field, g->n);
        double v = json_number_value(j);
        if (!(fabs(v) <= FLT_MAX)) /* (float) would make it inf */
            return FAIL("%s: %g overflows float32 (largest %.9g)", field, v, (double)FLT_MAX);
        a->data = malloc(sizeof *a->data);
        if (!a->data)
            return FAIL("%s: out of host memory", field);
        a->data[0] = (float)v;
        a->rank = 1, a->dims[0] = 1, a->n = 1;
        return true;
    }
    if (!json_is_array(j))
        return FAIL("%s: must be a nested array%s", field, g->rank ? "" : " or a number");
    if (!ab_nd_parse(j, field, a, err, err_size))
        return false;
    if (g->rank == 0) {
        if (a->n != 1)
            return FAIL("%s: %zu elements, but the gradient is a scalar", field, a->n);
        return true;
    }
    return ab_nd_expect_shape(a, field, g->rank, g->dims, "(the shape of what it is the gradient of)",
                              true, err, err_size);
}

bool ab_case_parse_grads(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    json_t *go = json_object_get(obj, "grad_output"), *eg = json_object_get(obj, "expected_grads");
    if (go && !json_is_null(go) && !json_is_array(go))
        return FAIL("grad_output: must be a nested array (the output's shape)");
    if (!ab_nd_parse(go, "grad_output", &c->grad_output, err, err_size))
        return false;
    if (c->grad_output.data &&
        !ab_nd_expect_shape(&c->grad_output, "grad_output", c->out_rank, c->out_dims,
                            "(the layer's output)", true, err, err_size))
        return false;
    if (!eg || json_is_null(eg))
        return true;
    if (!json_is_object(eg))
        return FAIL("expected_grads: must be an object {name: nested array}");
    if (!c->grad_output.data)
        return FAIL("expected_grads: given without grad_output");
    grad_info g[AB_CASE_GRADS];
    uint32_t n = grad_infos(c, g);
    const char *key;
    json_t *val;
    json_object_foreach(eg, key, val) {
        uint32_t i = 0;
        while (i < n && !(g[i].n && !strcmp(g[i].name, key)))
            i++;
        if (i == n) {
            char names[256] = "";
            for (uint32_t k = 0; k < n; k++)
                if (g[k].n)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             names[0] ? ", " : "", g[k].name);
            return FAIL("expected_grads.%.64s: not a gradient of this case (it has %s)", key,
                        names);
        }
        char field[128];
        snprintf(field, sizeof field, "expected_grads.%s", g[i].name);
        if (!parse_one(val, field, &g[i], &c->expected_grads[i], err, err_size))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------ running */


typedef struct grads_run {
    vkattn_context *ctx;
    ab_layer_any layer;
    vkattn_tensor *in[8], *output, *gout, *grad[AB_CASE_GRADS];
    float *dev[AB_CASE_GRADS], *ref[AB_CASE_GRADS];
} grads_run;

static void run_free(grads_run *g)
{
    ab_layer_any_destroy(&g->layer);
    for (int i = 0; i < 8; i++)
        vkattn_tensor_destroy(g->in[i]);
    vkattn_tensor_destroy(g->output), vkattn_tensor_destroy(g->gout);
    for (int i = 0; i < AB_CASE_GRADS; i++) {
        vkattn_tensor_destroy(g->grad[i]);
        free(g->dev[i]), free(g->ref[i]);
    }
}

static vkattn_result nd_tensor_typed(vkattn_context *ctx, const ab_nd *a, vkattn_dtype dt,
                                     vkattn_tensor **out)
{
    *out = NULL;
    return a->data ? ab_tensor_typed(ctx, a->rank, a->dims, dt, a->data, out) : VKATTN_SUCCESS;
}

static vkattn_result nd_tensor(vkattn_context *ctx, const ab_nd *a, vkattn_tensor **out)
{
    return nd_tensor_typed(ctx, a, VKATTN_DTYPE_F32, out);
}

/* The data tensors (query, key, value, output), dL/d(output) and every
 * gradient have the case's type: f16 for a float16 case (the f16 layer's
 * backward; the host data was rounded to f16 before, check.c's round_case),
 * so the gradients compared are the f16 ones; masks stay f32. */
static vkattn_result run_device(const ab_case *c, const grad_info *info, uint32_t n,
                                const vkattn_layer_call *call, grads_run *g)
{
    vkattn_context *ctx = g->ctx;
    const vkattn_dtype dt = c->dtype;
    const ab_nd *ins[8] = {&c->query,          &c->value,          &c->key,
                           &c->query_mask,     &c->value_mask,     &c->attention_mask,
                           &c->query_positions, &c->key_positions};
    vkattn_result r = VKATTN_SUCCESS;
    for (int i = 0; i < 8 && !r; i++)
        r = i < 3 ? nd_tensor_typed(ctx, ins[i], dt, &g->in[i]) : nd_tensor(ctx, ins[i], &g->in[i]);
    if (r || (r = ab_tensor_typed(ctx, c->out_rank, c->out_dims, dt, NULL, &g->output)) ||
        (r = ab_tensor_typed(ctx, c->grad_output.rank, c->grad_output.dims, dt,
                             c->grad_output.data, &g->gout)))
        return r;
    for (uint32_t i = 0; i < n && !r; i++) {
        if (!info[i].n)
            continue;
        /* inputs' gradients in their shape; weights' flat */
        uint32_t flat = (uint32_t)info[i].n;
        r = i < G_WEIGHTS ? ab_tensor_typed(ctx, info[i].rank, info[i].dims, dt, NULL, &g->grad[i])
                          : ab_tensor_typed(ctx, 1, &flat, dt, NULL, &g->grad[i]);
        if (!r) /* poisoned: a gradient left unwritten cannot pass */
            r = vkattn_tensor_fill(g->grad[i], NAN);
    }
    if (r || (r = ab_layer_any_create(ctx, &g->layer)))
        return r;
    vkattn_layer_io io = {.query = g->in[0], .value = g->in[1], .key = g->in[2],
                          .query_mask = g->in[3], .value_mask = g->in[4],
                          .attention_mask = g->in[5],
                          .attention_mask_per_head = c->attention_mask_per_head,
                          .output = g->output, .query_positions = g->in[6],
                          .key_positions = g->in[7]};
    vkattn_layer_grads grads = {.grad_output = g->gout, .grad_query = g->grad[G_QUERY],
                                .grad_value = g->grad[G_VALUE], .grad_key = g->grad[G_KEY]};
    if ((r = ab_layer_any_run(&g->layer, call, &io)) ||
        (r = ab_layer_any_backward_run(&g->layer, call, &io, &grads, g->grad + G_WEIGHTS)))
        return r;
    for (uint32_t i = 0; i < n && !r; i++)
        if (g->grad[i])
            r = vkattn_tensor_download(g->grad[i], g->dev[i], 0, info[i].n);
    return r;
}

static vkattn_result run_reference(const ab_case *c, const vkattn_layer_call *call, grads_run *g)
{
    vkattn_layer_host_io io = {
        .query = c->query.data, .value = c->value.data, .key = c->key.data,
        .query_mask = c->query_mask.data, .value_mask = c->value_mask.data,
        .attention_mask = c->attention_mask.data,
        .attention_mask_per_head = c->attention_mask_per_head,
        .query_positions = c->query_positions.data, .key_positions = c->key_positions.data};
    vkattn_layer_host_grads hg = {.grad_query = g->ref[G_QUERY], .grad_value = g->ref[G_VALUE],
                                  .grad_key = g->ref[G_KEY]};
    return ab_layer_any_reference_backward(&g->layer, call, &io, c->grad_output.data, &hg,
                                           g->ref + G_WEIGHTS);
}

static json_t *grad_json(const grad_info *info, const float *x)
{
    if (info->rank == 0)
        return isfinite(x[0]) ? json_real(x[0]) : json_null();
    return ab_nd_json(x, info->rank, info->dims);
}

void ab_case_grads_check(vkattn_context *ctx, const ab_case *c, ab_grads_result *res)
{
    memset(res, 0, sizeof *res);
    grad_info info[AB_CASE_GRADS];
    uint32_t n = grad_infos(c, info);
    grads_run g = {.ctx = ctx};
    layer_of_case(c, &g.layer);
    vkattn_layer_call call = c->call;
    call.keep_for_backward = true;
    call.return_attention_scores = false; /* the gradients do not depend on them */
    for (uint32_t i = 0; i < n; i++)
        if (info[i].n && (!(g.dev[i] = ab_floats(info[i].n)) || !(g.ref[i] = ab_floats(info[i].n)))) {
            snprintf(res->error, sizeof res->error, "backward: out of host memory");
            goto done;
        }
    vkattn_result r = run_device(c, info, n, &call, &g);
    if (r) {
        snprintf(res->error, sizeof res->error, "backward: %s: %s", vkattn_result_name(r),
                 vkattn_context_last_error(ctx));
        goto done;
    }
    if ((r = run_reference(c, &call, &g))) {
        snprintf(res->error, sizeof res->error, "CPU reference backward: %s: %s",
                 vkattn_result_name(r), vkattn_last_error());
        goto done;
    }
    res->ran = true;
    res->grads = json_object();
    res->ref_ok = res->dev_exp_ok = res->ref_exp_ok = true;
    for (uint32_t i = 0; i < n; i++) {
        if (!info[i].n)
            continue;
        size_t m = info[i].n;
        json_object_set_new(res->grads, info[i].name, grad_json(&info[i], g.dev[i]));
        res->err_ref = ab_worse_err(res->err_ref, ab_max_abs_err(g.dev[i], g.ref[i], m));
        res->ref_ok = res->ref_ok && ab_within_tolerance(g.dev[i], g.ref[i], m, c->atol, c->rtol);
        const float *want = c->expected_grads[i].data;
        if (!want)
            continue;
        res->has_expected = true;
        res->err_exp = ab_worse_err(res->err_exp, ab_max_abs_err(g.dev[i], want, m));
        res->dev_exp_ok = res->dev_exp_ok && ab_within_tolerance(g.dev[i], want, m, c->atol, c->rtol);
        res->ref_exp_ok = res->ref_exp_ok && ab_within_tolerance(g.ref[i], want, m, c->atol, c->rtol);
    }
    res->ok = res->ref_ok && res->dev_exp_ok && res->ref_exp_ok;
done:
    run_free(&g);
}

void ab_grads_result_free(ab_grads_result *r)
{
    json_decref(r->grads);
    r->grads = NULL;
}
