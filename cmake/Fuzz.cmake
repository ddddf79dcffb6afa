# libFuzzer harnesses (fuzz/), built with clang and ASan+UBSan when configured
# with -DVKATTN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 (`make fuzz` does it in
# build-fuzz/). They link only the device-free code they exercise.
option(VKATTN_FUZZ "Build the libFuzzer harnesses (needs clang)" OFF)
if(NOT VKATTN_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "VKATTN_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14")
endif()

set(VKATTN_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
file(GLOB VKATTN_FUZZ_PLANNER CONFIGURE_DEPENDS src/planner/*.cpp)
add_library(vkattn_fuzz_core STATIC
  src/types.cpp src/log.cpp src/util/checked_size.cpp src/io/npy.cpp src/io/regular_file.cpp src/reference/rounding.cpp
  src/vk/caps_json.cpp src/ops/dtype_code.cpp src/ops/text/text_validate.cpp src/ops/vision/vision_validate.cpp
  src/ops/audio/audio_validate.cpp ${VKATTN_FUZZ_PLANNER})
target_include_directories(vkattn_fuzz_core PUBLIC include src)
target_link_libraries(vkattn_fuzz_core PUBLIC Vulkan::Headers fmt::fmt-header-only nlohmann_json::nlohmann_json)
target_compile_options(vkattn_fuzz_core PUBLIC -gline-tables-only -O1 ${VKATTN_FUZZ_SANITIZERS} -fsanitize=fuzzer-no-link)
target_link_options(vkattn_fuzz_core PUBLIC ${VKATTN_FUZZ_SANITIZERS})

function(vkattn_fuzzer name source)
  add_executable(${name} fuzz/${source})
  target_link_libraries(${name} PRIVATE vkattn_fuzz_core)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  list(APPEND VKATTN_FUZZERS ${name})
  set(VKATTN_FUZZERS ${VKATTN_FUZZERS} PARENT_SCOPE)
endfunction()

vkattn_fuzzer(fuzz_npy npy_fuzz.cpp)
vkattn_fuzzer(fuzz_caps caps_fuzz.cpp)
vkattn_fuzzer(fuzz_plan_json plan_json_fuzz.cpp)
vkattn_fuzzer(fuzz_validate_text validate_fuzz.cpp VKATTN_FUZZ_OP=0)
vkattn_fuzzer(fuzz_validate_vision validate_fuzz.cpp VKATTN_FUZZ_OP=1)
vkattn_fuzzer(fuzz_validate_posembed validate_fuzz.cpp VKATTN_FUZZ_OP=2)
vkattn_fuzzer(fuzz_validate_audio validate_fuzz.cpp VKATTN_FUZZ_OP=3)
add_custom_target(fuzzers DEPENDS ${VKATTN_FUZZERS})
