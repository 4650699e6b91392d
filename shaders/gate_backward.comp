#version 450
// The gradient of y = x * sigmoid(g) (gate.comp): with s = sigmoid(g),
//   dx[i] = dy[i] * s                 (OUT_DG false)
//   dg[i] = dy[i] * x[i] * s * (1 - s)  (OUT_DG true)
// One output per dispatch, so at most 4 storage buffers (the phone minimum,
// maxPerStageDescriptorStorageBuffers = 4); three loads and one store per
// element (a register budget of a few floats). A grid-stride loop lets the
// host cap the group count. gate_backward_f16.comp: x and g f16.
#extension GL_GOOGLE_include_directive : require
#include "gate_iface.h"

// specialization constants: ids and meanings in gate_iface.h
layout(local_size_x_id = VKA_GATE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_GATE_SPEC_OUT_DG) const bool OUT_DG = false;

layout(std430, binding = 0) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 1) readonly buffer XBuf { float x[]; };
layout(std430, binding = 2) readonly buffer GBuf { float g[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float d_out[]; };

layout(push_constant) uniform Push { VKA_GATE_PUSH } p;

#define VKA_X(i) x[i]
#define VKA_G(i) g[i]
#include "gate_backward_body.glsl"
