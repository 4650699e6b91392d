// sink_rows.comp's kernel, shared with sink_rows_f16.comp: the includer
// declares sinks, out, lse_u and the push constants and defines
// SR_SCALE(i, f), out[i] *= f.

const uint NEG_INF_BITS = 0xFF800000u;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint r = gl_GlobalInvocationID.x; r < p.total; r += stride) {
        const float sink = sinks[(r / p.tq) % p.heads];
        const uint bits = lse_u[r];
        float f, lse;
        if (bits == NEG_INF_BITS) {
            f = 0.0;
            lse = sink;
        } else {
            const float l = uintBitsToFloat(bits);
            const float d = sink - l;
            const float e = exp(-abs(d)); // in (0, 1]: no overflow
            f = d > 0.0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
            lse = max(l, sink) + log(1.0 + e);
        }
        if (p.update_lse != 0u)
            lse_u[r] = floatBitsToUint(lse);
        for (uint e = 0u; e < p.width; e++)
            SR_SCALE(r * p.width + e, f);
    }
}
