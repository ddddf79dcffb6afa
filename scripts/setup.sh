#!/usr/bin/env bash
# Installs the Debian 12 packages vkattn builds, tests and runs with.
# As root it runs apt-get; otherwise it prints the command to run and stops.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libvulkan-dev glslc spirv-tools        # Vulkan headers/loader, GLSL compiler, SPIR-V validator
  libvulkan-volk-dev                      # volk: the Vulkan entry points, per-device dispatch
  mesa-vulkan-drivers                     # lavapipe: the CPU Vulkan device
  vulkan-validationlayers                 # Khronos validation for tests
  libgtest-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libbenchmark-dev                        # host-side micro-benchmarks (bench/host)
  python3-numpy                           # cross-checks of .npy files; the Python module's arrays
  pybind11-dev python3-dev                # the Python module
  clang-14 libclang-rt-14-dev             # libFuzzer harnesses with ASan+UBSan (make fuzz)
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "vkattn needs these Debian packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
