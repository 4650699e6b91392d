#version 450
// Probe: does the shader compiler (and spirv-val) take GL_NV_cooperative_matrix2
// (tensor layouts, workgroup scope)? cmake/ShaderFamilies.cmake builds the
// *_coopmat2_nv.comp kernels only if so.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(binding = 0) buffer B { float16_t x[]; };
layout(binding = 1) buffer C { float y[]; };
void main()
{
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, 20, 20);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> a;
    coopMatLoadTensorNV(a, x, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseB> b;
    coopMatLoadTensorNV(b, x, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    c = coopMatMulAdd(a, b, c);
    coopMatStoreTensorNV(c, y, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
}
