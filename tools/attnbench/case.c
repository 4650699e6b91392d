/* Reading a case object (docs/CASES.md). Every malformed input ends in one
 * message naming the field ("value_mask: shape (2, 3) but (2, 4) expected
 * (B, Tv)"), so a user can fix the file without reading this code. */
#include "case.h"

#include "case_params.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ab_case_fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return false;
}
#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

/* ------------------------------------------------------------ nested arrays */

void ab_nd_free(ab_nd *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

static void shape_text(uint32_t rank, const uint32_t *dims, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "(");
    for (uint32_t i = 0; i < rank && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%u", i ? ", " : "", dims[i]);
    if (o < size)
        snprintf(buf + o, size - o, "%s)", rank == 1 ? "," : "");
}

static bool nd_fill(json_t *j, const ab_nd *a, uint32_t depth, bool allow_bool, float **p,
                    const char *field, char *err, size_t err_size)
{
    if (depth == a->rank) {
        if (json_is_number(j)) {
            double v = json_number_value(j);
            if (!(fabs(v) <= FLT_MAX)) { /* (float) would make it inf */
                uint32_t idx[4];
                size_t flat = (size_t)(*p - a->data);
                for (uint32_t d = a->rank; d-- > 0; flat /= a->dims[d])
                    idx[d] = (uint32_t)(flat % a->dims[d]);
                char at[64];
                size_t o = 0;
                for (uint32_t d = 0; d < a->rank && o < sizeof at; d++)
                    o += (size_t)snprintf(at + o, sizeof at - o, "[%u]", idx[d]);
                return FAIL("%s%s: %g overflows float32 (largest %.9g)", field, at, v,
                            (double)FLT_MAX);
            }
            *(*p)++ = (float)v;
        } else if (allow_bool && json_is_boolean(j))
            *(*p)++ = json_is_true(j) ? 1.0f : 0.0f;
        else
            return FAIL("%s: an element is %s, not a number%s", field,
                        json_is_array(j) ? "an array" : json_is_null(j) ? "null" : "not numeric",
                        allow_bool ? " or boolean" : "");
        return true;
    }
    if (!json_is_array(j) || json_array_size(j) != a->dims[depth])
        return FAIL("%s: ragged nested array (axis %u should have %u elements everywhere)", field,
                    depth, a->dims[depth]);
    for (size_t i = 0; i < a->dims[depth]; i++)
        if (!nd_fill(json_array_get(j, i), a, depth + 1, allow_bool, p, field, err, err_size))
            return false;
    return true;
}

/* Reads nested arrays (rank 1..4); absent or null leaves *a empty. */
static bool nd_parse(json_t *j, const char *field, bool allow_bool, ab_nd *a, char *err,
                     size_t err_size)
{
    memset(a, 0, sizeof *a);
    if (!j || json_is_null(j))
        return true;
    if (!json_is_array(j))
        return FAIL("%s: must be a nested array", field);
    size_t n = 1;
    for (json_t *e = j; json_is_array(e); e = json_array_get(e, 0)) {
        if (a->rank == 4)
            return FAIL("%s: more than 4 dimensions", field);
        if (json_array_size(e) == 0)
            return FAIL("%s: an empty array (every dimension must be >= 1)", field);
        if (json_array_size(e) > UINT32_MAX || n > SIZE_MAX / 4 / json_array_size(e))
            return FAIL("%s: too large", field);
        a->dims[a->rank++] = (uint32_t)json_array_size(e);
        n *= json_array_size(e);
    }
    a->n = n;
    a->data = malloc(n * sizeof *a->data);
    if (!a->data)
        return FAIL("%s: out of host memory", field);
    float *p = a->data;
    if (!nd_fill(j, a, 0, allow_bool, &p, field, err, err_size)) {
        ab_nd_free(a);
        return false;
    }
    return true;
}

static json_t *nd_json_rec(const float **p, uint32_t rank, const uint32_t *dims)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < dims[0]; i++) {
        if (rank == 1) {
            double v = *(*p)++;
            json_array_append_new(arr, isfinite(v) ? json_real(v) : json_null());
        } else {
            json_array_append_new(arr, nd_json_rec(p, rank - 1, dims + 1));
        }
    }
    return arr;
}

json_t *ab_nd_json(const float *data, uint32_t rank, const uint32_t *dims)
{
    const float *p = data;
    return nd_json_rec(&p, rank, dims);
}

