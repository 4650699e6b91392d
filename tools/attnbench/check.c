/* attnbench check FILE.json (docs/CASES.md): builds each case's layer on the
 * device, runs it, runs the CPU reference on the same data, and compares
 * both with the reference and, where the case has them, the expected values.
 * A malformed case or a failing call marks that case, and the rest still run.
 * A float16 (bfloat16) case runs as Keras's float16 (bfloat16) policy does:
 * a layer of that type with query, key, value and output tensors of it, its
 * inputs and weights the case's values rounded to it, and the reference on
 * those rounded values.
 *
 * Criteria, all elementwise |got - want| <= atol + rtol * |want| with the
 * case's tolerance (default atol 1e-5, rtol 1e-4; 1e-3 / 1e-2 for float16,
 * 6.25e-2 / 6.25e-2 for bfloat16):
 * the device against the reference, and, with expected values, the device
 * and the reference against them. ok = all of those hold. A case with
 * grad_output also runs the backward (case_grads.c) and needs its gradients
 * to hold too. */
#include "bench.h"
#include "case.h"
#include "case_grads.h"
#include "cmds.h"
#include "common.h"
#include "heatmap.h"
#include "layer_any.h"
#include "regular_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct case_result {
    bool ok;
    json_t *output, *scores; /* nested arrays, or NULL */
    double err_ref;          /* max |device - reference| */
    bool has_expected;
    double err_exp;          /* max |device - expected| */
    bool ref_ok, dev_exp_ok, ref_exp_ok;
    char error[AB_CASE_ERR];
    float *device_scores; /* the device's scores when computed; the caller frees them */
    bool has_grads;          /* the case has grad_output: the backward ran too */
    ab_grads_result grads;
} case_result;

typedef struct case_gpu {
    vkattn_context *ctx;
    ab_layer_any layer;
    vkattn_tensor *query, *value, *key, *qmask, *vmask, *amask, *output, *scores;
    vkattn_tensor *qpos, *kpos; /* the rotary embedding's positions, f32 */
} case_gpu;

/* The case's kind, desc and weights as the tagged form of layer_any.h. */
static void layer_of_case(const ab_case *c, ab_layer_any *l)
{
    *l = (ab_layer_any){.kind = c->kind, .desc = c->desc, .w = c->w};
}

static void gpu_free(case_gpu *g)
{
    ab_layer_any_destroy(&g->layer);
    vkattn_tensor *t[] = {g->query, g->value, g->key,    g->qmask, g->vmask,
                          g->amask, g->output, g->scores, g->qpos,  g->kpos};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        vkattn_tensor_destroy(t[i]);
}

static vkattn_result nd_tensor(vkattn_context *ctx, const ab_nd *a, vkattn_tensor **out)
{
    *out = NULL;
    return a->data ? ab_tensor(ctx, a->rank, a->dims, a->data, out) : VKATTN_SUCCESS;
}

/* A data tensor (query, key, value, output) of the case's precision: f16
 * for a float16 case, bf16 for a bfloat16 one (data, if any, rounds to
 * nearest even on upload). */
static vkattn_result data_tensor(vkattn_context *ctx, const ab_case *c, uint32_t rank,
                                 const uint32_t *dims, const float *data, vkattn_tensor **out)
{
    return ab_tensor_typed(ctx, rank, dims, c->dtype, data, out);
}

static vkattn_result nd_data_tensor(vkattn_context *ctx, const ab_case *c, const ab_nd *a,
                                    vkattn_tensor **out)
{
    *out = NULL;
    return a->data ? data_tensor(ctx, c, a->rank, a->dims, a->data, out) : VKATTN_SUCCESS;
}

/* A float16 or bfloat16 case: the layer of that type (desc.dtype), and the
 * inputs and weights the values the device holds, so the reference computes
 * on them; false with the case's error if the rounding failed. */
