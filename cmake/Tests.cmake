# GoogleTest suites, the README's example and the package test, all under CTest.
find_package(GTest REQUIRED)
enable_testing()
include(GoogleTest)

# Data files the tests read, copied next to the test binary so that a build
# folder runs from any directory and on other machines.
file(GLOB VKATTN_CAPS_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/caps/*.json)
foreach(f ${VKATTN_CAPS_FILES})
  get_filename_component(name ${f} NAME)
  configure_file(${f} ${PROJECT_BINARY_DIR}/caps/${name} COPYONLY)
endforeach()

file(GLOB VKATTN_TEST_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/*.cpp)
add_executable(vkattn_tests ${VKATTN_TEST_SOURCES})
target_include_directories(vkattn_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
# The embedding tests drive Vulkan directly, as a host runtime would: they link the loader.
target_link_libraries(vkattn_tests PRIVATE vkattn_testkit Vulkan::Vulkan GTest::gtest GTest::gtest_main
                                           ${VKATTN_STATIC_RUNTIME})
add_dependencies(vkattn_tests vkattn_cli)
# The test sources only drive the library, the oracle and the CLI (built as
# the build type says): at -O1 they compile in about half the time of -O3
# (tests/planner_test.cpp 18.9 -> 10.9 s on the 2-core build machine) and run
# as fast (docs/reliability.md, "Time in CI").
target_compile_options(vkattn_tests PRIVATE $<$<CONFIG:Release>:-O1>)
# No tuning cache of the machine's user may change what the tests plan; the
# tuning-cache tests point VKATTN_TUNE_CACHE at files of their own.
gtest_discover_tests(vkattn_tests DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT
                     "VKATTN_VALIDATION=1;VKATTN_TUNE_CACHE=${PROJECT_BINARY_DIR}/no-tune-cache.json")
# Listing the tests opens no Vulkan device: with no loader to open it still works.
add_test(NAME list_tests_without_vulkan COMMAND vkattn_tests --gtest_list_tests)
set_tests_properties(list_tests_without_vulkan PROPERTIES ENVIRONMENT "VKATTN_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1"
                                                          PASS_REGULAR_EXPRESSION "TextParity")

# The README's library example, compiled against the library as a user would
# (static or shared) and run as a test.
add_executable(vkattn_example_decode ${PROJECT_SOURCE_DIR}/examples/decode_step.cpp)
target_link_libraries(vkattn_example_decode PRIVATE vkattn::vkattn)
add_test(NAME example_decode_step COMMAND vkattn_example_decode)
set_tests_properties(example_decode_step PROPERTIES ENVIRONMENT "VKATTN_VALIDATION=1")

# Install into a temporary prefix and use the package from outside (find_package, pkg-config).
if(VKATTN_INSTALL)
  add_test(NAME package_install
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/package-test -DCXX=${CMAKE_CXX_COMPILER}
                   -DSHARED=${BUILD_SHARED_LIBS} -DSOVERSION=${VKATTN_SOVERSION}
                   -P ${PROJECT_SOURCE_DIR}/cmake/PackageTest.cmake)
  set_tests_properties(package_install PROPERTIES ENVIRONMENT "VKATTN_VALIDATION=1")
endif()

# No library defines a global Vulkan or volk symbol (volk's pointers are renamed: src/vk/volk.hpp).
set(VKATTN_SYMBOL_TEST_LIBRARIES $<TARGET_FILE:vkattn>)
if(BUILD_SHARED_LIBS)
  list(APPEND VKATTN_SYMBOL_TEST_LIBRARIES $<TARGET_FILE:vkattn_internal>)
endif()
add_test(NAME library_symbols COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} "-DLIBRARIES=${VKATTN_SYMBOL_TEST_LIBRARIES}"
                                      -P ${PROJECT_SOURCE_DIR}/cmake/SymbolTest.cmake)

# The benchmark scripts' pure parts (suite expansion against the binary's, the ratio join).
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME bench_python COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/bench_py_test.py $<TARGET_FILE:vkattn_cli>)
endif()
# The C API driven by a program written in C, judged by the float64 oracle
# (through a small C-callable shim), linked against the library as users link it.
add_library(vkattn_c_oracle STATIC ${PROJECT_SOURCE_DIR}/tests/c_api/c_oracle.cpp
            ${PROJECT_SOURCE_DIR}/src/reference/text_reference.cpp ${PROJECT_SOURCE_DIR}/src/reference/vision_reference.cpp
            ${PROJECT_SOURCE_DIR}/src/reference/audio_reference.cpp ${PROJECT_SOURCE_DIR}/src/reference/tolerance.cpp
            ${PROJECT_SOURCE_DIR}/src/reference/bdpa_reference.cpp ${PROJECT_SOURCE_DIR}/src/reference/rounding.cpp
            ${PROJECT_SOURCE_DIR}/src/reference/parallel.cpp)
target_include_directories(vkattn_c_oracle PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(vkattn_c_oracle PUBLIC vkattn::vkattn PRIVATE fmt::fmt-header-only Threads::Threads)
# c_kvcache: tiered and BDPA caches and the page allocator. c_wrap: the host's
# own instance, device and buffers (it links libvulkan), wrapped as tensors.
foreach(name c_api c_wrap c_kvcache)
  add_executable(vkattn_${name}_test ${PROJECT_SOURCE_DIR}/tests/c_api/${name}_test.c
                 ${PROJECT_SOURCE_DIR}/tests/c_api/c_check.c)
  set_target_properties(vkattn_${name}_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON LINKER_LANGUAGE CXX)
  # Vulkan structs are initialised as {sType}: the rest is zero by design.
  target_compile_options(vkattn_${name}_test PRIVATE -Wall -Wextra -Werror -Wno-missing-field-initializers)
  target_link_libraries(vkattn_${name}_test PRIVATE vkattn_c_oracle)
  add_test(NAME ${name} COMMAND vkattn_${name}_test)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "VKATTN_VALIDATION=1")
endforeach()
target_link_libraries(vkattn_c_wrap_test PRIVATE Vulkan::Vulkan)
