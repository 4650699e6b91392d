#!/usr/bin/env bash
# One command that measures a GPU: the GPU test suite under validation, the
# fixed attnbench table of issue 20 (with --pipeline-stats), then PyTorch on the
# same shapes where `import torch` works; one JSON and one Markdown table.
#
#   scripts/gpu-check.sh [--quick] [--build DIR] [--coopmat auto|on|off] OUTDIR
#   scripts/gpu-check.sh --sweep [--quick] [--build DIR] OUTDIR
#
# On a bare NVIDIA Linux machine (root, no network, a driver but no Vulkan
# loader), from the repository root with gpu-bundle/ beside it (made on the
# build machine by scripts/gpu-bundle.sh): unpacks the loader and libglvnd
# into /, the validation layers, cmocka, jansson and cairo into a private
# prefix (LD_LIBRARY_PATH, VK_LAYER_PATH); if no device answers and the
# NVIDIA ICD is at /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json,
# names it in VK_DRIVER_FILES (the stock search can fail with
# VK_ERROR_INCOMPATIBLE_DRIVER). Without gpu-bundle/ it uses --build (default
# build/) and the system's Vulkan, as on the build machine.
#
# Each step runs under `timeout` and writes its results as it goes, so a
# partial run still leaves them; OUTDIR/gpu-check.json and gpu-check.md are
# written at the end whatever happened. Full run: under 6 minutes on an H100.
# --quick: small shapes, a few tests, no warm-up: the same path in a few
# minutes on any device (CTest runs it on lavapipe: script.gpu_check_quick).
# The table's spill column, from the driver's pipeline statistics: **yes** (a
# local/scratch/stack size above 0), **likely** (registers at the driver's cap,
# 255 on NVIDIA), ? (a size of 2^32 or more, which is no size: a footnote names
# it; NVIDIA's "Local Memory Size"), no, or - (no such statistic); the raw
# statistics are in gpu-check.json. A test whose program (cmake, python3) this
# machine lacks is skipped, with why, in the table of tests.
# --sweep: instead of the tests, the table and PyTorch, the variant sweep
# (scripts/gpu_sweep.py; docs/PERFORMANCE.md, "Variant sweep"): every
# prepared variant of the f16 matmul (tensor cores and matmul_gpu), the fused
# SDPA forward (tensor cores and tiled, causal and not) and its backward,
# selected by `attnbench bench --variant FAMILY=N` (vkattn_context_advanced.
# variants), checked against the CPU reference on one small shape, then
# timed on the target shapes (4096^3; B4 H16 T4096 d128), within 280 s of
# runs (300 s at most with the device probe); writes OUTDIR/sweep.md (ms, TFLOP/s, registers and shared memory from
# the pipeline statistics, pass/fail), sweep.json (the device class and the
# winners per group, for src/ops/tuning_table.c), sweep.jsonl and
# sweep-pipelines.bin (the runs' shared pipeline cache). With
# --quick: small shapes, each variant one checked run, the emulated
# cooperative-matrix family and the GPU tuning, within 240 s (lavapipe: about
# 35 s alone, and the fused backward on emulated fragments; 88 s on a machine
# at load 4, so the budget is a hang guard, not a speed test; CTest:
# script.gpu_check_sweep_quick, TIMEOUT 300). Exit status 1 when a variant
# that fits failed its check, errored, or was not run within the time.
# Exit status: 0 when every test run passed and every bench ran (or its path
# is not built yet: "unsupported"), 1 otherwise, 2 on bad usage.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)
quick=0
sweep=0
build=
coopmat=
while [ $# -gt 1 ]; do
  case $1 in
    --quick) quick=1; shift ;;
    --sweep) sweep=1; shift ;;
    --build) build=$2; shift 2 ;;
    --coopmat) coopmat=$2; shift 2 ;;
    *) echo "gpu-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] && [ "${1#-}" = "$1" ] || {
  echo "usage: scripts/gpu-check.sh [--sweep] [--quick] [--build DIR] [--coopmat auto|on|off] OUTDIR" >&2; exit 2; }
