#version 450
// Keras's query_mask: data[r, e] *= (mask[r] != 0) for every row r of a
// (rows, width) tensor, in place. A multiply, not a select, as Keras does it:
// a NaN output row stays NaN even where the query is masked. A grid-stride
// loop lets the host cap the group count.

#extension GL_GOOGLE_include_directive : require
#include "rowmask_iface.h"
#include "mask.glsl"

// specialization constants: ids and meanings in rowmask_iface.h
layout(local_size_x_id = VKA_ROWMASK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer MaskBuf { float mask[]; };
layout(std430, binding = 1) buffer DataBuf { float data[]; };

layout(push_constant) uniform Push { VKA_ROWMASK_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        // a bit test: a NaN mask counts as nonzero (may attend) on every device
        const float keep = vka_mask_allows(mask[idx / p.width]) ? 1.0 : 0.0;
        data[idx] *= keep;
    }
}
