/* Reading a case object (docs/CASES.md). Every malformed input ends in one
 * message naming the field ("value_mask: shape (2, 3) but (2, 4) expected
 * (B, Tv)"), so a user can fix the file without reading this code. */
#include "case.h"

#include "case_keys.h"

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

static bool get_bool(json_t *obj, const char *key, bool def, bool *out, char *err, size_t err_size)
{
    json_t *j = json_object_get(obj, key);
    if (!j || json_is_null(j))
        *out = def;
    else if (json_is_boolean(j))
        *out = json_is_true(j);
    else if (json_is_integer(j) && (json_integer_value(j) == 0 || json_integer_value(j) == 1))
        *out = json_integer_value(j) == 1;
    else
        return FAIL("%s: must be true or false", key);
    return true;
}

/* A number, or a one-element array of one (Keras variables print that way). */
static bool get_number(json_t *obj, const char *key, double def, double *out, const char *field,
                       char *err, size_t err_size)
{
    json_t *j = json_object_get(obj, key);
    if (json_is_array(j) && json_array_size(j) == 1)
        j = json_array_get(j, 0);
    if (!j || json_is_null(j))
        *out = def;
    else if (json_is_number(j))
        *out = json_number_value(j);
    else
        return FAIL("%s: must be a number", field);
    if (!(fabs(*out) <= FLT_MAX)) /* the layers take it as a float */
        return FAIL("%s: %g overflows float32 (largest %.9g)", field, *out, (double)FLT_MAX);
    return true;
}

/* An integer >= min; absent/null gives def, or an error when required. */
static bool get_uint(json_t *obj, const char *key, bool required, uint32_t def, uint32_t min,
                     uint32_t *out, const char *field, char *err, size_t err_size)
{
    json_t *j = json_object_get(obj, key);
    if (json_is_array(j) && json_array_size(j) == 1)
        j = json_array_get(j, 0);
    if (!j || json_is_null(j)) {
        if (required)
            return FAIL("%s: required", field);
        *out = def;
        return true;
    }
    if (!json_is_integer(j) || json_integer_value(j) < min || json_integer_value(j) > UINT32_MAX)
        return FAIL("%s: must be an integer >= %u", field, min);
    *out = (uint32_t)json_integer_value(j);
    return true;
}

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

/* ------------------------------------------------------------ layer params */

/* params.weights_file (relative to the case file), weights_names and
 * weights_prefix. *f stays NULL when the case has no weights_file. */
static bool open_weights(ab_case *c, json_t *params, vkattn_weights_file **f,
                         vkattn_weights_load_desc *load, char *err, size_t err_size)
{
    *f = NULL;
    *load = (vkattn_weights_load_desc){0};
    json_t *file = json_object_get(params, "weights_file");
    json_t *names = json_object_get(params, "weights_names");
    json_t *prefix = json_object_get(params, "weights_prefix");
    if (!file || json_is_null(file)) {
        if ((names && !json_is_null(names)) || (prefix && !json_is_null(prefix)))
            return FAIL("params.%s: needs params.weights_file",
                        names && !json_is_null(names) ? "weights_names" : "weights_prefix");
        return true;
    }
    if (!json_is_string(file))
        return FAIL("params.weights_file: must be a path (a string)");
    if (names && !json_is_null(names)) {
        const char *s = json_is_string(names) ? json_string_value(names) : "";
        if (!strcmp(s, "torch"))
            load->names = VKATTN_WEIGHTS_NAMES_TORCH;
        else if (!strcmp(s, "llama"))
            load->names = VKATTN_WEIGHTS_NAMES_LLAMA;
        else if (strcmp(s, "keras") != 0)
            return FAIL("params.weights_names: must be \"keras\", \"torch\" or \"llama\"");
    }
    if (prefix && !json_is_null(prefix) && !json_is_string(prefix))
        return FAIL("params.weights_prefix: must be a string");
    load->prefix = json_is_string(prefix) ? json_string_value(prefix) : NULL;
    /* relative to the case file's folder, as a user writing one expects */
    const char *rel = json_string_value(file), *slash = c->case_path ? strrchr(c->case_path, '/') : NULL;
    char path[4096];
    int n = rel[0] == '/' || !slash ? snprintf(path, sizeof path, "%s", rel)
                                   : snprintf(path, sizeof path, "%.*s/%s",
                                              (int)(slash - c->case_path), c->case_path, rel);
    if (n < 0 || (size_t)n >= sizeof path)
        return FAIL("params.weights_file: path too long");
    if (vkattn_weights_file_open(path, f) != VKATTN_SUCCESS)
        return FAIL("params.weights_file: %s", vkattn_last_error());
    return true;
}

