#!/usr/bin/env bash
# A newer shader toolchain for this machine: Debian 13's glslc and spirv-val
# (shaderc 2025.2, SPIRV-Tools 2025.1), which compile the KHR and NV coopmat2
# kernel families Debian 12's cannot (cmake/ShaderFamilies.cmake).
#   scripts/newer-glslc.sh DIR
# makes a minimal Debian 13 root in DIR/root (debootstrap from the mirror apt
# already uses; about a minute) unless it is there, installs the two tools in
# it, and writes DIR/glslc and DIR/spirv-val: wrappers that run them through
# the root's own loader and libraries, so no chroot is needed. Then
#   cmake -S . -B build -DVKATTN_GLSLC=DIR/glslc -DVKATTN_SPIRV_VAL=DIR/spirv-val
# builds every family with Debian 12's C compiler and headers.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)
root=$dir/root
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if [ ! -x "$root/usr/bin/glslc" ]; then
  command -v debootstrap >/dev/null || $sudo apt-get install -y -qq debootstrap
  mirror=$(grep -hoE '^(deb|URIs:) +https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
           grep -v security | head -1 | awk '{print $2}')
  [ -d "$root/usr" ] || $sudo debootstrap --variant=minbase trixie "$root" "${mirror:-http://deb.debian.org/debian}" >/dev/null
  $sudo cp /etc/resolv.conf "$root/etc/" 2>/dev/null || true
  $sudo chroot "$root" apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive chroot "$root" \
    apt-get install -y -qq --no-install-recommends glslc spirv-tools >/dev/null
fi
for tool in glslc spirv-val; do
  cat > "$dir/$tool" <<WRAP
#!/bin/sh
exec "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" "$root/usr/bin/$tool" "\$@"
WRAP
  chmod +x "$dir/$tool"
done
"$dir/glslc" --version | head -1
