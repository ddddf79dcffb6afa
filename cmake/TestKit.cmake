# The test kit: the float64 oracle (src/reference), .npy I/O (src/io) and the
# check cases (src/check), shared by the CLI, the tests and the benchmarks.
# It is not part of the installed library.
file(GLOB_RECURSE VKATTN_TESTKIT_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/src/reference/*.cpp ${PROJECT_SOURCE_DIR}/src/io/*.cpp ${PROJECT_SOURCE_DIR}/src/check/*.cpp)
list(REMOVE_ITEM VKATTN_TESTKIT_SOURCES ${PROJECT_SOURCE_DIR}/src/io/regular_file.cpp)  # in the library
add_library(vkattn_testkit STATIC ${VKATTN_TESTKIT_SOURCES})
target_include_directories(vkattn_testkit PUBLIC ${PROJECT_SOURCE_DIR}/src)
# The check cases reach the planners' internal headers: the internal archive.
target_link_libraries(vkattn_testkit PUBLIC vkattn_internal fmt::fmt-header-only nlohmann_json::nlohmann_json
                                              Threads::Threads)
target_compile_options(vkattn_testkit PRIVATE -Wall -Wextra -Wno-missing-field-initializers)

# The CLI and test binaries carry their C++ runtime so they run on any x86-64
# Linux with a Vulkan loader (the GPU machine has no Debian packages).
set(VKATTN_STATIC_RUNTIME -static-libstdc++ -static-libgcc)