/* Both inline weights and a file: which one was meant is unclear. */
static bool not_both(json_t *params, const char *inline_key, char *err, size_t err_size)
{
    json_t *j = json_object_get(params, inline_key);
    if (j && !json_is_null(j))
        return FAIL("params.%s: give it inline or in params.weights_file, not both", inline_key);
    return true;
}

/* Loads the layer's weights from the open file into c->w (nothing when f is NULL). */
static bool load_weights(ab_case *c, vkattn_weights_file *f, const vkattn_weights_load_desc *load,
                         char *err, size_t err_size)
{
    if (!f)
        return true;
    vkattn_result r = ab_layer_kind_of(c->kind)->weights_load(f, &c->desc, load, &c->w);
    vkattn_weights_file_close(f);
    if (r != VKATTN_SUCCESS)
        return FAIL("params.weights_file: %s", vkattn_last_error());
    c->weights_from_file = true;
    return true;
}

static bool get_dropout(json_t *params, float *out, char *err, size_t err_size);

/* A layer whose weights come from the open file f: no inline `inline_key`
 * (nor `second_key`, if given), the dropout rate, then the load. Closes f on
 * every path. */
static bool weights_from_file(ab_case *c, json_t *params, vkattn_weights_file *f,
                              const vkattn_weights_load_desc *load, const char *inline_key,
                              const char *second_key, float *dropout, char *err, size_t err_size)
{
    if (!not_both(params, inline_key, err, err_size) ||
        (second_key && !not_both(params, second_key, err, err_size)) ||
        !get_dropout(params, dropout, err, err_size)) {
        vkattn_weights_file_close(f);
        return false;
    }
    return load_weights(c, f, load, err, err_size);
}

/* params.weights.<key> with exactly the given shape, kept in c->warr[slot]. */
static float *get_weight(ab_case *c, json_t *weights, const char *key, int slot, uint32_t rank,
                         const uint32_t *dims, const char *axes, bool squeeze_ok, char *err,
                         size_t err_size)
{
    char field[96];
    snprintf(field, sizeof field, "params.weights.%s", key);
    ab_nd *a = &c->warr[slot];
    if (!nd_parse(json_object_get(weights, key), field, false, a, err, err_size))
        return NULL;
    if (!a->data) {
        ab_case_fail(err, err_size, "%s: required (%s has no constant initial value)", field, key);
        return NULL;
    }
    if (!expect_shape(a, field, rank, dims, axes, squeeze_ok, err, err_size))
        return NULL;
    return a->data;
}

/* params may hold only the layer's own keys (case_keys.h) */
#define WEIGHTS_FILE_KEYS "weights_file", "weights_names", "weights_prefix"
#define KNOWN(obj, where, what, ...)                                                          \
    ab_case_keys_known(obj, where, what, (const char *const[]){__VA_ARGS__},                   \
                       sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), err, \
                       err_size)

/* The weight keys of MultiHeadAttention and GroupedQueryAttention: the biases
 * only with use_bias, the gate's only with use_gate (Keras builds no others),
 * the norms with qk_norm, the sinks with use_sinks. */
