// The masked softmax kernel, shared by shaders/softmax.comp (one binding per
// operand), shaders/softmax_packed.comp (bias, value mask and explicit mask
// packed behind one binding, for devices with 4 storage buffers per stage)
// and shaders/softmax_f16.comp (16-bit storage: f16 scores, bias and out).
// Include after #version, the bindings, and these macros:
//   VKA_SCORE(i)  element i of the scores as float (unused IN_PLACE)
//   VKA_OUT_LOAD(i)  VKA_OUT_STORE(i, v)  the output array, as float
//   VKA_BIAS(i)  VKA_VMASK(i)  VKA_MASK(i)  element i of each side input
// They may use the f16 specialization constants declared below. Each output
// element is stored by one invocation (packed halves are never written here:
// the host sends an f16 out through f32 scratch where 16-bit storage is
// missing, src/ops/softmax.c).
// Both read the push block below; the packed one uses its *_off fields.
//
// Masked softmax over the last axis of scores (B, H, Tq, Tv), as
// vkattn_reference_softmax computes it (src/reference/softmax.c):
//   logit = score * scale + bias;  masked keys -> weight exactly 0;
//   w = exp(logit - max) / sum;    rows with nothing allowed -> 0 or 1/Tv.
//
// Layout: a workgroup of WG invocations handles WG / G rows, G invocations per
// row (G is a power of two; short rows share a workgroup). Invocation `lane`
// of a row handles keys lane, lane + G, ...
//
// Two paths, chosen on the host by the spec constant CACHE:
// - CACHE > 0 (the row fits in shared memory): one read of the scores and
//   bias. Pass 1 computes each logit once, keeps it in shared memory and
//   folds it into the invocation's running (max, sum); pass 2 writes from
//   shared memory.
// - CACHE == 0 (any Tv, up to the 32-bit index limit): pass 1 reads the inputs
//   for the running (max, sum), pass 2 reads them again and writes.
// Keys past a causal limit are never read.
// - SOFTMAX_SPLIT 1 (shaders/softmax_split.comp, the GPU tuning's very long
//   rows): each row is split into chunks of split_len keys, one workgroup
//   per chunk, so that a few long rows still fill a GPU. Two dispatches: phase
//   0 leaves each chunk's (max, sum) in part[]; phase 1 merges a row's chunks
//   (the same online step) and writes its own chunk. Inputs are read twice,
//   as on the multi-pass path.
//
// The running (max, sum) is the "online softmax" pair: adding x to (m, s)
// gives (max(m, x), s * exp(m - max) + exp(x - max)), one exp per element;
// pairs of invocations merge the same way through shared memory (fan-in
// FAN, no subgroup operations), or, with SOFTMAX_SUBGROUP 1
// (shaders/softmax_sg.comp, chosen by the GPU tuning), by a butterfly of
// subgroup shuffles within each subgroup and then through shared memory
// across the subgroups of a row. The shuffle path works for any subgroup size
// (a power of two); invocations are numbered by subgroup, so a row's lanes
// fill whole subgroups, or share one with whole other rows.
//
// No inf or NaN is ever computed: a Vulkan compiler may assume none occurs
// (SPIR-V float controls), so the kernel never relies on their arithmetic.
// - Overflow: the reference works in double, where score * scale + bias is
//   always finite for finite inputs. Here logits are carried divided by 2^k,
//   k >= 1 chosen on the host from |scale| and the presence of a bias, so that
//   |y| <= FLT_MAX / 2 for all finite inputs: y = score * scale_y + bias *
//   bias_y. Scaling by 2^k is exact, so y is the fp32 logit / 2^k: the same
//   rounding as the plain formula. Any difference of two logits is then
//   finite; it is clamped at diff_min (exp of it is below 2^-160) before it is
//   scaled back inside the exponent: exp(x - max) = exp2((y - m) * exp_c1 *
//   exp_c2), exp_c1 * exp_c2 = 2^k * log2(e) (two factors so k may exceed
//   127), and an exponent below -150 selects an exact 0.
// - Running maxima start at the finite -FLT_MAX / 2, below every logit.
// - Masked keys and -inf logits are a finite sentinel (SKIP, below every
//   logit) and take no part in any arithmetic.
// - Non-finite inputs are classified from their bits, before any arithmetic,
//   as the reference's double arithmetic would treat them: an allowed NaN or
//   +inf logit (NaN score or bias, +-inf score times 0 or against an opposite
//   infinite bias, ...) marks its row, whose allowed weights are then stored as
//   the NaN bit pattern and masked ones 0; other rows are untouched. A row
//   whose allowed logits are all -inf, or with no allowed key, has sum 0 and
//   gets the masked-row policy. The running sum of a marked row is -1 (a real
//   sum is >= 0), so the mark travels through the reduction.
// Every output element is written once; every input element is read once
// (scores and bias twice on the multi-pass path, masks twice on both).

