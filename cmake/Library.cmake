# libvkattn: the runtime, planners, ops and embedded shaders; nothing else.
#
# The sources compile once into an object library (position-independent, hidden
# visibility), from which come `vkattn` (static or shared, by BUILD_SHARED_LIBS)
# and, for a shared build, `vkattn_internal`: a static archive of the same
# objects for the CLI, tests and test kit, which reach internal headers and
# must run on machines with no other library than the Vulkan loader.

file(GLOB_RECURSE VKATTN_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/src/vk/*.cpp ${PROJECT_SOURCE_DIR}/src/planner/*.cpp ${PROJECT_SOURCE_DIR}/src/ops/*.cpp
     ${PROJECT_SOURCE_DIR}/src/util/*.cpp ${PROJECT_SOURCE_DIR}/src/capi/*.cpp)
# Caps files are read with the bounded file reader of src/io; the rest of src/io (.npy) is the test kit's.
list(APPEND VKATTN_SOURCES ${PROJECT_SOURCE_DIR}/src/io/regular_file.cpp)
file(GLOB VKATTN_TOP_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.cpp)
list(APPEND VKATTN_SOURCES ${VKATTN_TOP_SOURCES} ${PROJECT_BINARY_DIR}/generated/embedded_shaders.cpp
            ${PROJECT_SOURCE_DIR}/src/vk/volk_impl.c)

set(VKATTN_GENERATED_INCLUDE ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in ${VKATTN_GENERATED_INCLUDE}/vkattn/version.hpp @ONLY)

add_library(vkattn_objects OBJECT ${VKATTN_SOURCES})
set_target_properties(vkattn_objects PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                                                C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(vkattn_objects
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${VKATTN_GENERATED_INCLUDE}>
  PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/generated ${VOLK_INCLUDE_DIR})
# Entry points come from volk (src/vk/volk.hpp), which needs vulkan.h without prototypes.
target_compile_definitions(vkattn_objects PRIVATE VK_NO_PROTOTYPES)
# The planner offers the GL_NV_cooperative_matrix2 rows only where their modules were built.
if(VKATTN_GLSLANG_COOPMAT2)
  target_compile_definitions(vkattn_objects PRIVATE VKATTN_COOPMAT2_MODULES=1)
endif()
# Only what is marked VKATTN_API (vkattn/export.hpp) is exported: the public API.
# fmt and nlohmann-json are header-only here and never appear in public headers.
target_link_libraries(vkattn_objects PUBLIC Vulkan::Headers PRIVATE fmt::fmt-header-only nlohmann_json::nlohmann_json)
# Vulkan structs are initialised as {sType, pNext}: the rest is zero by design.
target_compile_options(vkattn_objects PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-missing-field-initializers>)
add_dependencies(vkattn_objects vkattn_shaders)

# Links of the objects' own dependencies: volk opens the loader at run time
# (src/vk/vulkan_loader.cpp), so only libdl; Vulkan headers for the public API.
function(vkattn_library_links target)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<BUILD_INTERFACE:${VKATTN_GENERATED_INCLUDE}>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC Vulkan::Headers PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
endfunction()

find_package(Threads REQUIRED)
include(GNUInstallDirs)
add_library(vkattn $<TARGET_OBJECTS:vkattn_objects>)
add_library(vkattn::vkattn ALIAS vkattn)
vkattn_library_links(vkattn)
# 0.x: every minor version may change the ABI, so the SONAME carries it (libvkattn.so.0.1).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(VKATTN_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(VKATTN_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()
set_target_properties(vkattn PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${VKATTN_SOVERSION}
                                        EXPORT_NAME vkattn)
if(BUILD_SHARED_LIBS)
  # No undefined symbols; only the public API exported (cmake/vkattn.map).
  target_link_options(vkattn PRIVATE -Wl,--no-undefined -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/vkattn.map)
  set_property(TARGET vkattn APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/vkattn.map)
  add_library(vkattn_internal STATIC $<TARGET_OBJECTS:vkattn_objects>)
  vkattn_library_links(vkattn_internal)
else()
  add_library(vkattn_internal ALIAS vkattn)
endif()