static bool known_multihead_weights(json_t *w, const char *layer, bool use_bias, bool use_gate,
                                    bool qk_norm, bool sinks, char *err, size_t err_size)
{
    char what[160];
    snprintf(what, sizeof what,
             "the weights of this %s (biases with use_bias, gate_* with use_gate, "
             "query_norm/key_norm with qk_norm, sinks with use_sinks)",
             layer);
    return KNOWN(w, "params.weights.", what, "query_kernel", "key_kernel", "value_kernel",
                 "output_kernel", use_bias ? "query_bias" : NULL, use_bias ? "key_bias" : NULL,
                 use_bias ? "value_bias" : NULL, use_bias ? "output_bias" : NULL,
                 use_gate ? "gate_kernel" : NULL, use_gate && use_bias ? "gate_bias" : NULL,
                 qk_norm ? "query_norm" : NULL, qk_norm ? "key_norm" : NULL,
                 sinks ? "sinks" : NULL);
}

/* The open-model options of the multi-head layers (vkattn/mha_host.h), the
 * desc's fields of the same names; head_width names the per-head width
 * ("head_dim", "key_dim"), whose value bounds rope.rotary_dim. */
typedef struct open_model {
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} open_model;

#define OPEN_MODEL_KEYS "qk_norm", "rope", "softcap", "use_sinks"

static bool parse_open_model(json_t *params, const char *head_name, uint32_t head_width,
                             open_model *o, char *err, size_t err_size)
{
    *o = (open_model){0};
    double v;
    json_t *norm = json_object_get(params, "qk_norm");
    if (norm && !json_is_null(norm)) {
        if (!json_is_object(norm))
            return FAIL("params.qk_norm: must be an object {\"epsilon\": e} or null");
        if (!KNOWN(norm, "params.qk_norm.", "qk_norm's keys", "epsilon") ||
            !get_number(norm, "epsilon", 1e-6, &v, "params.qk_norm.epsilon", err, err_size))
            return false;
        if (!(v > 0.0 && v <= 1.0))
            return FAIL("params.qk_norm.epsilon: %g; must be in (0, 1]", v);
        o->use_qk_norm = true;
        o->qk_norm_epsilon = (float)v;
    }
    json_t *rope = json_object_get(params, "rope");
    if (rope && !json_is_null(rope)) {
        if (!json_is_object(rope))
            return FAIL("params.rope: must be an object (max_wavelength, scaling_factor, "
                        "rotary_dim, layout) or null");
        if (!KNOWN(rope, "params.rope.", "rope's keys", "max_wavelength", "scaling_factor",
                   "rotary_dim", "layout"))
            return false;
        o->use_rope = true;
        if (!get_number(rope, "max_wavelength", 10000.0, &v, "params.rope.max_wavelength", err,
                        err_size))
            return false;
        if (!(v > 1.0))
            return FAIL("params.rope.max_wavelength: %g; must be > 1", v);
        o->rope.max_wavelength = (float)v;
        if (!get_number(rope, "scaling_factor", 1.0, &v, "params.rope.scaling_factor", err,
                        err_size))
            return false;
        if (!(v > 0.0))
            return FAIL("params.rope.scaling_factor: %g; must be > 0", v);
        o->rope.scaling_factor = (float)v;
        if (!get_uint(rope, "rotary_dim", false, head_width, 2, &o->rope.rotary_dim,
                      "params.rope.rotary_dim", err, err_size))
            return false;
        if (o->rope.rotary_dim % 2 || o->rope.rotary_dim > head_width)
            return FAIL("params.rope.rotary_dim: %u; must be even and <= params.%s (%u)",
                        o->rope.rotary_dim, head_name, head_width);
        json_t *layout = json_object_get(rope, "layout");
        const char *l = json_is_string(layout) ? json_string_value(layout) : "";
        if (!layout || json_is_null(layout) || !strcmp(l, "half"))
            o->rope.layout = VKATTN_ROPE_HALF;
        else if (!strcmp(l, "interleaved"))
            o->rope.layout = VKATTN_ROPE_INTERLEAVED;
        else
            return FAIL("params.rope.layout: must be \"half\" or \"interleaved\"");
    }
    if (!get_number(params, "softcap", 0.0, &v, "params.softcap", err, err_size))
        return false;
    json_t *cap = json_object_get(params, "softcap");
    if (cap && !json_is_null(cap) && !(v > 0.0)) /* null or absent = off */
        return FAIL("params.softcap: %g; must be > 0 (null = off)", v);
    o->softcap = (float)v;
    return get_bool(params, "use_sinks", false, &o->use_sinks, err, err_size);
}

