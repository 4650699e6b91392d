#!/usr/bin/env bash
# gpu.test_threads under ThreadSanitizer (scripts/test.sh calls it): a small
# build of its own (build-tsan: the library and that one test), run a few times.
#   - POSIX threads: TSan sees pthread calls, not glibc's C11 <threads.h>, so
#     the build defines __STDC_NO_THREADS__, which makes src/core/threads.h
#     take its POSIX branch (the one Apple and Android <30 use).
#   - ignore_noninstrumented_modules: lavapipe (Mesa) hands memory between its
#     own threads under futex locks TSan cannot see, so its malloc/free look
#     like races; only code built here (vkattn, the test) is checked.
#   - several runs: the two threads interleave differently each run (the race
#     the test's Vulkan hook once had showed in 4 of 10 runs).
# Usage: scripts/test-tsan.sh [runs] (default 8; ~1.3 s each on a quiet
# machine, the build ~70 s).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-8}
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKATTN_WERROR=ON \
  -DVKATTN_BUILD_TOOLS=OFF -DVKATTN_INSTALL=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer -D__STDC_NO_THREADS__" >/dev/null
cmake --build build-tsan -j"$(nproc)" --target gpu_test_threads
export VKATTN_REQUIRE_DEVICE=1
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1"
for i in $(seq 1 "$runs"); do
  log=build-tsan/test_threads.$i.log
  if ! build-tsan/tests/gpu_test_threads >"$log" 2>&1 || grep -q 'ThreadSanitizer' "$log"; then
    cat "$log"
    echo "gpu.test_threads under ThreadSanitizer: run $i of $runs failed" >&2
    exit 1
  fi
done
echo "gpu.test_threads under ThreadSanitizer: $runs runs clean"
