#!/usr/bin/env bash
# CI pass: vkattn on Debian 13 (trixie), a supported build platform beside
# Debian 12. Makes a minimal Debian 13 root with debootstrap (from Debian's
# registry), copies the checkout into it, and there runs the project's own
# scripts/install-deps.sh and scripts/build.sh (warnings as errors, gcc 14;
# Debian 13's glslc and spirv-val, so every shader family that glslc can
# compile is built and validated), the library again at -O3, then the unit
# tests and the GPU tests on Mesa 25's lavapipe under the validation layer 1.4.
# The root is removed afterwards, also on failure or interrupt.
#
# The GPU tests run in their default configuration only
# (VKATTN_TEST_GROUPS=default: each program's mobile-min and GPU-tuning
# variant groups are skipped; the Debian 12 passes of scripts/test.sh run
# them), which keeps CI within its hour on two cores.
# VKATTN_DEBIAN13_GROUPS=all runs every group here too.
#
# Needs root (re-runs itself with sudo otherwise) and the network (the mirror:
# VKATTN_DEBIAN_MIRROR, default http://deb.debian.org/debian). Installs
# debootstrap on the host (scripts/install-deps.sh --debian13). The root lives
# in build-debian13/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=VKATTN_DEBIAN_MIRROR,VKATTN_DEBIAN13_GROUPS "$0" "$@"
fi

mirror=${VKATTN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
groups=${VKATTN_DEBIAN13_GROUPS:-default}
src=$PWD
work=$src/build-debian13
root=$work/root
mounts=()   # mounted so far, in order; unmounted in reverse

echo "--- Debian 13 (trixie) root: install-deps, build with -DVKATTN_WERROR=ON (gcc 14), unit and GPU tests on Mesa 25's lavapipe"

cleanup() {
  local rc=$? i m
  trap - EXIT INT TERM
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[i]}
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
      echo "test-debian13: cannot unmount $m" >&2
  done
  # Never delete through a mount that is still there (it could be the host's /dev).
  if grep -qF -e " $root/" -e " $root " /proc/self/mounts; then
    echo "test-debian13: mounts remain under $root; not removing it:" >&2
    grep -F -e " $root/" -e " $root " /proc/self/mounts >&2 || true
    exit 1
  fi
  # the pass's test times outlive the root (tests/TIMES.md is made from them)
  local logs=$root/src/vkattn/build/Testing/Temporary
  if [ -d "$logs" ]; then
    mkdir -p "$src/build-debian13-logs"
    cp "$logs"/LastTest*.log "$logs"/CTestCostData.txt "$src/build-debian13-logs/" 2>/dev/null || true
  fi
  rm -rf --one-file-system "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount_in() { # mount_in TARGET MOUNT-ARGS...
  local target=$root/$1
  shift
  mount "$@" "$target"
  mounts+=("$target")
}

now() { date +%s; }
phase() { echo "--- debian13: $1 in $(($(now) - $2)) s"; }

# A root left behind by an interrupted run: unmount and remove it first.
if [ -e "$work" ]; then
  while read -r _ m _; do
    case $m in "$root"/*) umount -l "$m" ;; esac
  done < <(tac /proc/self/mounts)
  rm -rf --one-file-system "$work"
fi
mkdir -p "$work"
scripts/install-deps.sh --debian13

t=$(now)
if ! debootstrap --variant=minbase trixie "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
fi
phase "debootstrap" "$t"

mount_in proc -t proc proc
mount_in sys -t sysfs -o ro sysfs 2>/dev/null || mount_in sys --bind /sys
mount_in dev --bind /dev
mount_in dev/pts --bind /dev/pts
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# No services start in the root (what apt installs there stays inert).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"

# The checkout as it is: tracked files and untracked ones git does not ignore
# (on CI's clean clone, the tracked files); without git, all but build*/.
mkdir -p "$root/src/vkattn"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$src" ls-files -z -c -o --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$root/src/vkattn"
else
  tar --exclude='./build*' -cf - . | tar -xf - -C "$root/src/vkattn"
fi

in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb VKATTN_REQUIRE_DEVICE=1 \
    /bin/bash -c "cd /src/vkattn && $1"
}

t=$(now)
in_root 'scripts/install-deps.sh >/tmp/install-deps.log 2>&1 || { tail -n 30 /tmp/install-deps.log; exit 1; }'
phase "scripts/install-deps.sh" "$t"

t=$(now)
in_root 'gcc --version | head -n 1; glslc --version | head -n 1; scripts/build.sh >/tmp/build.log 2>&1 || { grep -E -A5 "(warning|error):" /tmp/build.log | head -n 60; tail -n 20 /tmp/build.log; exit 1; }'
# The shader families this glslc could compile (printed by CMake's configure).
in_root 'cmake -S . -B build -DVKATTN_WERROR=ON | grep "^-- vkattn shader families:" ||
  echo "(the configure output names no shader families)"'
phase "scripts/build.sh (-DVKATTN_WERROR=ON)" "$t"
# gcc 14 warns at -O3 (Release) where -O2 (build.sh's RelWithDebInfo) is quiet
# (-Wmaybe-uninitialized after inlining): the library once more, at -O3.
t=$(now)
in_root 'cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DVKATTN_WERROR=ON \
    -DVKATTN_BUILD_TESTS=OFF -DVKATTN_BUILD_TOOLS=OFF >/dev/null &&
  cmake --build build-release -j"$(nproc)" --target vkattn >/tmp/build-release.log 2>&1 ||
  { grep -E -A5 "(warning|error):" /tmp/build-release.log | head -n 60; exit 1; }'
phase "the library at -O3 (Release, -DVKATTN_WERROR=ON)" "$t"

t=$(now)
in_root 'cd build && ctest --output-on-failure -j"$(nproc)" --timeout 900 -L unit'
phase "unit tests" "$t"

# The host's test times, if it ran the suite first, so that ctest starts the
# longest tests first (names are the same; only the order changes).
if [ -f build/Testing/Temporary/CTestCostData.txt ]; then
  mkdir -p "$root/src/vkattn/build/Testing/Temporary"
  cp build/Testing/Temporary/CTestCostData.txt "$root/src/vkattn/build/Testing/Temporary/"
fi
versions=$(in_root "dpkg-query -W -f='\${Package} \${Version}, ' mesa-vulkan-drivers vulkan-validationlayers")
echo "--- debian13: GPU tests (VKATTN_TEST_GROUPS=$groups) on lavapipe: ${versions%, }"
in_root "cd build && VKATTN_TEST_GROUPS=$groups ctest --output-on-failure -j\"\$(nproc)\" --timeout 900 -L gpu"
