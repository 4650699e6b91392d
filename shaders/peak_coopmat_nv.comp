#version 450
// The device's cooperative-matrix ceiling (vkattn_measure_peak, where the
// context runs cooperative-matrix kernels): every subgroup multiplies f16
// 16x16 fragments held in registers into four independent f32 accumulators,
// with no memory traffic inside the loop, so the loop is bound by the
// matrix units' throughput (or by the driver's lowering of the extension).
// The accumulators are stored so the compiler cannot drop the work (each on
// its own: Debian 12's glslc crashes optimizing a sum of cooperative matrices).
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "peak_iface.h"

layout(local_size_x_id = VKA_PEAK_COOPMAT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) writeonly buffer OutBuf { float o[]; };

layout(push_constant) uniform Push { VKA_PEAK_FMA_PUSH } p;

void main()
{
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a =
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(float16_t(p.a));
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b =
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(float16_t(p.b));
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c0 = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c1 = c0, c2 = c0, c3 = c0;
    for (uint i = 0; i < p.iters; i++) {
        c0 = coopMatMulAddNV(a, b, c0);
        c1 = coopMatMulAddNV(a, b, c1);
        c2 = coopMatMulAddNV(a, b, c2);
        c3 = coopMatMulAddNV(a, b, c3);
    }
    const uint sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopMatStoreNV(c0, o, sg * 1024, 16, false);
    coopMatStoreNV(c1, o, sg * 1024 + 256, 16, false);
    coopMatStoreNV(c2, o, sg * 1024 + 512, 16, false);
    coopMatStoreNV(c3, o, sg * 1024 + 768, 16, false);
}