static bool round_case(vkattn_context *ctx, ab_case *c, case_result *res)
{
    ab_rounder r = {.ctx = ctx, .dtype = c->dtype};
    ab_nd *in[] = {&c->query, &c->value, &c->key, &c->grad_output}; /* dL/d(output) too */
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        ab_round_values(&r, in[i]->data, in[i]->n);
    ab_layer_kind_of(c->kind)->use_dtype(&c->desc, &c->w, &r);
    if (r.result != VKATTN_SUCCESS)
        snprintf(res->error, sizeof res->error, "rounding to %s: %s: %s", ab_dtype_name(c->dtype),
                 vkattn_result_name(r.result), vkattn_context_last_error(ctx));
    return r.result == VKATTN_SUCCESS;
}

static vkattn_result run_layer(const ab_case *c, case_gpu *g)
{
    vkattn_layer_io io = {
        .query = g->query, .value = g->value, .key = g->key, .query_mask = g->qmask,
        .value_mask = g->vmask, .attention_mask = g->amask,
        .attention_mask_per_head = c->attention_mask_per_head, .output = g->output,
        .scores = g->scores, .query_positions = g->qpos, .key_positions = g->kpos};
    return ab_layer_any_run(&g->layer, &c->call, &io);
}

/* Device outputs into out (and scores), poisoned first so a forgotten
 * element cannot pass. */
static vkattn_result run_device(const ab_case *c, case_gpu *g, float *out, float *scores)
{
    vkattn_context *ctx = g->ctx;
    vkattn_result r;
    if ((r = nd_data_tensor(ctx, c, &c->query, &g->query)) ||
        (r = nd_data_tensor(ctx, c, &c->value, &g->value)) ||
        (r = nd_data_tensor(ctx, c, &c->key, &g->key)) ||
        (r = nd_tensor(ctx, &c->query_mask, &g->qmask)) ||
        (r = nd_tensor(ctx, &c->value_mask, &g->vmask)) ||
        (r = nd_tensor(ctx, &c->attention_mask, &g->amask)) ||
        (r = nd_tensor(ctx, &c->query_positions, &g->qpos)) ||
        (r = nd_tensor(ctx, &c->key_positions, &g->kpos)) ||
        (r = data_tensor(ctx, c, c->out_rank, c->out_dims, NULL, &g->output)) ||
        (r = vkattn_tensor_fill(g->output, NAN)))
        return r;
    if (scores && ((r = ab_tensor(ctx, c->scores_rank, c->scores_dims, NULL, &g->scores)) ||
                   (r = vkattn_tensor_fill(g->scores, NAN))))
        return r;
    if ((r = ab_layer_any_create(ctx, &g->layer)) || (r = run_layer(c, g)) ||
        (r = vkattn_tensor_download(g->output, out, 0, c->out_n)))
        return r;
    return scores ? vkattn_tensor_download(g->scores, scores, 0, c->scores_n) : VKATTN_SUCCESS;
}

static vkattn_result run_reference(const ab_case *c, const ab_layer_any *l, float *out,
                                   float *scores)
{
    vkattn_layer_host_io io = {
        .query = c->query.data, .value = c->value.data, .key = c->key.data,
        .query_mask = c->query_mask.data, .value_mask = c->value_mask.data,
        .attention_mask = c->attention_mask.data,
        .attention_mask_per_head = c->attention_mask_per_head, .output = out, .scores = scores,
        .query_positions = c->query_positions.data, .key_positions = c->key_positions.data};
    return ab_layer_any_reference(l, &c->call, &io);
}


