#version 450
// Probe: does the shader compiler (and spirv-val) take GL_KHR_cooperative_matrix?
// cmake/ShaderFamilies.cmake builds the *_coopmat_khr.comp kernels only if so.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(binding = 0) buffer B { float16_t x[]; };
layout(binding = 1) buffer C { float y[]; };
void main()
{
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    coopMatLoad(a, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, x, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    c = coopMatMulAdd(a, b, c);
    coopMatStore(c, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
