/* attnbench's command line: one struct for every subcommand's flags.
 * Parsing never exits by itself: it returns ATTNBENCH_EXIT_USAGE with the
 * message printed on stderr, and main returns that. */
#ifndef ATTNBENCH_ARGS_H
#define ATTNBENCH_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include <vkattn/dtype.h>

#define ATTNBENCH_EXIT_OK 0
#define ATTNBENCH_EXIT_CHECK 1 /* --check above the bound, a failing case, a runtime failure */
#define ATTNBENCH_EXIT_USAGE 2

typedef enum ab_command {
    AB_CMD_DEMO = 0, /* no arguments */
    AB_CMD_DEVICES,
    AB_CMD_PEAK,
    AB_CMD_BENCH,
    AB_CMD_CHECK,
    AB_CMD_HELP,
    AB_CMD_VERSION, /* --version */
} ab_command;

/* One bit per flag: ops say which shape and option flags they accept. */
enum {
    AB_F_BATCH = 1u << 0, AB_F_HEADS = 1u << 1, AB_F_TQ = 1u << 2, AB_F_TV = 1u << 3,
    AB_F_DK = 1u << 4, AB_F_DV = 1u << 5, AB_F_M = 1u << 6, AB_F_N = 1u << 7, AB_F_K = 1u << 8,
    AB_F_TRANSPOSE_B = 1u << 9, AB_F_CAUSAL = 1u << 10, AB_F_MASK_RATIO = 1u << 11,
    AB_F_DROPOUT = 1u << 12, AB_F_SCORES = 1u << 13, AB_F_FUSED = 1u << 14,
    AB_F_UNFUSED = 1u << 15, AB_F_FP16 = 1u << 16, AB_F_UNITS = 1u << 17,
    AB_F_DMODEL = 1u << 18, AB_F_KV_HEADS = 1u << 19, AB_F_BACKWARD = 1u << 20,
    AB_F_TRAIN_STEP = 1u << 21, AB_F_WINDOW = 1u << 22, AB_F_GATE = 1u << 23,
    AB_F_SPLITS = 1u << 24, AB_F_ROPE = 1u << 25, AB_F_QK_NORM = 1u << 26,
    AB_F_SOFTCAP = 1u << 27, AB_F_SINKS = 1u << 28, AB_F_KV_INT8 = 1u << 29,
    /* --dtype bf16 (--fp16, or --dtype f16, is AB_F_FP16): an op that takes
     * bf16 data tensors lists it */
    AB_F_BF16 = 1u << 30,
};

typedef struct ab_args {
    ab_command command;
    const char *op;   /* bench */
    const char *file; /* check */
    uint32_t given;   /* AB_F_* bits of the shape/option flags given */

    /* --device N|NAME: an index from `attnbench devices`, or a case-insensitive
     * substring of the name (device_name); neither: $VKATTN_DEVICE read the
     * same way, then the library's default (ab_open_context) */
    bool has_device;
    uint32_t device;
    const char *device_name;
    const char *profile; /* --profile: device limits to assume; NULL = the device's own */
    int tuning;          /* --tuning: a vkattn_tuning; 0 = auto */
    int coopmat;         /* --coopmat: a vkattn_coopmat_mode or AB_COOPMAT_*; 0 = auto */
    bool pipeline_stats; /* bench: report the driver's statistics of each pipeline */
    uint32_t variants[5]; /* --variant: vkattn_context_advanced.variants; 0 = library's */

    uint32_t batch, heads, tq, tv, dk, dv; /* 0 = the op's default */
    uint32_t m, n, k;
    uint32_t units;  /* bahdanau; 0 = dk */
    uint32_t dmodel; /* mha input/output width; 0 = heads * dk */
    uint32_t kv_heads; /* decode: K/V heads; 0 = heads */
    uint32_t window;   /* sdpa, decode, mha: sliding window; 0 = none */
    uint32_t splits;   /* decode: key splits per query row; 0 = the library's choice */
    bool kv_int8;      /* decode: an int8 KV cache (VKATTN_DTYPE_I8) */
    bool gate;         /* mha, gqa: Keras use_gate */
    /* mha, gqa: the open models' attention (vkattn/mha_host.h) */
    bool rope;           /* --rope: rotary embeddings at the default positions */
    int rope_layout;     /* --rope-layout: 1 + vkattn_rope_layout; 0 = not given (half) */
    uint32_t rotary_dim; /* --rotary-dim: even, >= 2; 0 = not given (the head width) */
    bool qk_norm;        /* --qk-norm: RMS-normalized queries and keys (epsilon 1e-6) */
    double softcap;      /* --softcap C: > 0; 0 = off */
    bool sinks;          /* --sinks: a learned logit per head in every softmax */
    bool transpose_b, causal, scores, fused, unfused;
    /* --dtype f32|f16|bf16 (--fp16 = --dtype f16): the data tensors' type */
    vkattn_dtype dtype;
    bool backward; /* matmul, additive, sdpa, the layers: time and check the gradients instead */
    bool train_step; /* mha: time forward + MSE + backward + Adam as one training step */
    double mask_ratio, dropout;
    uint32_t warmup, repeat;
    uint64_t seed;

    bool check, json;
    bool no_peak;    /* bench: leave the peak fractions null */
    bool remeasure;  /* bench: measure the peak even if cached */
    bool validation; /* Khronos validation; any message fails the run */

    /* bench, first calls (docs/ATTNBENCH.md, "First calls") */
    bool cold;                  /* time the first call on a fresh context and layer */
    bool prepare;               /* with cold: the op's *_prepare first, timed apart */
    const char *pipeline_cache; /* load this file into the context, save it after; NULL = none */
    /* bench: also record the call sliced (vkattn/slicer.h) at this budget per
     * submission; 0 = not sliced */
    uint32_t frame_budget_us;
    uint64_t piece_work; /* with frame_budget_us: vkattn_slicer_desc.max_piece_work; 0 = none */

    const char *heatmap; /* check: folder for the attention-weight PNGs; NULL = none */
    bool log_color;      /* check --heatmap: colour by log10 of the weight */
} ab_args;

/* Parses argv into *a (defaults filled in). Returns 0, or
 * ATTNBENCH_EXIT_USAGE after printing the reason on stderr. */
int ab_parse_args(int argc, char **argv, ab_args *a);

/* A device choice as --device and $VKATTN_DEVICE take it: all digits = an
 * index (*has_index, *index), else a name substring (*name = s). Returns 0,
 * or ATTNBENCH_EXIT_USAGE after a message naming `what` (the flag or the
 * variable). */
int ab_parse_device(const char *what, const char *s, bool *has_index, uint32_t *index,
                    const char **name);

/* Prints the usage text (to stdout for --help, else stderr). */
void ab_usage(bool to_stdout);

/* Names of flags for messages: "--causal" for AB_F_CAUSAL. */
const char *ab_flag_name(uint32_t bit);

#endif
