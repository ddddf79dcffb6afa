# Build-time GLSL -> SPIR-V, validated with spirv-val, embedded as C++ arrays.
set(VKATTN_SHADER_TARGET_ENV vulkan1.2)

# vkattn_shader(NAME SOURCE [DEFINE=VALUE ...])
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/shaders ${PROJECT_BINARY_DIR}/generated)

# The module's output path and its -D flags, for the two compile functions below.
macro(vkattn_shader_paths name)
  set(out ${PROJECT_BINARY_DIR}/shaders/${name}.spv)
  set(defines "")
  foreach(d ${ARGN})
    list(APPEND defines -D${d})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY VKATTN_SPV_FILES ${out})
  set_property(GLOBAL APPEND PROPERTY VKATTN_SPV_NAMES ${name})
endmacro()

function(vkattn_shader name source)
  vkattn_shader_paths(${name} ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${GLSLC} --target-env=${VKATTN_SHADER_TARGET_ENV} -O -I${PROJECT_SOURCE_DIR}/src/shaders ${defines}
            -MD -MF ${out}.d -o ${out} ${PROJECT_SOURCE_DIR}/${source}
    COMMAND ${SPIRV_VAL} --target-env ${VKATTN_SHADER_TARGET_ENV} ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/${source}
    DEPFILE ${out}.d
    COMMENT "glslc ${name}"
    VERBATIM)
endfunction()

# Modules on GL_NV_cooperative_matrix2 need a glslang newer than many
# systems ship (Debian 12's 11.13 predates the extension): VKATTN_GLSLANG_COOPMAT2
# names one (glslang 15 or newer; found on the PATH when it compiles
# cmake/coopmat2_probe.comp). Without it those modules are not built and the
# planner says so for their rows; their plain-GLSL builds are glslc's.
if(NOT DEFINED VKATTN_GLSLANG_COOPMAT2)
  find_program(VKATTN_GLSLANG_FOUND NAMES glslang glslangValidator)
  set(coopmat2_compiler "")
  if(VKATTN_GLSLANG_FOUND)
    execute_process(COMMAND ${VKATTN_GLSLANG_FOUND} -V --target-env vulkan1.3 -o ${PROJECT_BINARY_DIR}/coopmat2_probe.spv
                            ${PROJECT_SOURCE_DIR}/cmake/coopmat2_probe.comp
                    RESULT_VARIABLE probe_result OUTPUT_QUIET ERROR_QUIET)
    if(probe_result EQUAL 0)
      set(coopmat2_compiler ${VKATTN_GLSLANG_FOUND})
    endif()
  endif()
  set(VKATTN_GLSLANG_COOPMAT2 "${coopmat2_compiler}" CACHE FILEPATH
      "glslang that compiles GL_NV_cooperative_matrix2 (empty: those modules are not built)")
endif()
if(VKATTN_GLSLANG_COOPMAT2)
  message(STATUS "vkattn: GL_NV_cooperative_matrix2 modules built with ${VKATTN_GLSLANG_COOPMAT2}")
else()
  message(STATUS "vkattn: no glslang for GL_NV_cooperative_matrix2; the prefill_flash_coopmat2 rows are not built")
endif()

# vkattn_shader_coopmat2(NAME SOURCE [DEFINE=VALUE ...]): SPIR-V 1.6 (Vulkan
# 1.3) from VKATTN_GLSLANG_COOPMAT2, not optimised by it (the driver's
# compiler does that) and not validated (the system's spirv-val may predate
# the extension, as Debian 12's does).
function(vkattn_shader_coopmat2 name source)
  if(NOT VKATTN_GLSLANG_COOPMAT2)
    return()
  endif()
  vkattn_shader_paths(${name} ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${VKATTN_GLSLANG_COOPMAT2} -V --target-env vulkan1.3 --quiet -I${PROJECT_SOURCE_DIR}/src/shaders ${defines}
            --depfile ${out}.d -o ${out} ${PROJECT_SOURCE_DIR}/${source}
    DEPENDS ${PROJECT_SOURCE_DIR}/${source}
    DEPFILE ${out}.d
    COMMENT "glslang ${name}"
    VERBATIM)
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
