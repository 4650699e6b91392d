/* See jansson.h here: values, reading them back, writing them as jansson
 * does. One allocation per value; objects keep their keys in insertion
 * order in a plain array (attnbench's objects have tens of keys). */
#include "jansson.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;
    json_t *value;
} entry;

typedef struct json_object_t {
    json_t json;
    entry *entries;
    size_t n, cap;
} json_object_t;

typedef struct json_array_t {
    json_t json;
    json_t **items;
    size_t n, cap;
} json_array_t;

typedef struct json_string_t {
    json_t json;
    char *value;
} json_string_t;

typedef struct json_integer_t {
    json_t json;
    json_int_t value;
} json_integer_t;

typedef struct json_real_t {
    json_t json;
    double value;
} json_real_t;

/* strdup is POSIX, not C11 */
static char *dup_string(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static json_t constants[3] = {{JSON_TRUE, 0}, {JSON_FALSE, 0}, {JSON_NULL, 0}};

json_t *json_true(void) { return &constants[0]; }
json_t *json_false(void) { return &constants[1]; }
json_t *json_null(void) { return &constants[2]; }

static void *new_value(size_t size, json_type type)
{
    json_t *j = calloc(1, size);
    if (j) {
        j->type = type;
        j->refcount = 1;
    }
    return j;
}

json_t *json_object(void) { return new_value(sizeof(json_object_t), JSON_OBJECT); }
json_t *json_array(void) { return new_value(sizeof(json_array_t), JSON_ARRAY); }

json_t *json_string(const char *value)
{
    if (!value)
        return NULL;
    json_string_t *s = new_value(sizeof *s, JSON_STRING);
    if (s && !(s->value = dup_string(value))) {
        free(s);
        return NULL;
    }
    return s ? &s->json : NULL;
}

json_t *json_integer(json_int_t value)
{
    json_integer_t *i = new_value(sizeof *i, JSON_INTEGER);
    if (i)
        i->value = value;
    return i ? &i->json : NULL;
}

json_t *json_real(double value)
{
    if (!isfinite(value))
        return NULL;
    json_real_t *r = new_value(sizeof *r, JSON_REAL);
    if (r)
        r->value = value;
    return r ? &r->json : NULL;
}

json_t *json_incref(json_t *json)
{
    if (json && json->refcount)
        json->refcount++;
    return json;
}

void json_decref(json_t *json)
{
    if (!json || !json->refcount || --json->refcount)
        return;
    if (json->type == JSON_OBJECT) {
        json_object_t *o = (json_object_t *)json;
        for (size_t i = 0; i < o->n; i++) {
            free(o->entries[i].key);
            json_decref(o->entries[i].value);
        }
        free(o->entries);
    } else if (json->type == JSON_ARRAY) {
        json_array_t *a = (json_array_t *)json;
        for (size_t i = 0; i < a->n; i++)
            json_decref(a->items[i]);
        free(a->items);
    } else if (json->type == JSON_STRING) {
        free(((json_string_t *)json)->value);
    }
    free(json);
}

/* Grows *list of `size`-byte elements to hold one more. */
static bool grow(void **list, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 8;
    void *l = realloc(*list, c * size);
    if (!l)
        return false;
    *list = l, *cap = c;
    return true;
}

int json_object_set_new(json_t *object, const char *key, json_t *value)
{
    if (!value)
        return -1;
    if (!json_is_object(object) || !key || object == value) {
        json_decref(value);
        return -1;
    }
    json_object_t *o = (json_object_t *)object;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->entries[i].key, key)) {
            json_decref(o->entries[i].value);
            o->entries[i].value = value;
            return 0;
        }
    char *k = dup_string(key);
    if (!k || !grow((void **)&o->entries, &o->cap, o->n, sizeof *o->entries)) {
        free(k);
        json_decref(value);
        return -1;
    }
    o->entries[o->n++] = (entry){k, value};
    return 0;
}

int json_object_set(json_t *object, const char *key, json_t *value)
{
    return json_object_set_new(object, key, json_incref(value));
}

json_t *json_object_get(const json_t *object, const char *key)
{
    if (!json_is_object(object) || !key)
        return NULL;
    const json_object_t *o = (const json_object_t *)object;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->entries[i].key, key))
            return o->entries[i].value;
    return NULL;
}

size_t json_object_size(const json_t *object)
{
    return json_is_object(object) ? ((const json_object_t *)object)->n : 0;
}

int json_lite_object_entry(const json_t *object, size_t i, const char **key, json_t **value)
{
    if (i >= json_object_size(object))
        return 0;
    const json_object_t *o = (const json_object_t *)object;
    *key = o->entries[i].key;
    *value = o->entries[i].value;
    return 1;
}

int json_array_append_new(json_t *array, json_t *value)
{
    if (!value)
        return -1;
    json_array_t *a = (json_array_t *)array;
    if (!json_is_array(array) || array == value ||
        !grow((void **)&a->items, &a->cap, a->n, sizeof *a->items)) {
        json_decref(value);
        return -1;
    }
    a->items[a->n++] = value;
    return 0;
}

size_t json_array_size(const json_t *array)
{
    return json_is_array(array) ? ((const json_array_t *)array)->n : 0;
}

json_t *json_array_get(const json_t *array, size_t index)
{
    return index < json_array_size(array) ? ((const json_array_t *)array)->items[index] : NULL;
}

const char *json_string_value(const json_t *string)
{
    return json_is_string(string) ? ((const json_string_t *)string)->value : NULL;
}

