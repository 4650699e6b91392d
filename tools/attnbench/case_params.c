/* The readers of case_params.h: what every layer kind's params share. */
#include "case_params.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

/* ------------------------------------------------------------ scalars */

bool ab_case_bool(json_t *obj, const char *key, bool def, bool *out, char *err, size_t err_size)
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

bool ab_case_number(json_t *obj, const char *key, double def, double *out, const char *field,
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

bool ab_case_uint(json_t *obj, const char *key, bool required, uint32_t def, uint32_t min,
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

bool ab_case_choice(json_t *obj, const char *key, const char *const *names, uint32_t n,
                    uint32_t *out, const char *message, char *err, size_t err_size)
{
    json_t *j = json_object_get(obj, key);
    *out = 0;
    if (!j || json_is_null(j))
        return true;
    const char *s = json_is_string(j) ? json_string_value(j) : "";
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return true;
        }
    return FAIL("%s", message);
}

bool ab_case_dropout(json_t *params, float *out, char *err, size_t err_size)
{
    double d = 0.0;
    if (!ab_case_number(params, "dropout", 0.0, &d, "params.dropout", err, err_size))
        return false;
    *out = (float)d;
    return true;
}

/* ------------------------------------------------------------ weights */

float *ab_case_weight(ab_case *c, json_t *weights, const char *key, int slot, uint32_t rank,
                      const uint32_t *dims, const char *axes, bool squeeze_ok, char *err,
                      size_t err_size)
{
    char field[96];
    snprintf(field, sizeof field, "params.weights.%s", key);
    ab_nd *a = &c->warr[slot];
    if (!ab_nd_parse(json_object_get(weights, key), field, a, err, err_size))
        return NULL;
    if (!a->data) {
        ab_case_fail(err, err_size, "%s: required (%s has no constant initial value)", field, key);
        return NULL;
    }
    if (!ab_nd_expect_shape(a, field, rank, dims, axes, squeeze_ok, err, err_size))
        return NULL;
    return a->data;
}

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
    /* in the order of vkattn_weights_names */
    static const char *const name_sets[] = {"keras", "torch", "llama"};
    uint32_t set = 0;
    if (!ab_case_choice(params, "weights_names", name_sets, 3, &set,
                        "params.weights_names: must be \"keras\", \"torch\" or \"llama\"", err,
                        err_size))
        return false;
    load->names = (vkattn_weights_names)set;
    if (prefix && !json_is_null(prefix) && !json_is_string(prefix))
        return FAIL("params.weights_prefix: must be a string");
    load->prefix = json_is_string(prefix) ? json_string_value(prefix) : NULL;
    /* relative to the case file's folder, as a user writing one expects */
    const char *rel = json_string_value(file);
    const char *slash = c->case_path ? strrchr(c->case_path, '/') : NULL;
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

/* A layer whose weights come from the open file f: no inline `inline_key`
 * (nor `second_key`, if given), the dropout rate, then the load. Closes f on
 * every path. */
static bool weights_from_file(ab_case *c, json_t *params, vkattn_weights_file *f,
                              const vkattn_weights_load_desc *load, const char *inline_key,
                              const char *second_key, float *dropout, char *err, size_t err_size)
{
    if (!not_both(params, inline_key, err, err_size) ||
        (second_key && !not_both(params, second_key, err, err_size)) ||
        !ab_case_dropout(params, dropout, err, err_size)) {
        vkattn_weights_file_close(f);
        return false;
    }
    return load_weights(c, f, load, err, err_size);
}

ab_weights_source ab_case_weights_file(ab_case *c, json_t *params, const char *inline_key,
                                       const char *second_key, float *dropout, char *err,
                                       size_t err_size)
{
    vkattn_weights_file *f = NULL;
    vkattn_weights_load_desc load = {0};
    if (!open_weights(c, params, &f, &load, err, err_size))
        return AB_WEIGHTS_ERROR;
    if (!f)
        return AB_WEIGHTS_INLINE;
    return weights_from_file(c, params, f, &load, inline_key, second_key, dropout, err, err_size)
               ? AB_WEIGHTS_FROM_FILE
               : AB_WEIGHTS_ERROR;
}

ab_weights_source ab_case_weights_object(ab_case *c, json_t *params, const char *what,
                                         float *dropout, json_t **w, char *err, size_t err_size)
{
    ab_weights_source src = ab_case_weights_file(c, params, "weights", NULL, dropout, err,
                                                 err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src;
    *w = json_object_get(params, "weights");
    if (!json_is_object(*w)) {
        FAIL("params.weights: required (an object with %s), or params.weights_file", what);
        return AB_WEIGHTS_ERROR;
    }
    return AB_WEIGHTS_INLINE;
}
