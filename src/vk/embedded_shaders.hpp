// SPIR-V compiled from src/shaders at build time and linked into the library.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace vkattn::vk {

// The module called `name` (the shader file's stem plus its build flavour,
// e.g. "text_attention" or "text_attention_subgroup"); throws if unknown.
std::span<const uint32_t> embedded_shader(std::string_view name);
std::vector<std::string_view> embedded_shader_names();

}  // namespace vkattn::vk