json_int_t json_integer_value(const json_t *integer)
{
    return json_is_integer(integer) ? ((const json_integer_t *)integer)->value : 0;
}

double json_real_value(const json_t *real)
{
    return json_is_real(real) ? ((const json_real_t *)real)->value : 0.0;
}

double json_number_value(const json_t *json)
{
    return json_is_integer(json) ? (double)json_integer_value(json) : json_real_value(json);
}

json_t *json_pack(const char *fmt, ...)
{
    json_t *o = json_object();
    bool ok = o && *fmt++ == '{';
    va_list ap;
    va_start(ap, fmt);
    while (ok && *fmt && *fmt != '}') {
        if (*fmt == ' ' || *fmt == ',' || *fmt == ':') {
            fmt++;
            continue;
        }
        if (*fmt++ != 's') {
            ok = false;
            break;
        }
        const char *key = va_arg(ap, const char *);
        while (*fmt == ' ' || *fmt == ':')
            fmt++;
        json_t *v = NULL;
        const char type = *fmt++;
        const bool nullable = *fmt == '?'; /* s? o? O?: NULL makes null */
        fmt += nullable;
        switch (type) {
        case 's': {
            const char *str = va_arg(ap, const char *);
            v = nullable && !str ? json_null() : json_string(str);
            break;
        }
        case 'I': v = json_integer(va_arg(ap, json_int_t)); break;
        case 'i': v = json_integer(va_arg(ap, int)); break;
        case 'b': v = json_boolean(va_arg(ap, int)); break;
        case 'f': v = json_real(va_arg(ap, double)); break;
        case 'o':
            v = va_arg(ap, json_t *);
            v = nullable && !v ? json_null() : v;
            break;
        case 'O':
            v = json_incref(va_arg(ap, json_t *));
            v = nullable && !v ? json_null() : v;
            break;
        default: ok = false; break;
        }
        ok = ok && json_object_set_new(o, key, v) == 0;
    }
    va_end(ap);
    if (!ok || *fmt != '}') {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------------ writing */

static void dump_string(const char *s, FILE *f)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04X", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

/* jansson's: %.17g (or the precision asked), ".0" where that reads as an
 * integer, the exponent without '+' or leading zeros */
static void dump_real(double v, int precision, FILE *f)
{
    char buf[64], out[64];
    snprintf(buf, sizeof buf, "%.*g", precision ? precision : 17, v);
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    char *e = strchr(buf, 'e');
    size_t j = 0;
    for (char *p = buf; *p && (!e || p <= e); p++)
        out[j++] = *p;
    if (e) {
        const char *p = e + 1;
        if (*p == '+')
            p++;
        else if (*p == '-')
            out[j++] = *p++;
        while (*p == '0' && p[1])
            p++;
        while (*p)
            out[j++] = *p++;
    }
    out[j] = '\0';
    fputs(out, f);
}

static void newline(size_t indent, size_t depth, FILE *f)
{
    if (!indent)
        return;
    fputc('\n', f);
    for (size_t i = 0; i < indent * depth; i++)
        fputc(' ', f);
}

static void dump(const json_t *j, size_t flags, size_t depth, FILE *f)
{
    const size_t indent = flags & JSON_MAX_INDENT;
    const int precision = (int)((flags >> 11) & 0x1F);
    const char *comma = flags & JSON_COMPACT ? "," : indent ? "," : ", ";
    const char *colon = flags & JSON_COMPACT ? ":" : ": ";
    switch (j->type) {
    case JSON_OBJECT: {
        const json_object_t *o = (const json_object_t *)j;
        fputc('{', f);
        for (size_t i = 0; i < o->n; i++) {
            if (i)
                fputs(comma, f);
            newline(indent, depth + 1, f);
            dump_string(o->entries[i].key, f);
            fputs(colon, f);
            dump(o->entries[i].value, flags, depth + 1, f);
        }
        if (o->n)
            newline(indent, depth, f);
        fputc('}', f);
        break;
    }
    case JSON_ARRAY: {
        const json_array_t *a = (const json_array_t *)j;
        fputc('[', f);
        for (size_t i = 0; i < a->n; i++) {
            if (i)
                fputs(comma, f);
            newline(indent, depth + 1, f);
            dump(a->items[i], flags, depth + 1, f);
        }
        if (a->n)
            newline(indent, depth, f);
        fputc(']', f);
        break;
    }
    case JSON_STRING: dump_string(json_string_value(j), f); break;
    case JSON_INTEGER: fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(j)); break;
    case JSON_REAL: dump_real(json_real_value(j), precision, f); break;
    case JSON_TRUE: fputs("true", f); break;
    case JSON_FALSE: fputs("false", f); break;
    case JSON_NULL: fputs("null", f); break;
    }
}

int json_dumpf(const json_t *json, FILE *output, size_t flags)
{
    if (!json)
        return -1;
    dump(json, flags, 0, output);
    return ferror(output) ? -1 : 0;
}

int json_dump_file(const json_t *json, const char *path, size_t flags)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int r = json_dumpf(json, f, flags);
    return fclose(f) || r ? -1 : 0;
}

/* ------------------------------------------------------------ reading */

static json_t *no_parser(json_error_t *error)
{
    if (error) {
        memset(error, 0, sizeof *error);
        snprintf(error->text, sizeof error->text,
                 "attnbench was built without JSON input (jansson)");
    }
    return NULL;
}

json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error)
{
    (void)buffer, (void)buflen, (void)flags;
    return no_parser(error);
}

json_t *json_load_file(const char *path, size_t flags, json_error_t *error)
{
    (void)path, (void)flags;
    return no_parser(error);
}
