#version 450
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
// - CACHE > 0 (the row fits in shared memory): one read of the inputs. Pass 1
//   computes each logit once, keeps it in shared memory and folds it into
//   the invocation's running (max, sum); pass 2 writes from shared memory.
// - CACHE == 0 (any Tv, up to the 32-bit index limit): pass 1 reads the inputs
//   for the running (max, sum), pass 2 reads them again and writes.
// Either way every output element is written once and every input element is
// read once (twice on the multi-pass path); keys past a causal limit are
// never read.
//
// The running (max, sum) is the "online softmax" pair: adding x to (m, s)
// gives (max(m, x), s * exp(m - max) + exp(x - max)), one exp per element;
// pairs of invocations merge the same way through shared memory (fan-in
// FAN, no subgroup operations).
//
// Overflow: the reference works in double, where score * scale + bias is
// always finite for finite inputs. Here the logits are carried divided by a
// power of two, 2^k, chosen on the host from |scale| and the presence of a
// bias so that even FLT_MAX * scale + FLT_MAX stays finite: y = score *
// scale_y + bias * bias_y with scale_y = scale / 2^k, bias_y = 1 / 2^k. Scaling
// by 2^k is exact, so y is exactly the fp32 logit / 2^k: the same rounding
// as the plain formula, without the overflow. Differences y - m (<= 0) are
// scaled back inside the exponent: exp(x - max) = exp2((y - m) * exp_c1 *
// exp_c2) with exp_c1 * exp_c2 = 2^k * log2(e) (two factors so k may exceed
// 127); a difference too large for fp32 is -inf, whose exp2 is the exact 0.
//
// Non-finite values, as in the reference: a masked key's logit is -inf here
// (weight 0). An allowed NaN or +inf logit makes every allowed weight of its
// row NaN and leaves masked ones 0; other rows are untouched. A row whose
// allowed logits are all -inf, or with no allowed key, has sum 0 and gets the
// masked-row policy. The running max starts at -FLT_MAX, never -inf, so no
// -inf - -inf = NaN can arise from masking.
#extension GL_GOOGLE_include_directive : require
#include "mask.glsl"

layout(constant_id = 0) const uint WG = 256;   // invocations per workgroup
layout(constant_id = 1) const uint G = 256;    // invocations per row: power of two, divides WG
layout(constant_id = 2) const uint CACHE = 0;  // logits cached per row (>= Tv); 0 = multi-pass
layout(constant_id = 3) const bool IN_PLACE = false; // scores are read from the out binding
layout(constant_id = 4) const bool HAS_BIAS = false;
layout(constant_id = 5) const bool HAS_VMASK = false;
layout(constant_id = 6) const bool HAS_MASK = false;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

const uint ROWS = WG / G; // rows per workgroup
const uint FAN = 16;      // reduction fan-in: WG 256 reduces in 2 barrier steps

layout(std430, binding = 0) readonly buffer ScoreBuf { float scores[]; }; // unused IN_PLACE
layout(std430, binding = 1) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 2) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 3) readonly buffer MaskBuf { float mask_in[]; };
// Not writeonly: the IN_PLACE variant reads the scores from here. Each element
// is read and then written by the same invocation, so no barrier is needed.
layout(std430, binding = 4) buffer OutBuf { float outv[]; };

layout(push_constant) uniform Push {
    uint rows;     // B * H * Tq
    uint heads, tq, tv;
    uint causal;   // VKA_CAUSAL_*
    uint bias_b, bias_h, bias_i; // element strides, 0 = broadcast (mask.glsl)
    uint mask_b, mask_h, mask_i;
    uint groups_x; // workgroups along x; the row index spreads over x and y
    float scale_y; // scale / 2^k
    float bias_y;  // 1 / 2^k
    float exp_c1;  // exp_c1 * exp_c2 = 2^k * log2(e)
    float exp_c2;
    float masked_w; // weight of every key of a row with nothing allowed: 0 or 1/Tv
} p;

shared float red_m[WG];
shared float red_s[WG];
shared float cache[ROWS * CACHE + 1]; // +1: a valid size when CACHE == 0

const float FLT_MAX = 3.402823466e38;
#define NEG_INF uintBitsToFloat(0xff800000u)
#define QNAN uintBitsToFloat(0x7fc00000u)

