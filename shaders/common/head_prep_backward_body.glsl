// head_prep_backward.comp's kernel, shared with head_prep_backward_f16.comp:
// the includer declares x, g, w, dw and the push constants and defines
// HB_X(i) and HB_W(i) (x[i] and w[i] as floats).

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
        const uint base = row * p.dim;
        float ss = 0.0, dot_gwx = 0.0;
        for (uint e = 0u; e < p.dim; e++) {
            const float xe = HB_X(base + e);
            ss += xe * xe;
            dot_gwx += g[base + e] * HB_W(e) * xe;
        }
        const float s = inversesqrt(ss / float(p.dim) + p.eps);
        const float k = s * s * s * dot_gwx / float(p.dim);
        for (uint e = 0u; e < p.dim; e++) {
            const float xe = HB_X(base + e), ge = g[base + e];
            dw[base + e] = ge * xe * s;
            g[base + e] = s * ge * HB_W(e) - k * xe;
        }
    }
}
