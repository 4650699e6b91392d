/* Flag parsing for attnbench: a table of flags, each with the subcommands it
 * belongs to, so a flag given to the wrong subcommand is a usage error rather
 * than silently ignored. "--flag value" and "--flag=value" both work. */
#include "args.h"

#include <vkattn/advanced.h>
#include <vkattn/vkattn.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* which subcommands accept a flag */
#define C_DEV (1u << AB_CMD_DEVICES)
#define C_PEAK (1u << AB_CMD_PEAK)
#define C_BENCH (1u << AB_CMD_BENCH)
#define C_CHECK (1u << AB_CMD_CHECK)

typedef enum kind {
    K_BOOL, K_U32, K_U64, K_RATE, K_PROFILE, K_PATH, K_TUNING, K_COOPMAT, K_DEVICE,
    K_POSITIVE,    /* a finite number > 0, digits and at most one point */
    K_EVEN,        /* an even integer >= 2 */
    K_ROPE_LAYOUT, /* half | interleaved, stored as 1 + vkattn_rope_layout */
    K_VARIANT,     /* FAMILY=N[,FAMILY=N..]: vkattn_context_advanced.variants */
    K_DTYPE,       /* f32 | f16 | bf16, stored as a vkattn_dtype */
    K_FP16,        /* no value: --dtype f16 */
} kind;

typedef struct flag {
    const char *name;
    kind kind;
    uint32_t commands;
    uint32_t bit; /* AB_F_* for shape/option flags, 0 for others */
    size_t offset;
} flag;

#define F(name, kind, cmds, bit, field) {name, kind, cmds, bit, offsetof(ab_args, field)}

static const flag FLAGS[] = {
    F("--device", K_DEVICE, C_PEAK | C_BENCH | C_CHECK, 0, device),
    F("--profile", K_PROFILE, C_DEV | C_PEAK | C_BENCH | C_CHECK, 0, profile),
    F("--tuning", K_TUNING, C_PEAK | C_BENCH | C_CHECK, 0, tuning),
    F("--coopmat", K_COOPMAT, C_DEV | C_PEAK | C_BENCH | C_CHECK, 0, coopmat),
    F("--pipeline-stats", K_BOOL, C_BENCH, 0, pipeline_stats),
    F("--variant", K_VARIANT, C_BENCH, 0, variants),
    F("--batch", K_U32, C_BENCH, AB_F_BATCH, batch),
    F("--heads", K_U32, C_BENCH, AB_F_HEADS, heads),
    F("--kv-heads", K_U32, C_BENCH, AB_F_KV_HEADS, kv_heads),
    F("--tq", K_U32, C_BENCH, AB_F_TQ, tq),
    F("--tv", K_U32, C_BENCH, AB_F_TV, tv),
    F("--dk", K_U32, C_BENCH, AB_F_DK, dk),
    F("--dv", K_U32, C_BENCH, AB_F_DV, dv),
    F("--m", K_U32, C_BENCH, AB_F_M, m),
    F("--n", K_U32, C_BENCH, AB_F_N, n),
    F("--k", K_U32, C_BENCH, AB_F_K, k),
    F("--units", K_U32, C_BENCH, AB_F_UNITS, units),
    F("--dmodel", K_U32, C_BENCH, AB_F_DMODEL, dmodel),
    F("--transpose-b", K_BOOL, C_BENCH, AB_F_TRANSPOSE_B, transpose_b),
    F("--causal", K_BOOL, C_BENCH, AB_F_CAUSAL, causal),
    F("--window", K_U32, C_BENCH, AB_F_WINDOW, window),
    F("--splits", K_U32, C_BENCH, AB_F_SPLITS, splits),
    F("--kv-int8", K_BOOL, C_BENCH, AB_F_KV_INT8, kv_int8),
    F("--gate", K_BOOL, C_BENCH, AB_F_GATE, gate),
    F("--rope", K_BOOL, C_BENCH, AB_F_ROPE, rope),
    F("--rope-layout", K_ROPE_LAYOUT, C_BENCH, 0, rope_layout),
    F("--rotary-dim", K_EVEN, C_BENCH, 0, rotary_dim),
    F("--qk-norm", K_BOOL, C_BENCH, AB_F_QK_NORM, qk_norm),
    F("--softcap", K_POSITIVE, C_BENCH, AB_F_SOFTCAP, softcap),
    F("--sinks", K_BOOL, C_BENCH, AB_F_SINKS, sinks),
    F("--mask-ratio", K_RATE, C_BENCH, AB_F_MASK_RATIO, mask_ratio),
    F("--dropout", K_RATE, C_BENCH, AB_F_DROPOUT, dropout),
    F("--scores", K_BOOL, C_BENCH, AB_F_SCORES, scores),
    F("--fused", K_BOOL, C_BENCH, AB_F_FUSED, fused),
    F("--unfused", K_BOOL, C_BENCH, AB_F_UNFUSED, unfused),
    F("--dtype", K_DTYPE, C_BENCH, 0, dtype),
    F("--fp16", K_FP16, C_BENCH, AB_F_FP16, dtype),
    F("--backward", K_BOOL, C_BENCH, AB_F_BACKWARD, backward),
    F("--train-step", K_BOOL, C_BENCH, AB_F_TRAIN_STEP, train_step),
    F("--warmup", K_U32, C_BENCH, 0, warmup),
    F("--repeat", K_U32, C_BENCH, 0, repeat),
    F("--seed", K_U64, C_BENCH, 0, seed),
    F("--check", K_BOOL, C_BENCH, 0, check),
    F("--json", K_BOOL, C_DEV | C_PEAK | C_BENCH | C_CHECK, 0, json),
    F("--no-peak", K_BOOL, C_BENCH, 0, no_peak),
    F("--remeasure-peak", K_BOOL, C_BENCH, 0, remeasure),
    F("--validation", K_BOOL, C_PEAK | C_BENCH | C_CHECK, 0, validation),
    F("--cold", K_BOOL, C_BENCH, 0, cold),
    F("--prepare", K_BOOL, C_BENCH, 0, prepare),
    F("--pipeline-cache", K_PATH, C_BENCH, 0, pipeline_cache),
    F("--frame-budget-us", K_U32, C_BENCH, 0, frame_budget_us),
    F("--piece-work", K_U64, C_BENCH, 0, piece_work),
    F("--heatmap", K_PATH, C_CHECK, 0, heatmap),
    F("--log-color", K_BOOL, C_CHECK, 0, log_color),
};
#define N_FLAGS (sizeof FLAGS / sizeof FLAGS[0])