// Where one row's operands start.
struct row_ctx {
    uint base;  // scores / out
    uint vbase; // value_mask
    uint bbase; // bias
    uint mbase; // explicit mask
};

float load_score(uint idx)
{
    return IN_PLACE ? outv[idx] : scores[idx];
}

// The value and explicit masks (the causal one is a loop bound).
bool masks_allow(row_ctx r, uint j)
{
    bool ok = true;
    if (HAS_VMASK)
        ok = vka_mask_allows(vmask_in[r.vbase + j]);
    if (HAS_MASK)
        ok = ok && vka_mask_allows(mask_in[r.mbase + j]);
    return ok;
}

// The logit of key j divided by 2^k, or -inf for a masked key.
float logit(row_ctx r, uint j)
{
    float y = load_score(r.base + j) * p.scale_y;
    if (HAS_BIAS)
        y += bias_in[r.bbase + j] * p.bias_y;
    return masks_allow(r, j) ? y : NEG_INF;
}

// (m, s) += w * exp(x - m): the online-softmax step, w = 1 for one logit or a
// partial sum when merging. One exp either way: exp(-|x - m|) is the factor
// that rescales whichever side has the smaller max.
void online_add(inout float m, inout float s, float x, float w)
{
    float e = exp2(-abs(x - m) * p.exp_c1 * p.exp_c2);
    if (x > m) {
        s = s * e + w;
        m = x;
    } else {
        s += w * e; // NaN x (x > m is false) lands here: s becomes NaN
    }
}

// Merges the (m, s) of the G invocations of each row; every invocation gets
// its row's total. Uniform control flow: G is a constant.
void reduce_row(uint tid, uint seg, uint lane, inout float m, inout float s)
{
    if (G == 1)
        return;
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
    const uint tid = gl_LocalInvocationID.x;
    const uint seg = tid / G, lane = tid % G;
    const uint row = (gl_WorkGroupID.y * p.groups_x + gl_WorkGroupID.x) * ROWS + seg;
    // Rows past the end still take part in the barriers, with nothing to do.
    const bool live = row < p.rows;

    row_ctx r = row_ctx(0u, 0u, 0u, 0u);
    uint lim = 0u; // keys j < lim pass the causal mask
    if (live) {
        const uint i = row % p.tq, bh = row / p.tq;
        const uint h = bh % p.heads, b = bh / p.heads;
        r.base = row * p.tv;
        r.vbase = b * p.tv;
        r.bbase = vka_bcast_row(uvec3(p.bias_b, p.bias_h, p.bias_i), b, h, i);
        r.mbase = vka_bcast_row(uvec3(p.mask_b, p.mask_h, p.mask_i), b, h, i);
        lim = vka_causal_limit(p.causal, i, p.tq, p.tv);
    }

    // Pass 1: running (max, sum) of the allowed logits.
    float m = -FLT_MAX, s = 0.0;
    for (uint j = lane; j < lim; j += G) {
        float y = logit(r, j);
        if (CACHE > 0)
            cache[seg * CACHE + j] = y;
        online_add(m, s, y, 1.0);
    }
    reduce_row(tid, seg, lane, m, s);

    // s >= 1 for a row with a finite allowed logit (its max contributes
    // exp(0)); 0 when nothing finite is allowed; NaN for an allowed NaN; an
    // allowed +inf leaves m = +inf, which the reference's inf - inf makes NaN.
    const bool nan_row = !(s >= 0.0) || isinf(m);
    const bool empty = s == 0.0;
    const float inv = 1.0 / s;

    // Pass 2: every key of the row is written, masked ones included.
    const uint n = live ? p.tv : 0u;
    for (uint j = lane; j < n; j += G) {
        float w = 0.0;
        if (nan_row) {
            if (j < lim && masks_allow(r, j))
                w = QNAN;
        } else if (empty) {
            w = p.masked_w;
        } else if (j < lim) {
            float y = CACHE > 0 ? cache[seg * CACHE + j] : logit(r, j);
            w = exp2((y - m) * p.exp_c1 * p.exp_c2) * inv;
        }
        outv[r.base + j] = w;
    }
}
