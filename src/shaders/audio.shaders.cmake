# Audio shader modules: the Conformer block-local attention.
vkattn_shader(audio_attention src/shaders/audio_attention.comp)
