#!/usr/bin/env bash
# Quick start 2: install what is missing, build, run every test.
# GPU tests run on the default device with the validation layer; without a
# device they fail here (VKATTN_REQUIRE_DEVICE) rather than skip quietly. The
# GPU tests then run a second time with lavapipe's 4-wide subgroups.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export VKATTN_REQUIRE_DEVICE=1
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 900
# The second pass also switches the kernels to their GPU shapes
# (VKATTN_TEST_TUNING=gpu), so the shapes real GPUs get run in CI as well.
echo "--- GPU tests again: subgroup size 4 (LP_NATIVE_VECTOR_WIDTH=128), GPU kernel shapes"
LP_NATIVE_VECTOR_WIDTH=128 VKATTN_TEST_TUNING=gpu \
  ctest --output-on-failure -j"$(nproc)" -L gpu --timeout 900

# The Vulkan 1.1 minimums a phone may have: 16 KiB shared memory, 128
# invocations, 4 storage buffers per shader, no push descriptors, no
# timestamps (docs/PORTABILITY.md). The harness and attnbench's CLI tests read
# VKATTN_TEST_PROFILE; the library reads no environment.
echo "--- GPU tests again: the mobile-min profile (Vulkan 1.1 minimums, descriptor sets from pools)"
VKATTN_TEST_PROFILE=mobile-min ctest --output-on-failure -j"$(nproc)" -L gpu --timeout 900

# A device-side out-of-bounds access on lavapipe lands in host memory and
# crashes much later (shared/LESSONS.md): run the unit and GPU tests once more
# with AddressSanitizer and UBSan. Leak checking is off: the Vulkan driver and
# layers keep allocations for the process lifetime.
echo "--- unit and GPU tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cd ..
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVKATTN_WERROR=ON -DVKATTN_BUILD_TOOLS=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
  >/dev/null
cmake --build build-asan -j"$(nproc)"
cd build-asan
ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j"$(nproc)" -L "gpu|unit" \
  -E consumer --timeout 900

# gpu.test_threads (two threads recording on one context) under
# ThreadSanitizer, in a build of its own with POSIX threads: the library and
# that test only, run 8 times (scripts/test-tsan.sh; ~1.5 min, mostly the build).
echo "--- gpu.test_threads under ThreadSanitizer (POSIX threads build)"
cd ..
scripts/test-tsan.sh

# The platforms a game ships on (docs/INTEGRATION.md, "Platforms"): Windows x64
# cross-built with mingw-w64 and run under wine64 (unit, GPU tests on lavapipe
# through winevulkan), Linux arm64 cross-built and its unit tests run under
# qemu, and the same device outputs on Linux and Windows.
echo "--- cross builds: Windows x64 (mingw-w64, wine64) and Linux arm64 (qemu-aarch64)"
scripts/cross-test.sh

# Debian 13 (trixie), the other supported platform: a root made with
# debootstrap, where install-deps, a -Werror build with gcc 14 and Debian 13's
# shader tools, the unit tests and the GPU tests (default groups) on Mesa 25's
# lavapipe run; removed afterwards (scripts/test-debian13.sh). Needs root or
# sudo; skipped on a Debian 13 host, whose passes above were Debian 13's.
if grep -qx 'VERSION_ID="13"' /etc/os-release 2>/dev/null; then
  echo "--- Debian 13 root: skipped (this machine is Debian 13)"
elif [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
  scripts/test-debian13.sh
else
  echo "--- Debian 13 root: skipped (needs root or sudo for debootstrap and chroot)"
fi
