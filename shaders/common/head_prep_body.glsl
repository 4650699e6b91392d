// head_prep.comp's kernel, shared with head_prep_f16.comp: the includer
// declares x (read and written in place), w, pos, lengths, inv_freq and the
// push constants, and defines HP_X(i) (x[i] as a float), HP_SET(i, v) and
// HP_W(i) (w[i] as a float).

// 2 pi as a short high part (k * HI exact for k < 2^16) and the rest
const float TWO_PI_HI = 6.28125;
const float TWO_PI_LO = 1.9353071795864769e-3;
const float INV_TWO_PI = 0.15915494309189535;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
        const uint base = row * p.dim;
        const uint t = row % p.seq, b = row / p.seq / p.heads;
        float s = 1.0;
        if (p.use_norm != 0u) {
            float ss = 0.0;
            for (uint e = 0u; e < p.dim; e++)
                ss += HP_X(base + e) * HP_X(base + e);
            s = inversesqrt(ss / float(p.dim) + p.eps);
        }
        const uint rot = p.use_rope != 0u ? p.rotary_dim : 0u, half_rot = rot / 2u;
        float position = float(t);
        if (p.pos_mode == VKA_HEAD_PREP_POS_TENSOR)
            position = pos[b * p.seq + t];
        else if (p.pos_mode == VKA_HEAD_PREP_POS_LENGTHS)
            position = float(lengths[b] + t);
        for (uint i = 0u; i < half_rot; i++) {
            const uint ia = p.interleaved != 0u ? 2u * i : i;
            const uint ib = p.interleaved != 0u ? 2u * i + 1u : i + half_rot;
            float x1 = HP_X(base + ia) * s, x2 = HP_X(base + ib) * s;
            if (p.use_norm != 0u) {
                x1 *= HP_W(ia);
                x2 *= HP_W(ib);
            }
            const float angle = (p.inverse != 0u ? -position : position) * inv_freq[i];
            const float k = round(angle * INV_TWO_PI);
            const float r = (angle - k * TWO_PI_HI) - k * TWO_PI_LO;
            const float c = cos(r), sn = sin(r);
            HP_SET(base + ia, x1 * c - x2 * sn);
            HP_SET(base + ib, x2 * c + x1 * sn);
        }
        if (p.use_norm != 0u)
            for (uint e = rot; e < p.dim; e++)
                HP_SET(base + e, HP_X(base + e) * s * HP_W(e));
    }
}