static void compare(const ab_case *c, const float *out, const float *scores, const float *rout,
                    const float *rscores, case_result *res)
{
    res->err_ref = ab_max_abs_err(out, rout, c->out_n);
    res->ref_ok = ab_within_tolerance(out, rout, c->out_n, c->atol, c->rtol);
    if (scores) {
        res->err_ref = ab_worse_err(res->err_ref, ab_max_abs_err(scores, rscores, c->scores_n));
        res->ref_ok = res->ref_ok && ab_within_tolerance(scores, rscores, c->scores_n, c->atol, c->rtol);
    }
    res->dev_exp_ok = res->ref_exp_ok = true;
    const ab_nd *eo = &c->expected_output, *es = &c->expected_scores;
    res->has_expected = eo->data || es->data;
    if (eo->data) {
        res->err_exp = ab_max_abs_err(out, eo->data, c->out_n);
        res->dev_exp_ok = ab_within_tolerance(out, eo->data, c->out_n, c->atol, c->rtol);
        res->ref_exp_ok = ab_within_tolerance(rout, eo->data, c->out_n, c->atol, c->rtol);
    }
    if (es->data && scores) {
        res->err_exp = ab_worse_err(res->err_exp, ab_max_abs_err(scores, es->data, c->scores_n));
        res->dev_exp_ok = res->dev_exp_ok && ab_within_tolerance(scores, es->data, c->scores_n, c->atol, c->rtol);
        res->ref_exp_ok = res->ref_exp_ok && ab_within_tolerance(rscores, es->data, c->scores_n, c->atol, c->rtol);
    }
    res->ok = res->ref_ok && res->dev_exp_ok && res->ref_exp_ok;
}

static void run_case(vkattn_context *ctx, const ab_case *c, case_result *res)
{
    bool want_scores = c->call.return_attention_scores;
    float *out = ab_floats(c->out_n), *rout = ab_floats(c->out_n);
    float *scores = want_scores ? ab_floats(c->scores_n) : NULL;
    float *rscores = want_scores ? ab_floats(c->scores_n) : NULL;
    case_gpu g = {.ctx = ctx};
    layer_of_case(c, &g.layer);
    if (!out || !rout || (want_scores && (!scores || !rscores))) {
        snprintf(res->error, sizeof res->error, "out of host memory");
        goto done;
    }
    vkattn_result r = run_device(c, &g, out, scores);
    if (r != VKATTN_SUCCESS) {
        snprintf(res->error, sizeof res->error, "%s: %s", vkattn_result_name(r),
                 vkattn_context_last_error(ctx));
        goto done;
    }
    res->device_scores = scores; /* kept for --heatmap */
    scores = NULL;
    res->output = ab_nd_json(out, c->out_rank, c->out_dims);
    if (res->device_scores)
        res->scores = ab_nd_json(res->device_scores, c->scores_rank, c->scores_dims);
    if ((r = run_reference(c, &g.layer, rout, rscores)) != VKATTN_SUCCESS) {
        snprintf(res->error, sizeof res->error, "CPU reference: %s: %s", vkattn_result_name(r),
                 vkattn_last_error());
        goto done;
    }
    compare(c, out, res->device_scores, rout, rscores, res);
    if (c->grad_output.data) { /* the backward too (case_grads.c) */
        res->has_grads = true;
        ab_case_grads_check(ctx, c, &res->grads);
        res->ok = res->ok && res->grads.ok;
        if (res->grads.error[0])
            snprintf(res->error, sizeof res->error, "%s", res->grads.error);
    }
done:
    gpu_free(&g);
    free(out), free(rout), free(scores), free(rscores);
}

static json_t *result_json(const char *name, const case_result *r)
{
    bool ran = r->output != NULL && !r->error[0];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "ok", json_boolean(r->ok));
    json_object_set_new(o, "output", r->output ? json_incref(r->output) : json_null());
    json_object_set_new(o, "attention_scores", r->scores ? json_incref(r->scores) : json_null());
    json_object_set_new(o, "max_abs_err_vs_reference", ran ? ab_json_number(r->err_ref) : json_null());
    json_object_set_new(o, "max_abs_err_vs_expected",
                        ran && r->has_expected ? ab_json_number(r->err_exp) : json_null());
    json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
    if (r->has_grads) {
        const ab_grads_result *g = &r->grads;
        json_object_set_new(o, "grads", g->grads ? json_incref(g->grads) : json_null());
        json_object_set_new(o, "max_abs_err_vs_expected_grads",
                            g->ran && g->has_expected ? ab_json_number(g->err_exp) : json_null());
    }
    return o;
}