[ $sweep = 1 ] && [ -n "$coopmat" ] && {
  echo "gpu-check.sh: --sweep chooses the cooperative-matrix settings itself; no --coopmat" >&2; exit 2; }
case $coopmat in ''|auto|on|off) ;; *) echo "gpu-check.sh: --coopmat takes auto, on or off" >&2; exit 2 ;; esac
# --coopmat: the GPU suite (VKATTN_TEST_COOPMAT) and the peak with the
# cooperative-matrix kernels by their self-test (auto, the default), on or
# off; the table has its own rows per family, and the report the families'
# self-tests (attnbench devices)
[ -n "$coopmat" ] && export VKATTN_TEST_COOPMAT=$coopmat
mkdir -p "$1" && out=$(cd "$1" && pwd -P) || exit 2
rm -f "$out"/tests.jsonl "$out"/tests-planned.json "$out"/bench.jsonl "$out"/torch.jsonl \
  "$out"/steps.json
bundle=$repo/gpu-bundle
qflag=()
[ $quick = 1 ] && qflag=(--quick)
# step time limits (seconds): tests, benches, PyTorch
if [ $quick = 1 ]; then t_tests=60 t_bench=210 t_torch=30 t_row=60
else t_tests=140 t_bench=140 t_torch=50 t_row=45; fi
steps=()
step() { steps+=("\"$1\": $2"); }
prefix=
finish() {
  [ -n "$prefix" ] && rm -rf "$prefix"
  local IFS=,
  echo "{${steps[*]}}" >"$out/steps.json"
  [ $sweep = 1 ] && return
  python3 "$repo/scripts/gpu_check.py" report "$out" "${qflag[@]}" ||
    echo "gpu-check.sh: the report failed" >&2
}
trap finish EXIT

# --- where the build is, and the Vulkan the machine lacks
from_build= from_source=
if [ -z "$build" ] && [ -d "$bundle/build" ]; then
  build=$bundle/build
  # shellcheck disable=SC1091
  . "$bundle/paths.env"
  from_build=$VKATTN_BUNDLE_BUILD_DIR from_source=$VKATTN_BUNDLE_SOURCE_DIR
  list=$bundle/tests.json
fi
build=$(cd "${build:-$repo/build}" && pwd -P) || { echo "gpu-check.sh: no build folder" >&2; exit 2; }
attnbench=$build/tools/attnbench/attnbench
[ -x "$attnbench" ] || { echo "gpu-check.sh: $attnbench is missing" >&2; exit 2; }
if [ -z "$from_build" ] && [ $sweep = 0 ]; then
  list=$out/ctest-gpu.json
  (cd "$build" && ctest -L gpu --show-only=json-v1) >"$list" || { echo "gpu-check.sh: ctest failed" >&2; exit 2; }
fi
export LD_LIBRARY_PATH=$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