#ifndef SOFTMAX_SUBGROUP // 1: the including shader enables the subgroup extensions
#define SOFTMAX_SUBGROUP 0
#endif
#ifndef SOFTMAX_SPLIT // 1: the including shader declares vec2 part[] (binding 5)
#define SOFTMAX_SPLIT 0
#endif

#include "mask.glsl"
#include "softmax_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in softmax_iface.h
layout(constant_id = VKA_SOFTMAX_SPEC_WG) const uint WG = 256;
layout(constant_id = VKA_SOFTMAX_SPEC_G) const uint G = 256;
layout(constant_id = VKA_SOFTMAX_SPEC_CACHE) const uint CACHE = 0;
layout(constant_id = VKA_SOFTMAX_SPEC_IN_PLACE) const bool IN_PLACE = false;
layout(constant_id = VKA_SOFTMAX_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_SOFTMAX_SPEC_HAS_VMASK) const bool HAS_VMASK = false;
layout(constant_id = VKA_SOFTMAX_SPEC_HAS_MASK) const bool HAS_MASK = false;
layout(constant_id = VKA_SOFTMAX_SPEC_SCORES_TYPE) const uint SCORES_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_SOFTMAX_SPEC_BIAS_TYPE) const uint BIAS_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_SOFTMAX_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;
layout(local_size_x_id = VKA_SOFTMAX_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

const uint ROWS = WG / G; // rows per workgroup
const uint FAN = 16;      // reduction fan-in: WG 256 reduces in 2 barrier steps

layout(push_constant) uniform Push { VKA_SOFTMAX_PUSH } p;

shared float red_m[WG];
shared float red_s[WG];
shared float cache[ROWS * CACHE + 1]; // +1: a valid size when CACHE == 0

const float FLT_MAX = 3.402823466e38;
const float M_START = -0.5 * FLT_MAX; // <= every logit y
const float SKIP = -FLT_MAX;          // no weight: below every logit, never subtracted
const float EXP_ZERO = -150.0;        // exp2 below this selects an exact 0
const uint QNAN_BITS = 0x7fc00000u;

// Classes of an input or logit, from its bits.
const uint CLS_FINITE = 0u, CLS_POS_INF = 1u, CLS_NEG_INF = 2u, CLS_NAN = 3u;

uint classify(float v)
{
    const uint b = floatBitsToUint(v);
    if ((b & 0x7f800000u) != 0x7f800000u)
        return CLS_FINITE;
    if ((b & 0x007fffffu) != 0u)
        return CLS_NAN;
    return (b >> 31) != 0u ? CLS_NEG_INF : CLS_POS_INF;
}

// The class of a + b given the classes of a and b (IEEE: inf - inf is NaN).
uint class_sum(uint a, uint b)
{
    if (a == CLS_FINITE)
        return b;
    if (b == CLS_FINITE || b == a)
        return a;
    return CLS_NAN;
}

// Where one row's operands start.
struct row_ctx {
    uint base;  // scores / out
    uint vbase; // value_mask
    uint bbase; // bias
    uint mbase; // explicit mask
};

float load_score(uint idx)
{
    return IN_PLACE ? VKA_OUT_LOAD(idx) : VKA_SCORE(idx);
}

// The value and explicit masks (the causal one is a loop bound).
bool masks_allow(row_ctx r, uint j)
{
    bool ok = true;
    if (HAS_VMASK)
        ok = vka_mask_allows(VKA_VMASK(r.vbase + j));
    if (HAS_MASK)
        ok = ok && vka_mask_allows(VKA_MASK(r.mbase + j));
    return ok;
}

// The logit of key j divided by 2^k; SKIP for a masked key or a -inf logit;
// for a NaN or +inf logit SKIP and `bad` set. Nothing non-finite reaches the
// arithmetic.
float logit(row_ctx r, uint j, inout bool bad)
{
    if (!masks_allow(r, j))
        return SKIP;
    const float score = load_score(r.base + j);
    uint cls = classify(score);
    if (cls != CLS_FINITE) // +-inf * scale: the sign of scale, NaN for 0
        cls = cls == CLS_NAN || p.scale_y == 0.0 ? CLS_NAN
              : (p.scale_y < 0.0) == (cls == CLS_POS_INF) ? CLS_NEG_INF : CLS_POS_INF;
    float bias = 0.0;
    if (HAS_BIAS) {
        bias = VKA_BIAS(r.bbase + j);
        cls = class_sum(cls, classify(bias));
    }
    if (cls == CLS_FINITE)
        return score * p.scale_y + bias * p.bias_y;
    bad = bad || cls != CLS_NEG_INF;
    return SKIP;
}

// exp(x - m) in true logit units for logits x <= m (divided by 2^k): the
// clamp keeps the product finite, the select makes tiny weights exactly 0
// (some drivers' exp2 of a very negative argument is ~1e-38, not 0).
float exp_below(float x, float m)
{
    const float t = max(x - m, p.diff_min) * p.exp_c1 * p.exp_c2;
    return t < EXP_ZERO ? 0.0 : exp2(t);
}

// (m, s) += w * exp(x - m): the online-softmax step, w = 1 for one logit or a
// partial sum when merging. One exp either way: it rescales whichever side
// has the smaller max. A negative s or w marks a row with a NaN logit.
void online_add(inout float m, inout float s, float x, float w)
{
    if (s < 0.0 || w < 0.0) {
        s = -1.0;
    } else if (x > m) {
        s = s * exp_below(m, x) + w;
        m = x;
    } else {
        s += w * exp_below(x, m);
    }
}

// Merges the (m, s) of the G invocations of each row; every invocation gets
// its row's total. Uniform control flow: G is a constant.
void reduce_row(uint tid, uint seg, uint lane, inout float m, inout float s)
{
    if (G == 1)
        return;
#if SOFTMAX_SUBGROUP
    // Partners of a butterfly compute the same merge (online_add is
    // symmetric up to the order of one addition), so every lane ends with
    // the same (m, s) bit for bit.
    const uint sg = gl_SubgroupSize;
    for (uint x = 1; x < G && x < sg; x *= 2) {
        const float om = subgroupShuffleXor(m, x), os = subgroupShuffleXor(s, x);
        online_add(m, s, om, os);
    }
    if (G <= sg)
        return;
    // G / sg subgroups per row: one partial each through shared memory
    if (gl_SubgroupInvocationID == 0) {
        red_m[gl_SubgroupID] = m;
        red_s[gl_SubgroupID] = s;
    }
    barrier();
    const uint first = seg * (G / sg);
    m = red_m[first];
    s = red_s[first];
    for (uint k = 1; k < G / sg; k++)
        online_add(m, s, red_m[first + k], red_s[first + k]);
    return;
#endif
    red_m[tid] = m;
    red_s[tid] = s;
    barrier();
    for (uint stride = 1; stride < G; stride *= FAN) {
        // Each lane that leads a group of FAN partials folds them into its own
        // slot; no one else reads that slot in this step, so one barrier suffices.
        if (lane % (stride * FAN) == 0) {
            for (uint k = 1; k < FAN && lane + k * stride < G; k++)
                online_add(m, s, red_m[tid + k * stride], red_s[tid + k * stride]);
            red_m[tid] = m;
            red_s[tid] = s;
        }
        barrier();
    }
    m = red_m[seg * G];
    s = red_s[seg * G];
}

void main()
{
#if SOFTMAX_SUBGROUP
    // a row's lanes must share subgroups: number invocations by subgroup
    const uint tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    const uint tid = gl_LocalInvocationID.x;
#endif
    const uint seg = tid / G, lane = tid % G;
#if SOFTMAX_SPLIT
    // G == WG: workgroup w handles keys [j0, j0 + split_len) of row w / chunks
    const uint wgi = gl_WorkGroupID.y * p.groups_x + gl_WorkGroupID.x;
    const uint row = wgi / p.split_chunks;
    const uint j0 = (wgi % p.split_chunks) * p.split_len, j_end = j0 + p.split_len;
#else
    const uint row = (gl_WorkGroupID.y * p.groups_x + gl_WorkGroupID.x) * ROWS + seg;
    const uint j0 = 0u, j_end = 0xffffffffu;
#endif
    // Rows past the end still take part in the barriers, with nothing to do.
    const bool live = row < p.rows;

    row_ctx r = row_ctx(0u, 0u, 0u, 0u);
    uint beg = 0u, lim = 0u; // keys beg <= j < lim pass causal and the window
    if (live) {
        const uint i = row % p.tq, bh = row / p.tq;
        const uint h = bh % p.heads, b = bh / p.heads;
        r.base = row * p.tv;
        r.vbase = p.vmask_off + b * p.tv;
        r.bbase = p.bias_off + vka_bcast_row(uvec3(p.bias_b, p.bias_h, p.bias_i), b, h, i);
        r.mbase = p.mask_off + vka_bcast_row(uvec3(p.mask_b, p.mask_h, p.mask_i), b, h, i);
        beg = vka_key_begin(p.causal, p.window, i, p.tq, p.tv);
        lim = vka_key_end(p.causal, p.window, i, p.tq, p.tv);
    }

    // Pass 1: running (max, sum) of the allowed finite logits.
    float m = M_START, s = 0.0;
    if (SOFTMAX_SPLIT == 0 || p.split_phase == 0) {
        bool bad = false;
        for (uint j = j0 + lane; j < min(lim, j_end); j += G) {
            if (j < beg)
                continue;
            const float y = logit(r, j, bad);
            if (CACHE > 0)
                cache[seg * CACHE + j] = y;
            if (y != SKIP)
                online_add(m, s, y, 1.0);
        }
        if (bad)
            s = -1.0;
        reduce_row(tid, seg, lane, m, s);
    }
#if SOFTMAX_SPLIT
    // phase 0 leaves its chunk's (max, sum); phase 1 merges the row's chunks
    // (in chunk order: every workgroup of a row gets the same totals)
    if (p.split_phase == 0) {
        if (live && tid == 0)
            part[row * p.split_chunks + wgi % p.split_chunks] = vec2(m, s);
        return;
    }
    if (live)
        for (uint c = 0; c < p.split_chunks; c++) {
            const vec2 ms = part[row * p.split_chunks + c];
            online_add(m, s, ms.x, ms.y);
        }
#endif

    // s >= 1 for a row with a finite allowed logit (its max contributes
    // exp(0)); 0 when nothing finite is allowed; -1 for a marked row.
    const bool nan_row = s < 0.0;
    const bool empty = s == 0.0;
    const float inv = nan_row || empty ? 0.0 : 1.0 / s;

    // Pass 2: every key of the row is written, masked ones included.
    const uint n = live ? min(p.tv, j_end) : 0u;
    for (uint j = j0 + lane; j < n; j += G) {
        float w = 0.0;
        if (nan_row) {
            if (j >= beg && j < lim && masks_allow(r, j))
                w = uintBitsToFloat(QNAN_BITS); // stored, never computed with
        } else if (empty) {
            w = p.masked_w;
        } else if (j >= beg && j < lim) {
            bool unused = false;
            const float y = CACHE > 0 ? cache[seg * CACHE + j] : logit(r, j, unused);
            if (y != SKIP)
                w = exp_below(y, m) * inv;
        }
        VKA_OUT_STORE(r.base + j, w);
    }
}
