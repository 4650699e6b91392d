#!/usr/bin/env bash
# Prepares what scripts/gpu-check.sh needs on a bare NVIDIA Linux machine (root,
# no network, an NVIDIA driver but no Vulkan loader): run it on the Debian 12
# build machine after building, then carry the repository with gpu-bundle/.
#
#   scripts/gpu-bundle.sh [BUILD_DIR]      (default: build)
#   scripts/gpu-bundle.sh --all-families   builds build-gpu/ first: the C with this
#                                          machine's compiler, the shaders with
#                                          Debian 13's glslc (scripts/newer-glslc.sh
#                                          into .newer-glslc/), so the bundle holds
#                                          every cooperative-matrix family (KHR, NV2)
#
# Writes gpu-bundle/ at the repository root (ignored by git), beside the build:
#   debs/root/     the Vulkan loader and libglvnd/GL/EGL .debs: unpacked into /
#   debs/prefix/   validation layers, cmocka, jansson, cairo and the libraries it
#                  loads (attnbench's pictures): unpacked into a
#                  private prefix (LD_LIBRARY_PATH, VK_LAYER_PATH), never into /
#   build/         the build folder without objects and generated sources
#   tests.json     `ctest -L gpu --show-only=json-v1` of the build: the GPU suite,
#                  whose absolute paths gpu-check.sh rewrites (CTest files hold the
#                  build machine's paths)
#   paths.env      the build and source folders those paths name
# shared/LESSONS.md ("Learned on an NVIDIA H100") says why each package.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ "$build" = --all-families ]; then
  scripts/newer-glslc.sh .newer-glslc
  build=build-gpu
  cmake -S . -B "$build" -DVKATTN_WERROR=ON -DVKATTN_GLSLC="$PWD/.newer-glslc/glslc" \
    -DVKATTN_SPIRV_VAL="$PWD/.newer-glslc/spirv-val" >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
families=$(sed -n 's/^VKATTN_SHADER_FAMILIES_BUILT:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
case ";$families;" in
  *";coopmat_khr;"*";coopmat2_nv;"*) ;;
  *) echo "gpu-bundle.sh: warning: $build holds no KHR or NV2 cooperative-matrix kernels" \
          "(its glslc cannot compile them); scripts/gpu-bundle.sh --all-families builds them" >&2 ;;
esac
if [ ! -x "$build/tools/attnbench/attnbench" ]; then
  echo "gpu-bundle.sh: $build/tools/attnbench/attnbench is missing: build first (scripts/build.sh)" >&2
  exit 2
fi
command -v apt-get >/dev/null || { echo "gpu-bundle.sh: needs apt-get (Debian 12)" >&2; exit 2; }
arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)
[ "$arch" = amd64 ] || echo "gpu-bundle.sh: warning: this machine is $arch; the GPU machines are amd64" >&2

out=gpu-bundle
rm -rf "$out"
mkdir -p "$out/debs/root" "$out/debs/prefix" "$out/build"
root_pkgs=(libvulkan1 libglvnd0 libgl1 libglx0 libegl1 libopengl0 libgles2)
prefix_pkgs=(vulkan-validationlayers libcmocka0 libjansson4
  # attnbench links cairo: it and what `ldd attnbench` shows it loading
  libcairo2 libpixman-1-0 libfontconfig1 fontconfig-config fonts-dejavu-core libfreetype6
  libpng16-16 libx11-6 libx11-data libxcb1 libxcb-render0 libxcb-shm0 libxext6 libxrender1
  libxau6 libxdmcp6 libbrotli1 libbsd0 libmd0 libexpat1)
(cd "$out/debs/root" && apt-get download "${root_pkgs[@]}")
(cd "$out/debs/prefix" && apt-get download "${prefix_pkgs[@]}")

# The build without what only the compiler needs (about 15 MB of 57).
tar -C "$build" --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude=shaders \
  --exclude='*.spv*' --exclude=test-cache \
  --exclude='./tests/consumer/work*' -cf - . | tar -C "$out/build" -xf -
(cd "$build" && ctest -L gpu --show-only=json-v1) >"$out/tests.json"
{
  echo "VKATTN_BUNDLE_BUILD_DIR=$(cd "$build" && pwd -P)"
  echo "VKATTN_BUNDLE_SOURCE_DIR=$(pwd -P)"
} >"$out/paths.env"
echo "gpu-bundle.sh: $(du -sh "$out" | cut -f1) in $out/ ($(ls "$out"/debs/*/*.deb | wc -l) .debs)"
echo "on the GPU machine, from the repository root: scripts/gpu-check.sh OUTDIR"
