/* attnbench's stand-in for jansson where the target has none (Windows from
 * Debian: no mingw jansson; tools/attnbench/CMakeLists.txt puts this folder
 * on the include path only then, without ATTNBENCH_HAVE_JSON). The subset
 * of jansson's API attnbench uses, with jansson's meaning: values built,
 * read back and written (json_dumpf, json_dump_file: jansson's layout, keys
 * in insertion order, reals as jansson prints them). Nothing is parsed:
 * json_loadb and json_load_file fail, so case files (check) and the cached
 * peak cannot be read; check says so before it starts (check.c). */
#ifndef ATTNBENCH_JSON_LITE_H
#define ATTNBENCH_JSON_LITE_H

#include <stddef.h>
#include <stdio.h>

typedef long long json_int_t;
#define JSON_INTEGER_FORMAT "lld"

typedef enum {
    JSON_OBJECT,
    JSON_ARRAY,
    JSON_STRING,
    JSON_INTEGER,
    JSON_REAL,
    JSON_TRUE,
    JSON_FALSE,
    JSON_NULL
} json_type;

typedef struct json_t {
    json_type type;
    size_t refcount; /* 0: a constant (true, false, null) */
} json_t;

#define JSON_ERROR_TEXT_LENGTH 160
#define JSON_ERROR_SOURCE_LENGTH 80
typedef struct json_error_t {
    int line, column, position;
    char source[JSON_ERROR_SOURCE_LENGTH];
    char text[JSON_ERROR_TEXT_LENGTH];
} json_error_t;

/* jansson's flag bits */
#define JSON_MAX_INDENT 0x1F
#define JSON_INDENT(n) ((n)&JSON_MAX_INDENT)
#define JSON_COMPACT 0x20
#define JSON_REAL_PRECISION(n) (((n)&0x1F) << 11)
#define JSON_REJECT_DUPLICATES 0x1

#define json_typeof(j) ((j)->type)
#define json_is_object(j) ((j) && json_typeof(j) == JSON_OBJECT)
#define json_is_array(j) ((j) && json_typeof(j) == JSON_ARRAY)
#define json_is_string(j) ((j) && json_typeof(j) == JSON_STRING)
#define json_is_integer(j) ((j) && json_typeof(j) == JSON_INTEGER)
#define json_is_real(j) ((j) && json_typeof(j) == JSON_REAL)
#define json_is_number(j) (json_is_integer(j) || json_is_real(j))
#define json_is_true(j) ((j) && json_typeof(j) == JSON_TRUE)
#define json_is_false(j) ((j) && json_typeof(j) == JSON_FALSE)
#define json_is_boolean(j) (json_is_true(j) || json_is_false(j))
#define json_is_null(j) ((j) && json_typeof(j) == JSON_NULL)

json_t *json_object(void);
json_t *json_array(void);
json_t *json_string(const char *value);
json_t *json_integer(json_int_t value);
json_t *json_real(double value); /* NULL for NaN and infinities, as jansson */
json_t *json_true(void);
json_t *json_false(void);
json_t *json_null(void);
#define json_boolean(b) ((b) ? json_true() : json_false())

json_t *json_incref(json_t *json);
void json_decref(json_t *json);

/* set_new takes the caller's reference; set adds one. 0, or -1 on failure */
int json_object_set_new(json_t *object, const char *key, json_t *value);
int json_object_set(json_t *object, const char *key, json_t *value);
json_t *json_object_get(const json_t *object, const char *key);
size_t json_object_size(const json_t *object);
int json_array_append_new(json_t *array, json_t *value);
size_t json_array_size(const json_t *array);
json_t *json_array_get(const json_t *array, size_t index);

const char *json_string_value(const json_t *string);
json_int_t json_integer_value(const json_t *integer);
double json_real_value(const json_t *real);
double json_number_value(const json_t *json);

/* Only "{s:X, ...}" with X one of s (string), I (json_int_t), i (int),
 * b (int as boolean), f (double), o (json_t *, taken), O (json_t *, shared);
 * s?, o?, O?: null for NULL */
json_t *json_pack(const char *fmt, ...);

int json_dumpf(const json_t *json, FILE *output, size_t flags);
int json_dump_file(const json_t *json, const char *path, size_t flags);

/* No parser: NULL, with error->text saying so */
json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *json_load_file(const char *path, size_t flags, json_error_t *error);

/* The i-th entry of an object (insertion order): false past the last. */
int json_lite_object_entry(const json_t *object, size_t i, const char **key, json_t **value);
#define JSON_LITE_CAT2(a, b) a##b
#define JSON_LITE_CAT(a, b) JSON_LITE_CAT2(a, b)
#define json_object_foreach(object, key, value)                                                \
    for (size_t JSON_LITE_CAT(json_lite_i_, __LINE__) = 0;                                     \
         json_lite_object_entry((object), JSON_LITE_CAT(json_lite_i_, __LINE__), &(key),       \
                                &(value));                                                     \
         JSON_LITE_CAT(json_lite_i_, __LINE__)++)
#define json_array_foreach(array, index, value)                                                \
    for (index = 0; index < json_array_size(array) && (value = json_array_get(array, index));  \
         index++)

#endif /* ATTNBENCH_JSON_LITE_H */
