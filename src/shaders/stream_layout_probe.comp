#version 450
// Checks once per device that the implementation lays out a 16x8 f32
// cooperative-matrix accumulator as text_decode_stream.comp's fragment layer
// assumes (stream_layout_holds): one workgroup of one warp writes 1 if it
// does, 0 if not. Built only for devices with the 16x8x16 shape; the runtime
// folds the answer into DeviceCaps::coop_accumulator_quad.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable

#include "stream_interface.h"

layout(local_size_x = FLASH_WARP) in;
layout(std430, binding = 0) writeonly buffer Result { uint holds; };

shared uvec4 tile_pool[STREAM_SCRATCH_WORDS];

#include "stream_fragment_coopmat.glsl"

void main() {
  const bool ok = stream_layout_holds(0);
  if (gl_LocalInvocationIndex == 0u) holds = ok ? 1u : 0u;
}
