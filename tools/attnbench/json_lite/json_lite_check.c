/* Builds the values attnbench reports with and writes them; compiled twice
 * (tools/attnbench/CMakeLists.txt, attnbench.json_lite): against jansson and
 * against json_lite.c, whose outputs must be byte for byte the same. */
#include <float.h>
#include <jansson.h>
#include <stdio.h>

int main(void)
{
    json_t *inner = json_pack("{s:s, s:I, s:b, s:f}", "name", "a \"quoted\"\\ tab\t nl\n \x01 é",
                              "index", (json_int_t)-9007199254740993LL, "flag", 1, "rate", 0.1);
    json_t *arr = json_array();
    const double reals[] = {0.0, 1.0, -2.5, 1e20, 1.5e-7, 123456789.125, DBL_MAX, 1.0 / 3.0};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        json_array_append_new(arr, json_real(reals[i]));
    json_array_append_new(arr, json_integer(42));
    json_array_append_new(arr, json_null());
    json_array_append_new(arr, json_false());
    json_array_append_new(arr, json_array());
    json_array_append_new(arr, json_object());
    json_t *o = json_pack("{s:o, s:o, s:s?, s:s?, s:i}", "inner", inner, "list", arr, "none",
                          (const char *)NULL, "some", "text", "int", -7);
    json_object_set_new(o, "replaced", json_integer(1));
    json_object_set_new(o, "replaced", json_string("twice"));
    json_object_set(o, "shared", inner);
    const char *key;
    json_t *v;
    size_t n = 0, i;
    json_object_foreach(o, key, v) n += key[0] != 0;
    json_array_foreach(arr, i, v) n += json_is_real(v);
    json_object_set_new(o, "counted", json_integer((json_int_t)n));
    json_object_set_new(o, "number", json_real(json_number_value(json_object_get(inner, "index"))));
    json_dumpf(o, stdout, JSON_REAL_PRECISION(9));
    printf("\n");
    json_dumpf(o, stdout, JSON_INDENT(1));
    printf("\n");
    json_dumpf(o, stdout, 0);
    printf("\n");
    json_decref(o);
    return 0;
}