#define SET_OPEN_MODEL(desc, o)                                                                \
    ((desc)->use_qk_norm = (o).use_qk_norm, (desc)->qk_norm_epsilon = (o).qk_norm_epsilon,    \
     (desc)->use_rope = (o).use_rope, (desc)->rope = (o).rope, (desc)->softcap = (o).softcap, \
     (desc)->use_sinks = (o).use_sinks)

/* params.weights' query_norm, key_norm (head width,) and sinks (heads,) into
 * slots 10..12, as the desc asks. */
static bool get_open_model_weights(ab_case *c, json_t *w, const open_model *o, uint32_t head,
                                   uint32_t heads, vkattn_mha_weights *m, char *err,
                                   size_t err_size)
{
    /* required, as every weight of a case: a forgotten one would run as a new layer's */
    static const char *const keys[3] = {"query_norm", "key_norm", "sinks"};
    for (int i = 0; i < 3; i++)
        if ((i < 2 ? o->use_qk_norm : o->use_sinks) && !json_object_get(w, keys[i]))
            return FAIL("params.weights.%s: required with %s (a new layer's is all %s)", keys[i],
                        i < 2 ? "qk_norm" : "use_sinks", i < 2 ? "ones" : "zeros");
    if (o->use_qk_norm &&
        (!(m->query_norm = get_weight(c, w, "query_norm", 10, 1, &head, "(head width,)", false,
                                      err, err_size)) ||
         !(m->key_norm = get_weight(c, w, "key_norm", 11, 1, &head, "(head width,)", false, err,
                                    err_size))))
        return false;
    return !o->use_sinks || (m->sinks = get_weight(c, w, "sinks", 12, 1, &heads, "(heads,)",
                                                   false, err, err_size)) != NULL;
}

static bool get_dropout(json_t *params, float *out, char *err, size_t err_size)
{
    double d = 0.0;
    if (!get_number(params, "dropout", 0.0, &d, "params.dropout", err, err_size))
        return false;
    *out = (float)d;
    return true;
}

static bool parse_attention(ab_case *c, json_t *params, char *err, size_t err_size)
{
    bool use_scale;
    double scale = 1.0, csw = 1.0;
    if (!KNOWN(params, "params.", "Attention's params", "use_scale", "score_mode", "scale",
               "concat_score_weight", "dropout", WEIGHTS_FILE_KEYS))
        return false;
    json_t *mode = json_object_get(params, "score_mode");
    vkattn_score_mode sm = VKATTN_SCORE_DOT;
    if (mode && !json_is_null(mode)) {
        const char *s = json_is_string(mode) ? json_string_value(mode) : "";
        if (!strcmp(s, "concat"))
            sm = VKATTN_SCORE_CONCAT;
        else if (strcmp(s, "dot") != 0)
            return FAIL("params.score_mode: must be \"dot\" or \"concat\"");
    }
    if (!get_bool(params, "use_scale", false, &use_scale, err, err_size) ||
        !get_number(params, "scale", 1.0, &scale, "params.scale", err, err_size) ||
        !get_number(params, "concat_score_weight", 1.0, &csw, "params.concat_score_weight", err,
                    err_size))
        return false;
    c->desc.att = (vkattn_attention_desc){
        .query_width = c->dq, .value_width = c->dv, .key_width = c->key.data ? c->dk : 0,
        .use_scale = use_scale, .score_mode = sm};
    c->w.att = (vkattn_attention_weights){(float)scale, (float)csw};
    vkattn_weights_file *f;
    vkattn_weights_load_desc load;
    if (!open_weights(c, params, &f, &load, err, err_size))
        return false;
    if (f)
        return weights_from_file(c, params, f, &load, "scale", "concat_score_weight",
                                 &c->desc.att.dropout, err, err_size);
    return get_dropout(params, &c->desc.att.dropout, err, err_size);
}

