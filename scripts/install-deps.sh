#!/usr/bin/env bash
# Installs the Debian packages vkattn builds and tests with, if any is missing.
# Run as root (or it uses sudo). One `apt-get update`, only when needed.
# --cross: also what scripts/cross-test.sh needs (mingw-w64 and wine64 with
# Xvfb for Windows x64; gcc-aarch64-linux-gnu, qemu-user-static and the arm64
# -dev packages from Debian's multiarch for Linux arm64).
# --debian13: also what scripts/test-debian13.sh needs on the host (debootstrap).
# Works on Debian 12 (bookworm) and Debian 13 (trixie): every name below is in both.
set -euo pipefail
cross=0 debian13=0
for arg in "$@"; do
  case $arg in
    --cross) cross=1 ;;
    --debian13) debian13=1 ;;
    *) echo "usage: $0 [--cross] [--debian13]" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers  # loader, lavapipe, validation
  glslc spirv-tools libshaderc-dev libvulkan-volk-dev         # shaders, volk
  libcmocka-dev libjansson-dev                                 # tests, attnbench's JSON
  libcairo2-dev fonts-dejavu-core    # attnbench's pictures: cairo draws them, its text in
                                      # fontconfig's sans-serif (DejaVu Sans), and writes the PNG
  python3-numpy python3-pytest python3-cffi                    # the Python package's tests
  python3-setuptools python3-pip python3-venv python3-wheel    # `pip install ./python` offline (its test)
)

if [ $cross = 1 ]; then
  packages+=(
    mingw-w64 wine64 xvfb xauth                  # Windows x64: build, run (winevulkan needs X)
    gcc-aarch64-linux-gnu qemu-user-static       # Linux arm64: build, run
    libc6:arm64 libcmocka-dev:arm64 libjansson-dev:arm64 libcairo2-dev:arm64 libvulkan-dev:arm64
  )
fi
if [ $debian13 = 1 ]; then
  packages+=(debootstrap debian-archive-keyring)  # a Debian 13 root, its release keys
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ $cross = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
