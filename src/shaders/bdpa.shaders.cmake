# BDPA shader modules: the attention kernel and the GPU builder (one module;
# a specialization constant picks the builder's pass).
vkattn_shader(bdpa_attention src/shaders/bdpa_attention.comp)
vkattn_shader(bdpa_build src/shaders/bdpa_build.comp)
