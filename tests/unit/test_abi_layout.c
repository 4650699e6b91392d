/* The ABI of this minor version, frozen: sizeof, _Alignof and every field's
 * offsetof and sizeof of every public struct, against the table
 * tests/unit/abi_layout.h that scripts/abi-layout.py wrote for this minor.
 * Within a minor version (0.3.x) no public struct may change, since apps built
 * against any 0.3.x header run with any 0.3.x library (docs/INTEGRATION.md,
 * "ABI and versions"); a new minor gets a new soname and a new table.
 * unit.abi_layout_names checks the other way round: that the table lists
 * every struct and field the headers declare. The table holds 64-bit numbers
 * (LP64 and LLP64 agree on them); elsewhere the test skips. */
#include "test_util.h"

#include <vkattn/advanced.h>
#include <vkattn/peak.h>
#include <vkattn/vkattn.h>

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

typedef struct abi_entry {
    const char *type, *field; /* field NULL: the struct itself */
    size_t offset, size;      /* what the compiler says (offset: _Alignof for a struct) */
    size_t want_offset, want_size;
} abi_entry;

#define ABI_STRUCT(T, size, align) {#T, NULL, alignof(T), sizeof(T), align, size},
#define ABI_FIELD(T, f, off, sz) {#T, #f, offsetof(T, f), sizeof(((T *)0)->f), off, sz},
static const abi_entry table[] = {
#include "abi_layout.h"
};
#undef ABI_STRUCT
#undef ABI_FIELD

#define WHAT_TO_DO \
    "A public struct changed layout within vkattn %d.%d. Apps built against another " \
    "%d.%d.x header would read or write past it. Undo the change, or make it part of " \
    "the next minor version: bump project(VERSION) in CMakeLists.txt (the soname and " \
    "the ABI-named entry point follow), run scripts/abi-layout.py write BUILD_DIR, " \
    "and say in CHANGELOG.md what an app must do (docs/INTEGRATION.md, \"ABI and " \
    "versions\")."

static void test_table_is_this_minor(void **state)
{
    (void)state;
    if (ABI_LAYOUT_MAJOR != VKATTN_VERSION_MAJOR || ABI_LAYOUT_MINOR != VKATTN_VERSION_MINOR)
        fail_msg("tests/unit/abi_layout.h holds the layout of vkattn %d.%d but this is %d.%d: "
                 "a new minor version freezes its own layout. Check that every layout "
                 "change since %d.%d is in CHANGELOG.md, then run scripts/abi-layout.py "
                 "write BUILD_DIR.",
                 ABI_LAYOUT_MAJOR, ABI_LAYOUT_MINOR, VKATTN_VERSION_MAJOR,
                 VKATTN_VERSION_MINOR, ABI_LAYOUT_MAJOR, ABI_LAYOUT_MINOR);
}

static void test_layout_unchanged(void **state)
{
    (void)state;
    if (sizeof(void *) != 8)
        skip(); /* the table holds 64-bit numbers */
    size_t bad = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const abi_entry *e = &table[i];
        if (e->offset == e->want_offset && e->size == e->want_size)
            continue;
        bad++;
        if (e->field)
            print_error("%s.%s: offset %zu, size %zu; the %d.%d table says offset %zu, "
                        "size %zu\n", e->type, e->field, e->offset, e->size,
                        ABI_LAYOUT_MAJOR, ABI_LAYOUT_MINOR, e->want_offset, e->want_size);
        else
            print_error("%s: sizeof %zu, alignment %zu; the %d.%d table says sizeof %zu, "
                        "alignment %zu\n", e->type, e->size, e->offset, ABI_LAYOUT_MAJOR,
                        ABI_LAYOUT_MINOR, e->want_size, e->want_offset);
    }
    if (bad)
        fail_msg(WHAT_TO_DO, VKATTN_VERSION_MAJOR, VKATTN_VERSION_MINOR,
                 VKATTN_VERSION_MAJOR, VKATTN_VERSION_MINOR);
}

/* The entry point that pins the ABI is the one the header calls. */
static void test_abi_named_entry_point(void **state)
{
    (void)state;
    vkattn_result (*create)(const vkattn_context_desc *, vkattn_context **) =
        vkattn_context_create;
    vkattn_result (*named)(const vkattn_context_desc *, vkattn_context **) =
        VKATTN_ABI_NAME(vkattn_context_create);
    assert_true(create == named);
    assert_true(VKATTN_ABI_COMPATIBLE(vkattn_get_version()));
    assert_false(VKATTN_ABI_COMPATIBLE(vkattn_get_version() + (1u << 12)));
    assert_false(VKATTN_ABI_COMPATIBLE(vkattn_get_version() + (1u << 22)));
    assert_true(VKATTN_ABI_COMPATIBLE(vkattn_get_version() + 1u)); /* a patch */
}

TU_MAIN(NULL, NULL, test_table_is_this_minor, test_layout_unchanged, test_abi_named_entry_point)
