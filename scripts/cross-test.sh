#!/usr/bin/env bash
# The platforms a game ships on, proven from this Debian machine (CI's last
# step, after scripts/test.sh's Linux passes; docs/INTEGRATION.md, "Platforms"):
#   1. Windows x64: mingw-w64 builds vkattn.dll (+ import library), the tests,
#      examples, attnbench.exe (without case files and pictures: no mingw
#      jansson or cairo in Debian) and cross_digest into build-mingw/bin; src/ and the public
#      headers also compile as strict ISO C11 (-std=c11 -Wpedantic -Wvla), what
#      MSVC or clang-cl needs; wine64 runs the unit tests, then the GPU tests
#      and examples through winevulkan on the host's lavapipe (under Xvfb:
#      wine's Vulkan goes through its X11 driver) with the host's validation
#      layer; then attnbench.exe: devices, a checked bench row and a frame
#      budget row (JSON read back here), and its refusals of case files and
#      pictures (~30 s);
#   2. the same outputs: tests/cross/digest.c hashes each layer's device output
#      bits; Linux x86-64 and Windows x64 (same lavapipe) must print the same;
#   3. Linux arm64: gcc-aarch64-linux-gnu builds everything into build-arm64;
#      qemu-aarch64-static runs the unit tests (no arm64 Vulkan driver here, so
#      no GPU test).
# Usage: scripts/cross-test.sh [windows|arm64]... (default: both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(windows arm64)
scripts/install-deps.sh --cross

want() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
stamp() { echo "--- $(date -u +%H:%M:%S) $*"; }

