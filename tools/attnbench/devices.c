/* attnbench devices: every Vulkan device the loader sees, what vkattn would
 * use it with, and which one the library picks by default. */
#include "cmds.h"

#include "bench.h"
#include "common.h"

#include <vkattn/advanced.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(vkattn_device_type t)
{
    switch (t) {
    case VKATTN_DEVICE_INTEGRATED: return "integrated";
    case VKATTN_DEVICE_DISCRETE: return "discrete";
    case VKATTN_DEVICE_VIRTUAL: return "virtual";
    case VKATTN_DEVICE_CPU: return "cpu";
    default: return "other";
    }
}

typedef struct dev_entry {
    vkattn_device_info desc;
    bool have_info, is_default;
    vkattn_context_info info;
} dev_entry;

static void version_text(uint32_t v, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
             VK_API_VERSION_PATCH(v));
}

/* Opens each usable device once for its limits; marks the default choice. */
static void fill_entries(dev_entry *e, uint32_t n, const char *profile, int coopmat)
{
    vkattn_context_advanced advanced = {0};
    ab_coopmat_settings(coopmat, &advanced);
    for (uint32_t i = 0; i < n; i++) {
        if (!e[i].desc.usable)
            continue;
        vkattn_context_desc desc = {.use_device_index = true,
                                    .device_index = e[i].desc.index,
                                    .profile = profile,
                                    .advanced = &advanced};
        vkattn_context *ctx;
        if (vkattn_context_create(&desc, &ctx) == VKATTN_SUCCESS) {
            e[i].have_info = vkattn_context_get_info(ctx, &e[i].info) == VKATTN_SUCCESS;
            vkattn_context_destroy(ctx);
        }
    }
    vkattn_context_desc def = {0};
    vkattn_context *ctx;
    vkattn_context_info info;
    if (vkattn_context_create(&def, &ctx) != VKATTN_SUCCESS)
        return;
    bool ok = vkattn_context_get_info(ctx, &info) == VKATTN_SUCCESS;
    vkattn_context_destroy(ctx);
    for (uint32_t i = 0; ok && i < n; i++)
        if (e[i].have_info && e[i].info.vendor_id == info.vendor_id &&
            e[i].info.device_id == info.device_id && !strcmp(e[i].desc.name, info.device_name)) {
            e[i].is_default = true;
            break;
        }
}

/* The driver's version as its vendor writes it: NVIDIA packs 10.8.8.6 bits
 * (580.159.04), most others the Vulkan API version's layout. */
void ab_driver_text(uint32_t vendor, uint32_t v, char *buf, size_t size)
{
    if (vendor == 0x10de)
        snprintf(buf, size, "%u.%u.%02u", v >> 22, (v >> 14) & 0xffu, (v >> 6) & 0xffu);
    else
        version_text(v, buf, size);
}

/* Cooperative matrices, per kernel family: offered by the device, built into
 * this library, and what its self-test said (vkattn_context_info). */
static const char *const family_names[VKATTN_COOPMAT_FAMILIES] = {"NV", "KHR", "NV2", "emulated"};

static const char *check_state(vkattn_coopmat_check_state s)
{
    switch (s) {
    case VKATTN_COOPMAT_PASSED: return "passed";
    case VKATTN_COOPMAT_FAILED: return "failed";
    case VKATTN_COOPMAT_FORCED: return "forced";
    default: return "not tried";
    }
}

static json_t *coopmat_json(const vkattn_context_info *i)
{
    json_t *families = json_object();
    for (int f = 0; f < VKATTN_COOPMAT_FAMILIES; f++) {
        const vkattn_coopmat_check *c = &i->coopmat_check[f];
        json_t *o = json_pack("{s:b, s:b, s:b, s:s, s:s, s:b}", "offered",
                              f < 3 && (i->coopmat_flavours & (1u << f)), "built",
                              (i->coopmat_built & (1u << f)) != 0, "running",
                              (i->coopmat_running & (1u << f)) != 0, "self_test",
                              check_state(c->state), "detail", c->detail, "cached", c->cached);
        if (c->state == VKATTN_COOPMAT_FAILED) {
            json_object_set_new(o, "first_wrong_index", json_integer((json_int_t)c->index));
            json_object_set_new(o, "got", json_real(c->got));
            json_object_set_new(o, "expected", json_real(c->expected));
        }
        json_object_set_new(families, family_names[f], o);
    }
    return json_pack("{s:o, s:b, s:b, s:b}", "families", families, "f16_16x16x16",
                     i->coopmat_f16_16x16x16, "enabled", i->coopmat_enabled, "attention",
                     i->coopmat_attention);
}

static void print_coopmat(uint32_t index, const vkattn_context_info *i)
{
    printf("device %u cooperative matrices%s: the fused attention's kernel %s\n", index,
           i->coopmat_f16_16x16x16 ? " (f16 16x16x16 -> f32 listed)" : "",
           i->coopmat_attention ? "runs on them" : "does not run on them");
    for (int f = 0; f < VKATTN_COOPMAT_FAMILIES; f++) {
        const vkattn_coopmat_check *c = &i->coopmat_check[f];
        printf("  %-8s offered %-3s built %-3s self-test %-9s%s %s%s\n", family_names[f],
               f == 3 ? "-" : i->coopmat_flavours & (1u << f) ? "yes" : "no",
               i->coopmat_built & (1u << f) ? "yes" : "no", check_state(c->state),
               i->coopmat_running & (1u << f) ? " (runs)" : "", c->detail,
               c->cached ? " (cached)" : "");
    }
}

