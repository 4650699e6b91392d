/* The subset of cmocka's API that vkattn's tests use, for a platform with no
 * cmocka package: the mingw-w64 cross build (Debian ships cmocka for Linux
 * only, and vkattn vendors nothing). Same names, same semantics: a failed
 * assertion ends the test (longjmp), skip() marks it skipped, the group's
 * exit status is the number of failed tests. Built only with
 * VKATTN_TEST_MINICMOCKA=ON (tests/CMakeLists.txt); Linux builds use cmocka. */
#ifndef VKATTN_MINICMOCKA_H
#define VKATTN_MINICMOCKA_H

#include <stddef.h>
#include <stdint.h>

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
    const char *name;
    CMUnitTestFunction test_func;
    CMFixtureFunction setup_func;
    CMFixtureFunction teardown_func;
    void *initial_state;
};

#define cmocka_unit_test(f) {#f, f, NULL, NULL, NULL}
#define cmocka_unit_test_setup(f, setup) {#f, f, setup, NULL, NULL}
#define cmocka_unit_test_teardown(f, teardown) {#f, f, NULL, teardown, NULL}
#define cmocka_unit_test_setup_teardown(f, setup, teardown) {#f, f, setup, teardown, NULL}

#define cmocka_run_group_tests(group, setup, teardown)                                             \
    _mcm_run_group(#group, group, sizeof(group) / sizeof((group)[0]), setup, teardown)
#define cmocka_run_group_tests_name(name, group, setup, teardown)                                  \
    _mcm_run_group(name, group, sizeof(group) / sizeof((group)[0]), setup, teardown)

#define assert_true(c) _mcm_check(!!(c), #c, __FILE__, __LINE__)
#define assert_false(c) _mcm_check(!(c), "!(" #c ")", __FILE__, __LINE__)
#define assert_non_null(p) _mcm_check((p) != NULL, #p " != NULL", __FILE__, __LINE__)
#define assert_null(p) _mcm_check((p) == NULL, #p " == NULL", __FILE__, __LINE__)
#define assert_int_equal(a, b)                                                                     \
    _mcm_int_equal((intmax_t)(a), (intmax_t)(b), 1, __FILE__, __LINE__)
#define assert_int_not_equal(a, b)                                                                 \
    _mcm_int_equal((intmax_t)(a), (intmax_t)(b), 0, __FILE__, __LINE__)
#define assert_float_equal(a, b, epsilon)                                                          \
    _mcm_float_equal((double)(a), (double)(b), (double)(epsilon), __FILE__, __LINE__)
#define assert_memory_equal(a, b, size) _mcm_memory_equal(a, b, size, __FILE__, __LINE__)
#define assert_string_equal(a, b) _mcm_string_equal(a, b, 1, __FILE__, __LINE__)
#define assert_string_not_equal(a, b) _mcm_string_equal(a, b, 0, __FILE__, __LINE__)
#define fail() _mcm_fail(__FILE__, __LINE__)
#define fail_msg(...) (print_error(__VA_ARGS__), print_error("\n"), _mcm_fail(__FILE__, __LINE__))
#define skip() _mcm_skip(__FILE__, __LINE__)

void print_message(const char *format, ...);
void print_error(const char *format, ...);

int _mcm_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                   CMFixtureFunction setup, CMFixtureFunction teardown);
void _mcm_check(int ok, const char *expr, const char *file, int line);
void _mcm_int_equal(intmax_t a, intmax_t b, _Bool equal, const char *file, int line);
void _mcm_float_equal(double a, double b, double epsilon, const char *file, int line);
void _mcm_memory_equal(const void *a, const void *b, size_t size, const char *file, int line);
void _mcm_string_equal(const char *a, const char *b, _Bool equal, const char *file, int line);
_Noreturn void _mcm_fail(const char *file, int line);
_Noreturn void _mcm_skip(const char *file, int line);

#endif /* VKATTN_MINICMOCKA_H */
