#!/usr/bin/env bash
# Installs the Debian packages vkattn builds and tests with, if any is missing.
# Run as root (or it uses sudo). One `apt-get update`, only when needed.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers  # loader, lavapipe, validation
  glslc spirv-tools libshaderc-dev libvulkan-volk-dev         # shaders, volk
  libcmocka-dev libjansson-dev                                 # tests, attnbench's JSON
  libpng-dev                                                   # attnbench's pictures
  python3-numpy python3-pytest python3-cffi                    # the Python package's tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