/* Shapes equal after dropping size-1 axes: (B, 1, Tv) reads as (B, Tv). */
static bool same_squeezed(uint32_t ra, const uint32_t *a, uint32_t rb, const uint32_t *b)
{
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < ra && a[i] == 1)
            i++;
        while (j < rb && b[j] == 1)
            j++;
        if (i == ra || j == rb)
            return i == ra && j == rb;
        if (a[i++] != b[j++])
            return false;
    }
}

/* The array must have exactly this shape (`what` names the axes). */
static bool expect_shape(const ab_nd *a, const char *field, uint32_t rank, const uint32_t *dims,
                         const char *what, bool squeeze_ok, char *err, size_t err_size)
{
    bool ok = a->rank == rank && !memcmp(a->dims, dims, rank * sizeof *dims);
    if (!ok && squeeze_ok)
        ok = same_squeezed(a->rank, a->dims, rank, dims);
    if (ok)
        return true;
    char got[64], want[64];
    shape_text(a->rank, a->dims, got, sizeof got);
    shape_text(rank, dims, want, sizeof want);
    return FAIL("%s: shape %s but %s expected %s", field, got, want, what);
}

/* Broadcasts a (B|1, [H|1,] Tq|1, Tv|1) mask to its full shape in place. */
static bool broadcast_mask(ab_nd *m, uint32_t rank, const uint32_t *full, const char *field,
                           char *err, size_t err_size)
{
    for (uint32_t i = 0; i < rank; i++)
        if (m->dims[i] != full[i] && m->dims[i] != 1) {
            char got[64], want[64];
            shape_text(m->rank, m->dims, got, sizeof got);
            shape_text(rank, full, want, sizeof want);
            return FAIL("%s: shape %s does not broadcast to %s", field, got, want);
        }
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++)
        n *= full[i];
    float *out = malloc(n * sizeof *out);
    if (!out)
        return FAIL("%s: out of host memory", field);
    for (size_t e = 0; e < n; e++) {
        size_t rest = e, src = 0, stride = 1;
        for (uint32_t i = rank; i-- > 0;) {
            size_t idx = rest % full[i];
            rest /= full[i];
            src += (m->dims[i] == 1 ? 0 : idx) * stride;
            stride *= m->dims[i];
        }
        out[e] = m->data[src];
    }
    free(m->data);
    m->data = out;
    m->n = n;
    memcpy(m->dims, full, rank * sizeof *full);
    return true;
}

/* ------------------------------------------------------------ scalar fields */

/* Unsigned 64-bit: a JSON integer, or a decimal string for values >= 2^63. */
static bool get_u64(json_t *obj, const char *key, uint64_t *out, char *err, size_t err_size)
{
    json_t *j = json_object_get(obj, key);
    *out = 0;
    if (!j || json_is_null(j))
        return true;
    if (json_is_integer(j) && json_integer_value(j) >= 0) {
        *out = (uint64_t)json_integer_value(j);
        return true;
    }
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        char *end;
        if (*s >= '0' && *s <= '9') {
            errno = 0;
            unsigned long long v = strtoull(s, &end, 10);
            if (!*end && errno == 0) {
                *out = v;
                return true;
            }
        }
    }
    return FAIL("%s: must be an unsigned 64-bit integer (or a decimal string)", key);
}

/* ------------------------------------------------------------ the case */

/* "A, B, C": the Keras names of every kind, joined by `sep` and, before the
 * last one, by `last_sep`. */
static void kind_names(char *buf, size_t size, const char *sep, const char *last_sep)
{
    size_t o = 0;
    for (int i = 0; i < AB_LAYER_KINDS && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s",
                              i == 0 ? "" : i == AB_LAYER_KINDS - 1 ? last_sep : sep,
                              ab_layer_kinds[i]->keras_name);
}

static bool parse_layer_name(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    char names[256];
    json_t *j = json_object_get(obj, "layer");
    if (!json_is_string(j)) {
        kind_names(names, sizeof names, ", ", ", ");
        return FAIL("layer: required, one of %s", names);
    }
    const ab_layer_kind_info *kind = ab_layer_kind_by_keras_name(json_string_value(j));
    if (kind) {
        c->kind = kind->kind;
        return true;
    }
    kind_names(names, sizeof names, ", ", " or ");
    return FAIL("layer: unknown layer \"%s\" (%s)", json_string_value(j), names);
}

