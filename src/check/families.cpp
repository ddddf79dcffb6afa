#include <fmt/format.h>

#include "check/check_case.hpp"
#include "check/kvcache_cases.hpp"
#include "check/kvtier_cases.hpp"
#include "vkattn/error.hpp"

namespace vkattn::check {

namespace {

// The KV-cache family: writing caches and quantized KV, the tiered layout and
// pools past one binding, then BDPA.
std::vector<CheckCase> kvcache_family_cases(const DeviceCaps& caps, GridSize size) {
  std::vector<CheckCase> out;
  for (auto grid : {kvcache_check_cases, kvtier_check_cases, bdpa_check_cases})
    for (auto& c : grid(caps, size)) out.push_back(std::move(c));
  return out;
}
std::vector<CheckCase> kvcache_family_demo(DemoSize size) {
  std::vector<CheckCase> out;
  for (auto demo : {kvcache_demo_cases, kvtier_demo_cases, bdpa_demo_cases})
    for (auto& c : demo(size)) out.push_back(std::move(c));
  return out;
}

struct CheckFamily {
  const char* name;
  std::vector<CheckCase> (*grid)(const DeviceCaps&, GridSize);
  std::vector<CheckCase> (*demo)(DemoSize);
};

const CheckFamily kCheckFamilies[] = {
    {"text", text_check_cases, text_demo_cases},
    {"vision", vision_check_cases, vision_demo_cases},
    {"audio", audio_check_cases, audio_demo_cases},
    {"kvcache", kvcache_family_cases, kvcache_family_demo},
};

const CheckFamily& family_of(const std::string& name) {
  for (const auto& f : kCheckFamilies)
    if (name == f.name) return f;
  std::string names;
  for (const auto& f : kCheckFamilies) names += std::string(names.empty() ? "" : ", ") + f.name;
  throw Error(ErrorKind::invalid_argument, fmt::format("family: expected one of {}, got '{}'", names, name));
}

}  // namespace

std::vector<std::string> check_families() {
  std::vector<std::string> out;
  for (const auto& f : kCheckFamilies) out.push_back(f.name);
  return out;
}

std::vector<CheckCase> check_cases(const std::string& family, const DeviceCaps& caps, GridSize size) {
  return family_of(family).grid(caps, size);
}

std::vector<CheckCase> demo_cases(const std::string& family, DemoSize size) { return family_of(family).demo(size); }

DemoSize demo_size_for(const DeviceCaps& caps) { return caps.type == "cpu" ? DemoSize::cpu : DemoSize::model; }

}  // namespace vkattn::check
