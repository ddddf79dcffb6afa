#version 450
// Checks once per device that the implementation lays out a 16x16 f32
// cooperative-matrix accumulator as flash_fragment_coopmat.glsl assumes
// (frag_layout_holds): one workgroup of one warp writes 1 if it does, 0 if not.
// The runtime records the answer in DeviceCaps::coop_accumulator_quad and the
// planner runs the tensor-core flash rows only where it is 1.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#include "flash_interface.h"

layout(local_size_x = FLASH_WARP) in;
layout(std430, binding = 0) writeonly buffer Result { uint holds; };

shared uvec4 tile_pool[FLASH_FRAG * FLASH_FRAG / 4];

#include "flash_fragment_coopmat.glsl"

void main() {
  const bool ok = frag_layout_holds(0);
  if (gl_LocalInvocationIndex == 0u) holds = ok ? 1u : 0u;
}