/* query, value, key: shapes give B, Tq, Tv and the widths. */
static bool parse_inputs(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    if (!json_object_get(obj, "query") || !json_object_get(obj, "value"))
        return FAIL("%s: required", json_object_get(obj, "query") ? "value" : "query");
    if (!nd_parse(json_object_get(obj, "query"), "query", false, &c->query, err, err_size) ||
        !nd_parse(json_object_get(obj, "value"), "value", false, &c->value, err, err_size) ||
        !nd_parse(json_object_get(obj, "key"), "key", false, &c->key, err, err_size))
        return false;
    if (!c->query.data || !c->value.data)
        return FAIL("%s: required", c->query.data ? "value" : "query");
    if (c->value.rank != 3)
        return FAIL("value: rank %u; must be (B, Tv, Dv)", c->value.rank);
    c->batch = c->value.dims[0];
    c->tv = c->value.dims[1];
    c->dv = c->value.dims[2];
    const bool rank2_ok = ab_layer_kind_of(c->kind)->rank2_query;
    if (c->query.rank == 2 && rank2_ok) {
        c->rank2_query = true;
        c->tq = 1;
        c->dq = c->query.dims[1];
    } else if (c->query.rank == 3) {
        c->tq = c->query.dims[1];
        c->dq = c->query.dims[2];
    } else {
        return FAIL("query: rank %u; must be (B, Tq, Dq)%s", c->query.rank,
                    rank2_ok ? " or (B, Dq)" : "");
    }
    if (c->query.dims[0] != c->batch)
        return FAIL("query: batch %u but value has batch %u", c->query.dims[0], c->batch);
    c->dk = c->dv;
    if (c->key.data) {
        if (c->key.rank != 3 || c->key.dims[0] != c->batch || c->key.dims[1] != c->tv)
            return FAIL("key: must be (B, Tv, Dk) with B = %u and Tv = %u as value", c->batch,
                        c->tv);
        c->dk = c->key.dims[2];
    }
    return true;
}

static bool parse_masks(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    if (!nd_parse(json_object_get(obj, "query_mask"), "query_mask", true, &c->query_mask, err,
                  err_size) ||
        !nd_parse(json_object_get(obj, "value_mask"), "value_mask", true, &c->value_mask, err,
                  err_size) ||
        !nd_parse(json_object_get(obj, "attention_mask"), "attention_mask", true,
                  &c->attention_mask, err, err_size))
        return false;
    uint32_t qm[2] = {c->batch, c->tq}, vm[2] = {c->batch, c->tv};
    if (c->query_mask.data &&
        !expect_shape(&c->query_mask, "query_mask", 2, qm, "(B, Tq)", c->rank2_query, err, err_size))
        return false;
    if (c->value_mask.data &&
        !expect_shape(&c->value_mask, "value_mask", 2, vm, "(B, Tv)", false, err, err_size))
        return false;
    ab_nd *am = &c->attention_mask;
    if (!am->data)
        return true;
    /* Keras's broadcast (docs/LAYERS.md): rank 1..3 right-aligned against
     * (B, Tq, Tv) and shared by the heads; rank 4 (the multi-head layers
     * only) against (B, H, Tq, Tv). Expanded here to the full mask. */
    const bool multi_head = ab_layer_kind_of(c->kind)->multi_head;
    if (am->rank == 4 && multi_head) {
        uint32_t full[4] = {c->batch, c->heads, c->tq, c->tv};
        c->attention_mask_per_head = true;
        return broadcast_mask(am, 4, full, "attention_mask", err, err_size);
    }
    if (am->rank < 1 || am->rank > 3)
        return FAIL("attention_mask: rank %u; must be 1..3, broadcasting to (B, Tq, Tv)%s",
                    am->rank, multi_head ? ", or 4, to (B, H, Tq, Tv)" : "");
    uint32_t full[3] = {c->batch, c->tq, c->tv};
    const uint32_t pad = 3 - am->rank; /* leading dims of 1 */
    for (uint32_t i = 3; i-- > 0;)
        am->dims[i] = i >= pad ? am->dims[i - pad] : 1;
    am->rank = 3;
    return broadcast_mask(am, 3, full, "attention_mask", err, err_size);
}