void ab_usage(bool to_stdout)
{
    FILE *f = to_stdout ? stdout : stderr;
    fputs("usage:\n"
          "  attnbench                                  demo: list devices, run a checked matmul\n"
          "  attnbench devices [--json]\n"
          "  attnbench peak [--device N|NAME] [--json]\n"
          "  (every command also takes --profile desktop|mobile-min|mali|adreno;\n"
          "   peak, bench and check take --tuning auto|gpu|cpu: the kernel shapes;\n"
          "   every command takes --coopmat auto|on|off|emulate|nv|khr|nv2: tensor-core\n"
          "   kernels, one family forced with nv|khr|nv2)\n"
          "  attnbench bench OP [options] [--json]\n"
          "  attnbench check FILE.json [--device N|NAME] [--json] [--heatmap DIR [--log-color]]\n"
          "  attnbench sweep OP --tq N,N,.. [--fused] [--unfused] [--csv] [--plot FILE.png]\n"
          "                 [bench options]     a series of benches over lengths\n"
          "  attnbench help\n"
          "  attnbench --version                        attnbench's and the loaded library's\n"
          "OP: matmul softmax additive heads dropout sdpa decode attention additive_attention\n"
          "    bahdanau mha gqa (those built into this library; see `attnbench help`)\n"
          "--device N|NAME: an index from `attnbench devices` or a part of the name (any case);\n"
          "  without it $VKATTN_DEVICE is read the same way, then the library chooses\n"
          "bench options:\n"
          "  --device N|NAME  --batch B --heads H --tq N --tv N --dk N --dv N --m M --n N --k K\n"
          "  --kv-heads G (decode, gqa) --units U (bahdanau) --dmodel D (mha, gqa)  --transpose-b --causal\n"
          "  --mask-ratio R --dropout P --scores --fused|--unfused --warmup W --repeat R --seed S\n"
          "  --dtype f32|f16|bf16 (the data tensors; --fp16 = --dtype f16; bf16: matmul, softmax,\n"
          "  additive, heads, dropout, sdpa, decode and the layers so far)\n"
          "  --window W (sdpa, decode, mha, gqa: a sliding window of W keys)\n"
          "  --splits N (decode: N key splits per query row, params.num_splits)\n"
          "  --kv-int8 (decode: an int8 KV cache, VKATTN_DTYPE_I8)\n"
          "  --gate (mha, gqa: Keras use_gate, a sigmoid gate on each head's context)\n"
          "  --rope [--rope-layout half|interleaved] [--rotary-dim N] (mha, gqa: rotary\n"
          "  embeddings, N even <= --dk)  --qk-norm (mha, gqa: RMS-normalized queries and keys)\n"
          "  --softcap C (mha, gqa: scores capped as C * tanh(s / C), C > 0)\n"
          "  --sinks (mha, gqa: a learned logit per head joins every softmax)\n"
          "  --backward (matmul, additive, sdpa, attention, additive_attention, bahdanau, mha, gqa:\n"
          "  the gradients)  --train-step (mha: forward + MSE + backward + Adam, timed as one)\n"
          "  --check --json --no-peak --remeasure-peak --validation\n"
          "  --cold [--prepare]  --pipeline-cache FILE  (first calls: time, pipelines)\n"
          "  --frame-budget-us B [--piece-work N]  (also record the call sliced, B us per frame)\n"
          "  --pipeline-stats  (each pipeline's registers, spills, ... where the driver says)\n"
          "exit status: 0 ok, 1 check failed or runtime error, 2 bad usage\n"
          "docs/ATTNBENCH.md has the details.\n",
          f);
}

