# Text-attention shader modules: one source, build flavours by -D.
# The subgroup flavour is a separate module so the base module never declares
# a capability a device lacks.
vkattn_shader(text_attention src/shaders/text_attention.comp)
vkattn_shader(text_attention_subgroup src/shaders/text_attention.comp USE_SUBGROUP=1)
vkattn_shader(text_split_reduce src/shaders/text_split_reduce.comp)
vkattn_shader(text_decode_online src/shaders/text_decode_online.comp)  # decode_chunked: no subgroup ops
vkattn_shader(text_decode_online_subgroup src/shaders/text_decode_online.comp USE_SUBGROUP=1)
vkattn_shader(text_decode_flash src/shaders/text_decode_flash.comp)  # decode_flash: needs subgroup shuffles
# Tensor-core flash prefill: the GL_NV_cooperative_matrix build (created only
# on devices with the extension) and the plain-GLSL fragment build of the same
# source, which any device runs (CI checks the engine with it on lavapipe).
vkattn_shader(flash_coopmat src/shaders/flash_coopmat.comp)
vkattn_shader(flash_coopmat_emulated src/shaders/flash_coopmat.comp FLASH_EMULATED=1)
# Flash attention on workgroup-scope matrices (GL_NV_cooperative_matrix2),
# built where a glslang knows the extension, and its plain-GLSL build.
vkattn_shader_coopmat2(flash_workgroup src/shaders/flash_workgroup.comp)
vkattn_shader(flash_workgroup_emulated src/shaders/flash_workgroup.comp WG_EMULATED=1)
vkattn_shader(flash_layout_probe src/shaders/flash_layout_probe.comp)  # the layout flash_coopmat assumes, checked per device
# Tensor-core decode with K/V fragments streamed from memory, and its
# plain-GLSL fragment build; the 16x8 accumulator layout it assumes, checked
# per device.
vkattn_shader(text_decode_stream src/shaders/text_decode_stream.comp)
vkattn_shader(text_decode_stream_emulated src/shaders/text_decode_stream.comp STREAM_EMULATED=1)
vkattn_shader(stream_layout_probe src/shaders/stream_layout_probe.comp)
# The same kernels reading K/V through buffer device addresses, for pools past
# one storage-buffer binding (created only on devices with bufferDeviceAddress;
# TextVariant::module_by_address names them).
vkattn_shader(text_attention_kv_address src/shaders/text_attention.comp KV_BY_ADDRESS=1)
vkattn_shader(text_attention_subgroup_kv_address src/shaders/text_attention.comp USE_SUBGROUP=1 KV_BY_ADDRESS=1)
vkattn_shader(text_decode_online_kv_address src/shaders/text_decode_online.comp KV_BY_ADDRESS=1)
vkattn_shader(text_decode_online_subgroup_kv_address src/shaders/text_decode_online.comp USE_SUBGROUP=1 KV_BY_ADDRESS=1)
vkattn_shader(text_decode_flash_kv_address src/shaders/text_decode_flash.comp KV_BY_ADDRESS=1)
vkattn_shader(flash_coopmat_kv_address src/shaders/flash_coopmat.comp KV_BY_ADDRESS=1)
vkattn_shader(flash_coopmat_emulated_kv_address src/shaders/flash_coopmat.comp FLASH_EMULATED=1 KV_BY_ADDRESS=1)
vkattn_shader(text_decode_stream_kv_address src/shaders/text_decode_stream.comp KV_BY_ADDRESS=1)
vkattn_shader(text_decode_stream_emulated_kv_address src/shaders/text_decode_stream.comp STREAM_EMULATED=1 KV_BY_ADDRESS=1)
# KV-cache writes (kv_append): one module, flavours by specialization constant.
vkattn_shader(kv_append src/shaders/kv_append.comp)
