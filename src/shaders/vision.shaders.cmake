# Vision shader modules: one attention source for every variant (flavours by
# specialization constant), plus a subgroup build so the base module never
# declares a capability a device lacks; the PHD<->HPD transpose; the 2D
# position-embedding add.
vkattn_shader(vision_attention src/shaders/vision_attention.comp)
vkattn_shader(vision_attention_subgroup src/shaders/vision_attention.comp USE_SUBGROUP=1)
vkattn_shader(vision_transpose src/shaders/vision_transpose.comp)
vkattn_shader(posembed src/shaders/posembed.comp)