const char *ab_flag_name(uint32_t bit)
{
    if (bit == AB_F_BF16) /* set by --dtype's value */
        return "--dtype bf16";
    for (size_t i = 0; i < N_FLAGS; i++)
        if (FLAGS[i].bit == bit)
            return FLAGS[i].name;
    return "?";
}

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fputs("attnbench: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs("\n(run `attnbench help` for usage)\n", stderr);
    return ATTNBENCH_EXIT_USAGE;
}

int ab_parse_device(const char *what, const char *s, bool *has_index, uint32_t *index,
                    const char **name)
{
    *has_index = false;
    *index = 0;
    *name = NULL;
    if (!*s)
        return usage_error("%s needs a device index or a part of its name, got ''%s", what, "");
    if (strspn(s, "0123456789") < strlen(s)) {
        *name = s;
        return 0;
    }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno || v > UINT32_MAX)
        return usage_error("%s: '%s' does not fit 32 bits", what, s);
    *has_index = true;
    *index = (uint32_t)v;
    return 0;
}

/* --dtype NAME (and --fp16, NAME f16): the data type, with the op bit that
 * bench's "does not apply" check reads; two that disagree are a usage error. */
static int set_dtype(ab_args *a, const char *name)
{
    static const struct { const char *name; vkattn_dtype dtype; uint32_t bit; } types[] = {
        {"f32", VKATTN_DTYPE_F32, 0},
        {"f16", VKATTN_DTYPE_F16, AB_F_FP16},
        {"bf16", VKATTN_DTYPE_BF16, AB_F_BF16},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(name, types[i].name))
            continue;
        const uint32_t both = AB_F_FP16 | AB_F_BF16;
        if ((a->given & both) & ~types[i].bit || (a->dtype && a->dtype != types[i].dtype))
            return usage_error("--fp16 and --dtype %s disagree; give one%s", name, "");
        a->dtype = types[i].dtype;
        a->given |= types[i].bit;
        return 0;
    }
    return usage_error("--dtype takes f32, f16 or bf16, not '%s'%s", name, "");
}

