#version 450
// Compiles only with a glslang that knows GL_NV_cooperative_matrix2 (cmake/Shaders.cmake).
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Values { float16_t values[]; };
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> m;
  coopMatLoadTensorNV(m, values, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
}