static json_t *entry_json(const dev_entry *e)
{
    char api[32];
    version_text(e->desc.api_version, api, sizeof api);
    json_t *o = json_pack("{s:I, s:s, s:I, s:s, s:s, s:b, s:b}", "index", (json_int_t)e->desc.index,
                          "name", e->desc.name, "vendor_id", (json_int_t)e->desc.vendor_id, "type",
                          type_name(e->desc.device_type), "api_version", api, "usable",
                          e->desc.usable, "default", e->is_default);
    if (e->have_info) {
        const vkattn_context_info *i = &e->info;
        json_t *limits = json_pack(
            "{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:b}", "subgroup_size",
            (json_int_t)i->subgroup_size, "min_subgroup_size", (json_int_t)i->min_subgroup_size,
            "max_subgroup_size", (json_int_t)i->max_subgroup_size, "max_shared_memory",
            (json_int_t)i->max_shared_memory, "max_workgroup_invocations",
            (json_int_t)i->max_workgroup_invocations, "max_storage_buffer_range",
            (json_int_t)i->max_storage_buffer_range, "fp16", i->fp16, "timestamps", i->timestamps,
            "unified_memory", i->unified_memory);
        json_object_set_new(o, "device_id", json_integer(i->device_id));
        char driver[32];
        ab_driver_text(i->vendor_id, i->driver_version, driver, sizeof driver);
        json_object_set_new(o, "driver_version", json_string(driver));
        json_object_set_new(limits, "max_storage_buffers_per_stage",
                            json_integer(i->max_storage_buffers_per_stage));
        json_object_set_new(limits, "min_storage_buffer_offset_alignment",
                            json_integer(i->min_storage_buffer_offset_alignment));
        json_object_set_new(limits, "max_dispatch_work", json_integer((json_int_t)i->max_dispatch_work));
        json_object_set_new(o, "profile", json_string(i->profile));
        json_object_set_new(o, "descriptors",
                            json_string(i->push_descriptors ? "push" : "pooled sets"));
        json_object_set_new(o, "storage_buffer_16bit", json_boolean(i->storage_buffer_16bit));
        json_object_set_new(o, "subgroup_operations", json_boolean(i->subgroup_operations));
        json_object_set_new(o, "limits", limits);
        json_object_set_new(o, "cooperative_matrix", coopmat_json(i));
    }
    return o;
}

static void print_table(const dev_entry *e, uint32_t n)
{
    if (n == 0) {
        printf("no Vulkan devices\n");
        return;
    }
    printf("%3s %-10s %-40s %-8s %-8s %-6s %8s %10s %-4s %-11s %s\n", "#", "type", "name",
           "vendor", "api", "usable", "subgroup", "shared KiB", "fp16", "descriptors", "default");
    for (uint32_t i = 0; i < n; i++) {
        char api[32], sub[16] = "-", shared[16] = "-";
        version_text(e[i].desc.api_version, api, sizeof api);
        if (e[i].have_info) {
            snprintf(sub, sizeof sub, "%u", e[i].info.subgroup_size);
            snprintf(shared, sizeof shared, "%u", e[i].info.max_shared_memory / 1024);
        }
        printf("%3u %-10s %-40s 0x%04x   %-8s %-6s %8s %10s %-4s %-11s %s\n", e[i].desc.index,
               type_name(e[i].desc.device_type), e[i].desc.name, e[i].desc.vendor_id, api,
               e[i].desc.usable ? "yes" : "no", sub, shared,
               e[i].have_info ? (e[i].info.fp16 ? "yes" : "no") : "-",
               e[i].have_info ? (e[i].info.push_descriptors ? "push" : "pooled sets") : "-",
               e[i].is_default ? "*" : "");
    }
    for (uint32_t i = 0; i < n; i++)
        if (e[i].have_info)
            print_coopmat(e[i].desc.index, &e[i].info);
    if (n && e[0].have_info && strcmp(e[0].info.profile, "desktop") != 0)
        printf("limits as the \"%s\" profile clamps them\n", e[0].info.profile);
}

int ab_cmd_devices(const ab_args *a)
{
    uint32_t n = 0;
    vkattn_result r = vkattn_enumerate_devices(NULL, &n);
    if (r != VKATTN_SUCCESS)
        return ab_report(NULL, r, "listing devices");
    dev_entry *e = calloc(n ? n : 1, sizeof *e);
    vkattn_device_info *d = calloc(n ? n : 1, sizeof *d);
    if (!e || !d) {
        free(e), free(d);
        return ab_report(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "listing devices");
    }
    if (n && (r = vkattn_enumerate_devices(d, &n)) != VKATTN_SUCCESS) {
        free(e), free(d);
        return ab_report(NULL, r, "listing devices");
    }
    for (uint32_t i = 0; i < n; i++)
        e[i].desc = d[i];
    fill_entries(e, n, a->profile, a->coopmat);
    if (a->json) {
        json_t *list = json_array();
        for (uint32_t i = 0; i < n; i++)
            json_array_append_new(list, entry_json(&e[i]));
        json_t *o = json_pack("{s:o}", "devices", list);
        ab_json_print(o);
        json_decref(o);
    } else {
        print_table(e, n);
    }
    free(e), free(d);
    return ATTNBENCH_EXIT_OK;
}