static int parse_value(const flag *f, const char *s, ab_args *a)
{
    char *end = NULL;
    void *field = (char *)a + f->offset;
    errno = 0;
    if (f->kind == K_DEVICE)
        return ab_parse_device(f->name, s, &a->has_device, &a->device, &a->device_name);
    if (f->kind == K_DTYPE)
        return set_dtype(a, s);
    if (f->kind == K_PATH) {
        if (!*s)
            return usage_error("%s needs a file name%s", f->name, "");
        *(const char **)field = s;
        return 0;
    }
    if (f->kind == K_TUNING) {
        static const char *const names[] = {"auto", "gpu", "cpu"}; /* vkattn_tuning order */
        for (int i = 0; i < 3; i++)
            if (!strcmp(names[i], s)) {
                *(int *)field = i;
                return 0;
            }
        return usage_error("--tuning takes auto, gpu or cpu, not '%s'%s", s, "");
    }
    if (f->kind == K_COOPMAT) {
        /* vkattn_coopmat_mode's order, then ab_coopmat_choice's */
        static const char *const names[] = {"auto", "off", "on", "emulate", "nv", "khr", "nv2"};
        for (int i = 0; i < 7; i++)
            if (!strcmp(names[i], s)) {
                *(int *)field = i;
                return 0;
            }
        return usage_error("--coopmat takes auto, on, off, emulate, nv, khr or nv2, not '%s'%s", s,
                           "");
    }
    if (f->kind == K_VARIANT) {
        /* vkattn_variant_family's order; counts from vkattn/advanced.h */
        static const char *const names[VKATTN_VARIANT_FAMILIES] = {
            "matmul", "matmul_coopmat", "flash", "flash_coopmat", "flash_backward"};
        static const uint32_t counts[VKATTN_VARIANT_FAMILIES] = {
            VKATTN_VARIANTS_MATMUL, VKATTN_VARIANTS_MATMUL_COOPMAT, VKATTN_VARIANTS_FLASH,
            VKATTN_VARIANTS_FLASH_COOPMAT, VKATTN_VARIANTS_FLASH_BACKWARD};
        uint32_t *v = (uint32_t *)field;
        for (const char *p = s; *p;) {
            const char *eq = strchr(p, '='), *stop = strchr(p, ',');
            if (!stop)
                stop = p + strlen(p);
            int fam = -1;
            for (int i = 0; eq && eq < stop && i < VKATTN_VARIANT_FAMILIES; i++)
                if (strlen(names[i]) == (size_t)(eq - p) && !strncmp(names[i], p, (size_t)(eq - p)))
                    fam = i;
            unsigned long n = 0;
            const char *d = eq ? eq + 1 : stop;
            bool digits = eq && d < stop && stop - d <= 3;
            for (const char *c = d; digits && c < stop; c++)
                digits = *c >= '0' && *c <= '9';
            if (digits)
                n = strtoul(d, NULL, 10);
            if (fam < 0 || !digits || n > counts[fam])
                return usage_error("--variant takes FAMILY=N[,FAMILY=N..] with FAMILY matmul "
                                   "(N 0..7), matmul_coopmat, flash, flash_coopmat or "
                                   "flash_backward (N 0..6), not '%s'%s",
                                   s, "");
            v[fam] = (uint32_t)n;
            p = *stop ? stop + 1 : stop;
        }
        return 0;
    }
    if (f->kind == K_ROPE_LAYOUT) {
        static const char *const names[] = {"half", "interleaved"}; /* vkattn_rope_layout */
        for (int i = 0; i < 2; i++)
            if (!strcmp(names[i], s)) {
                *(int *)field = 1 + i;
                return 0;
            }
        return usage_error("%s takes half or interleaved, not '%s'", f->name, s);
    }
    if (f->kind == K_PROFILE) {
        uint32_t n = 0;
        const char *const *names = vkattn_profile_names(&n);
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(names[i], s)) {
                *(const char **)field = names[i];
                return 0;
            }
        return usage_error("%s: unknown profile '%s' (desktop, mobile-min, mali, adreno)", f->name, s);
    }
    /* strtod and strtoull skip leading blanks, and strtoull takes a sign
     * (" -1" would become 2^64 - 1): an integer starts with a digit */
    bool starts_ok = *s >= '0' && *s <= '9';
    if (f->kind == K_RATE) {
        /* the one parser of every fraction flag: digits and at most one point
         * (strtod would also take 0x0.8, 1e-1, inf and nan) */
        size_t digits = strspn(s, "0123456789"), frac = 0;
        if (s[digits] == '.')
            frac = strspn(s + digits + 1, "0123456789");
        bool plain = digits + frac > 0 && !s[digits + (s[digits] == '.') + frac];
        double v = plain ? strtod(s, &end) : -1.0;
        if (!plain || *end || errno || !(v >= 0.0 && v <= 1.0))
            return usage_error("%s needs a number in [0, 1] written as digits and a point "
                               "(0.25, .25), got '%s'", f->name, s);
        *(double *)field = v;
        return 0;
    }
    if (f->kind == K_POSITIVE) {
        /* as K_RATE: digits and at most one point, so no inf, nan or 1e400 */
        size_t digits = strspn(s, "0123456789"), frac = 0;
        if (s[digits] == '.')
            frac = strspn(s + digits + 1, "0123456789");
        bool plain = digits + frac > 0 && digits <= 30 &&
                     !s[digits + (s[digits] == '.') + frac];
        double v = plain ? strtod(s, &end) : 0.0;
        if (!plain || *end || errno || !(v > 0.0))
            return usage_error("%s needs a number > 0 written as digits and a point (30, "
                               "50.0), got '%s'", f->name, s);
        *(double *)field = v;
        return 0;
    }
    if (!starts_ok)
        return usage_error("%s needs a non-negative integer (decimal digits only), got '%s'",
                           f->name, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (*end)
        return usage_error("%s needs a non-negative integer (decimal digits only), got '%s'",
                           f->name, s);
    if (errno == ERANGE && f->kind == K_U64)
        return usage_error("%s: '%s' does not fit 64 bits", f->name, s);
    if (f->kind == K_U64) {
        *(uint64_t *)field = v;
        return 0;
    }
    if (v > UINT32_MAX)
        return usage_error("%s: '%s' does not fit 32 bits", f->name, s);
    if (f->kind == K_EVEN && (v < 2 || v % 2))
        return usage_error("%s needs an even integer >= 2, got '%s'", f->name, s);
    *(uint32_t *)field = (uint32_t)v;
    return 0;
}