/* query_positions (B, Tq) and key_positions (B, Tv): the rotary embedding's
 * positions, non-negative integers below 2^24 (exact in float32). */
static bool parse_positions(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    const ab_layer_kind_info *kind = ab_layer_kind_of(c->kind);
    const bool rope = kind->uses_rope && kind->uses_rope(&c->desc);
    static const char *const names[2] = {"query_positions", "key_positions"};
    ab_nd *arrays[2] = {&c->query_positions, &c->key_positions};
    const uint32_t dims[2][2] = {{c->batch, c->tq}, {c->batch, c->tv}};
    for (int i = 0; i < 2; i++) {
        if (!nd_parse(json_object_get(obj, names[i]), names[i], false, arrays[i], err, err_size))
            return false;
        if (!arrays[i]->data)
            continue;
        if (!rope)
            return FAIL("%s: needs params.rope (positions turn the rotary embedding only)",
                        names[i]);
        if (!expect_shape(arrays[i], names[i], 2, dims[i], i ? "(B, Tv)" : "(B, Tq)", false,
                          err, err_size))
            return false;
        for (size_t j = 0; j < arrays[i]->n; j++) {
            const float p = arrays[i]->data[j];
            if (!(p >= 0.0f && p < 16777216.0f && p == floorf(p)))
                return FAIL("%s[%zu]: %g; positions are integers in [0, 2^24)", names[i], j,
                            (double)p);
        }
    }
    return true;
}

static bool parse_call(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    bool causal, training, scores;
    if (!ab_case_bool(obj, "use_causal_mask", false, &causal, err, err_size) ||
        !ab_case_bool(obj, "training", false, &training, err, err_size) ||
        !ab_case_bool(obj, "return_attention_scores", false, &scores, err, err_size) ||
        !get_u64(obj, "seed", &c->call.seed, err, err_size) ||
        !get_u64(obj, "offset", &c->call.offset, err, err_size))
        return false;
    c->call.batch = c->batch;
    c->call.tq = c->tq;
    c->call.tv = c->tv;
    c->call.causal = causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE;
    c->call.training = training;
    /* scores are also fetched when the case gives expected ones */
    c->call.return_attention_scores = scores || json_is_array(json_object_get(obj, "expected_scores"));
    return true;
}

/* dtype, tolerance, expected values (shapes checked against the outputs). */
static bool parse_expectations(json_t *obj, ab_case *c, char *err, size_t err_size)
{
    static const char *const dtypes[] = {"float32", "float16", "bfloat16"};
    static const vkattn_dtype types[] = {VKATTN_DTYPE_F32, VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16};
    /* defaults: a few ulps of the inputs' precision; bfloat16: the layers'
     * bound 8 eps max(1, max|ref|), eps = 2^-7 (vkattn/attention.h), as
     * 8 eps (1 + |want|), which holds it where the outputs are within +-1 */
    static const double atols[] = {1e-5, 1e-3, 6.25e-2}, rtols[] = {1e-4, 1e-2, 6.25e-2};
    uint32_t dtype = 0;
    if (!ab_case_choice(obj, "dtype", dtypes, 3, &dtype,
                        "dtype: must be \"float32\", \"float16\" or \"bfloat16\"", err,
                        err_size))
        return false;
    c->dtype = types[dtype];
    c->atol = atols[dtype];
    c->rtol = rtols[dtype];
    json_t *tol = json_object_get(obj, "tolerance");
    if (tol && !json_is_null(tol)) {
        if (!json_is_object(tol))
            return FAIL("tolerance: must be an object {\"atol\": .., \"rtol\": ..}");
        if (!AB_KNOWN(tol, "tolerance.", "tolerance's keys", "atol", "rtol"))
            return false;
        if (!ab_case_number(tol, "atol", c->atol, &c->atol, "tolerance.atol", err, err_size) ||
            !ab_case_number(tol, "rtol", c->rtol, &c->rtol, "tolerance.rtol", err, err_size))
            return false;
        if (!(c->atol >= 0) || !(c->rtol >= 0))
            return FAIL("tolerance: atol and rtol must be >= 0");
    }
    if (!nd_parse(json_object_get(obj, "expected_output"), "expected_output", false,
                  &c->expected_output, err, err_size) ||
        !nd_parse(json_object_get(obj, "expected_scores"), "expected_scores", false,
                  &c->expected_scores, err, err_size))
        return false;
    if (c->expected_output.data &&
        !expect_shape(&c->expected_output, "expected_output", c->out_rank, c->out_dims,
                      "(the layer's output)", true, err, err_size))
        return false;
    if (c->expected_scores.data &&
        !expect_shape(&c->expected_scores, "expected_scores", c->scores_rank, c->scores_dims,
                      "(the layer's attention scores)", true, err, err_size))
        return false;
    return true;
}