if want windows; then
  stamp "Windows x64: mingw-w64 build"
  cmake -S . -B build-mingw -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake \
    -DVKATTN_WERROR=ON -DVKATTN_SAFETENSORS=OFF -DVKATTN_BUILD_TOOLS=ON \
    -DVKATTN_TEST_MINICMOCKA=ON -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$root/build-mingw/bin" \
    >/dev/null
  cmake --build build-mingw -j"$jobs"
  ls build-mingw/bin/vkattn.dll build-mingw/src/libvkattn.dll.a build-mingw/bin/attnbench.exe \
    >/dev/null
  stamp "src/ and include/ as strict ISO C11 (-std=c11 -Wpedantic -Wvla -Werror)"
  # the host's gcc, on the generated headers (version.h, vka_shaders.h) of build-mingw
  for f in src/*/*.c; do
    gcc -std=c11 -Wpedantic -Wvla -Wall -Wextra -Wno-unused-parameter -Werror -fsyntax-only \
      -DVK_NO_PROTOTYPES -DVKATTN_BUILDING -Iinclude -Ibuild-mingw/include \
      -Ibuild-mingw/src/shaders -Ishaders -Isrc "$f"
  done
  for h in include/vkattn/*.h; do echo "#include \"${h#include/}\""; done |
    gcc -std=c11 -Wpedantic -Wvla -Werror -fsyntax-only -Iinclude -Ibuild-mingw/include -x c -
  echo "ok: $(ls src/*/*.c | wc -l) sources and $(ls include/vkattn/*.h | wc -l) public headers"


  # wine: its own prefix in the build tree, an X server for its Vulkan driver
  export WINEPREFIX="$root/build-mingw/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  display=":$((90 + RANDOM % 400))"
  Xvfb "$display" -screen 0 640x480x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  # each part may fail (no wineserver left): under set -e a failing command
  # in the EXIT trap would turn the script's status into 1
  trap '/usr/lib/wine/wineserver64 -k 2>/dev/null || true; kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY=$display
  [ -f "$WINEPREFIX/system.reg" ] || /usr/lib/wine/wine64 wineboot -i >/dev/null 2>&1
  # A persistent wineserver, and wine's helper processes (services, explorer,
  # winedevice...) started here by wineboot: started by the first test instead,
  # they inherit its output pipe and ctest counts that test as running until
  # the last wine process of the pass exits (gpu.test_additive took 457 s of a
  # 12 s run, and held one of the two ctest slots the whole pass).
  # A fresh prefix's `wineboot -i` leaves its own server running a few seconds,
  # and `-p` then exits 2 ("already running"): wait for that one to end first.
  /usr/lib/wine/wineserver64 -w
  /usr/lib/wine/wineserver64 -p
  /usr/lib/wine/wine64 wineboot >/dev/null 2>&1
  # The X11 desktop process (explorer.exe /desktop) leaves when its last window
  # client does, and the next test that opens Vulkan starts it again, holding
  # that test's output open for minutes (gpu.test_additive_attention ran past
  # its 300 s TIMEOUT on a clean clone). A notepad held open for the whole
  # pass keeps one desktop, started here with no pipe of ctest's.
  /usr/lib/wine/wine64 notepad >/dev/null 2>&1 &
  for _ in $(seq 1 40); do pgrep -f 'explorer.exe /desktop' >/dev/null && break; sleep 0.25; done
  stamp "Windows x64 under wine64: unit tests"
  (cd build-mingw && ctest --output-on-failure -j"$jobs" -L unit -E layering --timeout 600)
  # The app cannot ask winevulkan for a layer (it lists none); the host's
  # validation layer, with synchronization validation, is put under the app by
  # the host loader instead, and any message it prints fails the run.
  stamp "Windows x64 under wine64: GPU tests and examples (winevulkan -> lavapipe, validation)"
  log="$root/build-mingw/gpu-tests.log"
  (cd build-mingw && VKATTN_REQUIRE_DEVICE=1 VKATTN_TEST_NO_VALIDATION=1 \
    VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
    VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
    VK_KHRONOS_VALIDATION_REPORT_FLAGS=error,warn \
    ctest --output-on-failure -j"$jobs" -L gpu --timeout 900 --output-log "$log")
  if grep -nE 'Validation (Error|Warning)|SYNC-HAZARD' "$log"; then
    echo "the validation layer reported the messages above (full log: $log)"
    exit 1
  fi

  # attnbench.exe (docs/ATTNBENCH.md, "Windows"): JSON written by json_lite,
  # read back here; the reference check; the validation layer as above
  stamp "Windows x64 under wine64: attnbench.exe"
  ab() {
    VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_KHRONOS_VALIDATION_REPORT_FLAGS=error,warn \
      /usr/lib/wine/wine64 build-mingw/bin/attnbench.exe "$@" | tr -d '\r'
  }
  ab_log="$root/build-mingw/attnbench.log"
  {
    ab devices
    ab devices --json >build-mingw/ab-devices.json
    ab bench sdpa --batch 2 --heads 3 --tq 19 --tv 23 --dk 12 --dv 20 --causal --mask-ratio 0.2 \
      --check --json --no-peak --warmup 1 --repeat 2 >build-mingw/ab-sdpa.json
    ab bench mha --tq 9 --tv 21 --dk 8 --heads 2 --frame-budget-us 50 --no-peak --repeat 1 \
      --json >build-mingw/ab-frame.json
  } 2>&1 | tee "$ab_log"
  python3 - build-mingw/ab-devices.json build-mingw/ab-sdpa.json build-mingw/ab-frame.json <<'PY'
import json, sys
devices, sdpa, frame = (json.load(open(f)) for f in sys.argv[1:])
assert devices["devices"], devices
assert sdpa["max_rel_err"] is not None and sdpa["max_rel_err"] <= sdpa["bound"], sdpa
fb = frame["frame_budget"]
assert fb["identical"] is True and "resplits" in fb and isinstance(fb["uncut_pieces"], list), fb
print("attnbench.exe: %d device(s); sdpa max_rel_err %.3g <= %g; frame budget: %d pieces, "
      "%d slices, identical" % (len(devices["devices"]), sdpa["max_rel_err"], sdpa["bound"],
                               fb["pieces"], fb["slices"]))
PY
  # what needs the missing libraries is refused (exit 2), naming it
  for refused in "check tests/cases/examples.json|built without case files (jansson)" \
    "sweep softmax --tq 8,16 --plot p.png|built without pictures (cairo)"; do
    set +e
    # shellcheck disable=SC2086 # the command line is split on purpose
    /usr/lib/wine/wine64 build-mingw/bin/attnbench.exe ${refused%%|*} >build-mingw/ab-refused.txt 2>&1
    rc=$?
    set -e
    out=$(tr -d '\r' <build-mingw/ab-refused.txt)
    if [ "$rc" != 2 ] || [[ "$out" != *"${refused#*|}"* ]]; then
      echo "attnbench.exe ${refused%%|*}: exit $rc, expected 2 and '${refused#*|}': $out"
      exit 1
    fi
  done
  if grep -nE 'Validation (Error|Warning)|SYNC-HAZARD' "$ab_log"; then
    echo "the validation layer reported the messages above (log: $ab_log)"
    exit 1
  fi

  stamp "the same device outputs: Linux x86-64 vs Windows x64 (tests/cross/digest.c)"
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -DVKATTN_WERROR=ON >/dev/null
  cmake --build build --target cross_digest -j"$jobs" >/dev/null
  build/tests/cross_digest | tee build/digest-linux.txt
  /usr/lib/wine/wine64 build-mingw/bin/cross_digest.exe | tr -d '\r' | tee build-mingw/digest.txt
  diff <(grep '^device' build/digest-linux.txt) <(grep '^device' build-mingw/digest.txt)
  [ "$(grep -c '^device' build-mingw/digest.txt)" -eq 3 ]
  if diff -q <(grep '^reference' build/digest-linux.txt) \
    <(grep '^reference' build-mingw/digest.txt) >/dev/null; then
    echo "device and CPU reference outputs: bit for bit the same on Linux and Windows"
  else
    echo "device outputs the same; CPU reference outputs differ (each C library's exp())"
  fi
fi

if want arm64; then
  stamp "Linux arm64: gcc-aarch64-linux-gnu build"
  cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
    -DVKATTN_WERROR=ON -DVKATTN_INSTALL=OFF >/dev/null
  cmake --build build-arm64 -j"$jobs"
  stamp "Linux arm64 under qemu-aarch64-static: unit tests"
  (cd build-arm64 && ctest --output-on-failure -j"$jobs" -L unit -E layering --timeout 900)
  if [ -f build/digest-linux.txt ]; then
    qemu-aarch64-static build-arm64/tests/cross_digest 2>/dev/null | tee build-arm64/digest.txt
    if diff -q <(grep '^reference' build/digest-linux.txt) \
      <(grep '^reference' build-arm64/digest.txt) >/dev/null; then
      echo "CPU reference outputs: bit for bit the same on x86-64 and arm64"
    else
      echo "CPU reference outputs differ between x86-64 and arm64 (libm, FMA)"
    fi
  fi
fi
stamp "cross builds done"
