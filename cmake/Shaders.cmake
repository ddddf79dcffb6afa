# Build-time GLSL -> SPIR-V, validated with spirv-val, embedded as C++ arrays.
set(VKATTN_SHADER_TARGET_ENV vulkan1.2)

# vkattn_shader(NAME SOURCE [DEFINE=VALUE ...])
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/shaders ${PROJECT_BINARY_DIR}/generated)

function(vkattn_shader name source)
  set(out ${PROJECT_BINARY_DIR}/shaders/${name}.spv)
  set(defines "")
  foreach(d ${ARGN})
    list(APPEND defines -D${d})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${GLSLC} --target-env=${VKATTN_SHADER_TARGET_ENV} -O -I${PROJECT_SOURCE_DIR}/src/shaders ${defines}
            -MD -MF ${out}.d -o ${out} ${PROJECT_SOURCE_DIR}/${source}
    COMMAND ${SPIRV_VAL} --target-env ${VKATTN_SHADER_TARGET_ENV} ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/${source}
    DEPFILE ${out}.d
    COMMENT "glslc ${name}"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY VKATTN_SPV_FILES ${out})
  set_property(GLOBAL APPEND PROPERTY VKATTN_SPV_NAMES ${name})
endfunction()

function(vkattn_embed_shaders output)
  get_property(VKATTN_SPV_FILES GLOBAL PROPERTY VKATTN_SPV_FILES)
  get_property(VKATTN_SPV_NAMES GLOBAL PROPERTY VKATTN_SPV_NAMES)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DNAMES=${VKATTN_SPV_NAMES}" "-DFILES=${VKATTN_SPV_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake
    DEPENDS ${VKATTN_SPV_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake
    COMMENT "embedding SPIR-V"
    VERBATIM)
  add_custom_target(vkattn_shaders DEPENDS ${output})
endfunction()