static void print_line(const char *name, const case_result *r)
{
    if (r->error[0]) {
        printf("FAIL  %s: %s\n", name, r->error);
        return;
    }
    printf("%s  %s: device vs reference %.3g%s", r->ok ? "ok  " : "FAIL", name, r->err_ref,
           r->ref_ok ? "" : " (above tolerance)");
    if (r->has_expected)
        printf(", device vs expected %.3g%s%s", r->err_exp, r->dev_exp_ok ? "" : " (above tolerance)",
               r->ref_exp_ok ? "" : ", reference vs expected above tolerance");
    const ab_grads_result *g = &r->grads;
    if (r->has_grads && g->ran) {
        printf("; gradients: device vs reference %.3g%s", g->err_ref,
               g->ref_ok ? "" : " (above tolerance)");
        if (g->has_expected)
            printf(", device vs expected %.3g%s%s", g->err_exp,
                   g->dev_exp_ok ? "" : " (above tolerance)",
                   g->ref_exp_ok ? "" : ", reference vs expected above tolerance");
    }
    printf("\n");
}

/* --heatmap: the case's pictures, their paths as the report's "heatmaps"
 * (docs/ATTNBENCH.md). False when a file could not be written. */
static bool heatmaps(const ab_args *a, const ab_case *c, size_t index, const case_result *res,
                     json_t *taken, json_t *paths)
{
    char err[512];
    if (!res->device_scores)
        return true;
    if (ab_heatmap_write(a->heatmap, c, index, res->device_scores, a->log_color, taken, paths, err,
                         sizeof err))
        return true;
    fprintf(stderr, "attnbench: --heatmap: %s\n", err);
    return false;
}

/* FILE.json into *root: a regular file (a folder or a FIFO is refused
 * before it is opened: fopen of a FIFO blocks), read whole, an optional
 * UTF-8 byte-order mark skipped (RFC 8259 section 8.1 lets a parser ignore
 * one), then JSON holding one case or a non-empty array of cases. False
 * after a message naming the file. */
static bool load_cases(const char *path, json_t **root)
{
    *root = NULL;
    uint64_t file_size;
    const char *why;
    ab_file_kind kind = ab_regular_file(path, &file_size, &why);
    if (kind == AB_FILE_MISSING) {
        fprintf(stderr, "attnbench: check: %s: cannot open: %s\n", path, strerror(errno));
        return false;
    }
    if (kind == AB_FILE_OTHER) {
        fprintf(stderr, "attnbench: check: %s: %s; check takes a FILE.json\n", path, why);
        return false;
    }
    if (file_size >= SIZE_MAX) {
        fprintf(stderr, "attnbench: check: %s: cannot read: too large\n", path);
        return false;
    }
    FILE *f = fopen(path, "rb");
    size_t size = (size_t)file_size, got = 0;
    char *text = f ? malloc(size + 1) : NULL;
    if (text)
        got = fread(text, 1, size, f);
    if (!f || !text || got != size) {
        fprintf(stderr, "attnbench: check: %s: cannot read: %s\n", path,
                !f ? strerror(errno) : !text ? "out of memory" : "short read");
        free(text);
        if (f)
            fclose(f);
        return false;
    }
    fclose(f);
    size_t skip = size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    json_error_t jerr;
    /* a key given twice is refused (jansson would keep the last one silently) */
    *root = json_loadb(text + skip, size - skip, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!*root) {
        fprintf(stderr, "attnbench: check: %s:%d:%d: %s\n", path, jerr.line, jerr.column,
                jerr.text);
        return false;
    }
    if (json_is_array(*root) && json_array_size(*root) == 0) {
        fprintf(stderr, "attnbench: check: %s: an empty list; a case file holds one case or "
                        "an array of at least one\n", path);
        json_decref(*root);
        *root = NULL;
        return false;
    }
    return true;
}

static int run_check(const ab_args *a);

/* --heatmap DIR/ (a shell completes folders so) joins as DIR/x.png, not
 * DIR//x.png: the trailing separators are cut here, once, before any path
 * is made from it ("/" itself stays). */
