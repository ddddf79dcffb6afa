# Host-side micro-benchmarks (google-benchmark): what recording costs the CPU.
# `build/vkattn_host_bench` runs them on the default device; not a test.
find_package(benchmark REQUIRED)
add_executable(vkattn_host_bench ${PROJECT_SOURCE_DIR}/bench/host/record_decode_bench.cpp)
target_include_directories(vkattn_host_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(vkattn_host_bench PRIVATE vkattn_internal benchmark::benchmark ${VKATTN_STATIC_RUNTIME})
