// Decodes fuzz bytes into the numbers, tensors and caps of one call. Numbers
// favour the edges (0, 1, small, 2^31, 2^32 - 1, 2^64 - 1) where size
// arithmetic breaks; exhausted input reads as zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vkattn/caps.hpp"
#include "vkattn/error.hpp"
#include "vkattn/tensor.hpp"

namespace vkattn::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return byte() & 1; }
  uint64_t raw64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  // A u64 that is usually small or at an edge.
  uint64_t number() {
    const uint8_t mode = byte();
    switch (mode % 8) {
      case 0: return mode / 8;                         // 0..31
      case 1: return byte() + 1;                       // 1..256
      case 2: return (uint64_t(byte()) << 8 | byte()); // < 2^16
      case 3: return (1ull << 31) + byte() - 128;      // around 2^31
      case 4: return 0xffffffffull - byte();           // just under 2^32
      case 5: return (1ull << 32) + byte();            // just over 2^32
      case 6: return std::numeric_limits<uint64_t>::max() - byte();
      default: return raw64();
    }
  }
  uint32_t u32() { return static_cast<uint32_t>(number()); }
  float real() {
    switch (byte() % 6) {
      case 0: return 0.0f;
      case 1: return std::numeric_limits<float>::quiet_NaN();
      case 2: return std::numeric_limits<float>::infinity();
      case 3: return -1.0f;
      case 4: return 1.0f / (1 + byte());
      default: {
        const uint32_t bits = static_cast<uint32_t>(raw64());
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
      }
    }
  }
  DType dtype() {
    constexpr DType all[] = {DType::f32, DType::f16, DType::bf16, DType::u32, DType::i8, DType::i4};
    return all[byte() % 6];
  }

  // A tensor for a parameter that expects `want` of dtype `usual`: absent,
  // exactly right, right shape with hostile strides and bytes, or anything.
  Tensor tensor(const Shape& want, DType usual) {
    const VkBuffer handle = reinterpret_cast<VkBuffer>(uintptr_t{0x1000});
    const uint8_t mode = byte() % 4;
    try {
      if (mode == 0) return {};
      if (mode == 1) return Tensor(nullptr, handle, 0, dtype_storage_bytes(usual, element_count(want)), usual, want);
      Shape shape = want;
      DType t = usual;
      if (mode == 3) {
        shape.resize(byte() % 6);
        for (auto& d : shape) d = number();
        t = dtype();
      }
      Tensor base(nullptr, handle, 0, number(), t, shape);
      if (!flag()) return base;
      Shape strides(shape.size());
      for (auto& s : strides) s = number();
      return base.strided(strides);
    } catch (const Error&) {
      return {};  // an impossible view is refused where it is made; the op then sees none
    }
  }

  DeviceCaps caps() {
    DeviceCaps c;
    if (!flag()) return c;  // the conservative defaults
    c.max_storage_buffer_range = number();
    c.max_shared_memory_bytes = u32();
    c.max_workgroup_invocations = u32();
    for (auto& n : c.max_workgroup_count) n = u32();
    c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = u32();
    c.subgroup_arithmetic = flag();
    c.subgroup_size_control = flag();
    return c;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace vkattn::fuzz