static int parse_command(const char *s, ab_command *out)
{
    static const struct { const char *name; ab_command cmd; } cmds[] = {
        {"devices", AB_CMD_DEVICES}, {"peak", AB_CMD_PEAK}, {"bench", AB_CMD_BENCH},
        {"check", AB_CMD_CHECK},     {"help", AB_CMD_HELP}, {"--help", AB_CMD_HELP},
        {"-h", AB_CMD_HELP},          {"--version", AB_CMD_VERSION}, {"version", AB_CMD_VERSION},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(s, cmds[i].name)) {
            *out = cmds[i].cmd;
            return 0;
        }
    return usage_error("unknown command '%s'%s", s, "");
}

/* Parses one flag at argv[*i] (advancing *i past its value). */
static int parse_flag(int argc, char **argv, int *i, ab_args *a)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const flag *f = NULL;
    for (size_t j = 0; j < N_FLAGS && !f; j++)
        if (strlen(FLAGS[j].name) == len && !strncmp(FLAGS[j].name, arg, len))
            f = &FLAGS[j];
    if (!f)
        return usage_error("unknown option '%s'%s", arg, "");
    if (!(f->commands & (1u << a->command)))
        return usage_error("%s does not apply to this command%s", f->name, "");
    a->given |= f->bit;
    if (f->kind == K_FP16)
        return eq ? usage_error("%s takes no value%s", f->name, "") : set_dtype(a, "f16");
    if (f->kind == K_BOOL) {
        if (eq)
            return usage_error("%s takes no value%s", f->name, "");
        *(bool *)((char *)a + f->offset) = true;
        return 0;
    }
    const char *value = eq ? eq + 1 : NULL;
    if (!value) {
        if (*i + 1 >= argc)
            return usage_error("%s needs a value%s", f->name, "");
        value = argv[++*i];
    }
    return parse_value(f, value, a);
}

int ab_parse_args(int argc, char **argv, ab_args *a)
{
    memset(a, 0, sizeof *a);
    a->warmup = 3;
    a->repeat = 20;
    a->seed = 1;
    if (argc < 2) {
        a->command = AB_CMD_DEMO;
        return 0;
    }
    int r = parse_command(argv[1], &a->command);
    if (r)
        return r;
    int i = 2;
    if (a->command == AB_CMD_BENCH || a->command == AB_CMD_CHECK) {
        if (i >= argc || argv[i][0] == '-')
            return usage_error("%s needs %s", argv[1], a->command == AB_CMD_BENCH ? "an OP" : "a FILE.json");
        if (a->command == AB_CMD_BENCH)
            a->op = argv[i++];
        else
            a->file = argv[i++];
    }
    for (; i < argc; i++) {
        if (a->command == AB_CMD_HELP || a->command == AB_CMD_VERSION)
            return usage_error("%s takes no arguments ('%s')", argv[1], argv[i]);
        if (strncmp(argv[i], "--", 2) != 0)
            return usage_error("unexpected argument '%s'%s", argv[i], "");
        if ((r = parse_flag(argc, argv, &i, a)))
            return r;
    }
    if (a->fused && a->unfused)
        return usage_error("--fused and --unfused exclude each other%s%s", "", "");
    if (a->command == AB_CMD_BENCH && a->repeat == 0)
        return usage_error("--repeat must be >= 1%s%s", "", "");
    if (a->prepare && !a->cold)
        return usage_error("--prepare needs --cold (it times the first call after prepare)%s%s",
                           "", "");
    if (a->piece_work && !a->frame_budget_us)
        return usage_error("--piece-work needs --frame-budget-us (it sizes the slicer's pieces)%s%s",
                           "", "");
    if ((a->rope_layout || a->rotary_dim) && !a->rope)
        return usage_error("%s needs --rope%s", a->rope_layout ? "--rope-layout" : "--rotary-dim",
                           "");
    if (a->dropout >= 1.0)
        return usage_error("--dropout must be below 1 for a benchmark%s%s", "", "");
    return 0;
}