bool ab_nd_parse(json_t *j, const char *field, ab_nd *a, char *err, size_t err_size)
{
    return nd_parse(j, field, false, a, err, err_size);
}

bool ab_nd_expect_shape(const ab_nd *a, const char *field, uint32_t rank, const uint32_t *dims,
                        const char *what, bool squeeze_ok, char *err, size_t err_size)
{
    return expect_shape(a, field, rank, dims, what, squeeze_ok, err, err_size);
}

static void output_shapes(ab_case *c)
{
    /* the multi-head layers: output width c->dout (GQA's the query's), scores per head */
    bool mha = ab_layer_kind_of(c->kind)->multi_head;
    uint32_t dout = mha ? c->dout : c->dv;
    if (c->rank2_query) {
        c->out_rank = 2;
        c->out_dims[0] = c->batch, c->out_dims[1] = dout;
    } else {
        c->out_rank = 3;
        c->out_dims[0] = c->batch, c->out_dims[1] = c->tq, c->out_dims[2] = dout;
    }
    c->out_n = (size_t)c->batch * c->tq * dout;
    c->scores_rank = mha ? 4 : 3;
    uint32_t sd[4] = {c->batch, mha ? c->heads : c->tq, mha ? c->tq : c->tv, c->tv};
    memcpy(c->scores_dims, sd, sizeof sd);
    c->scores_n = (size_t)c->batch * (mha ? c->heads : 1) * c->tq * c->tv;
}

bool ab_case_parse(json_t *obj, size_t index, ab_case *c, char *err, size_t err_size)
{
    return ab_case_parse_at(obj, index, NULL, c, err, err_size);
}

bool ab_case_parse_at(json_t *obj, size_t index, const char *case_path, ab_case *c, char *err,
                      size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->case_path = case_path;
    snprintf(c->name, sizeof c->name, "case %zu", index);
    if (!json_is_object(obj))
        return FAIL("case: not a JSON object");
    json_t *name = json_object_get(obj, "name");
    if (json_is_string(name))
        snprintf(c->name, sizeof c->name, "%s", json_string_value(name));
    if (!ab_case_keys_top(obj, err, err_size))
        return false;
    json_t *params = json_object_get(obj, "params");
    json_t *empty = json_object();
    if (!params || json_is_null(params))
        params = empty;
    bool ok = json_is_object(params) || FAIL("params: must be an object");
    ok = ok && parse_layer_name(obj, c, err, err_size) && parse_inputs(obj, c, err, err_size);
    ok = ok && ab_layer_kind_of(c->kind)->parse_params(c, params, err, err_size);
    if (ok)
        output_shapes(c);
    ok = ok && parse_masks(obj, c, err, err_size) && parse_positions(obj, c, err, err_size) &&
         parse_call(obj, c, err, err_size) &&
         parse_expectations(obj, c, err, err_size) && ab_case_parse_grads(obj, c, err, err_size);
    json_decref(empty);
    c->case_path = NULL;
    return ok;
}

void ab_case_free(ab_case *c)
{
    ab_nd *arrays[] = {&c->query,           &c->value,           &c->key,
                       &c->query_mask,      &c->value_mask,      &c->attention_mask,
                       &c->expected_output, &c->expected_scores, &c->query_positions,
                       &c->key_positions};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        ab_nd_free(arrays[i]);
    for (size_t i = 0; i < sizeof c->warr / sizeof c->warr[0]; i++)
        ab_nd_free(&c->warr[i]);
    ab_nd_free(&c->grad_output);
    for (size_t i = 0; i < AB_CASE_GRADS; i++)
        ab_nd_free(&c->expected_grads[i]);
    if (c->weights_from_file) {
        const ab_layer_kind_info *kind = ab_layer_kind_of(c->kind);
        if (kind->weights_free) /* NULL: the kind's weights are scalars */
            kind->weights_free(&c->w);
        c->weights_from_file = false;
    }
}
