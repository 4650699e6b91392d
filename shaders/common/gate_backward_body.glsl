// gate_backward.comp's loop; the includer declares the bindings (dy, x, g,
// d_out), OUT_DG and the push constants, and defines VKA_X(i) and VKA_G(i),
// x[i] and g[i] as floats.
#include "gate_fn.glsl"

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const float s = vka_sigmoid(VKA_G(idx));
        d_out[idx] = OUT_DG ? dy[idx] * VKA_X(idx) * s * (1.0 - s) : dy[idx] * s;
    }
}