static bool parse_additive(ab_case *c, json_t *params, char *err, size_t err_size)
{
    bool use_scale;
    if (!KNOWN(params, "params.", "AdditiveAttention's params", "use_scale", "scale", "dropout",
               WEIGHTS_FILE_KEYS))
        return false;
    if (!get_bool(params, "use_scale", true, &use_scale, err, err_size))
        return false;
    c->desc.add = (vkattn_additive_attention_desc){
        .query_width = c->dq, .value_width = c->dv, .key_width = c->key.data ? c->dk : 0,
        .no_scale = !use_scale};
    vkattn_weights_file *f;
    vkattn_weights_load_desc load;
    if (!open_weights(c, params, &f, &load, err, err_size))
        return false;
    if (f)
        return weights_from_file(c, params, f, &load, "scale", NULL, &c->desc.add.dropout, err,
                                 err_size);
    if (use_scale) {
        /* the variable `scale`, a (Dq,) vector; Keras starts it at random */
        ab_nd *a = &c->warr[0];
        if (!nd_parse(json_object_get(params, "scale"), "params.scale", false, a, err, err_size))
            return false;
        if (!a->data)
            return FAIL("params.scale: required with use_scale (Keras initializes it at random)");
        if (!expect_shape(a, "params.scale", 1, &c->dq, "(Dq,)", true, err, err_size))
            return false;
        c->w.add.scale = a->data;
    }
    return get_dropout(params, &c->desc.add.dropout, err, err_size);
}

static bool parse_bahdanau(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t units;
    double bias = 0.0;
    if (!KNOWN(params, "params.", "BahdanauAttention's params", "units", "weights", "dropout",
               WEIGHTS_FILE_KEYS))
        return false;
    if (!get_uint(params, "units", true, 0, 1, &units, "params.units", err, err_size))
        return false;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    uint32_t q[2] = {c->dq, units}, k[2] = {kw, units};
    c->desc.bah = (vkattn_bahdanau_desc){
        .query_width = c->dq, .key_width = c->key.data ? c->dk : 0, .value_width = c->dv,
        .units = units};
    vkattn_weights_file *f;
    vkattn_weights_load_desc load;
    if (!open_weights(c, params, &f, &load, err, err_size))
        return false;
    if (f)
        return weights_from_file(c, params, f, &load, "weights", NULL, &c->desc.bah.dropout, err,
                                 err_size);
    json_t *w = json_object_get(params, "weights");
    if (!json_is_object(w))
        return FAIL("params.weights: required (an object with query_kernel, key_kernel, "
                    "score_kernel), or params.weights_file");
    if (!KNOWN(w, "params.weights.", "BahdanauAttention's weights", "query_kernel", "key_kernel",
               "score_kernel", "score_bias"))
        return false;
    if (!(c->w.bah.query_kernel = get_weight(c, w, "query_kernel", 0, 2, q, "(Dq, units)", false,
                                             err, err_size)) ||
        !(c->w.bah.key_kernel = get_weight(c, w, "key_kernel", 1, 2, k, "(Dk, units)", false, err,
                                           err_size)) ||
        !(c->w.bah.score_kernel = get_weight(c, w, "score_kernel", 2, 1, &units, "(units,)", true,
                                             err, err_size)) ||
        !get_number(w, "score_bias", 0.0, &bias, "params.weights.score_bias", err, err_size))
        return false;
    c->w.bah.score_bias = (float)bias;
    return get_dropout(params, &c->desc.bah.dropout, err, err_size);
}

