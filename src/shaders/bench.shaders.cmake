# Benchmark shader modules: the GPU-side fill of benchmark inputs, and the
# probes that measure the device's ceilings. The cooperative-matrix probe is a
# module of its own: only devices with VK_NV_cooperative_matrix load it.
vkattn_shader(bench_fill src/shaders/bench_fill.comp)
vkattn_shader(bench_read src/shaders/bench_read.comp)
vkattn_shader(bench_coopmat src/shaders/bench_coopmat.comp)
