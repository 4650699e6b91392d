/* The accuracy each op and layer states: `attnbench bench OP --check` fails
 * (exit 1) when max_rel_err = max|got - ref| / max|ref| exceeds the op's bound.
 * One table, mirrored in docs/ATTNBENCH.md. The references accumulate in
 * double; the GPU in fp32, so the bounds are a few hundred fp32 ulps of the
 * largest output, with room for long reductions (K, Tv, head widths in the
 * thousands); exact ops (head split/merge) must match bit for bit. */
#ifndef ATTNBENCH_BOUNDS_H
#define ATTNBENCH_BOUNDS_H

#define AB_BOUND_MATMUL 1e-4             /* K-long fp32 dot products */
#define AB_BOUND_MATMUL_FP16 2e-3        /* --fp16: f16 C (--backward: dA, dB), 2 f16 ulps (2^-10) of the largest output */
#define AB_BOUND_SOFTMAX 1e-5            /* fp32 exp and one row sum */
#define AB_BOUND_ADDITIVE 1e-4           /* fp32 tanh, dim-long sums */
#define AB_BOUND_HEADS 0.0               /* pure data movement: exact */
#define AB_BOUND_DROPOUT 1e-6            /* one f32 multiply per element */
#define AB_BOUND_SOFTMAX_FP16 2e-3       /* --fp16: 2 f16 ulps (2^-10) of the largest output */
#define AB_BOUND_ADDITIVE_FP16 2e-3      /* --fp16: likewise */
#define AB_BOUND_HEADS_FP16 0.0          /* --fp16: f16 in and out, still exact */
#define AB_BOUND_DROPOUT_FP16 1e-3       /* --fp16: the f32 product rounded once to f16 */
/* --dtype bf16: the output rounded once to bf16 by the library's own GLSL (to
 * nearest even), compared with the reference's unrounded result: half a bf16
 * spacing, at most 2^-8 of the largest output, over the op's f32 bound (the
 * inputs are bf16 values the reference reads exactly). Two once-rounded
 * values could differ by a whole spacing where they straddle a midpoint:
 * sdpa compares with a once-rounded reference, hence a whole spacing there. */
#define AB_BOUND_SOFTMAX_BF16 4e-3       /* 2^-8 (1 + 1e-5) + 1e-5 */
#define AB_BOUND_ADDITIVE_BF16 4.1e-3    /* 2^-8 (1 + 1e-4) + 1e-4 */
#define AB_BOUND_HEADS_BF16 0.0          /* bf16 in and out: exact */
#define AB_BOUND_DROPOUT_BF16 4e-3       /* 2^-8 (1 + 1e-6) + 1e-6 */
#define AB_BOUND_MATMUL_BF16 4.1e-3      /* 2^-8 (1 + 1e-4) + 1e-4 (--backward: dA, dB) */
#define AB_BOUND_DECODE_BF16 4.1e-3      /* a bf16 cache and q read exactly; bf16 out as above */
/* sdpa's bf16 out against the reference's once-rounded bf16 out: one bf16
 * spacing (2^-7 of the largest; f16's twin is 2^-10): both round, by the same
 * rule, values up to the f32 bound apart, which may straddle a midpoint */
#define AB_BOUND_SDPA_BF16 8e-3          /* 2^-7 (1 + 1e-4) + 1e-4 */
#define AB_BOUND_SDPA 1e-4               /* two chained reductions */
#define AB_BOUND_SDPA_FP16 2e-3          /* --fp16: f16 out, 2 f16 ulps (2^-10) of the largest output */
#define AB_BOUND_DECODE 1e-4             /* split keys, then a merge */
#define AB_BOUND_DECODE_FP16 2e-3        /* --fp16: f16 out, 2 f16 ulps (2^-10) of the largest output */
#define AB_BOUND_ATTENTION 1e-4          /* Keras Attention */
#define AB_BOUND_ADDITIVE_ATTENTION 1e-4 /* Keras AdditiveAttention */
#define AB_BOUND_BAHDANAU 2e-4           /* two projections, then additive attention */
#define AB_BOUND_MHA 2e-4                /* four projections around SDPA */
#define AB_BOUND_MHA_FP16 7.8e-3         /* --fp16: 8 f16 epsilons (2^-10), f16 intermediates (vkattn/mha.h) */
#define AB_BOUND_LAYER_FP16 7.8e-3       /* --fp16 attention, additive_attention, bahdanau: likewise */
/* --dtype bf16: the f16 ones' twins, 8 bf16 epsilons (2^-7, bf16's spacing at
 * 1), the layers' stated bf16 bound (vkattn/attention.h, vkattn/mha.h) */
#define AB_BOUND_MHA_BF16 6.25e-2        /* bf16 intermediates, as mha --fp16's */
#define AB_BOUND_LAYER_BF16 6.25e-2      /* attention, additive_attention, bahdanau */

/* --backward (and mha --train-step): every input and weight gradient, each
 * against its own largest |ref| (docs/ATTNBENCH.md) */
#define AB_BOUND_ATTENTION_BACKWARD 1e-4
#define AB_BOUND_ADDITIVE_ATTENTION_BACKWARD 1e-4
#define AB_BOUND_BAHDANAU_BACKWARD 2e-4
#define AB_BOUND_MHA_BACKWARD 2e-4
/* sdpa --backward --fp16: f16 gradients each rounded once (one f16 spacing,
 * 2^-10, of the largest) over the f32 backward's 1e-4, with room for the f16
 * forward output the fused path reads for rowsum(dO * O) */
#define AB_BOUND_SDPA_BACKWARD_FP16 2e-3
/* --dtype bf16: each gradient rounded once to nearest even by the library
 * (half a bf16 spacing, 2^-8 of the largest), as much again for the bf16 out
 * the fused path reads for rowsum(dO * O) (4.1e-3 measured at the CTest
 * case's shape, 2.4e-3 on the chained path), over the f32 backward's 1e-4 */
#define AB_BOUND_SDPA_BACKWARD_BF16 8e-3 /* 2^-7 (1 + 1e-4) + 1e-4 */
/* the layers' --backward --fp16: the multi-head layers keep f16 projections,
 * heads and context, so 8 f16 epsilons (2^-10) as their f16 forward
 * (tests/gpu/test_mha_backward.c); the single-head layers recompute in f32
 * from the f16 values, so their f32 bound (<= 2e-4) plus one f16 rounding of
 * each gradient (2^-11), with room for the bench's longer reductions */
#define AB_BOUND_MHA_BACKWARD_FP16 7.8e-3
#define AB_BOUND_LAYER_BACKWARD_FP16 1e-3
/* --backward --dtype bf16: the twins, bf16's 2^-7 for f16's 2^-10. The
 * multi-head layers 8 bf16 epsilons (8 * 2^-7, vkattn/layer_common.h's bf16 backward
 * bound); the single-head layers the f16 bound's f32 part (1e-3 - 2^-11) plus
 * one bf16 rounding of each gradient, half a spacing (2^-8): 4.42e-3 */
#define AB_BOUND_MHA_BACKWARD_BF16 6.25e-2
#define AB_BOUND_LAYER_BACKWARD_BF16 4.42e-3

#endif