static bool parse_mha(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t H, kd, vd, dout, window;
    bool use_bias, use_gate;
    open_model o;
    if (!KNOWN(params, "params.", "MultiHeadAttention's params", "num_heads", "key_dim",
               "value_dim", "output_shape", "use_bias", "use_gate", "sliding_window", "weights",
               "dropout", OPEN_MODEL_KEYS, WEIGHTS_FILE_KEYS))
        return false;
    if (!get_uint(params, "num_heads", true, 0, 1, &H, "params.num_heads", err, err_size) ||
        !get_uint(params, "key_dim", true, 0, 1, &kd, "params.key_dim", err, err_size) ||
        !get_uint(params, "value_dim", false, kd, 1, &vd, "params.value_dim", err, err_size) ||
        !get_uint(params, "output_shape", false, c->dq, 1, &dout, "params.output_shape", err,
                  err_size) ||
        !get_bool(params, "use_bias", true, &use_bias, err, err_size) ||
        !get_bool(params, "use_gate", false, &use_gate, err, err_size) ||
        /* Keras sliding_window: null (None) or a positive integer */
        !get_uint(params, "sliding_window", false, 0, 1, &window, "params.sliding_window", err,
                  err_size) ||
        !parse_open_model(params, "key_dim", kd, &o, err, err_size))
        return false;
    c->heads = H;
    c->dout = dout;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    c->desc.mha = (vkattn_mha_desc){
        .num_heads = H, .key_dim = kd, .value_dim = vd, .query_width = c->dq,
        .key_width = c->key.data ? c->dk : 0, .value_width = c->dv, .output_dim = dout,
        .no_bias = !use_bias, .sliding_window = window, .use_gate = use_gate};
    SET_OPEN_MODEL(&c->desc.mha, o);
    vkattn_weights_file *f;
    vkattn_weights_load_desc load;
    if (!open_weights(c, params, &f, &load, err, err_size))
        return false;
    if (f)
        return weights_from_file(c, params, f, &load, "weights", NULL, &c->desc.mha.dropout, err,
                                 err_size);
    json_t *w = json_object_get(params, "weights");
    if (!json_is_object(w))
        return FAIL("params.weights: required (an object with the kernels%s), or "
                    "params.weights_file", use_bias ? " and biases" : "");
    if (!known_multihead_weights(w, "MultiHeadAttention", use_bias, use_gate, o.use_qk_norm,
                                 o.use_sinks, err, err_size) ||
        !get_open_model_weights(c, w, &o, kd, H, &c->w.mha, err, err_size))
        return false;
    vkattn_mha_weights *m = &c->w.mha;
    uint32_t qk[3] = {c->dq, H, kd}, kk[3] = {kw, H, kd}, vk[3] = {c->dv, H, vd};
    uint32_t ok[3] = {H, vd, dout}, hk[2] = {H, kd}, hv[2] = {H, vd};
    if (!(m->query_kernel = get_weight(c, w, "query_kernel", 0, 3, qk, "(Dq, num_heads, key_dim)",
                                       false, err, err_size)) ||
        !(m->key_kernel = get_weight(c, w, "key_kernel", 1, 3, kk, "(Dk, num_heads, key_dim)",
                                     false, err, err_size)) ||
        !(m->value_kernel = get_weight(c, w, "value_kernel", 2, 3, vk,
                                       "(Dv, num_heads, value_dim)", false, err, err_size)) ||
        !(m->output_kernel = get_weight(c, w, "output_kernel", 3, 3, ok,
                                        "(num_heads, value_dim, output width)", false, err,
                                        err_size)))
        return false;
    if (use_bias &&
        (!(m->query_bias = get_weight(c, w, "query_bias", 4, 2, hk, "(num_heads, key_dim)", false,
                                      err, err_size)) ||
         !(m->key_bias = get_weight(c, w, "key_bias", 5, 2, hk, "(num_heads, key_dim)", false,
                                    err, err_size)) ||
         !(m->value_bias = get_weight(c, w, "value_bias", 6, 2, hv, "(num_heads, value_dim)",
                                      false, err, err_size)) ||
         !(m->output_bias = get_weight(c, w, "output_bias", 7, 1, &dout, "(output width,)", false,
                                       err, err_size))))
        return false;
    uint32_t gk[3] = {c->dq, H, vd};
    if (use_gate &&
        (!(m->gate_kernel = get_weight(c, w, "gate_kernel", 8, 3, gk, "(Dq, num_heads, value_dim)",
                                       false, err, err_size)) ||
         (use_bias && !(m->gate_bias = get_weight(c, w, "gate_bias", 9, 2, hv,
                                                  "(num_heads, value_dim)", false, err,
                                                  err_size)))))
        return false;
    return get_dropout(params, &c->desc.mha.dropout, err, err_size);
}