int ab_cmd_check(const ab_args *a)
{
#ifndef ATTNBENCH_HAVE_JSON /* no JSON parser: tools/attnbench/json_lite */
    fprintf(stderr, "attnbench: check %s: attnbench was built without case files (jansson)\n",
            a->file);
    return ATTNBENCH_EXIT_USAGE;
#endif
#ifndef ATTNBENCH_HAVE_PICTURES /* no_pictures.c */
    if (a->heatmap) {
        fprintf(stderr, "attnbench: --heatmap %s: attnbench was built without pictures (cairo)\n",
                a->heatmap);
        return ATTNBENCH_EXIT_USAGE;
    }
#endif
    if (a->log_color && !a->heatmap) {
        fprintf(stderr, "attnbench: check: --log-color colours heatmaps; it needs --heatmap DIR\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    if (!a->heatmap)
        return run_check(a);
    size_t len = strlen(a->heatmap);
    while (len > 1 && (a->heatmap[len - 1] == '/'
#ifdef _WIN32
                       || a->heatmap[len - 1] == '\\'
#endif
                       ))
        len--;
    char *dir = malloc(len + 1);
    if (!dir) {
        fprintf(stderr, "attnbench: --heatmap: out of host memory\n");
        return ATTNBENCH_EXIT_CHECK;
    }
    memcpy(dir, a->heatmap, len);
    dir[len] = '\0';
    ab_args trimmed = *a;
    trimmed.heatmap = dir;
    int status = run_check(&trimmed);
    free(dir);
    return status;
}

static int run_check(const ab_args *a)
{
    if (a->heatmap) {
        int st = ab_heatmap_dir_check(a->heatmap);
        if (st)
            return st;
    }
    json_t *root;
    if (!load_cases(a->file, &root))
        return ATTNBENCH_EXIT_CHECK;
    vkattn_context *ctx;
    int status = ab_open_context(a, &ctx);
    if (status) {
        json_decref(root);
        return status;
    }
    size_t n = json_is_array(root) ? json_array_size(root) : 1;
    json_t *report = json_array();
    size_t n_ok = 0;
    json_t *taken = json_object(); /* heatmap file names written so far */
    bool pictures_ok = true;
    for (size_t i = 0; i < n; i++) {
        json_t *obj = json_is_array(root) ? json_array_get(root, i) : root;
        ab_case c;
        case_result res = {0};
        ab_progress("check: case %zu/%zu", i + 1, n);
        bool parsed = ab_case_parse_at(obj, i, a->file, &c, res.error, sizeof res.error);
        bool asked = parsed && c.call.return_attention_scores;
        if (parsed && a->heatmap)
            c.call.return_attention_scores = true; /* the pictures need the weights */
        if (parsed && (c.dtype == VKATTN_DTYPE_F32 || round_case(ctx, &c, &res)))
            run_case(ctx, &c, &res);
        n_ok += res.ok;
        json_t *paths = a->heatmap ? json_array() : NULL;
        if (paths)
            pictures_ok = heatmaps(a, &c, i, &res, taken, paths) && pictures_ok;
        if (!asked) { /* report scores only where the case asked */
            json_decref(res.scores);
            res.scores = NULL;
        }
        if (a->json) {
            json_t *o = result_json(c.name, &res);
            if (paths)
                json_object_set(o, "heatmaps", paths);
            json_array_append_new(report, o);
        } else {
            print_line(c.name, &res);
            for (size_t k = 0; paths && k < json_array_size(paths); k++)
                printf("      heatmap %s\n", json_string_value(json_array_get(paths, k)));
        }
        json_decref(paths);
        free(res.device_scores);
        ab_grads_result_free(&res.grads);
        json_decref(res.output);
        json_decref(res.scores);
        ab_case_free(&c);
    }
    if (a->json)
        ab_json_print(report);
    else
        printf("%zu/%zu cases ok\n", n_ok, n);
    json_decref(report);
    json_decref(taken);
    json_decref(root);
    vkattn_context_destroy(ctx);
    if (a->validation && ab_validation_messages() > 0) {
        fprintf(stderr, "attnbench: the validation layer reported %u message(s)\n",
                ab_validation_messages());
        return ATTNBENCH_EXIT_CHECK;
    }
    return n_ok == n && pictures_ok ? ATTNBENCH_EXIT_OK : ATTNBENCH_EXIT_CHECK;
}
