#version 450
// Additive (tanh) scores, S (B, Tq, Tv):
//   S[b,i,j] = outer * sum_d s_d * tanh(inner * (q[b,i,d] + k[b,j,d]))
// A workgroup computes a TQ x TV tile of S for one batch (z). The dim axis is
// walked in chunks of DK: each chunk of the tile's TQ q rows and TV k rows (and
// of s) is staged in shared memory once, then every invocation computes its
// RQ x RV outputs from shared memory only. Each pair costs DK tanh calls per
// chunk, so the kernel is compute bound and the staging is cheap by comparison.
// Tile sizes are specialization constants the host picks from the device's
// limits; nothing here assumes a subgroup size. Out-of-range rows and dims load
// as 0, and tanh(0) = 0 with s = 0, so padding adds nothing. Query rows
// [row_begin, tq) start at workgroup y = 0: the host may split the rows over
// several dispatches for a watchdog budget, with identical results.
#extension GL_GOOGLE_include_directive : require
#include "additive_iface.h"

// specialization constants: ids and meanings in additive_iface.h
layout(constant_id = VKA_ADDITIVE_SPEC_TQ) const uint TQ = 64;
layout(constant_id = VKA_ADDITIVE_SPEC_TV) const uint TV = 64;
layout(constant_id = VKA_ADDITIVE_SPEC_DK) const uint DK = 32;
layout(constant_id = VKA_ADDITIVE_SPEC_RQ) const uint RQ = 4;
layout(constant_id = VKA_ADDITIVE_SPEC_RV) const uint RV = 4;
layout(constant_id = VKA_ADDITIVE_SPEC_HAS_SCALE) const bool HAS_SCALE = false;
// invocations = (TQ / RQ) * (TV / RV), set by the host
layout(local_size_x_id = VKA_ADDITIVE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer QBuf { float q[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k[]; };
layout(std430, binding = 2) readonly buffer SBuf { float svec[]; };
layout(std430, binding = 3) writeonly buffer OBuf { float scores[]; };

layout(push_constant) uniform Push { VKA_ADDITIVE_PUSH } p;

// Stored dim-major (column of the tile per d) so the inner loop reads RQ (RV)
// values of one d; +1 padding keeps those reads on distinct banks on GPUs.
// The host computes this footprint as 4 * DK * (TQ + TV + 3) bytes.
shared float qs[DK * (TQ + 1)];
shared float ks[DK * (TV + 1)];
shared float ss[DK];

#include "tanh_robust.glsl"

void main()
{
    const uint threads = (TQ / RQ) * (TV / RV);
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = p.row_begin + gl_WorkGroupID.y * TQ;
    const uint col0 = gl_WorkGroupID.x * TV;
    const uint b = gl_WorkGroupID.z;
    const uint q_off = b * p.tq * p.dim;
    const uint k_off = b * p.tv * p.dim;

    const uint tr = tid / (TV / RV); // this invocation's rows: tr + r * (TQ / RQ)
    const uint tc = tid % (TV / RV); // columns: tc + c * (TV / RV)

    float acc[RQ][RV];
    for (uint r = 0; r < RQ; r++)
        for (uint c = 0; c < RV; c++)
            acc[r][c] = 0.0;

    for (uint d0 = 0; d0 < p.dim; d0 += DK) {
        // Consecutive invocations read consecutive elements of a row.
        for (uint idx = tid; idx < TQ * DK; idx += threads) {
            uint m = idx / DK, d = idx % DK;
            uint gm = row0 + m, gd = d0 + d;
            float v = 0.0;
            if (gm < p.row_end && gd < p.dim)
                v = q[q_off + gm * p.dim + gd];
            qs[d * (TQ + 1) + m] = v;
        }
        for (uint idx = tid; idx < TV * DK; idx += threads) {
            uint n = idx / DK, d = idx % DK;
            uint gn = col0 + n, gd = d0 + d;
            float v = 0.0;
            if (gn < p.tv && gd < p.dim)
                v = k[k_off + gn * p.dim + gd];
            ks[d * (TV + 1) + n] = v;
        }
        if (HAS_SCALE)
            for (uint d = tid; d < DK; d += threads)
                ss[d] = d0 + d < p.dim ? svec[d0 + d] : 0.0;
        barrier();

        // The chunk's length is uniform, so the shorter last chunk costs no
        // divergence and a small dim does not pay for a whole DK of padding.
        const uint dn = min(DK, p.dim - d0);
        for (uint d = 0; d < dn; d++) {
            float qv[RQ], kv[RV];
            for (uint r = 0; r < RQ; r++)
                qv[r] = qs[d * (TQ + 1) + tr + r * (TQ / RQ)];
            for (uint c = 0; c < RV; c++)
                kv[c] = ks[d * (TV + 1) + tc + c * (TV / RV)];
            const float s = HAS_SCALE ? ss[d] : 1.0;
            for (uint r = 0; r < RQ; r++)
                for (uint c = 0; c < RV; c++)
                    acc[r][c] = fma(s, tanh_robust(p.inner * (qv[r] + kv[c])), acc[r][c]);
        }
        barrier();
    }

    for (uint r = 0; r < RQ; r++) {
        uint gm = row0 + tr + r * (TQ / RQ);
        if (gm >= p.row_end)
            continue;
        uint o_off = (b * p.tq + gm) * p.tv;
        for (uint c = 0; c < RV; c++) {
            uint gn = col0 + tc + c * (TV / RV);
            if (gn < p.tv)
                scores[o_off + gn] = p.outer * acc[r][c];
        }
    }
}