/* GroupedQueryAttention: head_dim, num_query_heads, num_key_value_heads,
 * use_bias, sliding_window, dropout; weights named as Keras's, the key and
 * value ones with num_key_value_heads heads; output width = Dq. */
static bool parse_gqa(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t hd, nq, nkv, window;
    bool use_bias, use_gate;
    open_model o;
    if (!KNOWN(params, "params.", "GroupedQueryAttention's params", "head_dim", "num_query_heads",
               "num_key_value_heads", "use_bias", "use_gate", "sliding_window", "weights",
               "dropout", OPEN_MODEL_KEYS, WEIGHTS_FILE_KEYS))
        return false;
    if (!get_uint(params, "head_dim", true, 0, 1, &hd, "params.head_dim", err, err_size) ||
        !get_uint(params, "num_query_heads", true, 0, 1, &nq, "params.num_query_heads", err,
                  err_size) ||
        !get_uint(params, "num_key_value_heads", true, 0, 1, &nkv, "params.num_key_value_heads",
                  err, err_size) ||
        !get_bool(params, "use_bias", true, &use_bias, err, err_size) ||
        !get_bool(params, "use_gate", false, &use_gate, err, err_size) ||
        !get_uint(params, "sliding_window", false, 0, 1, &window, "params.sliding_window", err,
                  err_size) ||
        !parse_open_model(params, "head_dim", hd, &o, err, err_size))
        return false;
    if (nq % nkv)
        return FAIL("params.num_query_heads (%u) must be a multiple of "
                    "params.num_key_value_heads (%u)", nq, nkv);
    c->heads = nq;
    c->dout = c->dq;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    c->desc.gqa = (vkattn_gqa_desc){
        .head_dim = hd, .num_query_heads = nq, .num_key_value_heads = nkv,
        .query_width = c->dq, .key_width = c->key.data ? c->dk : 0, .value_width = c->dv,
        .no_bias = !use_bias, .sliding_window = (int32_t)window, .use_gate = use_gate};
    SET_OPEN_MODEL(&c->desc.gqa, o);
    vkattn_weights_file *f;
    vkattn_weights_load_desc load;
    if (!open_weights(c, params, &f, &load, err, err_size))
        return false;
    if (f)
        return weights_from_file(c, params, f, &load, "weights", NULL, &c->desc.gqa.dropout, err,
                                 err_size);
    json_t *w = json_object_get(params, "weights");
    if (!json_is_object(w))
        return FAIL("params.weights: required (an object with the kernels%s), or "
                    "params.weights_file", use_bias ? " and biases" : "");
    if (!known_multihead_weights(w, "GroupedQueryAttention", use_bias, use_gate, o.use_qk_norm,
                                 o.use_sinks, err, err_size) ||
        !get_open_model_weights(c, w, &o, hd, nq, &c->w.gqa, err, err_size))
        return false;
    vkattn_gqa_weights *m = &c->w.gqa;
    uint32_t qk[3] = {c->dq, nq, hd}, kk[3] = {kw, nkv, hd}, vk[3] = {c->dv, nkv, hd};
    uint32_t ok[3] = {nq, hd, c->dq}, qb[2] = {nq, hd}, kvb[2] = {nkv, hd};
    if (!(m->query_kernel = get_weight(c, w, "query_kernel", 0, 3, qk,
                                       "(Dq, num_query_heads, head_dim)", false, err, err_size)) ||
        !(m->key_kernel = get_weight(c, w, "key_kernel", 1, 3, kk,
                                     "(Dk, num_key_value_heads, head_dim)", false, err,
                                     err_size)) ||
        !(m->value_kernel = get_weight(c, w, "value_kernel", 2, 3, vk,
                                       "(Dv, num_key_value_heads, head_dim)", false, err,
                                       err_size)) ||
        !(m->output_kernel = get_weight(c, w, "output_kernel", 3, 3, ok,
                                        "(num_query_heads, head_dim, Dq)", false, err, err_size)))
        return false;
    if (use_bias &&
        (!(m->query_bias = get_weight(c, w, "query_bias", 4, 2, qb, "(num_query_heads, head_dim)",
                                      false, err, err_size)) ||
         !(m->key_bias = get_weight(c, w, "key_bias", 5, 2, kvb,
                                    "(num_key_value_heads, head_dim)", false, err, err_size)) ||
         !(m->value_bias = get_weight(c, w, "value_bias", 6, 2, kvb,
                                      "(num_key_value_heads, head_dim)", false, err, err_size)) ||
         !(m->output_bias = get_weight(c, w, "output_bias", 7, 1, &c->dq, "(Dq,)", false, err,
                                       err_size))))
        return false;
    if (use_gate &&
        (!(m->gate_kernel = get_weight(c, w, "gate_kernel", 8, 3, qk,
                                       "(Dq, num_query_heads, head_dim)", false, err, err_size)) ||
         (use_bias && !(m->gate_bias = get_weight(c, w, "gate_bias", 9, 2, qb,
                                                  "(num_query_heads, head_dim)", false, err,
                                                  err_size)))))
        return false;
    return get_dropout(params, &c->desc.gqa.dropout, err, err_size);
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
    if (c->query.rank == 2 && c->kind == AB_LAYER_BAHDANAU) {
        c->rank2_query = true;
        c->tq = 1;
        c->dq = c->query.dims[1];
    } else if (c->query.rank == 3) {
        c->tq = c->query.dims[1];
        c->dq = c->query.dims[2];
    } else {
        return FAIL("query: rank %u; must be (B, Tq, Dq)%s", c->query.rank,
                    c->kind == AB_LAYER_BAHDANAU ? " or (B, Dq)" : "");
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
    const bool multi_head = c->kind == AB_LAYER_MHA || c->kind == AB_LAYER_GQA;
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
    const bool rope = (c->kind == AB_LAYER_MHA && c->desc.mha.use_rope) ||
                      (c->kind == AB_LAYER_GQA && c->desc.gqa.use_rope);
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
    if (!get_bool(obj, "use_causal_mask", false, &causal, err, err_size) ||
        !get_bool(obj, "training", false, &training, err, err_size) ||
        !get_bool(obj, "return_attention_scores", false, &scores, err, err_size) ||
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
    json_t *dt = json_object_get(obj, "dtype");
    bool fp16 = false;
    if (dt && !json_is_null(dt)) {
        const char *s = json_is_string(dt) ? json_string_value(dt) : "";
        if (!strcmp(s, "float16"))
            fp16 = true;
        else if (strcmp(s, "float32") != 0)
            return FAIL("dtype: must be \"float32\" or \"float16\"");
    }
    c->fp16 = fp16;
    /* defaults: a few ulps of the inputs' precision */
    c->atol = fp16 ? 1e-3 : 1e-5;
    c->rtol = fp16 ? 1e-2 : 1e-4;
    json_t *tol = json_object_get(obj, "tolerance");
    if (tol && !json_is_null(tol)) {
        if (!json_is_object(tol))
            return FAIL("tolerance: must be an object {\"atol\": .., \"rtol\": ..}");
        if (!KNOWN(tol, "tolerance.", "tolerance's keys", "atol", "rtol"))
            return false;
        if (!get_number(tol, "atol", c->atol, &c->atol, "tolerance.atol", err, err_size) ||
            !get_number(tol, "rtol", c->rtol, &c->rtol, "tolerance.rtol", err, err_size))
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
    bool mha = c->kind == AB_LAYER_MHA || c->kind == AB_LAYER_GQA;
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
    if (ok) {
        switch (c->kind) {
        case AB_LAYER_ATTENTION: ok = parse_attention(c, params, err, err_size); break;
        case AB_LAYER_ADDITIVE: ok = parse_additive(c, params, err, err_size); break;
        case AB_LAYER_BAHDANAU: ok = parse_bahdanau(c, params, err, err_size); break;
        case AB_LAYER_MHA: ok = parse_mha(c, params, err, err_size); break;
        case AB_LAYER_GQA: ok = parse_gqa(c, params, err, err_size); break;
        }
    }
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