if [ -d "$bundle/debs" ]; then
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
    if [ "$(id -u)" = 0 ]; then
      for f in "$bundle"/debs/root/*.deb; do dpkg -x "$f" /; done
      ldconfig
      step loader '"unpacked into /"'
    else
      step loader '"missing, and not root"'
    fi
  else
    step loader '"present"'
  fi
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/vkattn-gpu-check.XXXXXX")
  for f in "$bundle"/debs/prefix/*.deb; do dpkg -x "$f" "$prefix"; done
  libdir=$(dirname "$(find "$prefix" -name 'libVkLayer_khronos_validation.so' | head -1)")
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$prefix/usr/lib/x86_64-linux-gnu:$libdir
  export VK_LAYER_PATH=$prefix/usr/share/vulkan/explicit_layer.d
  step prefix "\"$prefix\""
fi

# --- a device: the stock ICD search, else the NVIDIA ICD by name
probe() { timeout 30 "$attnbench" devices --json >"$out/devices.json" 2>"$out/devices.err"; }
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if ! probe || ! grep -q '"name"' "$out/devices.json"; then
  if [ -f "$nvidia_icd" ]; then
    export VK_DRIVER_FILES=$nvidia_icd
    step vk_driver_files "\"$nvidia_icd\""
    probe || true
  fi
fi
if ! grep -q '"name"' "$out/devices.json" 2>/dev/null; then
  echo "gpu-check.sh: no Vulkan device: $(cat "$out/devices.err")" >&2
  step device '"none"'
  exit 1
fi
step device "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]
def named(x):
    return x["name"] + (" (driver %s, Vulkan %s)" % (x["driver_version"], x["api_version"])
                        if x.get("driver_version") else "")
print(json.dumps(", ".join(named(x) for x in d if x.get("default")) or named(d[0])))' \
  "$out/devices.json" 2>/dev/null || echo '"?"')"

# --- the variant sweep instead of the rest (its own report: sweep.md)
if [ $sweep = 1 ]; then
  if [ $quick = 1 ]; then t_sweep=240; else t_sweep=280; fi
  start=$SECONDS
  timeout $((t_sweep + 20)) python3 "$repo/scripts/gpu_sweep.py" "$attnbench" "$out" "${qflag[@]}" \
    --budget $t_sweep
  rc=$?
  step sweep_rc $rc
  step sweep_seconds $((SECONDS - start))
  exit $rc
fi

# --- the GPU test suite, under validation (the harness turns it on)
export VKATTN_REQUIRE_DEVICE=1
jobs=$(nproc 2>/dev/null || echo 4)
start=$SECONDS
timeout $t_tests python3 "$repo/scripts/gpu_check.py" tests "$list" "$out" "${qflag[@]}" \
  --from-build "$from_build" --to-build "$build" --from-source "$from_source" \
  --to-source "$repo" --jobs "$jobs" --timeout $((t_tests - 10))
step tests_rc $?
step tests_seconds $((SECONDS - start))

# --- the bench table
start=$SECONDS
[ $quick = 1 ] || timeout 20 "$attnbench" peak --json ${coopmat:+--coopmat $coopmat} >"$out/peak.json" 2>/dev/null
timeout $t_bench python3 "$repo/scripts/gpu_check.py" bench "$attnbench" "$out" "${qflag[@]}" \
  --timeout $t_row
step bench_rc $?
step bench_seconds $((SECONDS - start))

# --- PyTorch on the same shapes, where it is installed
start=$SECONDS
if python3 -c "import torch" 2>/dev/null; then
  timeout $t_torch python3 "$repo/scripts/gpu_check.py" torch "$out" "${qflag[@]}"
  step torch_rc $?
else
  step torch '"not installed"'
fi
step torch_seconds $((SECONDS - start))

# --- the verdict (the report itself is written by the EXIT trap)
python3 - "$out" "$repo/scripts/gpu_check.py" <<'EOF'
import json, os, sys
d = sys.argv[1]
def lines(n):
    p = os.path.join(d, n)
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []
tests, bench = lines("tests.jsonl"), lines("bench.jsonl")
bad = [t["name"] for t in tests if t["status"] not in ("passed", "skipped")]
planned = os.path.join(d, "tests-planned.json")
done = {t["name"] for t in tests}
if os.path.exists(planned):
    bad += [n + " (not run: time limit)" for n in json.load(open(planned)) if n not in done]
bad += [b["id"] for b in bench if b["status"] not in ("ok", "unsupported")]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), ""))
from gpu_check import ROWS  # every row of the table must have run
ran = {b["id"] for b in bench}
bad += [r[0] + " (not run: time limit)" for r in ROWS if r[0] not in ran]
if not tests or not bench:
    bad.append("no tests or no benches ran")
skipped = sum(t["status"] == "skipped" for t in tests)
print("gpu-check: %d tests (%d skipped: see gpu-check.md), %d benches; %s" % (
    len(tests), skipped, len(bench), "problems: " + ", ".join(bad) if bad else "all ran"))
sys.exit(1 if bad else 0)
EOF
